//! `GET /sessions/revocations`: the revoked sessions for verifiers (the
//! console, kube-api-proxy, plugin-proxy), as newline-delimited JSON that
//! stays open: first `{"type":"SNAPSHOT","revoked":[{"sid","exp"}…]}`, then
//! `{"type":"REVOKED","sid","exp"}` for each sign-out as it happens, and
//! `{"type":"HEARTBEAT"}` every few seconds so a verifier notices a dead
//! connection. A verifier that falls behind is disconnected and reconnects
//! to a fresh snapshot; so is every verifier when the replica loses the shared
//! store or shuts down. Session ids are random and say nothing about users.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::clock;
use crate::state::AuthnState;

/// How often an idle stream says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

fn line(value: serde_json::Value) -> bytes::Bytes {
    let mut text = value.to_string();
    text.push('\n');
    bytes::Bytes::from(text)
}

pub(crate) async fn revocations(State(state): State<Arc<AuthnState>>) -> Response {
    let events = state.revocations.subscribe();
    let snapshot = match state.revocations.snapshot(clock::now()) {
        Ok(snapshot) => {
            state.revocations.refusals.recovered();
            snapshot
        }
        // This replica cannot vouch for the set (shared store lost, or shutting down): 503, and
        // the verifier keeps the set it has and reconnects (through a load balancer, possibly to
        // another replica). Every verifier reconnects every few seconds until then: the first
        // refusal of the outage is logged, the others at DEBUG (the request line too).
        Err(error) => {
            if state.revocations.refusals.failed() {
                tracing::warn!(%error, "revocation stream refused until the set can be vouched for again");
            } else {
                tracing::debug!(%error, "revocation stream refused");
            }
            let mut response = Response::new(Body::from(format!("{error}\n")));
            *response.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            response.extensions_mut().insert(fundament_telemetry::FailureReported);
            return response;
        }
    };
    let first = line(json!({"type": "SNAPSHOT", "revoked": snapshot}));
    let stream = futures::stream::unfold((Some(first), events), |(first, mut events)| async move {
        if let Some(first) = first {
            return Some((Ok::<_, std::convert::Infallible>(first), (None, events)));
        }
        let next = tokio::select! {
            event = events.recv() => match event {
                Ok(r) => line(json!({"type": "REVOKED", "sid": r.sid, "exp": r.exp})),
                // Lagging or closed: end, and let the verifier start over from a snapshot.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            },
            () = tokio::time::sleep(HEARTBEAT) => line(json!({"type": "HEARTBEAT"})),
        };
        Some((Ok(next), (None, events)))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
