//! The gateway's log under load, as production writes it: the service's HTTP layer, the JSON
//! subscriber at the default filter, 64 clients at once on both paths, the embedded cluster in
//! the same process. Each line names its own request and no other (a span of one request
//! must never become the parent of another's), and each request costs one line.
//!
//! A binary of its own (not in tests/integration/): the subscriber is the process's global one, as
//! in a service, and no other test may log into it.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use fundament_kube_api_proxy::audit::{LogAudit, MemoryAudit};
use fundament_kube_api_proxy_testing::{self as testing, CLUSTER_ID, SeededCluster};
use fundament_tokens::Signer;
use serde_json::Value;
use tracing_subscriber::EnvFilter;

const CLIENTS: usize = 64;
const ROUNDS: usize = 4;

/// The spans a line names: its `spans` list, outermost first (the current one is its last).
fn spans(line: &Value) -> Vec<&Value> {
    line["spans"].as_array().map(|s| s.iter().collect()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_64_concurrent_requests_each_line_names_only_its_own_request() {
    let buffer = fundament_telemetry::CapturedLogs::default();
    let filter = EnvFilter::new(fundament_telemetry::DEFAULT_FILTER);
    let subscriber =
        fundament_telemetry::subscriber(fundament_telemetry::LogFormat::Json, filter, buffer.clone());
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let cluster = SeededCluster::start().await;
    let signer = Signer::generate();
    let mut gateway =
        testing::gateway(cluster.clusters(), testing::fga(), &signer, Arc::new(MemoryAudit::default()));
    gateway.audit = Arc::new(LogAudit);
    // The router as `fundament kube-api-proxy` serves it.
    let router = fundament_kube_api_proxy::router(Arc::new(gateway)).layer(fundament_telemetry::http_layer());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let user = testing::user_token(&signer, "alice");
    let plugin =
        testing::plugin_token(&signer, &cluster.running, "alice", CLUSTER_ID, "acme-corp--cert-manager");
    // Every request has a path of its own, so a line's spans say which requests it names.
    let clients = (0..CLIENTS).map(|client| {
        let (url, user, plugin) = (url.clone(), user.clone(), plugin.clone());
        tokio::spawn(async move {
            let mut paths = Vec::new();
            for round in 0..ROUNDS {
                let name = format!("c{client}-r{round}");
                let (path, token) = if (client + round) % 2 == 0 {
                    (format!("/clusters/{CLUSTER_ID}/api/v1/namespaces/default/configmaps/{name}"), &user)
                } else {
                    let certificates = "apis/cert-manager.io/v1/namespaces/default/certificates";
                    (format!("/clusters/{CLUSTER_ID}/{certificates}/{name}"), &plugin)
                };
                let (status, answer) = common::get(&url, &path, token).await;
                assert_eq!(status, 404, "{path}: {answer}");
                paths.push(path);
            }
            paths
        })
    });
    let mut asked = HashSet::new();
    for client in clients.collect::<Vec<_>>() {
        asked.extend(client.await.unwrap());
    }
    assert_eq!(asked.len(), CLIENTS * ROUNDS);

    let text = buffer.text();
    let mut lines_per_request: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let json: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        // Spans of one request carry the same path; a line may name one request at most.
        let named: HashSet<&str> = spans(&json).iter().filter_map(|span| span["path"].as_str()).collect();
        assert!(named.len() <= 1, "a line names {} requests: {line}", named.len());
        assert!(
            json["spans"].as_array().map_or(0, Vec::len) <= 1,
            "a line carries nested request spans: {line}"
        );
        if let Some(path) = named.into_iter().next()
            && asked.contains(path)
        {
            *lines_per_request.entry(path.to_string()).or_default() += 1;
        }
    }
    for path in &asked {
        assert_eq!(lines_per_request.get(path), Some(&1), "lines of {path}:\n{text}");
    }
}
