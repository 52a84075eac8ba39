//! Sign-in, sign-out, the current session and the theme choice.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// The signed-in user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewer {
    /// The user's id in the directory (issuer and subject for OpenID Connect): what tells two
    /// users apart, since an identity provider may give two accounts the same email, or none.
    pub id: String,
    /// Sign-in email.
    pub email: String,
    /// Display name.
    pub name: String,
}

/// A project of the organization, as the switcher shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectSummary {
    /// URL id.
    pub id: String,
    /// Display name.
    pub display_name: String,
    /// The cluster it runs on.
    pub cluster_name: String,
    /// That cluster's id.
    pub cluster_id: String,
}

/// Where the browser reaches the services plugin pages talk to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoints {
    /// kube-api-proxy's base URL (`kubeApiProxyUrl` of `fundament:init`).
    pub kube_api_proxy: String,
    /// plugin-proxy's base URL: plugin pages are framed from it.
    pub plugin_proxy: String,
}

/// Everything the shell needs about the signed-in user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Who is signed in.
    pub viewer: Viewer,
    /// The organization.
    pub organization: String,
    /// Its projects.
    pub projects: Vec<ProjectSummary>,
    /// The cluster organization-level pages use.
    pub selected_cluster: String,
    /// Its id.
    pub selected_cluster_id: String,
    /// Service URLs for the browser.
    pub endpoints: Endpoints,
}

impl Session {
    /// The cluster of a project, else the selected one.
    pub fn cluster_of(&self, project: Option<&str>) -> String {
        project
            .and_then(|id| self.projects.iter().find(|p| p.id == id))
            .map_or_else(|| self.selected_cluster_id.clone(), |p| p.cluster_id.clone())
    }
}

/// A user the development sign-in offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedUser {
    /// Sign-in email.
    pub email: String,
    /// Display name.
    pub name: String,
    /// What they may do, in words.
    pub role: String,
}

/// How users can sign in to this console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInMethods {
    /// Mock mode: pick a seed user.
    pub mock: bool,
    /// The users to pick from (mock mode).
    pub users: Vec<SeedUser>,
    /// OpenID Connect: the provider's name, for "Sign in with <name>".
    pub oidc: Option<String>,
    /// The email of the user this request is signed in as, when they are a member of no
    /// organization of the directory: they open nothing, and are told why.
    pub without_organization: Option<String>,
}

/// The signed-in session of this page load, or `None` when signed out.
///
/// Computed on the server from the request's cookie and handed to the browser
/// with the page ([`SharedValue`]), so neither side waits for it and no
/// `Suspense` is involved. Signing in or out is a form post followed by a full
/// page load, which also clears any client state of the previous user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentSession(pub Option<Session>);

impl CurrentSession {
    /// The session of the request being rendered (server) or hydrated (browser).
    pub fn load() -> Self {
        Self(
            SharedValue::new(|| {
                #[cfg(feature = "ssr")]
                return ssr::session_of_request();
                #[cfg(not(feature = "ssr"))]
                None
            })
            .into_inner(),
        )
    }
}

/// How this console signs users in (fixed for the life of the server), and whether this request
/// is signed in as a user who may open nothing.
pub fn sign_in_methods() -> SignInMethods {
    SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        return ssr::sign_in_methods();
        #[cfg(not(feature = "ssr"))]
        SignInMethods { mock: false, users: Vec::new(), oidc: None, without_organization: None }
    })
    .into_inner()
}

/// Why a sign-in failed, as carried in `/sign-in?error=` (a code, never a
/// message, so a link cannot put words in the console's mouth). The OpenID
/// Connect codes are authn's (`fundament_authn::oidc::Failure::code`) plus what
/// the provider itself answers on the callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInFailure {
    /// Not a seed user.
    UnknownUser,
    /// Development sign-in outside mock mode (or a sign-in method that is off).
    Unavailable,
    /// The identity provider could not be reached.
    ProviderUnavailable,
    /// No sign-in of this browser with the callback's state is in progress (cookie missing, not
    /// ours).
    TransactionInvalid,
    /// The sign-in took too long.
    TransactionExpired,
    /// The callback's `state` is not this browser's sign-in.
    StateMismatch,
    /// The provider refused the code (expired, used).
    CodeRejected,
    /// The ID token failed a check.
    TokenInvalid,
    /// The ID token was signed by a key the provider does not publish.
    UnknownKey,
    /// The ID token's times are off by more than the allowed skew.
    ClockSkew,
    /// The user declined at the provider (`error=access_denied`).
    Denied,
    /// The provider answered the callback with another error.
    ProviderError,
    /// authn, which signs users in, cannot be reached or is down right now.
    AuthnUnavailable,
    /// Something else failed (logged where it happened).
    Failed,
    /// Not a sign-in's failure: the last sign-out ended the session in this browser, but authn
    /// could not be told yet (the console keeps telling it).
    SignOutPending,
    /// Not a sign-in's failure: the last sign-out ended the console's session, but the
    /// identity provider's could not be ended (authn gave no end-session URL): the provider's
    /// sign-in button may sign the next person at this browser in as the last user.
    ProviderSignOutFailed,
}

/// The last step of an OpenID Connect sign-out (`crate::oidc_route::end_session`, server only),
/// here for the sign-in page's retry link.
pub const OIDC_END_SESSION_PATH: &str = "/sign-in/oidc/end-session";

const FAILURES: [(SignInFailure, &str, &str); 16] = [
    (SignInFailure::UnknownUser, "unknown-user", "That user does not exist in this development stack."),
    (SignInFailure::Unavailable, "unavailable", "This way of signing in is not available on this console."),
    (
        SignInFailure::ProviderUnavailable,
        "provider-unavailable",
        "The identity provider could not be reached. Try again in a moment.",
    ),
    (
        SignInFailure::TransactionInvalid,
        "transaction-invalid",
        "This sign-in was not started in this browser, or its cookie was lost. Start again.",
    ),
    (SignInFailure::TransactionExpired, "transaction-expired", "The sign-in took too long. Start again."),
    (
        SignInFailure::StateMismatch,
        "state-mismatch",
        "The identity provider's answer does not belong to the sign-in this browser started, so it was refused. Start again.",
    ),
    (
        SignInFailure::CodeRejected,
        "code-rejected",
        "The identity provider refused the sign-in code: it expired or was already used. Start again.",
    ),
    (
        SignInFailure::TokenInvalid,
        "token-invalid",
        "The identity provider's answer could not be verified, so it was refused. If this persists, tell your administrator.",
    ),
    (
        SignInFailure::UnknownKey,
        "unknown-key",
        "The identity provider's answer was signed with a key it does not publish, so it was refused. If this persists, tell your administrator.",
    ),
    (
        SignInFailure::ClockSkew,
        "clock-skew",
        "The identity provider's answer is not valid at this time: its clock and the console's disagree. Tell your administrator.",
    ),
    (SignInFailure::Denied, "denied", "Sign-in was cancelled at the identity provider."),
    (SignInFailure::ProviderError, "provider-error", "The identity provider could not sign you in."),
    (
        SignInFailure::AuthnUnavailable,
        "authn-unavailable",
        "Signing in is not possible right now: the sign-in service (authn) cannot be reached. Try again in a moment.",
    ),
    (SignInFailure::Failed, "failed", "Sign-in failed. Try again."),
    (
        SignInFailure::SignOutPending,
        "sign-out-pending",
        "You are signed out of this browser, but the sign-in service (authn) could not be reached to end the session everywhere. The console keeps trying until the session would have expired.",
    ),
    (
        SignInFailure::ProviderSignOutFailed,
        "provider-sign-out-failed",
        "You are signed out of the console, but the identity provider could not be told: its session may still be open, and signing in with it here could sign the next person in as you. Try again below, or sign out at the identity provider, or close the browser.",
    ),
];

impl SignInFailure {
    fn entry(self) -> &'static (SignInFailure, &'static str, &'static str) {
        FAILURES.iter().find(|(f, _, _)| *f == self).expect("every failure is in FAILURES")
    }

    /// The code in the URL.
    pub fn code(self) -> &'static str {
        self.entry().1
    }

    /// Parses a code.
    pub fn from_code(code: &str) -> Option<Self> {
        FAILURES.iter().find(|(_, c, _)| *c == code).map(|(f, _, _)| *f)
    }

    /// What the sign-in page says.
    pub fn message(self) -> &'static str {
        self.entry().2
    }
}

/// Development sign-in (mock mode): signs in as a seed user and goes to `next`.
/// A refused sign-in goes back to the sign-in page with the reason's code.
#[server(endpoint = "sign-in", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn sign_in(email: String, next: String) -> Result<(), AppError> {
    use crate::state::SignInError;
    let state = ssr::state()?;
    let next = safe_next(&next, &state.console_origin);
    let next = next.as_str();
    // Read before any await, as everything from the request context.
    let replaced = crate::state::request_session_token();
    let issued =
        if state.mock { state.sessions.dev_sign_in(&email).await } else { Err(SignInError::Unavailable) };
    let issued = match issued {
        Ok(issued) => issued,
        Err(SignInError::Failed) => return Err(AppError::Internal),
        Err(e) => {
            let failure = match e {
                SignInError::UnknownUser => SignInFailure::UnknownUser,
                SignInError::Unreachable => SignInFailure::AuthnUnavailable,
                _ => SignInFailure::Unavailable,
            };
            let back = format!("/sign-in?error={}&next={}", failure.code(), ssr::query_escape(next));
            leptos_axum::redirect(&back);
            return Err(AppError::Invalid(failure.message().to_owned()));
        }
    };
    // The session this browser held ends with the switch, as at sign-out: a copy of its token
    // must not outlive it. A token that is no live session is not sent to authn.
    let replaced = match replaced {
        Some(old) => Some(state.sessions.sign_out(&old).await),
        None => None,
    };
    ssr::set_cookie(&fundament_session::cookie_header(Some(&issued.token), issued.max_age));
    tracing::info!(?replaced, "signed in");
    leptos_axum::redirect(next);
    Ok(())
}

/// Signs out: the session ends on the server (a copy of the token stops working everywhere),
/// the cookie is cleared, and the browser returns to the sign-in page — by way of the
/// identity provider's end-session endpoint when the session came from one
/// (`/sign-in/oidc/end-session`, which keeps the ID token hint for that last step).
#[server(endpoint = "sign-out", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn sign_out() -> Result<(), AppError> {
    // Everything from the request context first: nothing may read it after an await.
    let state = ssr::state()?;
    let token = crate::state::request_session_token();
    let from_provider = state.oidc_provider.is_some()
        && crate::state::request_cookie(fundament_session::OIDC_ID_TOKEN_COOKIE).is_some();
    ssr::set_cookie(&fundament_session::cookie_header(None, 0));
    let outcome = match token {
        Some(token) => state.sessions.sign_out(&token).await,
        None => crate::state::SignOutOutcome::Ended,
    };
    // The provider's session ends in any case (its end-session page returns to `/sign-in`);
    // without one, the sign-in page says when the session could not be ended everywhere yet.
    let next = match outcome {
        // The pending outcome goes along: the end-session step says it if it cannot reach the
        // provider either (then the sign-in page is its last stop).
        crate::state::SignOutOutcome::Pending if from_provider => {
            format!("{}?pending=1", crate::oidc_route::END_SESSION_PATH)
        }
        _ if from_provider => crate::oidc_route::END_SESSION_PATH.to_owned(),
        crate::state::SignOutOutcome::Ended => "/sign-in".to_owned(),
        crate::state::SignOutOutcome::Pending => {
            format!("/sign-in?error={}", SignInFailure::SignOutPending.code())
        }
    };
    leptos_axum::redirect(&next);
    tracing::info!(?outcome, "signed out");
    Ok(())
}

/// Who the browser's session is now: a tab checks after a hint from another tab
/// (`crate::session_end`), which it never believes by itself. `Unauthenticated` without one.
#[server(endpoint = "signed-in-as", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn signed_in_as() -> Result<Viewer, AppError> {
    let user = ssr::signed_in_user().ok_or(AppError::Unauthenticated)?;
    Ok(Viewer { id: user.id, email: user.email, name: user.name })
}

/// Stores the theme choice (`system` clears it).
#[server(endpoint = "theme", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn set_theme(theme: String) -> Result<(), AppError> {
    use crate::theme::{THEME_COOKIE, Theme};
    let theme = Theme::parse(&theme).ok_or_else(|| AppError::Invalid(format!("Unknown theme {theme:?}.")))?;
    let cookie = match theme {
        Theme::System => format!("{THEME_COOKIE}=; Secure; Path=/; Max-Age=0; SameSite=Lax"),
        other => format!("{THEME_COOKIE}={}; Secure; Path=/; Max-Age=31536000; SameSite=Lax", other.as_str()),
    };
    ssr::set_cookie(&cookie);
    ssr::back_to_referring_page();
    Ok(())
}

/// Where to go after signing in: a path on this console, never another site. `next` is read
/// as a browser on the console (`console_origin`) reads a link (so `/<TAB>/example.org`,
/// `/\\example.org` and `https:example.org` are what a browser makes of them) and kept only
/// when it stays on the console's origin; what is kept is the URL's own serialization of path,
/// query and fragment, which a browser cannot read as anything else.
#[cfg(feature = "ssr")]
pub fn safe_next(next: &str, console_origin: &str) -> String {
    let Ok(base) = url::Url::parse(console_origin) else { return "/".to_owned() };
    let Ok(target) = base.join(next) else { return "/".to_owned() };
    if target.origin() != base.origin() || next.is_empty() {
        return "/".to_owned();
    }
    let mut local = target.path().to_owned();
    if let Some(query) = target.query() {
        local.push('?');
        local.push_str(query);
    }
    if let Some(fragment) = target.fragment() {
        local.push('#');
        local.push_str(fragment);
    }
    if target.path() == "/sign-in" || !local.starts_with('/') || local.starts_with("//") {
        return "/".to_owned();
    }
    local
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use leptos::prelude::*;

    use crate::{error::AppError, state::ConsoleState};

    pub fn state() -> Result<ConsoleState, AppError> {
        use_context::<ConsoleState>().ok_or_else(|| {
            tracing::error!("ConsoleState missing from the server function context");
            AppError::Internal
        })
    }

    /// The session of the request being rendered: the signed-in user, the organization
    /// they are a member of and its projects they work in, from the directory. A valid
    /// token of a user who is a member of no organization opens nothing (logged).
    pub fn session_of_request() -> Option<super::Session> {
        use super::{ProjectSummary, Session, Viewer};
        let state = use_context::<ConsoleState>()?;
        let user = signed_in_user()?;
        let directory = state.directory.current();
        let Some(organization) = directory.organization_of(&user.id) else {
            tracing::warn!(user = %user.id, "signed in, but a member of no organization in the directory");
            return None;
        };
        let cluster_name =
            |id: &str| directory.cluster(id).map_or_else(|| id.to_owned(), |c| c.shown_name().to_owned());
        let selected = directory.default_cluster(&organization.id);
        Some(Session {
            viewer: Viewer { id: user.id.clone(), email: user.email, name: user.name },
            organization: organization.id.clone(),
            projects: directory
                .projects_for(&user.id, &organization.id)
                .into_iter()
                .map(|p| ProjectSummary {
                    id: p.id.clone(),
                    display_name: p.display_name.clone(),
                    cluster_name: cluster_name(&p.cluster),
                    cluster_id: p.cluster.clone(),
                })
                .collect(),
            selected_cluster: selected.map(|c| c.shown_name().to_owned()).unwrap_or_default(),
            selected_cluster_id: selected.map(|c| c.id.clone()).unwrap_or_default(),
            endpoints: state.endpoints,
        })
    }

    pub fn sign_in_methods() -> super::SignInMethods {
        let Some(state) = use_context::<ConsoleState>() else {
            return super::SignInMethods {
                mock: false,
                users: Vec::new(),
                oidc: None,
                without_organization: None,
            };
        };
        let users = if state.mock {
            state
                .directory
                .current()
                .users
                .iter()
                .map(|u| super::SeedUser {
                    email: u.email.clone(),
                    name: u.name.clone(),
                    role: u.description.clone().unwrap_or_default(),
                })
                .collect()
        } else {
            Vec::new()
        };
        let without_organization = signed_in_user()
            .filter(|user| state.directory.current().organization_of(&user.id).is_none())
            .map(|user| user.email);
        super::SignInMethods { mock: state.mock, users, oidc: state.oidc_provider, without_organization }
    }

    /// Percent-encodes a value for a query string.
    pub fn query_escape(value: &str) -> String {
        value
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    }

    /// The email of a valid session on this request.
    /// Who the request's session cookie names, when it is valid.
    pub fn signed_in_user() -> Option<crate::state::SessionUser> {
        let state = use_context::<ConsoleState>()?;
        let token = crate::state::request_session_token()?;
        state.sessions.verify(&token)
    }

    /// For a plain form post (no JavaScript): go back to the page the form
    /// was on, if that page is on this console.
    pub fn back_to_referring_page() {
        let Some(parts) = use_context::<http::request::Parts>() else {
            return;
        };
        let accepts_html = parts
            .headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/html"));
        if !accepts_html {
            return;
        }
        let path = parts
            .headers
            .get(http::header::REFERER)
            .and_then(|v| v.to_str().ok())
            .and_then(|r| r.parse::<http::Uri>().ok())
            .and_then(|uri| uri.path_and_query().map(|pq| pq.as_str().to_owned()))
            .unwrap_or_else(|| "/".to_owned());
        let origin = use_context::<ConsoleState>().map(|s| s.console_origin).unwrap_or_default();
        leptos_axum::redirect(&super::safe_next(&path, &origin));
    }

    pub fn set_cookie(value: &str) {
        if let (Some(response), Ok(value)) =
            (use_context::<leptos_axum::ResponseOptions>(), http::HeaderValue::from_str(value))
        {
            response.append_header(http::header::SET_COOKIE, value);
        }
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::SignInFailure;

    #[test]
    fn the_tabs_ask_the_session_where_it_is_served() {
        use leptos::server_fn::ServerFn;
        assert_eq!(<super::SignedInAs as ServerFn>::PATH, crate::session_end::SIGNED_IN_AS);
    }

    #[test]
    fn failure_codes_read_back_and_are_distinct() {
        let mut codes = Vec::new();
        for (failure, code, message) in super::FAILURES {
            assert_eq!(SignInFailure::from_code(code), Some(failure));
            assert_eq!((failure.code(), failure.message()), (code, message));
            codes.push(code);
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), super::FAILURES.len());
        assert_eq!(SignInFailure::from_code("<script>"), None);
    }

    fn safe_next(next: &str) -> String {
        super::safe_next(next, "http://localhost:3000")
    }

    #[test]
    fn next_stays_on_the_console() {
        assert_eq!(safe_next("/clusters"), "/clusters");
        assert_eq!(safe_next("/projects/webshop?tab=1"), "/projects/webshop?tab=1");
        assert_eq!(safe_next("/plugins#installed"), "/plugins#installed");
        for hostile in [
            "https://evil.example",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "\t//evil.example",
            " //evil.example",
            "https:evil.example",
            "javascript:alert(1)",
            "data:text/html,x",
            "//localhost:3000@evil.example",
            "http://localhost:3001/",
            "",
            "/sign-in",
            "/sign-in?next=//evil.example",
        ] {
            assert_eq!(safe_next(hostile), "/", "{hostile:?}");
        }
        // Relative paths resolve against the console's root; what comes out is one spelling.
        assert_eq!(safe_next("clusters"), "/clusters");
        assert_eq!(safe_next("/a\r\nSet-Cookie: x"), "/aSet-Cookie:%20x");
        assert_eq!(safe_next("/a/../b"), "/b");
        // Same scheme as the console: a browser reads these as paths on the console, and so do we.
        assert_eq!(safe_next("http:/evil.example"), "/evil.example");
        assert_eq!(safe_next("http:evil.example"), "/evil.example");
    }

    /// A signed-in user who is a member of no organization opens nothing; the sign-in panel is
    /// told so (signing in again would only land there again), and a member's is not.
    #[tokio::test]
    async fn a_user_of_no_organization_is_told_so_on_the_sign_in_panel() {
        for (user, without) in [("mallory", true), ("alice", false)] {
            let (owner, _gateway) = crate::resource_views::api::scope_tests::as_user(user).await;
            let methods = owner.with(super::ssr::sign_in_methods);
            assert_eq!(methods.without_organization.is_some(), without, "{user}");
            assert_eq!(owner.with(super::ssr::session_of_request).is_some(), !without, "{user}");
        }
    }
}
