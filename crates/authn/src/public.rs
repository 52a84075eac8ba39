//! The public endpoints: the signing keys as a JWKS, and liveness.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
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
