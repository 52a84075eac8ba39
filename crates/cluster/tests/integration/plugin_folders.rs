//! A plugin folder is its author's: what its `crds/`, `admission/` and `fixtures/` may put on
//! the cluster is held to an allow-list (`fundament_plugin_types::folder_objects`), checked for
//! the whole folder before the embedded cluster creates any of it as itself; the controller
//! makes an installation's objects as the definition says, whatever was there before; and no
//! CRD takes the place of a built-in resource.

use std::path::{Path, PathBuf};

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::common;

const WIDGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
    metadata: {name: widgets.example.io}\n\
    spec:\n  group: example.io\n  scope: Namespaced\n  names: {plural: widgets, kind: Widget}\n\
    \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n\
    \x20   schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n";

/// A plugin folder `grabby` with the Widget CRD, a widget, and `extra` in `sub/file`.
fn plugin(dir: &Path, sub: &str, file: &str, extra: &str) -> PathBuf {
    let plugin = dir.join("grabby");
    for part in ["crds", "fixtures", sub] {
        std::fs::create_dir_all(plugin.join(part)).unwrap();
    }
    std::fs::write(
        plugin.join("definition.yaml"),
        "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata: {name: grabby, version: v1}\n\
         spec:\n  crds: [widgets.example.io]\n  permissions:\n    rbac:\n\
         \x20   - {apiGroups: [example.io], resources: [widgets], verbs: [get, list, watch]}\n",
    )
    .unwrap();
    std::fs::write(plugin.join("crds/widgets.yaml"), WIDGET_CRD).unwrap();
    std::fs::write(
        plugin.join("fixtures/widgets.yaml"),
        "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n",
    )
    .unwrap();
    std::fs::write(plugin.join(sub).join(file), extra).unwrap();
    plugin
}

/// A folder whose fixtures hold a ClusterRole named like the plugin's scope role, with every
/// rule, is refused whole at start-up (before, it was created as the cluster itself and then
/// kept by the controller, past the check of the definition's rules); so are the other objects
/// a folder may not hold. The message names file, document, kind and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_with_objects_it_may_not_hold_is_not_loaded() {
    for (sub, file, extra, document, why) in [
        (
            "fixtures",
            "rbac.yaml",
            "apiVersion: v1\nkind: Event\nmetadata: {name: w.1, namespace: default}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n\
             metadata: {name: plugin-acme-corp--grabby-scope}\n\
             rules: [{apiGroups: ['*'], resources: ['*'], verbs: ['*']}]\n",
            "document 1 (ClusterRole plugin-acme-corp--grabby-scope)",
            "fixtures/ may hold only objects of the kinds this plugin's crds/ define, and Events",
        ),
        (
            "admission",
            "binding.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n\
             metadata: {name: theirs}\nspec: {policyName: someone-elses, validationActions: [Deny]}\n",
            "document 0 (ValidatingAdmissionPolicyBinding theirs)",
            "spec.policyName \"someone-elses\" is not a policy of this plugin's admission/",
        ),
        (
            "crds",
            "shadow.yaml",
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
             metadata: {name: roles.rbac.authorization.k8s.io}\n\
             spec: {group: rbac.authorization.k8s.io, scope: Namespaced, names: {plural: roles, kind: Role},\n\
             \x20 versions: [{name: v1, served: true, storage: true}]}\n",
            "document 0 (CustomResourceDefinition roles.rbac.authorization.k8s.io)",
            "spec.group \"rbac.authorization.k8s.io\" is reserved",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let plugin = plugin(dir.path(), sub, file, extra);
        let mut config = common::config(dir.path());
        config.plugin_dirs = vec![plugin.clone()];
        let Err(error) = fundament_cluster::start(config).await else {
            panic!("{file}: the cluster started")
        };
        let message = error.to_string();
        let head = format!("{}: {document}: ", plugin.join(sub).join(file).display());
        assert!(message.starts_with(&head), "{message}\nwanted it to start with {head}");
        assert!(message.contains(why) && message.ends_with(": the plugin is not installed"), "{message}");
    }
}

fn cluster_roles() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"),
        "clusterroles",
    )
}

/// The platform's own fixtures (trusted, unlike a plugin folder) may hold RBAC: a ClusterRole
/// there named like a plugin's scope role is made what the plugin's definition says once the
/// controller installs the plugin, not kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_makes_the_scope_role_what_the_definition_says() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = plugin(dir.path(), "fixtures", "events.yaml", "");
    let platform = dir.path().join("platform");
    std::fs::create_dir_all(platform.join("crds")).unwrap();
    let crd = "plugininstallations.plugins.fundament.io.yaml";
    std::fs::copy(common::repo().join("fixtures/cluster/crds").join(crd), platform.join("crds").join(crd))
        .unwrap();
    std::fs::write(
        platform.join("namespaces.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n",
    )
    .unwrap();
    std::fs::write(
        platform.join("rbac.yaml"),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n\
         metadata: {name: plugin-acme-corp--grabby-scope}\n\
         rules: [{apiGroups: ['*'], resources: ['*'], verbs: ['*']}]\n",
    )
    .unwrap();
    let tc = common::start_with(|config| {
        config.fixtures_dir = platform;
        config.plugin_dirs = vec![plugin];
    })
    .await;
    let roles: Api<DynamicObject> = Api::all_with(tc.client().await, &cluster_roles());
    let role = serde_json::to_value(roles.get("plugin-acme-corp--grabby-scope").await.unwrap()).unwrap();
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": ["example.io"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}]),
        "{role}"
    );
}

/// A CRD of a built-in resource's group and plural is refused as invalid (422), in any version,
/// and the built-in resource is served as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_cannot_take_the_place_of_a_built_in_resource() {
    let (_tc, client) = common::admin_client().await;
    for version in ["v1", "v2"] {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "clusterroles.rbac.authorization.k8s.io"},
            "spec": {"group": "rbac.authorization.k8s.io", "scope": "Cluster",
                     "names": {"plural": "clusterroles", "kind": "ClusterRole"},
                     "versions": [{"name": version, "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        let (code, status) = common::send_raw(
            &client,
            http::Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            serde_json::to_vec(&crd).unwrap(),
        )
        .await;
        assert_eq!(code, 422, "{status}");
        assert_eq!(status["reason"], "Invalid", "{status}");
        let message = status["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(
                "CustomResourceDefinition.apiextensions.k8s.io \"clusterroles.rbac.authorization.k8s.io\" is invalid: spec.names.plural"
            ) && message.contains("clusterroles.rbac.authorization.k8s.io is a built-in resource"),
            "{message}"
        );
    }
    let roles: Api<DynamicObject> = Api::all_with(client, &cluster_roles());
    let admin: Value = serde_json::to_value(roles.get("cluster-admin").await.unwrap()).unwrap();
    assert_eq!(admin["rules"][0]["verbs"], json!(["*"]), "{admin}");
}
