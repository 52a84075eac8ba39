//! plugin-proxy's `/readyz`: 200 once tokens can be verified and a cluster is configured, 503
//! naming what is missing otherwise; `/livez` answers either way. And what authn's keys being
//! out of reach means for a frame's first navigation: 503, not 404.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use fundament_authn_client::{Credentials, Keys, RevokedSessions};
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy_testing::{self as testing, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_plugin_proxy::{FrameKey, Origins, PluginProxy};
use fundament_tokens::Signer;
use http::Request;
use tower::ServiceExt;

async fn get(credentials: Credentials, clusters: Clusters, path: &str) -> (u16, String) {
    get_on("localhost:8082", credentials, clusters, path).await.0
}

/// `path` on `host` (an installation's origin is `<installation>.localhost:8082`).
async fn get_on(
    host: &str,
    credentials: Credentials,
    clusters: Clusters,
    path: &str,
) -> ((u16, String), http::HeaderMap) {
    let proxy = PluginProxy {
        origins: Origins {
            console: "http://localhost:3000".into(),
            kube_api_proxy: "http://localhost:8081".into(),
            plugins: PluginOrigins::from_base("http://localhost:8082").unwrap(),
        },
        credentials,
        fga: testing::fga(),
        fga_health: Default::default(),
        clusters,
        sdk_dir: None,
        frame_key: FrameKey::generate(),
        used_tickets: Default::default(),
        runtime_timeout: fundament_plugin_proxy::RUNTIME_ANSWER_TIMEOUT,
        runtimes: Default::default(),
        streams: Default::default(),
        bodies: Default::default(),
        pages: Default::default(),
    };
    let req = Request::get(format!("http://{host}{path}"))
        .header(http::header::HOST, host)
        .body(Body::empty())
        .unwrap();
    let res = fundament_plugin_proxy::router(Arc::new(proxy)).oneshot(req).await.unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), 1024).await.unwrap();
    ((status, String::from_utf8(body.to_vec()).unwrap()), headers)
}

fn trusted() -> Credentials {
    testing::credentials(&Signer::generate(), &RevokedSessions::none())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_with_keys_and_a_cluster_not_before_authns_keys() {
    let cluster = SeededCluster::start().await;
    assert_eq!(get(trusted(), cluster.clusters(), "/readyz").await, (200, "ok".into()));

    let port = fundament_shared_store::testing::refused_port();
    let authn_down = || Credentials {
        keys: Keys::from_url(&format!("http://127.0.0.1:{port}/.well-known/jwks.json")),
        revoked: RevokedSessions::none(),
    };
    let (status, body) = get(authn_down(), cluster.clusters(), "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "authn's keys (JWKS) not fetched yet"));
    assert_eq!(get(authn_down(), cluster.clusters(), "/livez").await.0, 200, "alive all the same");
}

/// A frame ticket whose key cannot be looked up (authn's JWKS is out of reach) is a passing
/// failure: 503 with Retry-After, never the 404 of a bad ticket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_that_cannot_be_checked_while_authn_is_down_is_503_not_404() {
    let cluster = SeededCluster::start().await;
    let port = fundament_shared_store::testing::refused_port();
    let authn_down = || Credentials {
        keys: Keys::from_url(&format!("http://127.0.0.1:{port}/.well-known/jwks.json")),
        revoked: RevokedSessions::none(),
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let uid = cluster.installation("acme-corp--cert-manager").metadata.uid;
    let cluster_id = "019b4000-2000-7000-8000-000000000001";
    let ticket = Signer::generate().sign_frame_ticket(
        "alice@acme-corp.com",
        "session-1",
        now + 3600,
        cluster_id,
        &uid,
        "acme-corp--cert-manager",
        now,
        60,
    );
    let path = format!(
        "/clusters/{cluster_id}/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html?fundament-ticket={ticket}"
    );
    let host = "acme-corp--cert-manager.localhost:8082";
    let ((status, body), headers) = get_on(host, authn_down(), cluster.clusters(), &path).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("keys cannot be fetched"), "{body}");
    assert_eq!(headers[http::header::RETRY_AFTER], "5");
    // With the keys there, the same kind of ticket from a signer authn does not know is refused as
    // not found (a bad ticket reveals nothing).
    let ((status, _), _) = get_on(host, trusted(), cluster.clusters(), &path).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn not_ready_without_a_cluster() {
    let (status, body) = get(trusted(), Clusters::Fixed(HashMap::new()), "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "no cluster configured"));
}
