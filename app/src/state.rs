//! What the server gives the console at run time (server only).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use leptos::prelude::*;

/// A UserToken authn issued, to keep in the session cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedSession {
    pub token: String,
    /// Seconds until it expires (the cookie's Max-Age).
    pub max_age: i64,
}

/// The user a valid session cookie names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionUser {
    pub id: String,
    pub email: String,
    pub name: String,
}

/// Why a sign-in failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInError {
    /// Not a user authn knows.
    UnknownUser,
    /// Development sign-in is off (not mock mode).
    Unavailable,
    /// authn could not be reached, did not answer in time, or said it is unavailable
    /// (logged where it happened): trying again later may work.
    Unreachable,
    /// authn failed otherwise (logged where it happened).
    Failed,
}

/// An OpenID Connect sign-in, started: where to send the browser, and authn's sealed
/// transaction for the console's short-lived cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcStarted {
    pub authorization_url: String,
    pub transaction: String,
    pub max_age: i64,
}

/// An OpenID Connect sign-in, finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcSignedIn {
    pub session: IssuedSession,
    /// The provider's ID token: the hint for ending its session at sign-out.
    pub id_token: String,
    /// The console path the sign-in started from (checked again before use).
    pub return_path: String,
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How a sign-out ended on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignOutOutcome {
    /// authn revoked the session (or it was not a live session): a copy of its token works
    /// nowhere.
    Ended,
    /// authn could not be told yet. This console refuses the session already; it keeps
    /// telling authn in the background until authn has it or the token would have expired.
    Pending,
}

/// Signs users in (through authn) and reads sessions (with authn's public keys).
pub trait SessionAuthority: Send + Sync + std::fmt::Debug + 'static {
    /// Development sign-in of a seed user (mock mode).
    fn dev_sign_in<'a>(
        &'a self,
        email: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<IssuedSession, SignInError>> + Send + 'a>>;
    /// The user of a session token, if it is a valid UserToken of a live session.
    fn verify(&self, token: &str) -> Option<SessionUser>;
    /// Ends the session on the server (authn revokes it), so a copy of the token stops
    /// working everywhere. Failures are logged where they happen.
    fn sign_out<'a>(&'a self, token: &'a str) -> Pin<Box<dyn Future<Output = SignOutOutcome> + Send + 'a>>;
    /// Whether sessions can be read now (the console's `/readyz`): `Err` says what is missing.
    /// Cheap: called on every readiness probe.
    fn ready(&self) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        Box::pin(async { Ok(()) })
    }
    /// Starts an OpenID Connect sign-in that returns to `return_path`; `replacing` is the
    /// session token the browser holds now, revoked once the sign-in finishes.
    fn oidc_start<'a>(
        &'a self,
        return_path: &'a str,
        replacing: Option<&'a str>,
    ) -> Boxed<'a, Result<OidcStarted, crate::api::session::SignInFailure>> {
        let _ = (return_path, replacing);
        Box::pin(async { Err(crate::api::session::SignInFailure::Unavailable) })
    }
    /// Finishes it with the callback's code and state and the transaction cookie.
    fn oidc_finish<'a>(
        &'a self,
        code: &'a str,
        state: &'a str,
        transaction: &'a str,
    ) -> Boxed<'a, Result<OidcSignedIn, crate::api::session::SignInFailure>> {
        let _ = (code, state, transaction);
        Box::pin(async { Err(crate::api::session::SignInFailure::Unavailable) })
    }
    /// Where to end the provider's session, if it offers that.
    fn oidc_end_session_url<'a>(&'a self, id_token_hint: &'a str) -> Boxed<'a, Option<String>> {
        let _ = id_token_hint;
        Box::pin(async { None })
    }
}

/// Provided as context to every render and server function.
#[derive(Clone)]
pub struct ConsoleState {
    /// Signs users in and reads their sessions.
    pub sessions: Arc<dyn SessionAuthority>,
    /// Mock mode: the sign-in page offers the seed users.
    pub mock: bool,
    /// OpenID Connect sign-in: the provider's name ("Sign in with <name>"); `None`: off.
    pub oidc_provider: Option<String>,
    /// The console's own origin (`http://localhost:3000`): `next` after sign-in stays on it.
    pub console_origin: String,
    /// Origins the console's pages may frame: every installation's origin, as a CSP source.
    pub frame_origins: Vec<String>,
    /// Calls to the other services on behalf of the signed-in user.
    pub backend: Arc<crate::plugins::backend::Backend>,
    /// Service URLs the browser uses.
    pub endpoints: crate::api::session::Endpoints,
    /// Organizations, projects, clusters and users (the same directory authn and the gateway read).
    pub directory: Arc<dyn fundament_directory::Directory>,
    /// Who may view which cluster: the question the gateway asks too, so the cluster list
    /// shows exactly the clusters the user can reach.
    pub fga: Arc<dyn fundament_fga::CanView>,
    /// The watches streaming through the cluster route, ended when the console drains.
    pub open_streams: crate::cluster_route::OpenStreams,
}

impl std::fmt::Debug for ConsoleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleState")
            .field("mock", &self.mock)
            .field("console_origin", &self.console_origin)
            .field("directory", &self.directory)
            .finish_non_exhaustive()
    }
}

/// Sets the page's security headers: a CSP whose only inline scripts are the
/// ones carrying this response's nonce, and no framing of the console.
pub fn set_security_headers() {
    let Some(response) = use_context::<leptos_axum::ResponseOptions>() else {
        return;
    };
    let nonce = leptos::nonce::use_nonce().map(|n| n.to_string()).unwrap_or_default();
    let state = use_context::<ConsoleState>();
    let frame = state.as_ref().map(|s| s.frame_origins.join(" ")).unwrap_or_default();
    // The browser calls nothing but the console itself: cluster calls go through its own
    // route, which adds the user's token on the server.
    let csp = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src {frame}; \
         frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'"
    );
    if let Ok(value) = http::HeaderValue::from_str(&csp) {
        response.insert_header(http::header::CONTENT_SECURITY_POLICY, value);
    }
    response.insert_header(http::header::CACHE_CONTROL, http::HeaderValue::from_static(crate::assets::PAGE));
}

/// The value of a cookie on the request being handled.
pub fn request_cookie(name: &str) -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    let cookies = parts.headers.get_all(http::header::COOKIE);
    fundament_session::cookie_value(cookies.iter(), name).map(str::to_owned)
}

/// The session token on the request being handled: `None` without one, and when the request
/// carries more than one session cookie (planted or shadowed: refused, never resolved to one).
pub fn request_session_token() -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    session_token_of(&parts.headers)
}

/// The session token in these headers, as [`request_session_token`] reads it.
pub fn session_token_of(headers: &http::HeaderMap) -> Option<String> {
    let cookies = headers.get_all(http::header::COOKIE);
    match fundament_session::session_cookie(cookies.iter()) {
        fundament_session::SessionCookie::One(token) => Some(token.to_owned()),
        fundament_session::SessionCookie::Absent => None,
        fundament_session::SessionCookie::Conflict => {
            tracing::warn!("refused a request carrying more than one session cookie");
            None
        }
    }
}
