//! kube-rs against the embedded cluster over HTTPS, with a kubeconfig that
//! points at it: list, watch, create, patch, and RBAC refusing a
//! ServiceAccount without the right.

use crate::common;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

fn demo_items() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("demo.fundament.io", "v1", "DemoItem"),
        "demoitems",
    )
}

/// A client that authenticates as the ServiceAccount `name` of `sas`, with a token
/// from a TokenRequest.
async fn client_as(tc: &common::TestCluster, sas: &Api<ServiceAccount>, name: &str) -> kube::Client {
    let request = serde_json::from_value(json!({"spec": {}})).unwrap();
    let answer = sas.create_token_request(name, &PostParams::default(), &request).await.unwrap();
    let token = answer.status.unwrap().token.unwrap();
    common::client_for(&tc.kubeconfig_with_token(&token)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_watch_create_patch_and_forbidden() {
    let (tc, client) = common::admin_client().await;

    // list: typed and dynamic
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(
        names.contains(&"default".to_string()) && names.contains(&"plugin-acme-corp--demo".to_string()),
        "{names:?}"
    );
    let certs = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cert-manager.io", "v1", "Certificate"),
        "certificates",
    );
    let all_certs: Api<DynamicObject> = Api::all_with(client.clone(), &certs);
    assert_eq!(all_certs.list(&ListParams::default()).await.unwrap().items.len(), 3);
    let in_default: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &certs);
    assert_eq!(in_default.list(&ListParams::default()).await.unwrap().items.len(), 1);

    // watch from the list's resourceVersion, then create and patch
    let items: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &demo_items());
    let rv = items.list(&ListParams::default()).await.unwrap().metadata.resource_version.unwrap();
    let mut stream = items.watch(&WatchParams::default().timeout(20), &rv).await.unwrap().boxed();
    let mut obj = DynamicObject::new("from-kube-rs", &demo_items()).within("default");
    obj.data = json!({"spec": {"message": "hello from kube-rs"}});
    let created = items.create(&PostParams::default(), &obj).await.unwrap();
    assert!(created.metadata.uid.is_some());
    assert_eq!(created.metadata.generation, Some(1));
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Added(o)) => assert_eq!(o.metadata.name.as_deref(), Some("from-kube-rs")),
        other => panic!("expected ADDED, got {other:?}"),
    }
    let patched = items
        .patch(
            "from-kube-rs",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"message": "patched"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"]["message"], "patched");
    assert_eq!(patched.metadata.generation, Some(2));
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Modified(o)) => assert_eq!(o.data["spec"]["message"], "patched"),
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    // an update with a stale resourceVersion conflicts
    let mut stale = created.clone();
    stale.data["spec"]["message"] = json!("stale");
    let err = items.replace("from-kube-rs", &PostParams::default(), &stale).await.unwrap_err();
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 409), "{err:?}");

    // a ServiceAccount with no rights: 403 as a Status
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let sa: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": "nobody"}})).unwrap();
    sas.create(&PostParams::default(), &sa).await.unwrap();
    let nobody = client_as(&tc, &sas, "nobody").await;
    let cms: Api<ConfigMap> = Api::namespaced(nobody.clone(), "default");
    match cms.list(&ListParams::default()).await.unwrap_err() {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 403);
            assert_eq!(
                s.message,
                "configmaps is forbidden: User \"system:serviceaccount:default:nobody\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
    // the token dies with its ServiceAccount
    sas.delete("nobody", &Default::default()).await.unwrap();
    match cms.list(&ListParams::default()).await.unwrap_err() {
        kube::Error::Api(s) => assert_eq!(s.code, 401),
        other => panic!("expected 401, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_service_accounts_get_their_definitions_rules() {
    let (tc, client) = common::admin_client().await;
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "plugin-acme-corp--demo");
    let demo = client_as(&tc, &sas, "plugin").await;
    let items: Api<DynamicObject> = Api::namespaced_with(demo.clone(), "default", &demo_items());
    assert_eq!(items.list(&ListParams::default()).await.unwrap().items.len(), 2);
    // demo's RBAC grants get/list/watch only: a create is the cluster's 403.
    let obj = DynamicObject::new("x", &demo_items()).within("default");
    match items.create(&PostParams::default(), &obj).await.unwrap_err() {
        kube::Error::Api(s) => assert_eq!(s.code, 403, "{}", s.message),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_controller_installs_known_plugins_and_fails_unknown_ones() {
    let (_tc, client) = common::admin_client().await;
    let installations = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("plugins.fundament.io", "v1", "PluginInstallation"),
        "plugininstallations",
    );
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &installations);
    let demo = api.get("acme-corp--demo").await.unwrap();
    let reference = demo.data["spec"]["definitionRef"].clone();
    let create = |name: &str, reference: serde_json::Value| {
        let mut obj = DynamicObject::new(name, &installations);
        obj.data = json!({"spec": {"definitionRef": reference}});
        obj
    };
    let wait_phase = |name: &'static str| {
        let api = api.clone();
        async move {
            for _ in 0..50 {
                let o = api.get(name).await.unwrap();
                if let Some(p) = o.data["status"]["phase"].as_str() {
                    return (p.to_string(), o);
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            panic!("{name} never got a phase");
        }
    };
    api.create(&PostParams::default(), &create("team--demo", reference.clone())).await.unwrap();
    let (phase, _) = wait_phase("team--demo").await;
    assert_eq!(phase, "Running");
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "plugin-team--demo");
    sas.get("plugin").await.unwrap();

    api.create(
        &PostParams::default(),
        &create("team--nope", json!({"pluginName": "nope", "pluginVersion": "v1"})),
    )
    .await
    .unwrap();
    let (phase, obj) = wait_phase("team--nope").await;
    assert_eq!(phase, "Failed");
    assert_eq!(obj.data["status"]["message"], "plugin definition nope@v1 not found");
    assert_eq!(obj.data["status"]["conditions"][0]["reason"], "DefinitionNotFound");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(namespaces.get("plugin-team--nope").await.is_err(), "nothing is created for an unknown plugin");

    let mut bad = reference.clone();
    bad["definitionHash"] = json!("sha256:0000000000000000000000000000000000000000000000000000000000000000");
    api.create(&PostParams::default(), &create("team--pinned", bad)).await.unwrap();
    let (phase, obj) = wait_phase("team--pinned").await;
    assert_eq!(phase, "Failed");
    assert!(obj.data["status"]["message"].as_str().unwrap().contains("does not match"));

    // Deleting an installation removes what was created for it.
    api.delete("team--demo", &Default::default()).await.unwrap();
    for _ in 0..50 {
        if namespaces.get("plugin-team--demo").await.is_err() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the installation's namespace was not removed");
}
