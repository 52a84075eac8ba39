//! `GET /audit/v1/clusters/<id>/calls` over real HTTP in front of the embedded cluster: a
//! refused plugin call is there at once with the check that refused it; a user sees their own
//! calls, a user who may `audit` plugininstallations (alice is cluster-admin) sees everyone's;
//! filters; and the endpoint is closed to pages, PluginTokens and users who cannot view the
//! cluster. The same with the record in a real Redis, shared by two replicas: a call made at
//! one is in the other's view, and a lost store is a 503, not an empty record.

use crate::common;

use std::sync::Arc;

use fundament_authn_client::RevokedSessions;
use fundament_kube_api_proxy::Gateway;
use fundament_kube_api_proxy::audit::{LogAudit, TeeAudit};
use fundament_kube_api_proxy::audit_store::{AuditStore, Retention};
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy_testing::{self as testing, PluginFolders, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_plugin_types::audit::AuditPage;
use fundament_shared_store::RedisStore;
use fundament_shared_store::testing::RedisServer;
use fundament_tokens::Signer;
use http::Method;

const PROD: &str = testing::CLUSTER_ID;
const RESTRICTED: &str = "019b4000-2000-7000-8000-000000000002";

struct Stack {
    url: String,
    signer: Arc<Signer>,
    cluster: Arc<SeededCluster>,
}

async fn start() -> Stack {
    start_with(AuditStore::in_memory(Retention::default())).await
}

async fn start_with(store: AuditStore) -> Stack {
    let cluster = SeededCluster::start().await;
    let signer = Signer::generate();
    let url = serve(&cluster, &signer, store).await;
    Stack { url, signer: Arc::new(signer), cluster: Arc::new(cluster) }
}

/// A gateway (a replica) in front of `cluster`, keeping its audit view's record in `store`.
async fn serve(cluster: &SeededCluster, signer: &Signer, store: AuditStore) -> String {
    let gateway = Gateway {
        origins: Origins { plugins: PluginOrigins::from_base(testing::PLUGINS_BASE).unwrap() },
        credentials: testing::credentials(signer, &RevokedSessions::none()),
        fga: testing::fga(),
        fga_health: Default::default(),
        clusters: cluster.clusters(),
        definitions: Arc::new(PluginFolders::load()),
        audit: Arc::new(TeeAudit(vec![Arc::new(LogAudit), Arc::new(store)])),
        watches: Default::default(),
        calls: Default::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, fundament_kube_api_proxy::router(Arc::new(gateway))).await.unwrap()
    });
    url
}

impl Stack {
    fn user(&self, user: &str) -> String {
        format!("Bearer {}", testing::user_token(&self.signer, user))
    }

    fn plugin(&self, user: &str, installation: &str) -> String {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let claims = self.cluster.plugin_claims(user, PROD, installation, "session-1", now, 900);
        format!("Bearer {}", self.signer.sign_plugin(&claims))
    }

    async fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, serde_json::Value) {
        let (status, _, body) = common::request(&self.url, Method::GET, path, headers, None).await;
        (status, body)
    }

    async fn audit(&self, user: &str, query: &str) -> AuditPage {
        let auth = self.user(user);
        let (status, body) =
            self.get(&format!("/audit/v1/clusters/{PROD}/calls?{query}"), &[("authorization", &auth)]).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_value(body).unwrap()
    }
}

#[tokio::test]
async fn refused_calls_are_recorded_with_their_check_and_each_user_sees_what_they_may() {
    who_sees_what(&start().await).await;
}

#[tokio::test]
async fn the_record_in_redis_answers_alike() {
    let redis = RedisServer::start().await;
    let store = Arc::new(RedisStore::new(&redis.url).unwrap());
    who_sees_what(&start_with(AuditStore::shared(store, Retention::default())).await).await;
}

async fn who_sees_what(s: &Stack) {
    let secrets = format!("/clusters/{PROD}/api/v1/namespaces/default/secrets");
    let certificates = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates");
    // alice's cert-manager page reads certificates (allowed) and secrets (not in allowedResources).
    let alice = s.plugin("alice", "acme-corp--cert-manager");
    assert_eq!(s.get(&certificates, &[("authorization", &alice)]).await.0, 200);
    assert_eq!(s.get(&secrets, &[("authorization", &alice)]).await.0, 403);
    // bob's reads certificates.
    let bob = s.plugin("bob", "acme-corp--cert-manager");
    assert_eq!(s.get(&certificates, &[("authorization", &bob)]).await.0, 200);

    let everyone = s.audit("alice", "").await;
    assert!(everyone.everyone, "alice is cluster-admin: she may audit plugininstallations");
    assert_eq!(everyone.items.len(), 3);
    let refused = &everyone.items[1];
    assert_eq!(
        (refused.user.as_str(), refused.resource.as_str(), refused.decision.as_str(), refused.status),
        ("alice", "secrets", "denied:allowed-resources", 403)
    );
    assert_eq!(refused.refused_by(), Some("allowed-resources"));
    assert_eq!(everyone.items[0].user, "bob", "newest first");
    assert_eq!(everyone.last_id, everyone.items[0].id);

    let own = s.audit("bob", "").await;
    assert!(!own.everyone, "bob may read everything but not audit");
    assert_eq!(own.items.iter().map(|e| e.user.as_str()).collect::<Vec<_>>(), ["bob"]);
    // bob cannot widen his view with a filter.
    assert!(s.audit("bob", "user=alice").await.items.is_empty());

    let denied = s.audit("alice", "decision=denied").await;
    assert_eq!(denied.items.len(), 1);
    let tail = s.audit("alice", &format!("after={}", refused.id)).await;
    assert_eq!(tail.items.len(), 1, "only what came after");
    assert_eq!(s.audit("alice", "resource=cert-manager.io/certificates&user=alice").await.items.len(), 1);
    // Nor learn how many calls others make: where his tail starts is his newest call.
    assert_eq!(own.last_id, own.items[0].id);
    assert_eq!(s.get(&secrets, &[("authorization", &alice)]).await.0, 403);
    assert_eq!(s.audit("bob", "").await.last_id, own.last_id, "alice's call moves nothing of bob's");
    assert_eq!(s.audit("alice", "").await.items.len(), 4);
}

#[tokio::test]
async fn a_name_past_kubernetes_bounds_is_recorded_cut_and_marked() {
    let s = start().await;
    // A path segment may be as long as the gateway's header bound: a hostile page's calls would
    // otherwise hold it whole in the record, each one.
    let (namespace, name) = ("n".repeat(20_000), "x".repeat(40_000));
    let path = format!("/clusters/{PROD}/api/v1/namespaces/{namespace}/secrets/{name}");
    let alice = s.plugin("alice", "acme-corp--cert-manager");
    assert_eq!(s.get(&path, &[("authorization", &alice)]).await.0, 403);
    let page = s.audit("alice", "").await;
    let call = &page.items[0];
    assert_eq!(call.decision, "denied:allowed-resources");
    assert!(call.name.len() <= 253 && call.name.ends_with("…(cut from 40000 bytes)"), "{}", call.name);
    assert!(call.name.starts_with("xxxxxxxx"), "{}", call.name);
    let marked = call.namespace.ends_with("…(cut from 20000 bytes)");
    assert!(call.namespace.len() <= 63 && marked, "{}", call.namespace);
}

#[tokio::test]
async fn the_record_is_closed_to_pages_plugin_tokens_and_users_who_cannot_view_the_cluster() {
    let s = start().await;
    let path = format!("/audit/v1/clusters/{PROD}/calls");
    let alice = s.user("alice");
    let from_a_page =
        [("authorization", alice.as_str()), ("origin", "http://acme-corp--cert-manager.localhost:8082")];
    assert_eq!(s.get(&path, &from_a_page).await.0, 403);
    let plugin = s.plugin("alice", "acme-corp--cert-manager");
    let (status, body) = s.get(&path, &[("authorization", &plugin)]).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(s.get(&path, &[]).await.0, 401);
    let (status, body) =
        s.get(&format!("/audit/v1/clusters/{RESTRICTED}/calls"), &[("authorization", &s.user("bob"))]).await;
    assert_eq!(status, 403, "bob cannot view restricted: {body}");
    let (status, body) = s.get(&format!("{path}?status=teapot"), &[("authorization", &alice)]).await;
    assert_eq!(status, 400);
    assert_eq!(body["reason"], "BadRequest");
    assert!(body["message"].as_str().unwrap().contains("status"));
    assert_eq!(s.get("/audit/v1/clusters/not-a-uuid/calls", &[("authorization", &alice)]).await.0, 400);
}

#[tokio::test]
async fn a_live_tail_is_answered_when_the_call_is_made_not_at_its_deadline() {
    let s = Arc::new(start().await);
    let last = s.audit("alice", "").await.last_id;
    let tail = tokio::spawn({
        let s = s.clone();
        async move {
            let started = std::time::Instant::now();
            (s.audit("alice", &format!("after={last}&wait=5000&decision=denied")).await, started.elapsed())
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let secrets = format!("/clusters/{PROD}/api/v1/namespaces/default/secrets");
    let alice = s.plugin("alice", "acme-corp--cert-manager");
    let called = std::time::Instant::now();
    assert_eq!(s.get(&secrets, &[("authorization", &alice)]).await.0, 403);
    let (page, waited) = tail.await.unwrap();
    assert_eq!(page.items.len(), 1, "the refused call");
    assert_eq!(page.items[0].decision, "denied:allowed-resources");
    assert!(waited < std::time::Duration::from_millis(4_000), "answered at the call: {waited:?}");
    assert!(called.elapsed() < std::time::Duration::from_millis(1_000));
    // No call: an empty answer after the wait, never past it (capped at 5 s).
    let started = std::time::Instant::now();
    let quiet = s.audit("alice", &format!("after={}&wait=60000&user=nobody", page.last_id)).await;
    assert!(quiet.items.is_empty());
    let waited = started.elapsed();
    assert!(
        waited >= std::time::Duration::from_millis(4_900) && waited < std::time::Duration::from_secs(8),
        "{waited:?}"
    );
}

#[tokio::test]
async fn two_replicas_sharing_redis_show_each_others_calls_and_a_lost_store_is_a_503() {
    let redis = RedisServer::start().await;
    let shared = || AuditStore::shared(Arc::new(RedisStore::new(&redis.url).unwrap()), Retention::default());
    let a = start_with(shared()).await;
    let b_url = serve(&a.cluster, &a.signer, shared()).await;
    let b = Stack { url: b_url, signer: Arc::clone(&a.signer), cluster: Arc::clone(&a.cluster) };
    let secrets = format!("/clusters/{PROD}/api/v1/namespaces/default/secrets");
    let certificates = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates");
    assert_eq!(
        a.get(&secrets, &[("authorization", &a.plugin("alice", "acme-corp--cert-manager"))]).await.0,
        403
    );
    assert_eq!(
        b.get(&certificates, &[("authorization", &b.plugin("bob", "acme-corp--cert-manager"))]).await.0,
        200
    );
    for (replica, at) in [(&a, "a"), (&b, "b")] {
        // Each replica flushes its own calls before it reads; the other's are written within
        // the writer's first step, so give them a moment (up to 10 s: a loaded machine may run
        // that writer late).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut everyone = replica.audit("alice", "").await;
        while everyone.items.len() < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            everyone = replica.audit("alice", "").await;
        }
        // The record numbers calls as they reach the store, so two replicas' calls made
        // moments apart may land in either order: compare them as a set.
        let mut calls: Vec<_> =
            everyone.items.iter().map(|e| (e.user.as_str(), e.resource.as_str(), e.refused_by())).collect();
        calls.sort();
        assert_eq!(
            calls,
            [("alice", "secrets", Some("allowed-resources")), ("bob", "certificates", None)],
            "the view at replica {at}"
        );
        let own = replica.audit("bob", "").await;
        assert_eq!(own.items.iter().map(|e| e.user.as_str()).collect::<Vec<_>>(), ["bob"], "at {at}");
        assert_eq!(own.last_id, own.items[0].id);
    }

    // A live tail at b hears a call made at a.
    let last = b.audit("alice", "").await.last_id;
    let tail = tokio::spawn({
        let (url, auth) = (b.url.clone(), b.user("alice"));
        async move {
            let path = format!("/audit/v1/clusters/{PROD}/calls?after={last}&wait=4000");
            common::request(&url, Method::GET, &path, &[("authorization", &auth)], None).await
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        a.get(&certificates, &[("authorization", &a.plugin("alice", "acme-corp--cert-manager"))]).await.0,
        200
    );
    let (status, _, body) = tail.await.unwrap();
    assert_eq!(status, 200, "{body}");
    let page: AuditPage = serde_json::from_value(body).unwrap();
    assert_eq!(page.items.iter().map(|e| e.user.as_str()).collect::<Vec<_>>(), ["alice"]);

    // Redis gone: the view says it cannot read the record; calls still go through.
    drop(redis);
    assert_eq!(
        a.get(&certificates, &[("authorization", &a.plugin("alice", "acme-corp--cert-manager"))]).await.0,
        200
    );
    let (status, body) =
        a.get(&format!("/audit/v1/clusters/{PROD}/calls"), &[("authorization", &a.user("alice"))]).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "ServiceUnavailable");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("shared store is unavailable") && !message.contains("127.0.0.1"), "{message}");
}
