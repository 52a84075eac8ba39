//! Two replicas of the gateway sharing one Redis (a real redis-server) in front of the embedded
//! cluster: the watch limits hold across them, a closed watch gives its slot back to either,
//! and draining one replica (shutdown) ends its open watches cleanly.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use fundament_authn_client::RevokedSessions;
use fundament_kube_api_proxy::Gateway;
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy::limits::{WATCHES_PER_PLUGIN_TOKEN, WatchLimits};
use fundament_kube_api_proxy_testing::{self as testing, PluginFolders, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_shared_store::RedisStore;
use fundament_shared_store::testing::RedisServer;
use fundament_tokens::Signer;
use http::Request;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

const PROD: &str = testing::CLUSTER_ID;

struct Replica {
    url: String,
    watches: Arc<WatchLimits>,
}

async fn replica(cluster: &SeededCluster, signer: &Signer, redis: &RedisServer) -> Replica {
    let watches = Arc::new(WatchLimits::new(Arc::new(RedisStore::new(&redis.url).unwrap())));
    let gateway = Gateway {
        origins: Origins { plugins: PluginOrigins::from_base("http://localhost:8082").unwrap() },
        credentials: testing::credentials(signer, &RevokedSessions::none()),
        fga: testing::fga(),
        fga_health: Default::default(),
        clusters: cluster.clusters(),
        definitions: Arc::new(PluginFolders::load()),
        audit: Arc::new(MemoryAudit::default()),
        watches: Arc::clone(&watches),
        calls: Default::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, fundament_kube_api_proxy::router(Arc::new(gateway))).await.unwrap()
    });
    Replica { url, watches }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_limit_holds_across_two_replicas_and_draining_ends_watches() {
    let redis = RedisServer::start().await;
    let cluster = SeededCluster::start().await;
    let signer = Signer::generate();
    let (a, b) = (replica(&cluster, &signer, &redis).await, replica(&cluster, &signer, &redis).await);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let token = format!(
        "Bearer {}",
        signer.sign_plugin(&cluster.plugin_claims("alice", PROD, "acme-corp--cert-manager", "s-1", now, 900))
    );
    let path = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates?watch=1");
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let watch = async |replica: &Replica| {
        let req = Request::get(format!("{}{path}", replica.url))
            .header("authorization", &token)
            .header("origin", "http://acme-corp--cert-manager.localhost:8082")
            .body(Body::empty())
            .unwrap();
        client.request(req).await.unwrap()
    };
    // Half the page's watches at each replica: the bound is one bound.
    let mut open = Vec::new();
    for i in 0..WATCHES_PER_PLUGIN_TOKEN {
        let res = watch(if i % 2 == 0 { &a } else { &b }).await;
        assert_eq!(res.status(), 200, "watch {i}");
        open.push((i % 2, res));
    }
    for replica in [&a, &b] {
        let res = watch(replica).await;
        assert_eq!(res.status(), 429, "one more at either replica is past the bound");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(status["reason"], "TooManyRequests", "{status}");
    }
    assert_eq!(a.watches.open("alice").await, WATCHES_PER_PLUGIN_TOKEN);

    // A watch closed at replica a frees a slot that replica b can use.
    let at_a = open.iter().position(|(r, _)| *r == 0).unwrap();
    drop(open.remove(at_a));
    let mut reopened = None;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let res = watch(&b).await;
        if res.status() == 200 {
            reopened = Some(res);
            break;
        }
    }
    open.push((1, reopened.expect("the slot came back to the other replica")));

    // Draining replica a (shutdown) ends its watches cleanly; b's stay open.
    a.watches.drain();
    for (r, res) in open.iter_mut().filter(|(r, _)| *r == 0) {
        let body = res.body_mut();
        let ended = tokio::time::timeout(Duration::from_secs(5), async {
            while let Some(frame) = body.frame().await {
                frame.expect("a clean end, not an error");
            }
        })
        .await;
        assert!(ended.is_ok(), "watch at replica {r} ended at drain");
    }
    let b_watch = open.iter_mut().find(|(r, _)| *r == 1).unwrap();
    // Its initial events may come; its end must not.
    let body = b_watch.1.body_mut();
    let ended = tokio::time::timeout(Duration::from_millis(500), async {
        while let Some(frame) = body.frame().await {
            frame.expect("no error");
        }
    })
    .await;
    assert!(ended.is_err(), "a watch at the other replica goes on");
    let refused = watch(&a).await;
    assert_eq!(refused.status(), 503, "a draining replica takes no new watch");
}
