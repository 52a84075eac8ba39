//! The development-only endpoints (`DevSignIn`, the fault switches) sign anyone in and break
//! things on purpose, so only local tools may reach them: never a browser page, whatever its
//! origin (a plugin page, or a site whose DNS name was rebound to 127.0.0.1).
//!
//! - A request with an `Origin` header, or with `Sec-Fetch-Site` other than `none`, comes from a
//!   page: refused. Browsers send `Origin` on every cross-origin request and on every POST/PUT.
//! - The `Host` must be one of the names authn is reached by (its configured URL's host and the
//!   loopback names): a page on a rebound name sends its own name, which is refused even for a
//!   same-origin GET that carries no `Origin`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::AuthnState;
use fundament_connect::{Code, ConnectError};

/// Names authn answers development requests on besides its configured host.
const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

pub(crate) async fn local_tools_only(
    State(state): State<Arc<AuthnState>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    if headers.contains_key(header::ORIGIN)
        || headers.get("sec-fetch-site").is_some_and(|site| site != "none")
    {
        tracing::warn!(path = %request.uri().path(), "refused a development endpoint request from a browser page");
        return ConnectError::new(
            Code::PermissionDenied,
            "development endpoints do not answer browser pages",
        )
        .into_response();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let name = host_name(host);
    let known = LOOPBACK.iter().any(|l| l.eq_ignore_ascii_case(name))
        || state.config.dev_hosts.iter().any(|h| h.eq_ignore_ascii_case(name));
    if !known {
        tracing::warn!(host, "refused a development endpoint request for an unknown host name");
        return ConnectError::new(Code::PermissionDenied, "development endpoints answer on localhost only")
            .into_response();
    }
    next.run(request).await
}

/// `localhost:8083` → `localhost`, `[::1]:8083` → `[::1]`.
fn host_name(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty() => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn host_names_without_ports() {
        assert_eq!(host_name("localhost:8083"), "localhost");
        assert_eq!(host_name("[::1]:8083"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("evil.example"), "evil.example");
    }
}
