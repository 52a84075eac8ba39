//! The simulated Gardener: a garden cluster with two shoots in process.
//! Shoots are listed (by label too) through discovery, kube-rs and kubectl;
//! `adminkubeconfig` answers a kubeconfig whose client certificate the shoot's
//! own CA signed in `system:masters`, within Gardener's limits and the
//! garden's RBAC; and that certificate stops working when it expires.

use crate::common;

use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use fundament_cluster::garden::{self, GardenConfig, RunningGarden, ShootConfig};

const PROD: &str = "0b6c3c56-54b3-4d86-9a2c-7f35a1f0c001";
const STAGING: &str = "0b6c3c56-54b3-4d86-9a2c-7f35a1f0c002";
const PROJECT_NS: &str = "garden-acme-corp";

fn shoots() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("core.gardener.cloud", "v1beta1", "Shoot"),
        "shoots",
    )
}

/// A garden with `names` (and their cluster ids) as shoots of `acme-corp`.
async fn start(dir: &tempfile::TempDir, names: &[(&str, &str)], minimum: Duration) -> RunningGarden {
    let repo = common::repo();
    let shoots = names
        .iter()
        .map(|(name, id)| {
            ShootConfig::seeded(dir.path(), &repo, "acme-corp", name, id.parse().unwrap()).unwrap()
        })
        .collect();
    let mut config = GardenConfig::seeded(dir.path(), &repo, shoots).unwrap();
    config.minimum_kubeconfig_expiration = minimum;
    garden::start(config).await.expect("the garden starts")
}

fn admin_kubeconfig_path(shoot: &str) -> String {
    format!("/apis/core.gardener.cloud/v1beta1/namespaces/{PROJECT_NS}/shoots/{shoot}/adminkubeconfig")
}

/// POSTs an AdminKubeconfigRequest with `spec`; the status code and the answer.
async fn request(client: &kube::Client, shoot: &str, spec: Value) -> (u16, Value) {
    let body = json!({"apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": "AdminKubeconfigRequest",
        "spec": spec});
    common::send_raw(
        client,
        http::Method::POST,
        &admin_kubeconfig_path(shoot),
        "application/json",
        body.to_string().into_bytes(),
    )
    .await
}

fn decoded_kubeconfig(answer: &Value) -> String {
    let data = answer["status"]["kubeconfig"].as_str().expect("a kubeconfig");
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(data).unwrap()).unwrap()
}

async fn namespaces(client: &kube::Client) -> Result<Vec<String>, kube::Error> {
    let list = Api::<Namespace>::all(client.clone()).list(&ListParams::default()).await?;
    Ok(list.items.into_iter().filter_map(|n| n.metadata.name).collect())
}

fn rfc3339(text: &str) -> time::OffsetDateTime {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shoots_are_listed_by_label_and_hand_out_admin_kubeconfigs_of_their_own_ca() {
    let dir = tempfile::tempdir().unwrap();
    let garden =
        start(&dir, &[("prod", PROD), ("staging", STAGING)], GardenConfig::MINIMUM_KUBECONFIG_EXPIRATION)
            .await;
    let client = common::client_for(&garden.kubeconfig()).await;

    // Discovery names the kind and the subresource, as Gardener's API server does.
    let resources = client.list_api_group_resources("core.gardener.cloud/v1beta1").await.unwrap();
    let names: Vec<&str> = resources.resources.iter().map(|r| r.name.as_str()).collect();
    assert!(names.contains(&"shoots") && names.contains(&"shoots/adminkubeconfig"), "{names:?}");

    let in_project: Api<DynamicObject> = Api::namespaced_with(client.clone(), PROJECT_NS, &shoots());
    let matching = |selector: String| {
        let api = in_project.clone();
        async move {
            let list = api.list(&ListParams::default().labels(&selector)).await.unwrap();
            list.items.into_iter().filter_map(|s| s.metadata.name).collect::<Vec<_>>()
        }
    };
    assert_eq!(matching(format!("fundament.io/cluster-id={PROD}")).await, ["prod"]);
    assert_eq!(
        matching("fundament.io/cluster-id=00000000-0000-0000-0000-000000000000".into()).await.len(),
        0
    );
    assert_eq!(matching("shoot.gardener.cloud/status=healthy".into()).await, ["prod", "staging"]);

    let prod = garden.shoot(PROJECT_NS, "prod").unwrap();
    let staging = garden.shoot(PROJECT_NS, "staging").unwrap();
    let shoot = in_project.get("prod").await.unwrap();
    let status = &shoot.data["status"];
    assert_eq!(status["advertisedAddresses"], json!([{"name": "external", "url": prod.running.url}]));
    assert_eq!(
        (
            &status["lastOperation"]["type"],
            &status["lastOperation"]["state"],
            &status["lastOperation"]["progress"]
        ),
        (&json!("Reconcile"), &json!("Succeeded"), &json!(100))
    );
    for kind in ["APIServerAvailable", "ControlPlaneHealthy", "EveryNodeReady", "SystemComponentsHealthy"] {
        let found = status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == kind);
        assert_eq!(found.map(|c| &c["status"]), Some(&json!("True")), "{kind}");
    }
    assert_eq!(shoot.data["spec"]["kubernetes"]["version"], "1.32.0");

    // The admin kubeconfig points at the shoot, trusts its CA, and is system:masters there.
    let (code, answer) = request(&client, "prod", json!({"expirationSeconds": 600})).await;
    assert_eq!(code, 201, "{answer}");
    assert_eq!(answer["kind"], "AdminKubeconfigRequest");
    let expires = rfc3339(answer["status"]["expirationTimestamp"].as_str().unwrap());
    let lifetime = expires - time::OffsetDateTime::now_utc();
    assert!((590..=600).contains(&lifetime.whole_seconds()), "{lifetime}");
    let kubeconfig = decoded_kubeconfig(&answer);
    let parsed: Value = serde_yaml::from_str(&kubeconfig).unwrap();
    assert_eq!(parsed["clusters"][0]["cluster"]["server"], json!(prod.running.url));
    assert_eq!(parsed["current-context"], "garden-acme-corp--prod-external");
    let shoot_admin = common::client_for(&kubeconfig).await;
    assert!(namespaces(&shoot_admin).await.unwrap().contains(&"plugin-acme-corp--demo".to_string()));
    let me = common::whoami(&shoot_admin).await;
    assert_eq!(me["username"], "gardener.cloud:admin:kubernetes-admin");
    assert_eq!(me["groups"][0], "system:masters");
    // Signed by prod's CA: the staging shoot does not take it.
    let mut elsewhere = parsed.clone();
    elsewhere["clusters"][0]["cluster"]["server"] = json!(staging.running.url);
    elsewhere["clusters"][0]["cluster"]["certificate-authority-data"] =
        json!(base64::engine::general_purpose::STANDARD.encode(&staging.running.ca_pem));
    let wrong = common::client_for(&serde_yaml::to_string(&elsewhere).unwrap()).await;
    assert!(
        !matches!(namespaces(&wrong).await, Ok(_) | Err(kube::Error::Api(_))),
        "refused in the handshake"
    );

    // Gardener's defaults and limits.
    let (code, answer) = request(&client, "staging", json!({})).await;
    assert_eq!((code, &answer["spec"]["expirationSeconds"]), (201, &json!(3600)), "{answer}");
    let (code, answer) = request(&client, "staging", json!({"expirationSeconds": 599})).await;
    assert_eq!(code, 422, "{answer}");
    assert_eq!(answer["reason"], "Invalid");
    assert_eq!(
        answer["message"],
        "AdminKubeconfigRequest.authentication.gardener.cloud \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
    );
    let (code, answer) = request(&client, "staging", json!({"expirationSeconds": 7 * 24 * 3600})).await;
    assert_eq!((code, &answer["spec"]["expirationSeconds"]), (201, &json!(24 * 3600)), "{answer}");
    let (code, _) = request(&client, "nope", json!({})).await;
    assert_eq!(code, 404);
    // A Shoot no cluster of the garden stands behind has nowhere to point.
    let mut orphan = DynamicObject::new("orphan", &shoots()).within(PROJECT_NS);
    orphan.data = json!({"spec": {"provider": {"type": "gcp"}, "region": "europe-west1",
        "kubernetes": {"version": "1.32.0"}}});
    in_project.create(&PostParams::default(), &orphan).await.unwrap();
    let (code, answer) = request(&client, "orphan", json!({})).await;
    assert_eq!(code, 422, "{answer}");

    // kubectl: the Table, a label selector, and the subresource.
    let path = dir.path().join("garden.kubeconfig");
    std::fs::write(&path, garden.kubeconfig()).unwrap();
    let raw_path = admin_kubeconfig_path("prod");
    tokio::task::spawn_blocking(move || {
        let kubectl = common::kubectl::Kubectl { kubeconfig: path };
        let out = kubectl.ok(&["get", "shoots", "-n", PROJECT_NS]);
        assert_eq!(
            common::kubectl::header(&out),
            [
                "NAME",
                "CLOUDPROFILE",
                "PROVIDER",
                "REGION",
                "K8S",
                "VERSION",
                "LAST",
                "OPERATION",
                "STATUS",
                "AGE"
            ]
        );
        let prod_row: Vec<&str> =
            out.lines().find(|l| l.starts_with("prod ")).unwrap().split_whitespace().collect();
        assert_eq!(prod_row[..7], ["prod", "gcp", "gcp", "europe-west1", "1.32.0", "Succeeded", "healthy"]);
        let selector = format!("fundament.io/cluster-id={STAGING}");
        let out = kubectl.ok(&["get", "shoots", "-A", "-l", &selector, "-o", "name"]);
        assert_eq!(out.trim(), "shoot.core.gardener.cloud/staging");
        let (ok, out, err) = kubectl.run(&["create", "--raw", &raw_path, "-f", "-"], Some(r#"{"spec":{}}"#));
        assert!(ok, "{err}");
        let answer: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(answer["spec"]["expirationSeconds"], 3600);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gardens_rbac_decides_who_gets_an_admin_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let garden = start(&dir, &[("prod", PROD)], GardenConfig::MINIMUM_KUBECONFIG_EXPIRATION).await;
    let jane_cert = garden.garden.issue_client_certificate("jane", &[], Duration::from_secs(3600)).unwrap();
    let jane = common::client_for(&garden.garden.client_certificate_kubeconfig(&jane_cert, "jane")).await;
    let (code, answer) = request(&jane, "prod", json!({})).await;
    assert_eq!(code, 403, "{answer}");
    assert_eq!(
        answer["message"],
        "shoots.core.gardener.cloud \"prod\" is forbidden: User \"jane\" cannot create resource \"shoots/adminkubeconfig\" in API group \"core.gardener.cloud\" in the namespace \"garden-acme-corp\""
    );

    // A Role of the subresource alone is enough, and is all jane has.
    let admin = common::client_for(&garden.kubeconfig()).await;
    let rbac = |kind: &str, body: Value| {
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", kind));
        let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), PROJECT_NS, &resource);
        let mut obj: DynamicObject = serde_json::from_value(body).unwrap();
        obj.types = Some(kube::core::TypeMeta {
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: kind.into(),
        });
        async move { api.create(&PostParams::default(), &obj).await.unwrap() }
    };
    rbac(
        "Role",
        json!({"metadata": {"name": "shoot-admin"}, "rules": [{"apiGroups": ["core.gardener.cloud"],
        "resources": ["shoots/adminkubeconfig"], "verbs": ["create"]}]}),
    )
    .await;
    rbac(
        "RoleBinding",
        json!({"metadata": {"name": "jane-shoot-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "shoot-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}]}),
    )
    .await;
    let (code, answer) = request(&jane, "prod", json!({})).await;
    assert_eq!(code, 201, "{answer}");
    let shoot = common::client_for(&decoded_kubeconfig(&answer)).await;
    assert_eq!(common::whoami(&shoot).await["username"], "gardener.cloud:admin:jane");
    let shoots_of_jane: Api<DynamicObject> = Api::namespaced_with(jane.clone(), PROJECT_NS, &shoots());
    match shoots_of_jane.list(&ListParams::default()).await.unwrap_err() {
        kube::Error::Api(s) => assert_eq!(s.code, 403),
        other => panic!("expected 403, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_kubeconfig_stops_working_when_its_certificate_expires() {
    let dir = tempfile::tempdir().unwrap();
    // Only here is the minimum lowered: a garden's default keeps Gardener's ten minutes.
    let garden = start(&dir, &[("prod", PROD)], Duration::from_secs(1)).await;
    let client = common::client_for(&garden.kubeconfig()).await;
    let (code, answer) = request(&client, "prod", json!({"expirationSeconds": 0})).await;
    assert_eq!(code, 422, "{answer}");
    let (code, answer) = request(&client, "prod", json!({"expirationSeconds": 2})).await;
    assert_eq!(code, 201, "{answer}");
    let kubeconfig = decoded_kubeconfig(&answer);
    namespaces(&common::client_for(&kubeconfig).await).await.expect("valid for two seconds");
    let expires = rfc3339(answer["status"]["expirationTimestamp"].as_str().unwrap());
    let wait = expires - time::OffsetDateTime::now_utc() + time::Duration::milliseconds(1500);
    tokio::time::sleep(wait.try_into().unwrap_or_default()).await;
    let err = namespaces(&common::client_for(&kubeconfig).await).await.unwrap_err();
    assert!(!matches!(err, kube::Error::Api(_)), "refused in the handshake: {err:?}");
}
