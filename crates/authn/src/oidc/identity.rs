//! Who a signed-in person is here: a stable user id for an issuer's `sub`, and the profile
//! (email, name, groups) read from the ID token's claims under the configured claim names.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Maps an identity provider's user (issuer + `sub`) to a user id of ours, for users an
/// operator has listed (a directory). Users it does not know get [`derived_user_id`].
pub trait IdentityMap: Send + Sync + 'static {
    fn user_id(&self, issuer: &str, subject: &str) -> Option<String>;
}

/// A fixed map of identities to user ids.
#[derive(Debug, Clone, Default)]
pub struct Identities(HashMap<(String, String), String>);

impl Identities {
    /// Lists `(issuer, subject)` as user `user_id`.
    pub fn with(mut self, issuer: &str, subject: &str, user_id: &str) -> Self {
        self.0.insert((issuer.to_owned(), subject.to_owned()), user_id.to_owned());
        self
    }
}

impl IdentityMap for Identities {
    fn user_id(&self, issuer: &str, subject: &str) -> Option<String> {
        self.0.get(&(issuer.to_owned(), subject.to_owned())).cloned()
    }
}

/// The user id of an identity nobody listed: `u-` and the lower-case base32 of
/// SHA-256(issuer, newline, subject), 54 characters. It is a DNS-1123 label (it becomes part of a
/// ServiceAccount name), the same for the same identity on every replica and after every
/// restart, and different for the same `sub` at another issuer (a `sub` is unique per issuer
/// only). Email addresses are not used: a provider may let users change them.
pub fn derived_user_id(issuer: &str, subject: &str) -> String {
    let digest = Sha256::new().chain_update(issuer).chain_update("\n").chain_update(subject).finalize();
    format!("u-{}", base32_lower(&digest))
}

/// RFC 4648 base32, lower case, without padding.
fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
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
}

/// At most this many groups are carried into the UserToken, each at most this long: a token
/// rides in a cookie, which browsers cap at 4 KiB.
pub const MAX_GROUPS: usize = 64;
pub const MAX_CLAIM_LEN: usize = 256;

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
    let groups =
        groups.into_iter().filter(|g| !g.is_empty() && g.len() <= MAX_CLAIM_LEN).take(MAX_GROUPS).collect();
    Some(Profile { subject, email, name, groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn derived_ids_are_stable_dns_labels_that_differ_per_issuer() {
        let id = derived_user_id("https://id.example.com", "248289761001");
        assert_eq!(id, derived_user_id("https://id.example.com", "248289761001"));
        assert!(id.starts_with("u-") && id.len() == 54 && id.len() <= 63, "{id}");
        assert!(fundament_kube_core::validation::is_dns1123_label(&id), "{id}");
        assert_ne!(id, derived_user_id("https://other.example.com", "248289761001"));
        assert_ne!(id, derived_user_id("https://id.example.com", "248289761002"));
        // The newline separates issuer and subject unambiguously because an issuer is a URL,
        // which has no newline (the settings refuse control characters in it).
        assert_ne!(
            derived_user_id("https://id.example.com/a", "b"),
            derived_user_id("https://id.example.com/", "ab")
        );
    }

    #[test]
    fn base32_is_rfc_4648_lower_case_without_padding() {
        // RFC 4648 §10's test vectors.
        for (input, expected) in
            [("", ""), ("f", "my"), ("fo", "mzxq"), ("foo", "mzxw6"), ("foobar", "mzxw6ytboi")]
        {
            assert_eq!(base32_lower(input.as_bytes()), expected, "{input}");
        }
    }

    #[test]
    fn a_listed_identity_has_its_id_others_none() {
        let map = Identities::default().with("https://id.example.com", "s1", "alice");
        assert_eq!(map.user_id("https://id.example.com", "s1").as_deref(), Some("alice"));
        assert_eq!(map.user_id("https://evil.example.com", "s1"), None);
        assert_eq!(map.user_id("https://id.example.com", "s2"), None);
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
                groups: vec!["ops".into(), "dev".into()]
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
}
