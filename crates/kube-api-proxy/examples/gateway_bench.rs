//! The gateway's cost: a plugin GET through kube-api-proxy vs the same GET
//! straight to the embedded cluster, at 1 and 64 concurrent clients, with
//! p50/p99 and requests/s. Load generator, gateway and cluster share this
//! machine's cores, so the ratio to the direct path is the figure to read.
//!
//! `cargo run --release -p fundament-kube-api-proxy --example gateway_bench -- OUT.json`

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use fundament_authn_client::RevokedSessions;
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy::testing::{self, SeededCluster};
use fundament_kube_api_proxy::upstream::Upstream;
use fundament_kube_api_proxy::{AllowedResource, DefinitionSource, Gateway, PublishedDefinition};
use fundament_tokens::Signer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

const PROD: &str = testing::CLUSTER_ID;

struct CertManagerOnly(String);

impl DefinitionSource for CertManagerOnly {
    fn definition(&self, name: &str, _version: &str) -> Option<PublishedDefinition> {
        (name == "cert-manager").then(|| PublishedDefinition {
            hash: self.0.clone(),
            allowed: vec![AllowedResource {
                group: "cert-manager.io".into(),
                version: "v1".into(),
                resource: "certificates".into(),
                verbs: vec!["get".into(), "list".into()],
            }],
        })
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

/// Runs `concurrency` clients for `duration`; latencies (ms) and requests/s.
async fn load<F, Fut>(concurrency: usize, duration: Duration, call: F) -> (Vec<f64>, f64)
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = u16> + Send,
{
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            while start.elapsed() < duration {
                let t = Instant::now();
                let status = call().await;
                assert_eq!(status, 200);
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            times
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap_or_default());
    }
    let rps = all.len() as f64 / start.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    (all, rps)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    // Where the results go: the first argument, else the file scripts/bench writes.
    let out = PathBuf::from(std::env::args().nth(1).as_deref().unwrap_or("bench/results/gateway.json"));
    let cluster = SeededCluster::start().await;
    let pinned_hash =
        cluster.installation("acme-corp--cert-manager").definition_ref().definition_hash.clone();
    let signer = Signer::generate();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = cluster.plugin_claims("alice", PROD, "acme-corp--cert-manager", "bench", now, 3600);
    let token = signer.sign_plugin(&claims);
    let gateway = Gateway {
        origins: Origins {
            plugins: fundament_plugin_origin::PluginOrigins::from_base("http://localhost:8082")
                .ok_or_else(|| anyhow::anyhow!("bad plugins host"))?,
        },
        credentials: testing::credentials(&signer, &RevokedSessions::none()),
        watches: Default::default(),
        fga: testing::fga(),
        clusters: cluster.clusters(),
        definitions: Arc::new(CertManagerOnly(pinned_hash)),
        audit: Arc::new(MemoryAudit::default()),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let proxy_url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(
        async move { axum::serve(listener, fundament_kube_api_proxy::router(Arc::new(gateway))).await },
    );

    let path = "/apis/cert-manager.io/v1/namespaces/default/certificates/web-tls-cert";
    // Direct: the same GET with the plugin ServiceAccount's own token, straight to the cluster.
    let direct = Arc::new(Upstream::new(&cluster.upstream_config())?);
    let sa = direct
        .service_account_token("plugin-acme-corp--cert-manager", "plugin")
        .await?
        .ok_or_else(|| anyhow::anyhow!("no plugin ServiceAccount"))?
        .token;
    let direct_call = {
        let (direct, sa) = (Arc::clone(&direct), sa.clone());
        move || {
            let (direct, sa) = (Arc::clone(&direct), sa.clone());
            async move {
                let res = direct
                    .forward(http::Method::GET, path, &http::HeaderMap::new(), Body::empty(), &sa)
                    .await
                    .unwrap();
                let status = res.status().as_u16();
                let _ = res.into_body().collect().await;
                status
            }
        }
    };
    let client: Client<_, Body> =
        Client::builder(TokioExecutor::new()).pool_max_idle_per_host(128).build_http();
    let proxied_call = {
        let (client, token) = (client.clone(), token.clone());
        let uri = format!("{proxy_url}/clusters/{PROD}{path}");
        move || {
            let (client, token, uri) = (client.clone(), token.clone(), uri.clone());
            async move {
                let req = http::Request::get(uri)
                    .header("authorization", format!("Bearer {token}"))
                    .body(Body::empty())
                    .unwrap();
                let res = client.request(req).await.unwrap();
                let status = res.status().as_u16();
                let _ = res.into_body().collect().await;
                status
            }
        }
    };
    // Warm caches and connection pools.
    load(4, Duration::from_millis(500), direct_call.clone()).await;
    load(4, Duration::from_millis(500), proxied_call.clone()).await;

    let mut results = serde_json::Map::new();
    for concurrency in [1usize, 64] {
        let secs = Duration::from_secs(5);
        let (d, d_rps) = load(concurrency, secs, direct_call.clone()).await;
        let (p, p_rps) = load(concurrency, secs, proxied_call.clone()).await;
        results.insert(
            format!("concurrency_{concurrency}"),
            json!({
                "direct": {"p50_ms": percentile(&d, 0.5), "p99_ms": percentile(&d, 0.99), "requests_per_s": d_rps, "requests": d.len()},
                "via_kube_api_proxy": {"p50_ms": percentile(&p, 0.5), "p99_ms": percentile(&p, 0.99), "requests_per_s": p_rps, "requests": p.len()},
                "added_p50_ms": percentile(&p, 0.5) - percentile(&d, 0.5),
                "throughput_ratio_proxy_to_direct": p_rps / d_rps,
            }),
        );
    }
    let result = json!({
        "what": "plugin GET of one Certificate: PluginToken via kube-api-proxy (all checks, cached ServiceAccount token and review) vs the plugin ServiceAccount's token straight to the embedded cluster over HTTPS",
        "machine": "2 cores shared by load generator, gateway and cluster",
        "targets": {"added_p50_ms_at_1": "< 1", "proxy_requests_per_s_at_64": "> 5000"},
        "results": results,
    });
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result)?)?;
    eprintln!("{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}
