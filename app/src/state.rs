//! What the server gives the console at run time (server only).

use fundament_session::SessionKey;
use leptos::prelude::*;

/// Provided as context to every render and server function.
#[derive(Debug, Clone)]
pub struct ConsoleState {
    /// Signs and checks sign-in sessions.
    pub session_key: SessionKey,
    /// Mock mode: the sign-in page offers the seed users.
    pub mock: bool,
    /// Mark cookies `Secure` (the console is served over https).
    pub secure_cookies: bool,
    /// Origins the console's pages may call (authn, organization-api, kube-api-proxy).
    pub connect_origins: Vec<String>,
    /// Origins the console's pages may frame (plugin-proxy).
    pub frame_origins: Vec<String>,
}

/// Sets the page's security headers: a CSP whose only inline scripts are the
/// ones carrying this response's nonce, and no framing of the console.
pub fn set_security_headers() {
    let Some(response) = use_context::<leptos_axum::ResponseOptions>() else {
        return;
    };
    let nonce = leptos::nonce::use_nonce().map(|n| n.to_string()).unwrap_or_default();
    let state = use_context::<ConsoleState>();
    let connect = state.as_ref().map(|s| s.connect_origins.join(" ")).unwrap_or_default();
    let frame = state.as_ref().map(|s| s.frame_origins.join(" ")).unwrap_or_default();
    let csp = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; img-src 'self' data:; connect-src 'self' {connect}; frame-src 'self' {frame}; \
         frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'"
    );
    if let Ok(value) = http::HeaderValue::from_str(&csp) {
        response.insert_header(http::header::CONTENT_SECURITY_POLICY, value);
    }
}

/// The value of a cookie on the request being handled.
pub fn request_cookie(name: &str) -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    let cookies = parts.headers.get_all(http::header::COOKIE);
    fundament_session::cookie_value(cookies.iter().filter_map(|v| v.to_str().ok()), name).map(str::to_owned)
}
