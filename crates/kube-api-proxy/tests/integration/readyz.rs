//! The gateway's `/readyz`: 200 once tokens can be verified and a cluster is configured, 503
//! naming what is missing otherwise; `/livez` answers either way. `?verbose` lists every check:
//! the gating ones, and OpenFGA and the cluster as the gateway's calls found them.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use fundament_authn_client::{Credentials, Keys, RevokedSessions};
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy_testing::{self as testing, SeededCluster};
use fundament_tokens::Signer;
use http::Request;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::ServiceExt;

async fn get(credentials: Credentials, clusters: Clusters, path: &str) -> (u16, String) {
    let mut gateway =
        testing::gateway(clusters, testing::fga(), &Signer::generate(), Arc::new(MemoryAudit::default()));
    gateway.credentials = credentials;
    let res = fundament_kube_api_proxy::router(Arc::new(gateway))
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body = axum::body::to_bytes(res.into_body(), 1024).await.unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

fn trusted() -> Credentials {
    testing::credentials(&Signer::generate(), &RevokedSessions::none())
}

/// Credentials following an authn that does not answer (a port that refuses connections).
fn authn_down() -> Credentials {
    let port = fundament_shared_store::testing::refused_port();
    Credentials {
        keys: Keys::from_url(&format!("http://127.0.0.1:{port}/.well-known/jwks.json")),
        revoked: RevokedSessions::none(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_with_keys_and_a_cluster() {
    let cluster = SeededCluster::start().await;
    assert_eq!(get(trusted(), cluster.clusters(), "/readyz").await, (200, "ok".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_ready_before_authns_keys_are_fetched() {
    let cluster = SeededCluster::start().await;
    let (status, body) = get(authn_down(), cluster.clusters(), "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "authn's keys (JWKS) not fetched yet"));
    assert_eq!(get(authn_down(), cluster.clusters(), "/livez").await.0, 200, "alive all the same");
    let (status, body) = get(authn_down(), cluster.clusters(), "/readyz?verbose").await;
    assert_eq!(status, 503);
    assert_eq!(
        body,
        "[-]authn-keys failed: authn's keys (JWKS) not fetched yet\n[+]authn-revocations ok\n\
         [+]clusters-configured ok\n[+]openfga ok: no call yet\n[+]cluster 019b4000…0001 ok: no call yet\n\
         readyz check failed\n"
    );
}

#[tokio::test]
async fn not_ready_without_a_cluster() {
    let (status, body) = get(trusted(), Clusters::Fixed(HashMap::new()), "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "no cluster configured"));
    let (status, body) = get(trusted(), Clusters::Fixed(HashMap::new()), "/readyz?verbose").await;
    assert_eq!(status, 503);
    assert!(body.contains("\n[-]clusters-configured failed: no cluster configured\n"), "{body}");
    assert!(body.ends_with("\nreadyz check failed\n"), "{body}");
}

/// Whether the verbose `text` lists `name` as failing with `problem`, not gating (for some
/// seconds: how many depends on the machine's pace).
fn failing(text: &str, name: &str, problem: &str) -> bool {
    let start = format!("[-]{name} failed: {problem} since ");
    text.lines().any(|line| {
        line.strip_prefix(&start)
            .and_then(|rest| rest.strip_suffix("s (not gating)"))
            .is_some_and(|seconds| seconds.parse::<u64>().is_ok())
    })
}

/// `/readyz?verbose` as the gateway's own calls find OpenFGA and the cluster (each behind its
/// development switch): failing, they are listed failing since the first failure and do not
/// gate; working again, they are listed ok; plain `/readyz` stays `ok` throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_shows_openfga_and_the_cluster_as_the_calls_found_them_without_gating() {
    use fundament_dev_faults::{Fault, FaultyCanView, Service, Switch};
    let openfga = Switch::new(Service::OpenFga);
    let cluster_switch = Switch::new(Service::Cluster);
    let faults = cluster_switch.clone();
    let cluster = SeededCluster::start_configured(move |c| c.faults = Some(faults)).await;
    let signer = Signer::generate();
    let fga = Arc::new(FaultyCanView::new(testing::fga(), openfga.clone()));
    let gateway = testing::gateway(cluster.clusters(), fga, &signer, Arc::new(MemoryAudit::default()));
    let url = testing::serve(gateway).await;
    let readyz = |path: &'static str| {
        let url = url.clone();
        async move {
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
            let res = client
                .request(Request::get(format!("{url}{path}")).body(Body::empty()).unwrap())
                .await
                .unwrap();
            let status = res.status().as_u16();
            (status, String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap())
        }
    };
    let namespaces = |token: String| {
        let url = url.clone();
        async move {
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
            let req = Request::get(format!("{url}/clusters/{}/api/v1/namespaces", testing::CLUSTER_ID))
                .header("authorization", format!("Bearer {token}"))
                .body(Body::empty())
                .unwrap();
            client.request(req).await.unwrap().status().as_u16()
        }
    };
    let alice = testing::user_token(&signer, "alice");
    let gating = "[+]authn-keys ok\n[+]authn-revocations ok\n[+]clusters-configured ok\n";
    assert_eq!(
        readyz("/readyz?verbose").await,
        (
            200,
            format!(
                "{gating}[+]openfga ok: no call yet\n[+]cluster 019b4000…0001 ok: no call yet\nreadyz check passed\n"
            )
        )
    );
    assert_eq!(namespaces(alice.clone()).await, 200);
    let all_ok = format!("{gating}[+]openfga ok\n[+]cluster 019b4000…0001 ok\nreadyz check passed\n");
    assert_eq!(readyz("/readyz?verbose").await, (200, all_ok.clone()));

    openfga.set(Fault::Down);
    assert_eq!(namespaces(alice.clone()).await, 503);
    let (status, text) = readyz("/readyz?verbose").await;
    assert_eq!(status, 200, "OpenFGA does not gate: {text}");
    assert!(failing(&text, "openfga", "unavailable"), "{text}");
    assert!(text.ends_with("[+]cluster 019b4000…0001 ok\nreadyz check passed\n"), "{text}");
    assert_eq!(readyz("/readyz").await, (200, "ok".to_owned()));

    openfga.set(Fault::None);
    cluster_switch.set(Fault::Down);
    assert_eq!(namespaces(alice.clone()).await, 503);
    let (status, text) = readyz("/readyz?verbose").await;
    assert_eq!(status, 200, "a cluster does not gate: {text}");
    assert!(text.contains("\n[+]openfga ok\n"), "{text}");
    assert!(failing(&text, "cluster 019b4000…0001", "unreachable"), "{text}");
    assert_eq!(readyz("/readyz").await, (200, "ok".to_owned()));

    cluster_switch.set(Fault::Status { status: 500 });
    assert_eq!(namespaces(alice.clone()).await, 500);
    let (_, text) = readyz("/readyz?verbose").await;
    assert!(failing(&text, "cluster 019b4000…0001", "answered HTTP 500"), "{text}");

    cluster_switch.set(Fault::None);
    assert_eq!(namespaces(alice).await, 200);
    assert_eq!(readyz("/readyz?verbose").await, (200, all_ok));
}
