//! authn down while the gateway serves: tokens of the keys it holds go on working, and a token
//! of a key it has not fetched yet (authn rotated just before it went down) is a 503 to try
//! again, never a 401 that would send the user to sign in for nothing.

use crate::common;

use std::sync::Arc;

use fundament_authn_client::{Credentials, Keys, RevokedSessions};
use fundament_kube_api_proxy::Gateway;
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy_testing::{self as testing, PluginFolders, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_tokens::{Signer, Verifier};
use http::Method;

const PROD: &str = testing::CLUSTER_ID;

#[tokio::test]
async fn a_key_the_gateway_cannot_look_up_while_authn_is_down_is_503_not_401() {
    let cluster = SeededCluster::start().await;
    let mut signer = Signer::generate();
    // The gateway holds the current keys and follows a JWKS URL where nothing answers: authn
    // is down.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks = format!("http://{}/.well-known/jwks.json", dead.local_addr().unwrap());
    drop(dead);
    let held = Verifier::from_jwks(&signer.jwks()).unwrap();
    let gateway = Gateway {
        origins: Origins { plugins: PluginOrigins::from_base(testing::PLUGINS_BASE).unwrap() },
        credentials: Credentials {
            keys: Keys::fixed_then_follow(held, &jwks),
            revoked: RevokedSessions::none(),
        },
        fga: testing::fga(),
        fga_health: Default::default(),
        clusters: cluster.clusters(),
        definitions: Arc::new(PluginFolders::load()),
        audit: Arc::new(MemoryAudit::default()),
        watches: Default::default(),
        calls: Default::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, fundament_kube_api_proxy::router(Arc::new(gateway))).await.unwrap()
    });
    let path = format!("/clusters/{PROD}/api/v1/namespaces/default/configmaps");
    let get = |token: String| {
        let (url, path) = (url.clone(), path.clone());
        async move {
            let bearer = format!("Bearer {token}");
            common::request(&url, Method::GET, &path, &[("authorization", &bearer)], None).await
        }
    };

    let (status, _, body) = get(testing::user_token(&signer, "alice")).await;
    assert_eq!(status, 200, "a token of a key at hand needs no authn: {body}");

    signer.rotate();
    let (status, _, body) = get(testing::user_token(&signer, "alice")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "ServiceUnavailable");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("authn") && message.contains("try again"), "{message}");

    // A malformed token is unauthorized whatever the state of the keys.
    let (status, _, _) = get("not.a.token".to_owned()).await;
    assert_eq!(status, 401);
}
