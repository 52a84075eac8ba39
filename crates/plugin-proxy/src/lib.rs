//! plugin-proxy: plugin pages, each installation on an origin of its own, and the SDK.
//!
//! Every installation's pages are served from `<scheme>://<installation>.<plugins host>`
//! (see `fundament-plugin-origin`), so plugins share no storage, cookies, caches or frames.
//! The plugins host itself serves the SDK only.
//!
//! `GET /clusters/<cluster-id>/plugins/<installation-name>/<version>/console/<file>` on the
//! installation's origin:
//! 1. a frame's first navigation carries a single-use frame ticket (`?fundament-ticket=…`,
//!    minted by authn for user × cluster × installation): it is exchanged for the frame cookie
//!    of that origin and answered with a redirect to the clean URL;
//! 2. every other request needs that cookie.
//!
//! Either way the user may still view the cluster (`can_view`), the installation exists as the
//! ticket named it (same uid) and is pinned to `<version>`; otherwise the answer is a 404 that
//! reveals nothing. The file comes from the plugin's Service through the cluster's service proxy,
//! streamed with a size cap, with the strict plugin CSP and immutable caching. The console's
//! session cookie is never read here (it is never sent to these origins either).
//!
//! A runtime that fails never holds a frame: no answer head within
//! [`PluginProxy::runtime_timeout`] ([`RUNTIME_ANSWER_TIMEOUT`] unless set) is `504`, a runtime
//! that cannot be reached `503`, one that answers an error or a page, script or stylesheet
//! declared as something else `502`; each in plain text naming the installation and the kind of
//! failure, uncached, with the plugin CSP and `nosniff`.
//!
//! `GET /plugins/sdk/v1/<file>`: the plugin SDK, on every origin of the proxy.
//! `/installations/<installation-id>/runtime/api/…`: a page's own runtime API, with its
//! PluginToken, from its own origin.
#![forbid(unsafe_code)]

pub mod asset_path;
pub mod frame_cookie;
mod handler;
pub mod in_flight;
mod installation;
pub mod tickets;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use fundament_authn_client::Credentials;
use fundament_fga::CanView;
use fundament_health::DependencyHealth;
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy::upstream::{Upstream, UpstreamError};
use fundament_plugin_origin::{PluginHost, PluginOrigins};

pub use frame_cookie::{FrameKey, FrameKeyError};

/// The query parameter that carries a frame ticket on a frame's first navigation.
pub use fundament_plugin_origin::FRAME_TICKET_PARAM as TICKET_PARAM;

/// The origins the plugin CSP names.
#[derive(Debug, Clone)]
pub struct Origins {
    pub console: String,
    pub kube_api_proxy: String,
    /// The plugins host: each installation's origin hangs off it.
    pub plugins: PluginOrigins,
}

impl Origins {
    /// The Content-Security-Policy of every plugin page. `'self'` is the installation's own
    /// origin: its files, its SDK copy and its runtime API; besides, only kube-api-proxy.
    pub fn csp(&self) -> String {
        fundament_plugin_origin::page_csp(&self.kube_api_proxy, &self.console)
    }
}

/// Where each installation's runtime is: the pod behind its Service, or a process on this machine.
#[derive(Default)]
pub enum Runtimes {
    /// Behind the installation's Service `plugin-<installation>`, through the cluster's service proxy.
    #[default]
    ServiceProxy,
    /// On this machine, by installation name: a sandbox cluster may run no plugin pods, so
    /// `fundament dev --mode sandbox` serves each plugin folder itself.
    Local(HashMap<String, Arc<Upstream>>),
}

impl Runtimes {
    /// Runtimes on loopback ports, by installation name.
    pub fn local(
        addrs: impl IntoIterator<Item = (String, std::net::SocketAddr)>,
    ) -> Result<Self, UpstreamError> {
        let mut map = HashMap::new();
        for (name, addr) in addrs {
            map.insert(name, Arc::new(Upstream::loopback(addr)?));
        }
        Ok(Runtimes::Local(map))
    }

    /// The connection and the path of `path` (`console/…`, `api/…`) of installation `name`'s
    /// runtime, given its cluster's connection; `None` for a runtime this proxy does not know.
    fn route(&self, cluster: Arc<Upstream>, name: &str, path: &str) -> Option<(Arc<Upstream>, String)> {
        match self {
            Runtimes::ServiceProxy => Some((
                cluster,
                format!("/api/v1/namespaces/plugin-{name}/services/http:plugin-{name}:8080/proxy/{path}"),
            )),
            Runtimes::Local(map) => map.get(name).map(|up| (Arc::clone(up), format!("/{path}"))),
        }
    }
}

pub struct PluginProxy {
    pub origins: Origins,
    /// authn's public keys (frame tickets, PluginTokens) and revoked sessions.
    pub credentials: Credentials,
    pub fga: Arc<dyn CanView>,
    /// What the `can_view` checks found of OpenFGA, for `/readyz?verbose`
    /// ([`PluginProxy::can_view`] records every outcome).
    pub fga_health: DependencyHealth,
    /// The clusters by canonical id (reached with the proxy's credentials).
    pub clusters: Clusters,
    /// Where each installation's runtime (its pages, its runtime API) is reached.
    pub runtimes: Runtimes,
    /// Where plugin-sdk.js, plugin-sdk.css and plugin-sdk.d.ts are.
    pub sdk_dir: Option<PathBuf>,
    /// Seals the frame cookies.
    pub frame_key: FrameKey,
    /// Tickets already exchanged.
    pub used_tickets: tickets::UsedTickets,
    /// How long a runtime may take to send the head of a page's answer before the frame gets
    /// a `504`: [`RUNTIME_ANSWER_TIMEOUT`] in production (tests shorten it).
    pub runtime_timeout: Duration,
    /// Open runtime calls, each holding a slot of its user and its PluginToken until its answer
    /// ends (a runtime may stream without end). Counted with kube-api-proxy's watches when both
    /// use one store (`fundament dev`; replicas with `--shared-store`).
    pub streams: fundament_kube_api_proxy::limits::WatchLimits,
    /// The bytes of runtime calls' request bodies held at once, per user and in all (a body is
    /// read whole before it goes on): kube-api-proxy's bounds ([`fundament_kube_api_proxy::in_flight`]).
    /// Its bounds on calls never bind first here: the calls are streams, bounded by `streams`.
    pub bodies: fundament_kube_api_proxy::in_flight::CallLimits,
    /// Page answers in flight per installation, and how long each may take.
    pub pages: in_flight::PageLimits,
}

/// How long a plugin's runtime may take to send the head of a page's answer (through the
/// cluster's service proxy, or directly in sandbox mode). A runtime serves static files, so a
/// healthy one answers in milliseconds; 10 s leaves room for a cold pod and a slow cluster and
/// is well under the 30 s the cluster connection waits for any head (a real API server's service
/// proxy has no limit of its own: proxying is long-running there), so the frame learns what
/// happened (`504`, naming the installation) instead of waiting on a hung runtime.
pub const RUNTIME_ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

impl PluginProxy {
    /// What the request's host names: the plugins host, an installation's origin, or nothing
    /// of ours (a misdirected or DNS-rebound request).
    pub(crate) fn host_of(&self, req: &axum::extract::Request) -> Option<PluginHost> {
        let host = req
            .uri()
            .authority()
            .map(|a| a.as_str().to_string())
            .or_else(|| req.headers().get(http::header::HOST)?.to_str().ok().map(str::to_string))?;
        self.origins.plugins.host(&host)
    }

    /// Whether `user` may view `cluster_id` (OpenFGA's `can_view`), the outcome recorded in
    /// [`PluginProxy::fga_health`]. A check that cannot be made is answered in plain text
    /// naming the authorization service, `503` (`504` when it did not answer in time), the
    /// same words as the gateway's; the cause names OpenFGA's address and is only logged, here.
    pub(crate) async fn can_view(
        &self,
        user: &str,
        cluster_id: &str,
    ) -> Result<bool, axum::response::Response> {
        use axum::response::IntoResponse;
        match self.fga.can_view(user, cluster_id).await {
            Ok(allowed) => {
                self.fga_health.record_ok();
                Ok(allowed)
            }
            Err(e) => {
                self.fga_health.record_failure(e.summary());
                tracing::error!(error = %e, cluster_id, "plugin-proxy: can_view could not be checked");
                let status = if e.is_timeout() {
                    http::StatusCode::GATEWAY_TIMEOUT
                } else {
                    http::StatusCode::SERVICE_UNAVAILABLE
                };
                let text = [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")];
                Err((status, text, e.client_message()).into_response())
            }
        }
    }
}

/// `GET /readyz`: `200 ok` once frame tickets and PluginTokens can be verified (authn's keys
/// fetched, the revoked sessions received) and a cluster is configured; else `503` and the
/// reason, in plain text. `?verbose` lists each check, the gating ones and, not gating, OpenFGA
/// and each cluster as plugin-proxy's own calls found them. OpenFGA and the clusters do not
/// gate, as in kube-api-proxy: every replica shares them, so their outage would take all
/// replicas out of the load balancer at once, while each page that needs them answers its own
/// error naming them. No call to OpenFGA or a cluster is made for it.
async fn readyz(
    axum::extract::State(proxy): axum::extract::State<Arc<PluginProxy>>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> (http::StatusCode, String) {
    let mut readiness = fundament_health::Readiness::new();
    proxy.credentials.gate(&mut readiness).await;
    let configured = if proxy.clusters.configured() { Ok(()) } else { Err("no cluster configured".into()) };
    readiness.gate("clusters-configured", configured).observe("openfga", &proxy.fga_health);
    for (name, health) in proxy.clusters.dependencies() {
        readiness.observe(name, &health);
    }
    readiness.answer(fundament_health::wants_verbose(query.as_deref()))
}

/// The largest page or asset passed on.
pub const MAX_ASSET: usize = 32 * 1024 * 1024;

pub fn router(proxy: Arc<PluginProxy>) -> axum::Router {
    let health = axum::Router::new()
        .route("/livez", axum::routing::get(|| async { "ok" }))
        .route("/readyz", axum::routing::get(readyz))
        .route_layer(axum::middleware::from_fn_with_state(Arc::clone(&proxy), platform_hosts_only));
    axum::Router::new()
        .merge(health)
        .route("/plugins/sdk/v1/{file}", axum::routing::get(handler::sdk))
        .route("/installations/{*rest}", axum::routing::any(installation::handle))
        .fallback(handler::asset)
        .with_state(proxy)
        // A handler that panics answers a plain 500; plugin-proxy serves on.
        .layer(fundament_telemetry::catch_panics(fundament_telemetry::PanicAnswer(|| {
            ("text/plain; charset=utf-8", "internal error; see the plugin-proxy log".to_string())
        })))
        .layer(axum::middleware::map_response(origin_keyed))
}

/// The health answers are the platform's, for probes and operators (by pod address or the
/// plugins host): never on an installation's origin, where that plugin's pages could read them
/// (`/readyz?verbose` names authn, OpenFGA and every cluster, with their failures).
async fn platform_hosts_only(
    axum::extract::State(proxy): axum::extract::State<Arc<PluginProxy>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match proxy.host_of(&req) {
        Some(PluginHost::Installation(_)) => handler::not_found(),
        Some(PluginHost::Base) | None => next.run(req).await.into_response(),
    }
}

/// Every answer asks for an origin-keyed agent cluster. Plugin origins may share the console's
/// site (`console.example.io`, `*.plugins.example.io`); site isolation would then run a plugin
/// page in the console's process, on its thread, and a page that never yields would freeze the
/// console. Chromium gives an origin-keyed cluster a process of its own (on desktop, within its
/// process limits). On every answer, error pages included: the first document of an origin in
/// a tab decides its keying for the whole tab.
async fn origin_keyed(mut response: axum::response::Response) -> axum::response::Response {
    response.headers_mut().insert("origin-agent-cluster", http::HeaderValue::from_static("?1"));
    response
}
