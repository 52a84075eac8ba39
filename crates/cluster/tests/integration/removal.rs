//! One removal path: an object that goes because its last finalizer went
//! leaves as a deleted one does, and what it fed (RBAC policy, served kinds)
//! follows.

use crate::common;

use http::Method;
use serde_json::{Value, json};

async fn call(
    client: &kube::Client,
    method: Method,
    path: &str,
    content_type: &str,
    body: Value,
) -> (u16, Value) {
    let body = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
    common::send_raw(client, method, path, content_type, body).await
}

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const CRBS: &str = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";

async fn may_list_configmaps(client: &kube::Client, user: &str) -> bool {
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "default"}}});
    let (code, v) =
        call(client, Method::POST, "/apis/authorization.k8s.io/v1/subjectaccessreviews", JSON, review).await;
    assert_eq!(code, 201, "{v}");
    v["status"]["allowed"].as_bool().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_whose_last_finalizer_goes_no_longer_grants() {
    let (_tc, c) = common::admin_client().await;
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]});
    let (code, v) =
        call(&c, Method::POST, "/apis/rbac.authorization.k8s.io/v1/clusterroles", JSON, role).await;
    assert_eq!(code, 201, "{v}");
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-reads", "finalizers": ["example.com/keep"]},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]});
    let (code, v) = call(&c, Method::POST, CRBS, JSON, binding).await;
    assert_eq!(code, 201, "{v}");
    assert!(may_list_configmaps(&c, "alice").await);

    let path = format!("{CRBS}/alice-reads");
    let (code, v) = call(&c, Method::DELETE, &path, JSON, Value::Null).await;
    assert_eq!(code, 200, "{v}");
    // Marked for deletion, still there: it still grants, as on a real cluster.
    let (code, v) = call(&c, Method::GET, &path, JSON, Value::Null).await;
    assert!(code == 200 && v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    assert!(may_list_configmaps(&c, "alice").await);

    let (code, v) = call(&c, Method::PATCH, &path, MERGE, json!({"metadata": {"finalizers": null}})).await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = call(&c, Method::GET, &path, JSON, Value::Null).await;
    assert_eq!(code, 404);
    assert!(!may_list_configmaps(&c, "alice").await, "the policy followed the removal");
}

/// The CRD of `widgets.example.com/v1`, schema-less Widgets.
fn widgets_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_whose_last_finalizer_goes_is_no_longer_served() {
    let (_tc, c) = common::admin_client().await;
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let mut crd = widgets_crd();
    crd["metadata"]["finalizers"] = json!(["example.com/keep"]);
    let (code, v) = call(&c, Method::POST, crds, JSON, crd).await;
    assert_eq!(code, 201, "{v}");
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let (code, v) = call(&c, Method::POST, widgets, JSON, widget).await;
    assert_eq!(code, 201, "{v}");

    let path = format!("{crds}/widgets.example.com");
    let (code, v) = call(&c, Method::DELETE, &path, JSON, Value::Null).await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = call(&c, Method::GET, widgets, JSON, Value::Null).await;
    assert_eq!(code, 200, "served while its finalizer holds it");

    let (code, v) = call(&c, Method::PATCH, &path, MERGE, json!({"metadata": {"finalizers": []}})).await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = call(&c, Method::GET, &path, JSON, Value::Null).await;
    assert_eq!(code, 404);
    let (code, v) = call(&c, Method::GET, widgets, JSON, Value::Null).await;
    assert_eq!(code, 404, "no longer served: {v}");
    let (code, _) = call(&c, Method::GET, "/apis/example.com/v1", JSON, Value::Null).await;
    assert_eq!(code, 404, "gone from discovery");

    // Served again under the same name: the old objects went with the CRD.
    let crd = widgets_crd();
    let (code, v) = call(&c, Method::POST, crds, JSON, crd).await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = call(&c, Method::GET, widgets, JSON, Value::Null).await;
    assert_eq!((code, v["items"].as_array().map(Vec::len)), (200, Some(0)), "{v}");
}
