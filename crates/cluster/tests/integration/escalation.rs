//! RBAC escalation prevention over HTTPS, as kube-apiserver answers it: a ServiceAccount that may
//! create bindings and roles, but holds little, cannot bind `cluster-admin` to itself nor write a
//! role of rules it does not hold; with `bind` or `escalate` on that role it can.

use crate::common;

use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

fn rbac(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", kind), plural)
}

async fn create(
    client: &kube::Client,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
    obj: serde_json::Value,
) -> Result<(), kube::Error> {
    let ar = rbac(kind, plural);
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    let obj: DynamicObject = serde_json::from_value(obj).unwrap();
    api.create(&PostParams::default(), &obj).await.map(|_| ())
}

fn forbidden(result: Result<(), kube::Error>, says: &str) {
    match result {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403, "{status:?}");
            assert!(status.message.contains(says), "{}", status.message);
        }
        other => panic!("expected a 403, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_and_bindings_grant_only_what_their_writer_holds() {
    let (tc, admin) = common::admin_client().await;
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "writer"}})).unwrap(),
    )
    .await
    .unwrap();
    // writer may create roles and bindings of every kind, and read configmaps; nothing else.
    let writer_rules = json!([
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings", "clusterroles", "clusterrolebindings"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
    ]);
    create(&admin, "ClusterRole", "clusterroles", None, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "writer"}, "rules": writer_rules})).await.unwrap();
    let subject = json!([{"kind": "ServiceAccount", "name": "writer", "namespace": "default"}]);
    create(&admin, "ClusterRoleBinding", "clusterrolebindings", None, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "writer"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "writer"}, "subjects": subject})).await.unwrap();
    let request = serde_json::from_value(json!({"spec": {}})).unwrap();
    let token = sas
        .create_token_request("writer", &PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .unwrap()
        .token
        .unwrap();
    let writer = common::client_for(&tc.kubeconfig_with_token(&token)).await;

    let binding = |name: &str, role: &str| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}, "subjects": subject});
    forbidden(
        create(&writer, "ClusterRoleBinding", "clusterrolebindings", None, binding("pwn", "cluster-admin"))
            .await,
        "is attempting to grant RBAC permissions not currently held",
    );
    let role = |name: &str, rules: serde_json::Value| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name, "namespace": "default"}, "rules": rules});
    forbidden(
        create(
            &writer,
            "Role",
            "roles",
            Some("default"),
            role("everything", json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])),
        )
        .await,
        "Resources:[\"*\"]",
    );
    forbidden(
        create(&writer, "ClusterRole", "clusterroles", None, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "aggregated"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}})).await,
        "aggregationRule",
    );
    // What writer holds, it may hand on: a role of it, and a binding of that role.
    create(
        &writer,
        "Role",
        "roles",
        Some("default"),
        role("read-configmaps", json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])),
    )
    .await
    .unwrap();
    create(&writer, "RoleBinding", "rolebindings", Some("default"), json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "read-configmaps", "namespace": "default"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-configmaps"}, "subjects": subject})).await.unwrap();
    // With `bind` on cluster-admin, it may bind it (as kube-apiserver allows).
    create(&admin, "ClusterRole", "clusterroles", None, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "binder"}, "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "resourceNames": ["cluster-admin"], "verbs": ["bind"]}]})).await.unwrap();
    create(&admin, "ClusterRoleBinding", "clusterrolebindings", None, binding("binder", "binder"))
        .await
        .unwrap();
    create(&writer, "ClusterRoleBinding", "clusterrolebindings", None, binding("allowed", "cluster-admin"))
        .await
        .unwrap();
}

/// A plugin folder whose definition would hand the plugin the cluster is not installed: the
/// embedded cluster does not start, and says which rule and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_would_take_the_cluster_over_is_not_installed() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("grabby");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(
        plugin.join("definition.yaml"),
        "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata: {name: grabby, version: v1}\n\
         spec:\n  permissions:\n    rbac:\n    - {apiGroups: [\"\"], resources: [nodes/proxy], verbs: [get]}\n",
    )
    .unwrap();
    let mut config = common::config(dir.path());
    config.plugin_dirs.push(plugin);
    let Err(error) = fundament_cluster::start(config).await else { panic!("the cluster started") };
    let message = error.to_string();
    assert!(message.contains("grabby") && message.contains("spec.permissions.rbac[0]"), "{message}");
    assert!(message.contains("reaches the kubelet of every node"), "{message}");
}
