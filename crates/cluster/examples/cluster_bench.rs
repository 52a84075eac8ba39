//! Benchmark of the embedded cluster, over real HTTPS on loopback:
//! - a list of 1,000 objects as a Table with a label selector (p50/p99),
//! - the time for 100 concurrent watchers to all receive one update,
//! - resident memory before and after loading the objects.
//!
//! `cargo run --release -p fundament-cluster --example cluster_bench -- OUT.json`

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fundament_cluster::ClusterConfig;
use futures::StreamExt;
use http_body_util::BodyExt;
use serde_json::json;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(|l| l.to_string()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn client(kubeconfig: &str) -> anyhow::Result<kube::Client> {
    let kc = kube::config::Kubeconfig::from_yaml(kubeconfig)?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

async fn send(
    c: &kube::Client,
    method: http::Method,
    uri: &str,
    accept: &str,
    body: Vec<u8>,
) -> anyhow::Result<(u16, bytes::Bytes)> {
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("accept", accept)
        .header("content-type", "application/json")
        .body(kube::client::Body::from(body))?;
    let res = c.send(req).await?;
    let code = res.status().as_u16();
    Ok((code, res.into_body().collect_bytes().await?))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    // Where the results go: the first argument, else the file scripts/bench writes.
    let out = PathBuf::from(std::env::args().nth(1).as_deref().unwrap_or("bench/results/cluster.json"));
    let repo = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
    )
    .join("../..");
    let dir = tempfile::tempdir()?;
    let config = ClusterConfig::seeded(dir.path().to_path_buf(), &repo)?;
    let running = fundament_cluster::start(config).await?;
    let c = client(&running.kubeconfig()).await?;
    let rss_start = rss_kib();

    let base = "/apis/demo.fundament.io/v1/namespaces/default/demoitems";
    for i in 0..1000 {
        let body = json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
            "metadata": {"name": format!("item-{i:04}"), "labels": {"tier": if i % 2 == 0 { "even" } else { "odd" }}},
            "spec": {"message": format!("message number {i}")}});
        let (code, _) =
            send(&c, http::Method::POST, base, "application/json", body.to_string().into_bytes()).await?;
        anyhow::ensure!(code == 201, "create failed: {code}");
    }
    let rss_loaded = rss_kib();

    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let uri = format!("{base}?labelSelector=tier%3Deven");
    for _ in 0..20 {
        send(&c, http::Method::GET, &uri, table, vec![]).await?;
    }
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..300 {
        let t = Instant::now();
        let (code, body) = send(&c, http::Method::GET, &uri, table, vec![]).await?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(code == 200, "list failed: {code}");
        rows = serde_json::from_slice::<serde_json::Value>(&body)?["rows"].as_array().map_or(0, Vec::len);
    }
    times.sort_by(f64::total_cmp);

    // 100 watchers, one update, time until the last of them has it.
    let ready = Arc::new(tokio::sync::Barrier::new(101));
    let mut handles = Vec::new();
    let (code, list) = send(&c, http::Method::GET, base, "application/json", vec![]).await?;
    anyhow::ensure!(code == 200);
    let rv = serde_json::from_slice::<serde_json::Value>(&list)?["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    for _ in 0..100 {
        let c = c.clone();
        let ready = Arc::clone(&ready);
        let uri = format!("{base}?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3Ditem-0000");
        handles.push(tokio::spawn(async move {
            let req = http::Request::builder().uri(uri).body(kube::client::Body::from(Vec::new())).unwrap();
            let res = c.send(req).await.unwrap();
            let mut stream = res.into_body().into_data_stream();
            ready.wait().await;
            while let Some(chunk) = stream.next().await {
                if chunk.map(|b| !b.is_empty()).unwrap_or(false) {
                    return Instant::now();
                }
            }
            Instant::now()
        }));
    }
    ready.wait().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t0 = Instant::now();
    let patch = json!({"spec": {"message": "updated"}}).to_string().into_bytes();
    let req = http::Request::builder()
        .method(http::Method::PATCH)
        .uri(format!("{base}/item-0000"))
        .header("content-type", "application/merge-patch+json")
        .body(kube::client::Body::from(patch))?;
    c.send(req).await?;
    let mut last = t0;
    for h in handles {
        last = last.max(h.await?);
    }
    let fanout_ms = last.duration_since(t0).as_secs_f64() * 1000.0;
    let rss_end = rss_kib();

    let result = json!({
        "machine": "2 cores (shared), loopback HTTPS, kube-rs client in the same process",
        "table_list_1000_objects_label_selector": {
            "objects": 1000, "rows_returned": rows, "requests": times.len(),
            "p50_ms": percentile(&times, 0.5), "p99_ms": percentile(&times, 0.99),
        },
        "watch_fanout_100_watchers_one_update_ms": fanout_ms,
        "rss_kib": {"after_start_with_fixtures": rss_start, "after_1000_objects": rss_loaded, "after_watchers": rss_end},
    });
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result)?)?;
    eprintln!("{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}
