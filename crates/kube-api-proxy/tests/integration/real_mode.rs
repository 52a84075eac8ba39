//! Real mode end to end: the gateway finds each cluster as the Gardener Shoot labelled
//! `fundament.io/cluster-id`, in a simulated garden over HTTPS (its kubeconfig file read
//! with `load_kubeconfig`), and reaches the shoot with the admin kubeconfig the garden
//! issues (a `system:masters` client certificate of the shoot's CA). What it costs: a
//! shoot's first request two round trips to the garden (the list and the
//! `adminkubeconfig`), shared by concurrent first requests; later requests none until 70 %
//! of the kubeconfig's lifetime, then exactly one rebuild that keeps the cached tokens.

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use fundament_cluster::Running;
use fundament_cluster::garden::{self, GardenConfig, RunningGarden, ShootConfig};
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::clusters::{ClusterError, Clusters};
use fundament_kube_api_proxy::garden::Garden;
use fundament_kube_api_proxy::upstream::{ServerVerification, Upstream, load_kubeconfig};
use fundament_kube_api_proxy_testing as testing;
use fundament_kube_core::cluster_info::ShootSummary;
use fundament_tokens::Signer;
use http::Method;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

/// The shoot `prod`: the seed's cluster id.
const PROD: &str = testing::CLUSTER_ID;
/// The shoot `staging`.
const STAGING: &str = "019b4000-2000-7000-8000-000000000003";
/// Two Shoots carry this id (a copy someone made in another project).
const TWICE: &str = "019b4000-2000-7000-8000-000000000004";
/// No Shoot carries this id.
const NOWHERE: &str = "019b4000-2000-7000-8000-000000000005";
const PROJECT_NS: &str = "garden-acme-corp";

fn namespaces(cluster: &str) -> String {
    format!("/clusters/{cluster}/api/v1/namespaces")
}

fn certificates(cluster: &str) -> String {
    format!("/clusters/{cluster}/apis/cert-manager.io/v1/certificates")
}

/// What was logged at error level in this test binary (every integration test of the package:
/// the subscriber is the process's), shared by its tests; each looks for a line of its own.
fn logged() -> String {
    String::from_utf8_lossy(&log().lock().unwrap()).into_owned()
}

fn log() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buffer);
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::ERROR)
            .with_ansi(false)
            .with_writer(move || LogWriter(Arc::clone(&writer)))
            .init();
        buffer
    })
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A gateway in real mode before a simulated garden with the shoots `prod` and `staging`.
struct Real {
    url: String,
    signer: Signer,
    audit: Arc<MemoryAudit>,
    garden: Arc<Garden>,
    simulated: RunningGarden,
    /// The garden's kubeconfig file (its admin token), as real mode is configured.
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

/// `minimum`: the shortest admin kubeconfig the garden issues; `expiration`: what the
/// gateway asks for.
async fn real(minimum: Duration, expiration: i64) -> Real {
    log();
    let dir = tempfile::tempdir().unwrap();
    let repo = testing::repo();
    // ShootConfig::seeded seeds each shoot like `fundament dev`'s cluster, plugin folders
    // included: the plugin path has installations to work on.
    let shoot = |name: &str, id: &str| {
        ShootConfig::seeded(dir.path(), &repo, "acme-corp", name, id.parse().unwrap()).unwrap()
    };
    let shoots = vec![shoot("prod", PROD), shoot("staging", STAGING)];
    let mut config = GardenConfig::seeded(dir.path(), &repo, shoots).unwrap();
    config.minimum_kubeconfig_expiration = minimum;
    let simulated = garden::start(config).await.unwrap();
    let kubeconfig = dir.path().join("garden.kubeconfig");
    std::fs::write(&kubeconfig, simulated.kubeconfig()).unwrap();
    let upstream =
        Upstream::from_kube_config(load_kubeconfig(&kubeconfig).await.unwrap(), ServerVerification::Required)
            .unwrap();
    let garden =
        Arc::new(Garden::new(upstream, ServerVerification::Required).with_expiration_seconds(expiration));
    let mut grants = Vec::new();
    for cluster in [PROD, STAGING, TWICE, NOWHERE] {
        grants.extend([("alice", cluster), ("bob", cluster)]);
    }
    let signer = Signer::generate();
    let audit = Arc::new(MemoryAudit::default());
    let gateway = testing::gateway(
        Clusters::Garden(Arc::clone(&garden)),
        testing::viewers(&grants),
        &signer,
        audit.clone(),
    );
    let url = testing::serve(gateway).await;
    Real { url, signer, audit, garden, simulated, kubeconfig, _dir: dir }
}

impl Real {
    fn user(&self, user: &str) -> String {
        testing::user_token(&self.signer, user)
    }

    fn shoot(&self, name: &str) -> &Running {
        &self.simulated.shoot(PROJECT_NS, name).expect("a started shoot").running
    }

    /// A PluginToken of `user` through `installation` of the shoot `shoot` (cluster `id`).
    fn plugin(&self, shoot: &str, id: &str, user: &str, installation: &str) -> String {
        testing::plugin_token(&self.signer, self.shoot(shoot), user, id, installation)
    }

    /// Round trips to the garden so far.
    fn garden_calls(&self) -> u64 {
        self.garden.garden().own_calls()
    }

    /// Own calls to the shoot of `id` so far (connected before).
    fn shoot_calls(&self, id: &str) -> u64 {
        self.garden.connected(id).expect("the shoot was connected").own_calls()
    }

    fn last_audit(&self) -> (String, u16) {
        let line = self.audit.lines().last().cloned().expect("an audit line");
        (line.decision, line.status)
    }

    /// Another gateway's view of the same garden, finding Shoots in `namespaces` only (none: any).
    async fn garden_in(&self, namespaces: Vec<String>) -> Garden {
        let kubeconfig = load_kubeconfig(&self.kubeconfig).await.unwrap();
        let upstream = Upstream::from_kube_config(kubeconfig, ServerVerification::Required).unwrap();
        Garden::new(upstream, ServerVerification::Required).in_namespaces(namespaces)
    }

    /// Creates a Shoot (no cluster behind it) labelled with cluster `id` in `namespace`.
    async fn shoot_object(&self, namespace: &str, name: &str, id: &str) {
        let client = kube::Client::try_from(load_kubeconfig(&self.kubeconfig).await.unwrap()).unwrap();
        let gvk = GroupVersionKind::gvk("core.gardener.cloud", "v1beta1", "Shoot");
        let shoots: Api<DynamicObject> =
            Api::namespaced_with(client, namespace, &ApiResource::from_gvk_with_plural(&gvk, "shoots"));
        let mut shoot =
            DynamicObject::new(name, &ApiResource::from_gvk_with_plural(&gvk, "shoots")).within(namespace);
        shoot.metadata.labels = Some([("fundament.io/cluster-id".to_string(), id.to_string())].into());
        shoot.data = json!({"spec": {"provider": {"type": "gcp"}, "region": "europe-west1",
            "kubernetes": {"version": "1.32.0"}}});
        shoots.create(&PostParams::default(), &shoot).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cluster_is_the_one_shoot_of_its_label() {
    let r = real(GardenConfig::MINIMUM_KUBECONFIG_EXPIRATION, 3600).await;
    let alice = r.user("alice");

    // No Shoot: 404 naming the cluster, and asked again next time (a Shoot may appear).
    let before = r.garden_calls();
    for _ in 0..2 {
        let (code, v) = common::get(&r.url, &namespaces(NOWHERE), &alice).await;
        assert_eq!((code, v["kind"].as_str(), v["reason"].as_str()), (404, Some("Status"), Some("NotFound")));
        assert!(common::message(&v).contains(NOWHERE), "{v}");
    }
    assert_eq!(r.garden_calls() - before, 2, "one list each, nothing cached");

    // Two Shoots with one label: the gateway picks neither. The client hears of an internal
    // error; the count is in the log.
    let client = kube::Client::try_from(load_kubeconfig(&r.kubeconfig).await.unwrap()).unwrap();
    let other: Namespace = serde_json::from_value(json!({"metadata": {"name": "garden-copy"}})).unwrap();
    Api::<Namespace>::all(client).create(&PostParams::default(), &other).await.unwrap();
    r.shoot_object(PROJECT_NS, "twice-a", TWICE).await;
    r.shoot_object("garden-copy", "twice-b", TWICE).await;
    let (code, v) = common::get(&r.url, &namespaces(TWICE), &alice).await;
    assert_eq!((code, common::message(&v)), (500, "an internal error occurred; see the server log"), "{v}");
    assert!(!v.to_string().contains("shoots"), "no detail for the client: {v}");
    let line = format!("found 2 shoots labelled with cluster {TWICE}, expected exactly one");
    assert!(logged().contains(&line), "the log names the count: {}", logged());

    // A Shoot elsewhere claiming an id. Looking in any namespace (the default), a lone one is
    // taken for the cluster; restricted to the project's namespace (`--garden-namespaces`), the
    // gateway sees neither it nor the copy of TWICE, whose Shoot is then the project's own.
    r.shoot_object("garden-copy", "impostor", NOWHERE).await;
    let anywhere = r.garden_in(Vec::new()).await;
    assert_eq!(anywhere.shoot_summary(NOWHERE).await.unwrap().namespace, "garden-copy", "the control");
    let restricted = r.garden_in(vec![PROJECT_NS.to_owned()]).await;
    let found = restricted.shoot_summary(NOWHERE).await;
    assert!(matches!(found, Err(ClusterError::NoShoot(_))), "{found:?}");
    let twice = restricted.shoot_summary(TWICE).await.unwrap();
    assert_eq!((twice.namespace.as_str(), twice.name.as_str()), (PROJECT_NS, "twice-a"));

    // One Shoot: the user path as the user's ServiceAccount on that shoot.
    let before = r.garden_calls();
    let (code, v) = common::get(&r.url, &namespaces(PROD), &alice).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(r.garden_calls() - before, 2, "a first request: the list and the adminkubeconfig");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-bob"}});
    let cms = format!("{}/default/configmaps", namespaces(PROD));
    let (code, v) = common::call(&r.url, Method::POST, &cms, &r.user("bob"), Some(cm)).await;
    assert_eq!(code, 403, "{v}");
    assert!(common::message(&v).contains("system:serviceaccount:fundament-system:fundament-bob"), "{v}");

    // The plugin path; then identical calls cost no round trip to the garden and, within the
    // caches' lifetimes (reviews 10 s, tokens 80 % of theirs; installations come from the
    // watch-fed store, whose list and watch are not a request's calls), no own call to the
    // shoot either.
    let token = r.plugin("prod", PROD, "alice", "acme-corp--cert-manager");
    // Before the first plugin call, which caches its review: the review's 10 s run from later.
    let reviewed = Instant::now();
    let (code, v) = common::get(&r.url, &certificates(PROD), &token).await;
    assert_eq!((code, v["kind"].as_str()), (200, Some("CertificateList")), "{v}");
    assert_eq!(r.last_audit(), ("allowed".to_string(), 200));
    let (garden_before, shoot_before) = (r.garden_calls(), r.shoot_calls(PROD));
    for _ in 0..30 {
        assert_eq!(common::get(&r.url, &certificates(PROD), &token).await.0, 200);
        assert_eq!(common::get(&r.url, &namespaces(PROD), &alice).await.0, 200);
    }
    // Only so that a cached review cannot have expired (every call here is allowed, so no
    // denial's 2 s applies): 60 calls take well under a second on an idle machine, and 8 s
    // leaves a loaded one room while staying 2 s inside the review's 10 s.
    assert!(
        reviewed.elapsed() < Duration::from_secs(8),
        "within the review's 10 s: {:?}",
        reviewed.elapsed()
    );
    assert_eq!(r.garden_calls() - garden_before, 0, "warm: no round trip to the garden");
    assert_eq!(r.shoot_calls(PROD) - shoot_before, 0, "warm: no own call to the shoot");

    // The shoot's admin kubeconfig is system:masters: a plugin call it would allow, the
    // plugin's ServiceAccount may not do, and the shoot refuses it as that ServiceAccount.
    let demo = r.plugin("prod", PROD, "alice", "acme-corp--demo");
    let item = json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
        "metadata": {"name": "x"}, "spec": {"message": "m"}});
    let demoitems = format!("/clusters/{PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems");
    let (code, v) = common::call(&r.url, Method::POST, &demoitems, &demo, Some(item)).await;
    assert_eq!(code, 403, "{v}");
    assert!(common::message(&v).contains("system:serviceaccount:plugin-acme-corp--demo:plugin"), "{v}");

    // staging: 16 concurrent first requests share one connection: one list, one adminkubeconfig,
    // and one TokenRequest on the shoot.
    let before = r.garden_calls();
    let calls: Vec<_> = (0..16)
        .map(|_| {
            let (url, alice) = (r.url.clone(), alice.clone());
            tokio::spawn(async move { common::get(&url, &namespaces(STAGING), &alice).await.0 })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap(), 200);
    }
    assert_eq!(r.garden_calls() - before, 2, "one build for 16 first requests");
    assert_eq!(r.shoot_calls(STAGING), 1, "one TokenRequest for 16 first requests");
    let token = r.plugin("staging", STAGING, "alice", "acme-corp--cert-manager");
    assert_eq!(common::get(&r.url, &certificates(STAGING), &token).await.0, 200);
    // prod's token is of prod's installation: staging's has another uid.
    let (code, _) = common::get(
        &r.url,
        &certificates(STAGING),
        &r.plugin("prod", STAGING, "alice", "acme-corp--cert-manager"),
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(r.last_audit().0, "denied:installation");
}

/// Sleeps until `at` after `start`.
async fn until(start: Instant, at: Duration) {
    tokio::time::sleep((start + at).saturating_duration_since(Instant::now())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_kubeconfig_is_renewed_at_70_percent_of_its_lifetime() {
    // Only here is the garden's minimum lowered, to ask for 20 s: long enough that neither
    // side of the renewal is decided by a few hundred milliseconds of a loaded machine.
    let r = real(Duration::from_secs(1), 20).await;
    let alice = r.user("alice");
    // The build happens within the first request: after `start`, before `built`.
    let start = Instant::now();
    assert_eq!(common::get(&r.url, &namespaces(PROD), &alice).await.0, 200);
    let built = Instant::now();
    assert_eq!(r.garden_calls(), 2, "the list and the adminkubeconfig");
    let shoot = r.garden.connected(PROD).unwrap();
    assert_eq!(shoot.own_calls(), 1, "alice's TokenRequest");
    // The certificate's notAfter is whole seconds, so its lifetime is 19–20 s from the build
    // and the renewal comes 13.3–14 s after it. Not yet renewed: timed from `start`, which is
    // no later than the build, so 12 s leaves at least 1.3 s before the renewal.
    for at in [2, 6, 12] {
        until(start, Duration::from_secs(at)).await;
        assert_eq!(common::get(&r.url, &namespaces(PROD), &alice).await.0, 200);
        assert_eq!(r.garden_calls(), 2, "{at} s: no round trip to the garden");
    }
    // Renewed: timed from `built`, which is no earlier than the build, so 15 s is at least 1 s
    // past the renewal (and still before the certificate's end).
    until(built, Duration::from_secs(15)).await;
    assert_eq!(common::get(&r.url, &namespaces(PROD), &alice).await.0, 200);
    assert_eq!(r.garden_calls(), 4, "past 70 %: one rebuild, the list and the adminkubeconfig");
    assert!(Arc::ptr_eq(&shoot, &r.garden.connected(PROD).unwrap()), "rebuilt in place");
    assert_eq!(shoot.own_calls(), 1, "alice's ServiceAccount token survived: no new TokenRequest");
    // The renewed certificate authenticates the gateway's own calls (a first plugin call:
    // the review and the plugin's token; the installation comes from the watch-fed store,
    // whose list and watch are not counted).
    let token = r.plugin("prod", PROD, "alice", "acme-corp--cert-manager");
    assert_eq!(common::get(&r.url, &certificates(PROD), &token).await.0, 200);
    assert_eq!(shoot.own_calls(), 3);
    assert_eq!(r.garden_calls(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shoot_behind_a_cluster_is_told_to_those_who_may_view_it() {
    let r = real(GardenConfig::MINIMUM_KUBECONFIG_EXPIRATION, 3600).await;
    let info = format!("/clusters/{PROD}");
    let (code, v) = common::get(&r.url, &info, &r.user("alice")).await;
    assert_eq!(code, 200, "{v}");
    let shoot: ShootSummary = serde_json::from_value(v["shoot"].clone()).unwrap();
    assert_eq!(
        (shoot.namespace.as_str(), shoot.name.as_str(), shoot.health.as_str()),
        (PROJECT_NS, "prod", "healthy")
    );
    assert_eq!(shoot.describe(), "healthy · Reconcile Succeeded (100 %)");
    assert!(shoot.conditions.iter().any(|c| c.kind == "APIServerAvailable" && c.status == "True"), "{v}");
    // Read once per 10 s, not on every load of the cluster list.
    let before = r.garden_calls();
    assert_eq!(common::get(&r.url, &info, &r.user("alice")).await.0, 200);
    assert_eq!(r.garden_calls(), before);
    // No Shoot: 404 naming the cluster; someone who may not view it: 403; never from a browser page.
    let (code, v) = common::get(&r.url, &format!("/clusters/{NOWHERE}"), &r.user("alice")).await;
    assert_eq!(code, 404, "{v}");
    assert!(common::message(&v).contains(NOWHERE), "{v}");
    assert_eq!(common::get(&r.url, &info, &r.user("mallory")).await.0, 403);
    let authorization = format!("Bearer {}", r.user("alice"));
    let from_page = [
        ("authorization", authorization.as_str()),
        ("origin", "http://acme-corp--cert-manager.localhost:8082"),
    ];
    assert_eq!(common::request(&r.url, Method::GET, &info, &from_page, None).await.0, 403);
    let plugin = r.plugin("prod", PROD, "alice", "acme-corp--cert-manager");
    assert_eq!(common::get(&r.url, &info, &plugin).await.0, 401, "a PluginToken is no user's token");
}
