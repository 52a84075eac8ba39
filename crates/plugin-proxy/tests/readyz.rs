//! plugin-proxy's `/readyz`: 200 once tokens can be verified and a cluster is configured, 503
//! naming what is missing otherwise; `/livez` answers either way.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use fundament_authn_client::{Credentials, Keys, RevokedSessions};
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy::testing::{self, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_plugin_proxy::{FrameKey, Origins, PluginProxy};
use fundament_tokens::Signer;
use http::Request;
use tower::ServiceExt;

async fn get(credentials: Credentials, clusters: Clusters, path: &str) -> (u16, String) {
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
    };
    let req = Request::get(format!("http://localhost:8082{path}")).body(Body::empty()).unwrap();
    let res = fundament_plugin_proxy::router(Arc::new(proxy)).oneshot(req).await.unwrap();
    let status = res.status().as_u16();
    let body = axum::body::to_bytes(res.into_body(), 1024).await.unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

fn trusted() -> Credentials {
    testing::credentials(&Signer::generate(), &RevokedSessions::none())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_with_keys_and_a_cluster_not_before_authns_keys() {
    let cluster = SeededCluster::start().await;
    assert_eq!(get(trusted(), cluster.clusters(), "/readyz").await, (200, "ok".into()));

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let authn_down = || Credentials {
        keys: Keys::from_url(&format!("http://127.0.0.1:{port}/.well-known/jwks.json")),
        revoked: RevokedSessions::none(),
    };
    let (status, body) = get(authn_down(), cluster.clusters(), "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "authn's keys (JWKS) not fetched yet"));
    assert_eq!(get(authn_down(), cluster.clusters(), "/livez").await.0, 200, "alive all the same");
}

#[tokio::test]
async fn not_ready_without_a_cluster() {
    let (status, body) = get(trusted(), Clusters::Fixed(HashMap::new()), "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "no cluster configured"));
}
