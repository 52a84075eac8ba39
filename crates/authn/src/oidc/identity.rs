//! Who a signed-in person is here: a stable user id for an issuer's `sub` (from the directory), and the profile
//! (email, name, groups) read from the ID token's claims under the configured claim names.

use fundament_directory::Directory;
use serde_json::{Map, Value};

/// The user id of an identity-provider account: the directory's user that lists it (issuer +
/// `sub`), else [`fundament_directory::derived_user_id`] — stable, the same on every replica,
/// and never an email address (a provider may let users change theirs).
pub fn user_id(directory: &dyn Directory, issuer: &str, subject: &str) -> String {
    match directory.current().user_by_identity(issuer, subject) {
        Some(user) => user.id.clone(),
        None => fundament_directory::derived_user_id(issuer, subject),
    }
}

/// The claim names the profile is read from (settings `--oidc-email-claim` …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimNames {
    pub email: String,
    pub name: String,
    pub groups: String,
}

impl Default for ClaimNames {
    fn default() -> Self {
        ClaimNames { email: "email".into(), name: "name".into(), groups: "groups".into() }
    }
}

/// What the ID token says about the user, under the configured claim names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub subject: String,
    /// Empty when the provider gave none or says it is not verified (`email_verified: false`):
    /// an unverified address must not look like someone else's account.
    pub email: String,
    /// The name claim, else the email, else the subject: the console always has something to show.
    pub name: String,
    pub groups: Vec<String>,
    /// How many of the provider's groups are not in `groups` (past a bound, or empty).
    pub groups_left_out: usize,
}

/// At most this many groups are carried into the UserToken, each at most this long, and all
/// of them together at most `MAX_GROUPS_BYTES` (names plus their JSON quotes and commas): the
/// token rides in a cookie, which browsers cap at 4 KiB for name and value together, and
/// silently drop past that (a sign-in that loops). Groups past the bound are left out in the
/// provider's order, and the sign-in's log line says how many.
pub const MAX_GROUPS: usize = 64;
pub const MAX_CLAIM_LEN: usize = 256;
pub const MAX_GROUPS_BYTES: usize = 1_024;

/// Reads the profile from verified claims. `sub` must be a non-empty string (checked by the
/// verifier already; here again because the profile is useless without it).
pub fn profile(claims: &Map<String, Value>, names: &ClaimNames) -> Option<Profile> {
    let subject = claims.get("sub")?.as_str().filter(|s| !s.is_empty())?.to_owned();
    let text = |name: &str| {
        claims
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_CLAIM_LEN)
            .map(str::to_owned)
    };
    let verified = claims.get("email_verified").and_then(Value::as_bool) != Some(false);
    let email = text(&names.email).filter(|_| verified).unwrap_or_default();
    let name =
        text(&names.name).unwrap_or_else(|| if email.is_empty() { subject.clone() } else { email.clone() });
    let groups = match claims.get(&names.groups) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        // Some providers send a single group as a string.
        Some(Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    let given = groups.len();
    let mut left = MAX_GROUPS_BYTES;
    let groups: Vec<String> = groups
        .into_iter()
        .filter(|g| !g.is_empty() && g.len() <= MAX_CLAIM_LEN)
        .take(MAX_GROUPS)
        .take_while(|g| {
            // As the token's JSON has it: a quote or control character takes more than its byte.
            let cost = serde_json::to_string(g).map_or(usize::MAX, |j| j.len()).saturating_add(1);
            left.checked_sub(cost).map(|rest| left = rest).is_some()
        })
        .collect();
    let groups_left_out = given - groups.len();
    Some(Profile { subject, email, name, groups, groups_left_out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_listed_identity_is_its_user_and_others_get_a_derived_id() {
        use fundament_directory::{DirectoryData, FixedDirectory, Identity, User};
        let directory = FixedDirectory::new(DirectoryData {
            users: vec![User {
                id: "alice".into(),
                email: "alice@example.com".into(),
                name: "Alice".into(),
                description: None,
                identities: vec![Identity { issuer: "https://id.example.com".into(), subject: "s1".into() }],
            }],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(user_id(&directory, "https://id.example.com", "s1"), "alice");
        // The same sub at another issuer is someone else; so is another sub.
        let other = user_id(&directory, "https://evil.example.com", "s1");
        assert_eq!(other, fundament_directory::derived_user_id("https://evil.example.com", "s1"));
        assert!(fundament_kube_core::validation::is_dns1123_label(&other), "{other}");
        assert_ne!(user_id(&directory, "https://id.example.com", "s2"), other);
        assert_eq!(
            user_id(&directory, "https://id.example.com", "s2"),
            user_id(&directory, "https://id.example.com", "s2")
        );
    }

    #[test]
    fn the_profile_comes_from_the_configured_claims() {
        let names = ClaimNames::default();
        let p = profile(
            &claims(
                json!({"sub": "s1", "email": "a@example.com", "name": "Ada", "groups": ["ops", 7, "dev"]}),
            ),
            &names,
        )
        .unwrap();
        assert_eq!(
            p,
            Profile {
                subject: "s1".into(),
                email: "a@example.com".into(),
                name: "Ada".into(),
                groups: vec!["ops".into(), "dev".into()],
                groups_left_out: 0,
            }
        );
        let custom = ClaimNames { email: "mail".into(), name: "display".into(), groups: "roles".into() };
        let p = profile(
            &claims(json!({"sub": "s1", "mail": "m@example.com", "display": "D", "roles": "admins", "email": "x@y"})),
            &custom,
        )
        .unwrap();
        assert_eq!(
            (p.email.as_str(), p.name.as_str(), p.groups),
            ("m@example.com", "D", vec!["admins".to_owned()])
        );
    }

    #[test]
    fn missing_or_unverified_claims_fall_back_safely() {
        let names = ClaimNames::default();
        let p =
            profile(&claims(json!({"sub": "s1", "email": "a@example.com", "email_verified": false})), &names)
                .unwrap();
        assert_eq!((p.email.as_str(), p.name.as_str()), ("", "s1"), "an unverified email is not carried");
        let p = profile(&claims(json!({"sub": "s1", "email": "a@example.com"})), &names).unwrap();
        assert_eq!(p.name, "a@example.com");
        assert!(profile(&claims(json!({"sub": ""})), &names).is_none());
        assert!(profile(&claims(json!({"email": "a@example.com"})), &names).is_none());
        let many: Vec<String> = (0..100).map(|i| format!("g{i}")).collect();
        let p =
            profile(&claims(json!({"sub": "s", "groups": many, "name": "x".repeat(300)})), &names).unwrap();
        assert_eq!((p.groups.len(), p.name.as_str()), (MAX_GROUPS, "s"));
    }

    #[test]
    fn the_largest_profile_still_fits_the_session_cookie() {
        // 64 Active Directory style groups of 60 characters each, a name and email at their
        // bound, quotes that JSON escapes: the cookie stays under the browsers' 4,096 bytes.
        let groups: Vec<String> =
            (0..64).map(|i| format!("CN=\"grp-{i:02}\",OU=Engineering,DC=corp,DC=example,DC=com")).collect();
        let claims = claims(json!({
            "sub": "s", "email": format!("{}@example.com", "e".repeat(240)), "name": "\"".repeat(256), "groups": groups.clone(),
        }));
        let p = profile(&claims, &ClaimNames::default()).unwrap();
        assert!(p.groups.len() < 64 && !p.groups.is_empty(), "{}", p.groups.len());
        assert_eq!(p.groups.len() + p.groups_left_out, 64);
        assert_eq!(p.groups[..], groups[..p.groups.len()], "the provider's first groups, in order");
        let signer = fundament_tokens::Signer::generate();
        let token = signer.sign_user_in_groups(&"u".repeat(63), &p.email, &p.name, &p.groups, 0, 3600);
        let cookie = fundament_session::cookie_header(Some(&token), 3600);
        assert!(fundament_session::fits_a_browser(&cookie), "{} bytes", cookie.len());
    }
}
