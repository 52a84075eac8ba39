//! kube-api-proxy: the gateway for every cluster request.
//!
//! Bearer tokens only: no cookie is a credential here, so nothing a page can
//! make a browser send by itself (a navigation, a form, a `no-cors` fetch)
//! authorizes anything. Every answer is hardened ([`cors::harden`]): never a
//! document, never a cookie, only the gateway's own CORS.
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
pub mod cache;
pub mod clusters;
pub mod cors;
pub mod garden;
pub mod gateway;
pub mod kubereq;
pub mod limits;
#[cfg(feature = "test-support")]
pub mod testing;
pub mod upstream;

use std::sync::Arc;

pub use gateway::{AllowedResource, DefinitionSource, Gateway, PublishedDefinition};

/// The gateway's routes: `/clusters/…` plus `/livez` and `/readyz`.
pub fn router(gateway: Arc<Gateway>) -> axum::Router {
    axum::Router::new()
        .route("/livez", axum::routing::get(|| async { "ok" }))
        .route("/readyz", axum::routing::get(|| async { "ready" }))
        .fallback(gateway::handle)
        .with_state(gateway)
        .layer(fundament_telemetry::catch_panics(PANIC_ANSWER))
}

/// A handler that panics answers the API server's 500 Status.
const PANIC_ANSWER: fundament_telemetry::PanicAnswer = fundament_telemetry::PanicAnswer(|| {
    ("application/json", fundament_kube_core::Status::internal_error().body())
});
