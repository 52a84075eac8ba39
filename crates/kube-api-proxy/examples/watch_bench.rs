//! Thousands of idle watches through the gateway, in bounded memory: 1,000 watches (simulated
//! clients, 100 for each of 10 users, the per-user limit) on the DemoItems of a namespace
//! holding 100 objects, through kube-api-proxy's user path to the embedded cluster, while the
//! objects change 10 times a second (one object at a time, round robin). Counts every update
//! delivered to every watch, the delivery latency (write to arrival, p50/p99), and the
//! resident memory of the gateway and the cluster (this process) before the watches, with
//! them open and idle, after the updates and after they close. The clients run in a child
//! process (this example started again), so their memory is not counted.
//!
//! `cargo run --release -p fundament-kube-api-proxy --example watch_bench -- OUT.json`
//! (`WATCH_BENCH_RATE` updates/s, default 10; `WATCH_BENCH_SECONDS`, default 20).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use axum::body::Body;
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy_testing::{self as testing, SeededCluster};
use fundament_tokens::Signer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// The fundament binary's allocator (server/src/main.rs): memory figures as the services have them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PROD: &str = testing::CLUSTER_ID;
const USERS: usize = 10;
const WATCHES_PER_USER: usize = fundament_kube_api_proxy::limits::WATCHES_PER_USER;
const OBJECTS: usize = 100;
const ITEMS: &str = "/apis/demo.fundament.io/v1/namespaces/bench/demoitems";

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    if std::env::args().nth(1).as_deref() == Some("--clients") {
        runtime.block_on(clients())
    } else {
        runtime.block_on(stack())
    }
}

/// An admin call to the cluster (setup and the writer).
async fn admin(
    c: &kube::Client,
    method: http::Method,
    uri: &str,
    content_type: &str,
    body: Value,
) -> anyhow::Result<u16> {
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(kube::client::Body::from(body.to_string().into_bytes()))?;
    let res = c.send(req).await?;
    let code = res.status().as_u16();
    let _ = res.into_body().collect_bytes().await;
    Ok(code)
}

/// The parent: cluster, gateway, setup, writer, measurements.
async fn stack() -> anyhow::Result<()> {
    let out = PathBuf::from(std::env::args().nth(1).as_deref().unwrap_or("bench/results/watches.json"));
    let rate = env_number("WATCH_BENCH_RATE", 10).max(1);
    let seconds = env_number("WATCH_BENCH_SECONDS", 20).max(1);
    let cluster = SeededCluster::start().await;
    let kc = kube::config::Kubeconfig::from_yaml(&cluster.running.kubeconfig())?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default()).await?;
    let c = kube::Client::try_from(config)?;

    // Ten users, each acting as a read-only ServiceAccount as the seed's bob does.
    let users: Vec<String> = (0..USERS).map(|i| format!("bench-{i}")).collect();
    let post = |uri: &'static str, body: Value| {
        let c = c.clone();
        async move { admin(&c, http::Method::POST, uri, "application/json", body).await }
    };
    anyhow::ensure!(
        post(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
        )
        .await?
            == 201
    );
    for user in &users {
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": format!("fundament-{user}"), "namespace": "fundament-system"}});
        anyhow::ensure!(post("/api/v1/namespaces/fundament-system/serviceaccounts", sa).await? == 201);
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("fundament-{user}-read-only")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fundament-read-only"},
            "subjects": [{"kind": "ServiceAccount", "name": format!("fundament-{user}"), "namespace": "fundament-system"}]});
        anyhow::ensure!(
            post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding).await? == 201
        );
    }
    for i in 0..OBJECTS {
        let item = json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
            "metadata": {"name": format!("item-{i:03}")}, "spec": {"message": "0"}});
        anyhow::ensure!(post(ITEMS, item).await? == 201, "creating item-{i:03}");
    }

    let signer = Signer::generate();
    let grants: Vec<(&str, &str)> = users.iter().map(|u| (u.as_str(), PROD)).collect();
    let gateway = testing::gateway(
        cluster.clusters(),
        testing::viewers(&grants),
        &signer,
        Arc::new(MemoryAudit::default()),
    );
    let url = testing::serve(gateway).await;
    let tokens: Vec<String> = users.iter().map(|u| testing::user_token(&signer, u)).collect();
    // Warm the gateway's caches (ServiceAccount tokens) as a running stack has them.
    let probe: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    for token in &tokens {
        let req = http::Request::get(format!("{url}/clusters/{PROD}{ITEMS}"))
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())?;
        let res = probe.request(req).await?;
        anyhow::ensure!(res.status() == 200, "a list through the gateway: {}", res.status());
        let _ = res.into_body().collect().await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = rss_kib();

    let mut child = Command::new(std::env::current_exe()?)
        .arg("--clients")
        .env("WATCH_BENCH_URL", format!("{url}/clusters/{PROD}{ITEMS}?watch=1"))
        .env("WATCH_BENCH_TOKENS", tokens.join(","))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("the clients' process")?;
    let mut from_child = std::io::BufReader::new(child.stdout.take().context("its stdout")?);
    let mut to_child = child.stdin.take().context("its stdin")?;
    let mut line = String::new();
    let opened = Instant::now();
    from_child.read_line(&mut line)?;
    anyhow::ensure!(line.trim() == "open", "the clients said {line:?}");
    let open_ms = opened.elapsed().as_secs_f64() * 1000.0;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_idle = rss_kib();

    // The writer: `rate` merge patches a second, one object after the other, each carrying
    // the time it was sent.
    let writes = rate * seconds;
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    let started = Instant::now();
    for k in 0..writes {
        tick.tick().await;
        let uri = format!("{ITEMS}/item-{:03}", k as usize % OBJECTS);
        let patch = json!({"spec": {"message": now_micros().to_string()}});
        let code = admin(&c, http::Method::PATCH, &uri, "application/merge-patch+json", patch).await?;
        anyhow::ensure!(code == 200, "patch {uri}: {code}");
    }
    let wrote_s = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_updates = rss_kib();
    writeln!(to_child, "{writes}")?;
    line.clear();
    from_child.read_line(&mut line)?;
    let clients: Value = serde_json::from_str(line.trim()).context("the clients' report")?;
    let _ = child.wait();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_closed = rss_kib();

    let watches = USERS * WATCHES_PER_USER;
    let expected = writes * watches as u64;
    let delivered = clients["delivered"].as_u64().unwrap_or(0);
    let result = json!({
        "what": format!("{watches} watches ({USERS} users x {WATCHES_PER_USER}) through kube-api-proxy's user path on {OBJECTS} DemoItems, {rate} updates/s for {seconds} s (round robin over the objects); gateway and embedded cluster in this process, the clients in another"),
        "machine": "2 cores shared by the clients, the gateway and the cluster; loopback (HTTP to the gateway, HTTPS to the cluster)",
        "watches": watches,
        "opening_all_ms": open_ms,
        "updates_written": writes,
        "updates_per_s_achieved": writes as f64 / wrote_s,
        "deliveries_expected": expected,
        "deliveries": delivered,
        "every_update_delivered": delivered == expected && clients["watches_missing_updates"] == 0,
        "watches_missing_updates": clients["watches_missing_updates"],
        "watches_ended_early": clients["ended_early"],
        "latency_ms": clients["latency_ms"],
        "rss_kib": {
            "before_watches": rss_before,
            "watches_open_idle": rss_idle,
            "after_updates": rss_updates,
            "after_watches_closed": rss_closed,
        },
        "rss_per_idle_watch_kib": rss_idle.saturating_sub(rss_before) as f64 / watches as f64,
    });
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result)? + "\n")?;
    eprintln!("{}", serde_json::to_string_pretty(&result)?);
    anyhow::ensure!(result["every_update_delivered"] == true, "not every update was delivered");
    Ok(())
}

/// The child: opens the watches, then counts what arrives until the parent says how many
/// updates it wrote; reports one JSON line.
async fn clients() -> anyhow::Result<()> {
    let url = std::env::var("WATCH_BENCH_URL")?;
    let tokens: Vec<String> = std::env::var("WATCH_BENCH_TOKENS")?.split(',').map(str::to_owned).collect();
    let client: Client<_, Body> =
        Client::builder(TokioExecutor::new()).pool_max_idle_per_host(0).build_http();
    let counts: Arc<Vec<AtomicU64>> =
        Arc::new((0..tokens.len() * WATCHES_PER_USER).map(|_| AtomicU64::new(0)).collect());
    let ended = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(std::sync::Mutex::new(Vec::<f64>::new()));
    let (heads, mut heads_rx) = tokio::sync::mpsc::channel::<anyhow::Result<()>>(64);
    for (i, token) in tokens.iter().cycle().take(counts.len()).enumerate() {
        let (client, url, token) = (client.clone(), url.clone(), token.clone());
        let (counts, ended, latencies, heads) =
            (Arc::clone(&counts), Arc::clone(&ended), Arc::clone(&latencies), heads.clone());
        tokio::spawn(async move {
            let req = http::Request::get(&url)
                .header("authorization", format!("Bearer {token}"))
                .body(Body::empty());
            let res = match req {
                Ok(req) => client.request(req).await.map_err(anyhow::Error::from),
                Err(e) => Err(e.into()),
            };
            let res = match res {
                Ok(res) if res.status() == 200 => res,
                Ok(res) => {
                    let _ = heads.send(Err(anyhow::anyhow!("watch {i}: HTTP {}", res.status()))).await;
                    return;
                }
                Err(e) => {
                    let _ = heads.send(Err(e)).await;
                    return;
                }
            };
            let _ = heads.send(Ok(())).await;
            let mut body = res.into_body();
            let mut buffer = Vec::new();
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else { continue };
                buffer.extend_from_slice(&data);
                while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    let Ok(event) = serde_json::from_slice::<Value>(&line) else { continue };
                    let sent =
                        event["object"]["spec"]["message"].as_str().and_then(|m| m.parse::<u64>().ok());
                    if event["type"] == "MODIFIED"
                        && let Some(sent) = sent
                    {
                        let arrived = now_micros();
                        counts[i].fetch_add(1, Ordering::Relaxed);
                        if let Ok(mut l) = latencies.lock() {
                            l.push(arrived.saturating_sub(sent) as f64 / 1000.0);
                        }
                    }
                }
            }
            ended.fetch_add(1, Ordering::Relaxed);
        });
    }
    drop(heads);
    for _ in 0..counts.len() {
        heads_rx.recv().await.context("a watch task ended before its head")??;
    }
    println!("open");
    let mut line = String::new();
    let line =
        tokio::task::spawn_blocking(move || std::io::stdin().lock().read_line(&mut line).map(|_| line))
            .await??;
    let writes: u64 = line.trim().parse()?;
    let per_watch: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    let mut l = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    l.sort_by(f64::total_cmp);
    let report = json!({
        "delivered": per_watch.iter().sum::<u64>(),
        "watches_missing_updates": per_watch.iter().filter(|n| **n < writes).count(),
        "ended_early": ended.load(Ordering::Relaxed),
        "latency_ms": {"p50": percentile(&l, 0.5), "p99": percentile(&l, 0.99), "max": l.last().copied().unwrap_or(0.0), "samples": l.len()},
    });
    println!("{report}");
    Ok(())
}
