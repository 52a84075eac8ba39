//! The Deployment's probes: liveness after 5 s every 10 s, readiness after 10 s every 10 s.

use axum::extract::State;
use axum::http::StatusCode;

use crate::runtime::Runtime;

/// Alive while the server answers at all: a hung process is what the kubelet should restart.
pub(crate) async fn livez() -> &'static str {
    "ok"
}

/// Ready once the plugin said so; until then the pod is kept out of rotation for page fetches.
pub(crate) async fn readyz(State(runtime): State<Runtime>) -> (StatusCode, &'static str) {
    if runtime.is_ready() { (StatusCode::OK, "ok") } else { (StatusCode::SERVICE_UNAVAILABLE, "not ready") }
}
