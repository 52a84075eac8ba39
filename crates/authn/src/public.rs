//! The public endpoints: the signing keys as a JWKS, liveness and readiness.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::state::AuthnState;

/// `GET /.well-known/jwks.json`. Cached for five minutes: verifiers refetch on an unknown `kid`,
/// and a rotation keeps the previous key published far longer than that.
pub(crate) async fn jwks(State(state): State<Arc<AuthnState>>) -> Response {
    let mut response = Json(state.signer().jwks()).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    response
}

/// `GET /livez`: the process serves requests.
pub(crate) async fn livez() -> &'static str {
    "ok"
}

/// `GET /readyz`: authn can sign: `200 ok` while it holds a signing key, else `503` and why.
/// The keys and revoked sessions are loaded before the router exists, so this holds from the
/// first request on. `?verbose` lists the checks: `signing-key`, which gates, and, not gating,
/// OpenFGA and the clusters as the mint's own calls found them. What authn calls per request
/// (can_view, a cluster's installations) is never probed and does not gate: an outage there
/// fails those calls with a clear error, and taking every replica out of the load balancer
/// would fail sign-in and the JWKS as well.
pub(crate) async fn readyz(
    State(state): State<Arc<AuthnState>>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> (StatusCode, String) {
    let has_key = state.signer().jwks()["keys"].as_array().is_some_and(|keys| !keys.is_empty());
    let mut readiness = fundament_health::Readiness::new();
    readiness
        .gate("signing-key", if has_key { Ok(()) } else { Err("no signing key".to_owned()) })
        .observe("openfga", &state.fga_health);
    for (name, health) in state.installations.dependencies() {
        readiness.observe(name, &health);
    }
    readiness.answer(fundament_health::wants_verbose(query.as_deref()))
}
