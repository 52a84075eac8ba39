//! kube-api-proxy: the gateway for every cluster request.
//!
//! Bearer tokens only: no cookie is a credential here, so nothing a page can
//! make a browser send by itself (a navigation, a form, a `no-cors` fetch)
//! authorizes anything. Every answer is hardened ([`cors::harden`]): never a
//! document, never a cookie, only the gateway's own CORS; of the cluster's
//! answer only the headers an API answer needs come back (a backend behind a
//! `proxy` subresource sets nothing else on the gateway's origin). Each caller's
//! calls in flight are bounded ([`in_flight`]), its streams too ([`limits`]).
//!
//! - **User path**: a UserToken of a live session → `can_view` → forwarded as
//!   the user's ServiceAccount `fundament-system/fundament-<user-id>`.
//! - **PluginToken path**: token → cluster binding → `can_view` → request
//!   parse → installation still the one minted for → `allowedResources` of
//!   its pinned definition → SubjectAccessReview of the user → forwarded as
//!   the plugin's ServiceAccount `plugin-<installation>/plugin`, so the
//!   cluster's RBAC for the plugin decides. One audit line per request.
#![forbid(unsafe_code)]

pub mod audit;
pub mod audit_api;
pub mod audit_store;
pub mod cache;
pub mod clusters;
pub mod cors;
pub mod garden;
pub mod gateway;
pub mod in_flight;
pub mod installations;
pub mod kubereq;
pub mod limits;
mod server_errors;
pub mod upstream;

use std::sync::Arc;

pub use gateway::{AllowedResource, DefinitionSource, Gateway, PublishedDefinition};

/// The gateway's routes: `/clusters/…` plus `/livez` and `/readyz`.
pub fn router(gateway: Arc<Gateway>) -> axum::Router {
    axum::Router::new()
        .route("/livez", axum::routing::get(|| async { "ok" }))
        .route("/readyz", axum::routing::get(readyz))
        .route("/audit/v1/clusters/{cluster}/calls", axum::routing::get(audit_api::calls))
        .fallback(gateway::handle)
        .with_state(gateway)
        .layer(fundament_telemetry::catch_panics(PANIC_ANSWER))
}

/// `GET /readyz`: `200 ok` once tokens can be verified (authn's keys fetched, the revoked
/// sessions received) and a cluster is configured; else `503` and the reason, in plain text.
/// `?verbose` lists each check, the gating ones and, not gating, OpenFGA and each cluster as
/// the gateway's own calls found them (`fundament_health`).
///
/// What gates: without authn's keys and revocations no token can be judged, and without a
/// cluster nothing can be served, so such a replica must get no traffic. OpenFGA and the
/// clusters do not gate: they are shared by every replica, so their outage would take all of
/// them out of the load balancer at once, failing even what does not need them (another
/// cluster, the answers that say what is down); each request that needs them gets its own
/// 503 naming them instead. Cheap: no call to authn once keys are held, none to OpenFGA or a
/// cluster ever.
async fn readyz(
    axum::extract::State(gateway): axum::extract::State<Arc<Gateway>>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> (http::StatusCode, String) {
    let mut readiness = fundament_health::Readiness::new();
    gateway.credentials.gate(&mut readiness).await;
    let configured = if gateway.clusters.configured() { Ok(()) } else { Err("no cluster configured".into()) };
    readiness.gate("clusters-configured", configured).observe("openfga", &gateway.fga_health);
    for (name, health) in gateway.clusters.dependencies() {
        readiness.observe(name, &health);
    }
    readiness.answer(fundament_health::wants_verbose(query.as_deref()))
}

/// A handler that panics answers the API server's 500 Status.
const PANIC_ANSWER: fundament_telemetry::PanicAnswer = fundament_telemetry::PanicAnswer(|| {
    ("application/json", fundament_kube_core::Status::internal_error().body())
});
