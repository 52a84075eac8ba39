//! plugin-proxy: plugin pages and the SDK, on an origin of their own.
//!
//! `GET /clusters/<cluster-id>/plugins/<installation-name>/<version>/console/<file>`:
//! the user's UserToken (cookie, as the iframe navigation sends it) and
//! `can_view` (a 404 otherwise, so nothing reveals what exists), the
//! installation exists and is pinned to `<version>` (404 otherwise), then the
//! file from the plugin's Service through the cluster's service proxy —
//! answered with the strict plugin CSP and immutable caching.
//! `GET /plugins/sdk/v1/<file>`: the plugin SDK.
#![forbid(unsafe_code)]

pub mod asset_path;
mod handler;
mod installation;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use fundament_fga::CanView;
use fundament_kube_api_proxy::keys::Keys;
use fundament_kube_api_proxy::upstream::Upstream;

/// The origins the plugin CSP names.
#[derive(Debug, Clone)]
pub struct Origins {
    pub console: String,
    pub kube_api_proxy: String,
    pub plugin_proxy: String,
}

impl Origins {
    /// The Content-Security-Policy of every plugin page.
    pub fn csp(&self) -> String {
        let calls = format!("{} {}", self.kube_api_proxy, self.plugin_proxy);
        format!(
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src {calls}; form-action {calls}; frame-ancestors {}; base-uri 'none'; object-src 'none'",
            self.console
        )
    }
}

pub struct PluginProxy {
    pub origins: Origins,
    /// authn's public keys (UserTokens in the cookie).
    pub keys: Keys,
    pub fga: Arc<dyn CanView>,
    /// Canonical cluster id → its API server (with the proxy's credentials).
    pub clusters: HashMap<String, Arc<Upstream>>,
    /// Where plugin-sdk.js, plugin-sdk.css and plugin-sdk.d.ts are.
    pub sdk_dir: Option<PathBuf>,
}

/// The largest page or asset passed on.
pub const MAX_ASSET: usize = 32 * 1024 * 1024;

pub fn router(proxy: Arc<PluginProxy>) -> axum::Router {
    axum::Router::new()
        .route("/livez", axum::routing::get(|| async { "ok" }))
        .route("/readyz", axum::routing::get(|| async { "ok" }))
        .route("/plugins/sdk/v1/{file}", axum::routing::get(handler::sdk))
        .route("/installations/{*rest}", axum::routing::any(installation::handle))
        .fallback(handler::asset)
        .with_state(proxy)
}
