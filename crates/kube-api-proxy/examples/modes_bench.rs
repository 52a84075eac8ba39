//! What a plugin call costs in each way the gateway reaches a cluster: mock (the embedded
//! cluster's admin token), sandbox (a kubeconfig file with a `system:masters` client
//! certificate) and real (a Shoot of a simulated garden, through its admin kubeconfig). Per
//! mode: the first (cold) PluginToken GET, then N identical warm ones — latency p50/p99 and
//! the round trips each cost on the gateway's own identity, to the cluster and to the garden
//! (the warm target is 0 of either). Everything runs on this machine over HTTPS (gateway to
//! cluster and garden) and HTTP (client to gateway); the round-trip counts are the figures
//! that carry over to a real deployment, the latencies are this machine's.
//!
//! `cargo run --release -p fundament-kube-api-proxy --example modes_bench -- OUT.json`

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use fundament_cluster::garden::{self, GardenConfig, ShootConfig};
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy::garden::Garden;
use fundament_kube_api_proxy::upstream::{ServerVerification, Upstream, load_kubeconfig};
use fundament_kube_api_proxy_testing::{self as testing, Credential, SeededCluster};
use fundament_tokens::Signer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

const PROD: &str = testing::CLUSTER_ID;
const INSTALLATION: &str = "acme-corp--cert-manager";
const PATH: &str = "/apis/cert-manager.io/v1/namespaces/default/certificates/web-tls-cert";
/// Warm calls per mode: well inside the 2 s the gateway caches an installation.
const WARM: usize = 300;

/// Where a mode's own calls are counted.
enum Counters {
    /// One cluster (mock, sandbox): no garden.
    Fixed(Arc<Upstream>),
    /// The garden, and the shoot once it is connected.
    Garden(Arc<Garden>),
}

impl Counters {
    fn cluster(&self) -> u64 {
        match self {
            Counters::Fixed(up) => up.own_calls(),
            Counters::Garden(garden) => garden.connected(PROD).map_or(0, |shoot| shoot.own_calls()),
        }
    }

    fn garden(&self) -> u64 {
        match self {
            Counters::Fixed(_) => 0,
            Counters::Garden(garden) => garden.garden().own_calls(),
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

/// One GET of `uri` as `token`: its status and latency (ms).
async fn get(client: &Client<HttpConnector, Body>, uri: &str, token: &str) -> anyhow::Result<(u16, f64)> {
    let started = Instant::now();
    let req =
        http::Request::get(uri).header("authorization", format!("Bearer {token}")).body(Body::empty())?;
    let res = client.request(req).await?;
    let status = res.status().as_u16();
    res.into_body().collect().await?;
    Ok((status, started.elapsed().as_secs_f64() * 1000.0))
}

/// The cold call and the warm ones of a gateway served at `url`, as `token`.
async fn measure(mode: &str, url: &str, token: &str, counters: &Counters) -> anyhow::Result<Value> {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    // The client's connection to the gateway is opened before: the cold call is the gateway's.
    client.request(http::Request::get(format!("{url}/livez")).body(Body::empty())?).await?;
    let uri = format!("{url}/clusters/{PROD}{PATH}");
    let (cluster0, garden0) = (counters.cluster(), counters.garden());
    let (status, cold_ms) = get(&client, &uri, token).await?;
    anyhow::ensure!(status == 200, "{mode}: the cold call answered {status}");
    let (cluster1, garden1) = (counters.cluster(), counters.garden());
    let mut warm = Vec::with_capacity(WARM);
    for _ in 0..WARM {
        let (status, ms) = get(&client, &uri, token).await?;
        anyhow::ensure!(status == 200, "{mode}: a warm call answered {status}");
        warm.push(ms);
    }
    let (cluster2, garden2) = (counters.cluster(), counters.garden());
    warm.sort_by(f64::total_cmp);
    let per_call = |n: u64| n as f64 / WARM as f64;
    Ok(json!({
        "cold": {
            "ms": cold_ms,
            "own_calls_to_cluster": cluster1 - cluster0,
            "round_trips_to_garden": garden1 - garden0,
        },
        "warm": {
            "calls": WARM,
            "p50_ms": percentile(&warm, 0.5),
            "p99_ms": percentile(&warm, 0.99),
            "own_calls_to_cluster_per_call": per_call(cluster2 - cluster1),
            "round_trips_to_garden_per_call": per_call(garden2 - garden1),
        },
    }))
}

/// Serves a gateway before `clusters` and measures it with alice's cert-manager token of
/// `running`'s installation.
async fn mode(
    name: &str,
    clusters: Clusters,
    counters: Counters,
    running: &fundament_cluster::Running,
) -> anyhow::Result<Value> {
    let signer = Signer::generate();
    let gateway = testing::gateway(clusters, testing::fga(), &signer, Arc::new(MemoryAudit::default()));
    let url = testing::serve(gateway).await;
    let token = testing::plugin_token(&signer, running, "alice", PROD, INSTALLATION);
    measure(name, &url, &token, &counters).await
}

async fn mock() -> anyhow::Result<Value> {
    let cluster = SeededCluster::start().await;
    let up = Arc::new(Upstream::new(&cluster.upstream_config())?);
    let clusters = Clusters::Fixed([(PROD.to_string(), Arc::clone(&up))].into());
    mode("mock", clusters, Counters::Fixed(up), &cluster.running).await
}

async fn sandbox() -> anyhow::Result<Value> {
    let cluster = SeededCluster::start().await;
    let kubeconfig = cluster.kubeconfig_file(Credential::ClientCertificate);
    let config = load_kubeconfig(&kubeconfig).await?;
    let up = Arc::new(Upstream::from_kube_config(config, ServerVerification::Required)?);
    let clusters = Clusters::Fixed([(PROD.to_string(), Arc::clone(&up))].into());
    mode("sandbox", clusters, Counters::Fixed(up), &cluster.running).await
}

async fn real() -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let repo = testing::repo();
    let shoot = ShootConfig::seeded(dir.path(), &repo, "acme-corp", "prod", PROD.parse()?)?;
    let simulated = garden::start(GardenConfig::seeded(dir.path(), &repo, vec![shoot])?).await?;
    let kubeconfig = dir.path().join("garden.kubeconfig");
    std::fs::write(&kubeconfig, simulated.kubeconfig())?;
    let config = load_kubeconfig(&kubeconfig).await?;
    let up = Upstream::from_kube_config(config, ServerVerification::Required)?;
    let garden = Arc::new(Garden::new(up, ServerVerification::Required));
    let running = &simulated.shoot("garden-acme-corp", "prod").expect("the started shoot").running;
    mode("real", Clusters::Garden(Arc::clone(&garden)), Counters::Garden(garden), running).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    // Where the results go: the first argument, else beside the other benchmarks' figures.
    let out = PathBuf::from(std::env::args().nth(1).as_deref().unwrap_or("bench/results/modes.json"));
    let mut results = serde_json::Map::new();
    results.insert("mock".into(), mock().await?);
    results.insert("sandbox".into(), sandbox().await?);
    results.insert("real".into(), real().await?);
    let result = json!({
        "what": "a PluginToken GET of one Certificate through kube-api-proxy: the first (cold) one, then identical warm ones, per way of reaching the cluster (mock: admin token; sandbox: client-certificate kubeconfig file; real: a simulated garden's Shoot through its admin kubeconfig)",
        "machine": "2 cores shared by client, gateway, clusters and garden",
        "targets": {"warm_own_calls_to_cluster_per_call": 0, "warm_round_trips_to_garden_per_call": 0},
        "results": results,
    });
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result)?)?;
    println!(
        "{:<8} {:>8} {:>6} {:>6} | {:>8} {:>8} {:>10} {:>11}",
        "mode", "cold ms", "own", "garden", "warm p50", "warm p99", "own/call", "garden/call"
    );
    for name in ["mock", "sandbox", "real"] {
        let (cold, warm) = (&results[name]["cold"], &results[name]["warm"]);
        println!(
            "{name:<8} {:>8.2} {:>6} {:>6} | {:>8.3} {:>8.3} {:>10.3} {:>11.3}",
            cold["ms"].as_f64().unwrap_or_default(),
            cold["own_calls_to_cluster"].as_u64().unwrap_or_default(),
            cold["round_trips_to_garden"].as_u64().unwrap_or_default(),
            warm["p50_ms"].as_f64().unwrap_or_default(),
            warm["p99_ms"].as_f64().unwrap_or_default(),
            warm["own_calls_to_cluster_per_call"].as_f64().unwrap_or_default(),
            warm["round_trips_to_garden_per_call"].as_f64().unwrap_or_default(),
        );
    }
    eprintln!("written to {}", out.display());
    Ok(())
}
