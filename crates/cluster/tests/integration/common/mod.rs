//! A cluster on a free port with the repository's fixtures, for tests.
#![allow(dead_code)]

use std::path::PathBuf;

use fundament_cluster::{ClusterConfig, Running};

pub mod kubectl;

pub fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
        .join("../..")
}

pub struct TestCluster {
    pub running: Running,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

pub fn config(dir: &std::path::Path) -> ClusterConfig {
    ClusterConfig::seeded(dir.join("state"), &repo()).unwrap()
}

pub async fn start() -> TestCluster {
    start_with(|_| {}).await
}

/// A fresh cluster and a client of it as the admin. The cluster stops when
/// the first is dropped: keep it for as long as the client is used.
pub async fn admin_client() -> (TestCluster, kube::Client) {
    let tc = start().await;
    let client = tc.client().await;
    (tc, client)
}

pub async fn start_with(adjust: impl FnOnce(&mut ClusterConfig)) -> TestCluster {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    adjust(&mut config);
    let running = fundament_cluster::start(config).await.expect("cluster starts");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, running.kubeconfig()).unwrap();
    TestCluster { running, dir, kubeconfig }
}

impl TestCluster {
    pub async fn client(&self) -> kube::Client {
        client_for(&self.running.kubeconfig()).await
    }

    /// A kubeconfig that authenticates with `token` instead of the admin token.
    pub fn kubeconfig_with_token(&self, token: &str) -> String {
        fundament_cluster::kubeconfig::admin(&self.running.url, &self.running.ca_pem, token)
    }
}

pub async fn client_for(kubeconfig: &str) -> kube::Client {
    let kc = kube::config::Kubeconfig::from_yaml(kubeconfig).unwrap();
    let mut config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default()).await.unwrap();
    // Tests look at each answer as it is: no retries of 503s behind their back.
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

/// Sends `body` as it is (bad bytes included) and reads the answer: the status code and the
/// body as JSON (`Null` when it is not JSON).
pub async fn send_raw(
    client: &kube::Client,
    method: http::Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, serde_json::Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(kube::client::Body::from(body))
        .unwrap();
    let res = client.send(req).await.unwrap();
    let code = res.status().as_u16();
    let bytes = res.into_body().collect_bytes().await.unwrap();
    (code, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
}

/// Who the cluster says `client` is: the `userInfo` of a SelfSubjectReview (`kubectl auth whoami`).
pub async fn whoami(client: &kube::Client) -> serde_json::Value {
    let (code, review) = send_raw(
        client,
        http::Method::POST,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        "application/json",
        br#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#.to_vec(),
    )
    .await;
    assert_eq!(code, 201, "{review}");
    review["status"]["userInfo"].clone()
}
