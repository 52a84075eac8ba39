//! Sandbox mode end to end: the gateway reaches a seeded embedded cluster over HTTPS from a
//! kubeconfig FILE (read with `load_kubeconfig`) of each credential kind — a `system:masters`
//! client certificate, the admin token, an exec credential plugin — and forwards every
//! user's and plugin's call as their ServiceAccount, never as the kubeconfig's identity.
//!
//! [`a_system_masters_certificate_never_rides_on_a_forwarded_call`] is the end-to-end port
//! of the upstream's `TestNewAnonymousFromBytes_DropsClientCert`: the cluster authenticates
//! a client certificate before a bearer token, so were the kubeconfig's certificate sent
//! with a forwarded call, the cluster would see `system:masters` and allow anything.

use crate::common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use fundament_fga::CanView;
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy::upstream::{ServerVerification, Upstream, load_kubeconfig};
use fundament_kube_api_proxy_testing::{self as testing, Credential, SeededCluster};
use fundament_tokens::Signer;
use http::Method;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

const PROD: &str = testing::CLUSTER_ID;
const NAMESPACES: &str = "/clusters/019b4000-2000-7000-8000-000000000001/api/v1/namespaces";
const CERTIFICATES: &str =
    "/clusters/019b4000-2000-7000-8000-000000000001/apis/cert-manager.io/v1/certificates";
const SYNC_PENDING: &str = "service account sync pending, try again shortly";

/// A gateway whose one cluster is reached from a kubeconfig file.
struct Sandbox {
    url: String,
    signer: Signer,
    audit: Arc<MemoryAudit>,
    /// The gateway's connection to the cluster (its own calls are counted here).
    upstream: Arc<Upstream>,
    kubeconfig: PathBuf,
}

async fn sandbox(cluster: &SeededCluster, credential: Credential, fga: Arc<dyn CanView>) -> Sandbox {
    let kubeconfig = cluster.kubeconfig_file(credential);
    let config = load_kubeconfig(&kubeconfig).await.unwrap();
    let upstream = Arc::new(Upstream::from_kube_config(config, ServerVerification::Required).unwrap());
    let clusters = Clusters::Fixed(HashMap::from([(PROD.to_string(), Arc::clone(&upstream))]));
    let signer = Signer::generate();
    let audit = Arc::new(MemoryAudit::default());
    let url = testing::serve(testing::gateway(clusters, fga, &signer, audit.clone())).await;
    Sandbox { url, signer, audit, upstream, kubeconfig }
}

impl Sandbox {
    fn user(&self, user: &str) -> String {
        testing::user_token(&self.signer, user)
    }

    fn plugin(&self, cluster: &SeededCluster, user: &str, installation: &str) -> String {
        testing::plugin_token(&self.signer, &cluster.running, user, PROD, installation)
    }

    /// A kube-rs client with the kubeconfig's own identity (what an operator would run).
    async fn admin(&self) -> kube::Client {
        kube::Client::try_from(load_kubeconfig(&self.kubeconfig).await.unwrap()).unwrap()
    }

    fn last_audit(&self) -> (String, u16) {
        let line = self.audit.lines().last().cloned().expect("an audit line");
        (line.decision, line.status)
    }
}

/// Who the cluster takes `client` for: (username, groups).
async fn whoami(client: &kube::Client) -> (String, Vec<String>) {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let req = http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(review.to_string().into_bytes())
        .unwrap();
    let answer: Value = client.request(req).await.unwrap();
    let info = &answer["status"]["userInfo"];
    let groups = info["groups"].as_array().into_iter().flatten();
    (
        info["username"].as_str().unwrap_or_default().to_string(),
        groups.filter_map(|g| g.as_str().map(str::to_string)).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_kubeconfig_forwards_as_the_service_accounts() {
    let cluster = SeededCluster::start().await;
    for credential in [Credential::ClientCertificate, Credential::Token, Credential::Exec] {
        let s = sandbox(&cluster, credential, testing::fga()).await;
        // The gateway's own identity is the kubeconfig's (the exec plugin ran, the certificate counted).
        let (me, _) = whoami(&s.upstream.own_client()).await;
        assert!(!me.is_empty() && !me.starts_with("system:serviceaccount:"), "{credential:?}: {me}");

        // The user path: alice (cluster-admin) lists namespaces, bob (read-only) may not create.
        let (code, v) = common::get(&s.url, NAMESPACES, &s.user("alice")).await;
        assert_eq!(code, 200, "{credential:?}: {v}");
        assert!(v["items"].as_array().is_some_and(|i| !i.is_empty()), "{credential:?}: {v}");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-bob"}});
        let (code, v) = common::call(
            &s.url,
            Method::POST,
            &format!("{NAMESPACES}/default/configmaps"),
            &s.user("bob"),
            Some(cm),
        )
        .await;
        assert_eq!(code, 403, "{credential:?}: {v}");
        assert!(
            common::message(&v).contains("system:serviceaccount:fundament-system:fundament-bob"),
            "{credential:?}: the cluster refused bob's ServiceAccount: {v}"
        );

        // The plugin path: an allowed resource, audited allowed.
        let token = s.plugin(&cluster, "alice", "acme-corp--cert-manager");
        let (code, v) = common::get(&s.url, CERTIFICATES, &token).await;
        assert_eq!(code, 200, "{credential:?}: {v}");
        assert_eq!(v["kind"], "CertificateList", "{credential:?}");
        assert_eq!(s.last_audit(), ("allowed".to_string(), 200), "{credential:?}");
    }
}

fn demo_items() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("demo.fundament.io", "v1", "DemoItem"),
        "demoitems",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_masters_certificate_never_rides_on_a_forwarded_call() {
    let cluster = SeededCluster::start().await;
    let s = sandbox(&cluster, Credential::ClientCertificate, testing::fga()).await;
    // The kubeconfig's identity is a superuser by its certificate alone.
    let (_, groups) = whoami(&s.upstream.own_client()).await;
    assert!(groups.iter().any(|g| g == "system:masters"), "{groups:?}");

    // demo's allowedResources admit creating DemoItems; its ServiceAccount's RBAC does not
    // (plugins/demo/definition.yaml). Every gateway check passes, so only the cluster
    // decides: as the plugin's ServiceAccount it refuses; as system:masters it would create.
    let token = s.plugin(&cluster, "alice", "acme-corp--demo");
    let item = json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
        "metadata": {"name": "not-by-the-plugin"}, "spec": {"message": "m"}});
    let demoitems = format!("/clusters/{PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems");
    let (code, v) = common::call(&s.url, Method::POST, &demoitems, &token, Some(item.clone())).await;
    assert_eq!(code, 403, "{v}");
    assert!(
        common::message(&v).contains("system:serviceaccount:plugin-acme-corp--demo:plugin"),
        "the cluster's own refusal of the plugin's ServiceAccount: {v}"
    );
    assert_eq!(s.last_audit(), ("allowed".to_string(), 403), "every check of the gateway passed");
    // What the plugin may do, it does through the same gateway.
    let (code, v) = common::get(&s.url, &demoitems, &token).await;
    assert_eq!((code, v["kind"].as_str()), (200, Some("DemoItemList")), "{v}");

    // The kubeconfig's own identity can: the refusal above was the ServiceAccount's.
    let admin: Api<DynamicObject> = Api::namespaced_with(s.admin().await, "default", &demo_items());
    assert!(admin.get_opt("not-by-the-plugin").await.unwrap().is_none(), "nothing was created");
    let mut obj: DynamicObject = serde_json::from_value(item).unwrap();
    obj.types =
        Some(kube::core::TypeMeta { api_version: "demo.fundament.io/v1".into(), kind: "DemoItem".into() });
    admin.create(&PostParams::default(), &obj).await.unwrap();
    assert!(admin.get_opt("not-by-the-plugin").await.unwrap().is_some());
    let (code, v) = common::get(&s.url, &format!("{demoitems}/not-by-the-plugin"), &token).await;
    assert_eq!(code, 200, "the plugin reads what the admin created: {v}");
}

/// Creates the ServiceAccount `fundament-<user>` bound to the seed's read-only ClusterRole,
/// as the platform's sync does.
async fn sync_service_account(admin: &kube::Client, user: &str) {
    let name = format!("fundament-{user}");
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "fundament-system"}})).unwrap();
    Api::<ServiceAccount>::namespaced(admin.clone(), "fundament-system")
        .create(&PostParams::default(), &sa)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": format!("{name}-read-only")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fundament-read-only"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "fundament-system"}],
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone()).create(&PostParams::default(), &binding).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_service_account_is_503_until_synced_and_first_calls_share_one_token_request() {
    let cluster = SeededCluster::start().await;
    // carol and dave may view the cluster, but no ServiceAccount of theirs exists yet.
    let fga = testing::viewers(&[("carol", PROD), ("dave", PROD)]);
    let s = sandbox(&cluster, Credential::ClientCertificate, fga).await;
    let carol = s.user("carol");
    let before = s.upstream.own_calls();
    for _ in 0..2 {
        let (code, v) = common::get(&s.url, NAMESPACES, &carol).await;
        assert_eq!((code, common::message(&v)), (503, SYNC_PENDING), "{v}");
    }
    assert_eq!(s.upstream.own_calls() - before, 2, "a missing ServiceAccount is asked for again, not cached");
    let admin = s.admin().await;
    sync_service_account(&admin, "carol").await;
    let (code, v) = common::get(&s.url, NAMESPACES, &carol).await;
    assert_eq!(code, 200, "the next call after the sync works: {v}");

    // dave's first 16 calls at once: one TokenRequest between them.
    sync_service_account(&admin, "dave").await;
    let dave = s.user("dave");
    let before = s.upstream.own_calls();
    let calls = (0..16).map(|_| {
        let (url, dave) = (s.url.clone(), dave.clone());
        tokio::spawn(async move { common::get(&url, NAMESPACES, &dave).await.0 })
    });
    for call in calls.collect::<Vec<_>>() {
        assert_eq!(call.await.unwrap(), 200);
    }
    assert_eq!(s.upstream.own_calls() - before, 1, "16 concurrent first calls, one TokenRequest");
    // And later calls none.
    assert_eq!(common::get(&s.url, NAMESPACES, &dave).await.0, 200);
    assert_eq!(s.upstream.own_calls() - before, 1);
}
