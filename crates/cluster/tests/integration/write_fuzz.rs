//! Arbitrary bodies over real HTTPS, for every built-in stored kind and the
//! reviews: every answer is a well-formed response with a Status (or the
//! object), never a 5xx or a dropped connection, and the server answers after.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Method, Request};
use proptest::prelude::*;
use serde_json::{Value, json};

async fn call(client: &kube::Client, method: Method, path: &str, body: &Value) -> (u16, Value) {
    call_as(client, method, path, "application/json", body).await
}

async fn call_as(
    client: &kube::Client,
    method: Method,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (u16, Value) {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(kube::client::Body::from(body.to_string().into_bytes()))
        .unwrap();
    let res = client.send(req).await.expect("an answer, not a dropped connection");
    let code = res.status().as_u16();
    let bytes = res.into_body().collect_bytes().await.expect("a whole body");
    let v = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{code}: not JSON ({e}): {bytes:?}"));
    (code, v)
}

struct Kind {
    collection: &'static str,
    api_version: &'static str,
    kind: &'static str,
    /// The fields of a valid object besides apiVersion, kind and metadata (a
    /// `metadata` here replaces the usual one); `n` makes each create new.
    fields: fn(usize) -> Value,
    stored: bool,
}

impl Kind {
    /// A kind that is stored, its objects named `fz-{n}`.
    fn stored(
        collection: &'static str,
        api_version: &'static str,
        kind: &'static str,
        fields: fn(usize) -> Value,
    ) -> Kind {
        Kind { collection, api_version, kind, fields, stored: true }
    }

    /// A review: answered, never stored, no name.
    fn review(
        collection: &'static str,
        api_version: &'static str,
        kind: &'static str,
        fields: fn(usize) -> Value,
    ) -> Kind {
        Kind { collection, api_version, kind, fields, stored: false }
    }

    /// A valid object; `n` in its names, so that each create is new.
    fn template(&self, n: usize) -> Value {
        let mut object = json!({"apiVersion": self.api_version, "kind": self.kind});
        if self.stored {
            object["metadata"] = meta(format!("fz-{n}"));
        }
        if let (Some(m), Value::Object(fields)) = (object.as_object_mut(), (self.fields)(n)) {
            m.extend(fields);
        }
        object
    }
}

fn meta(name: String) -> Value {
    json!({"name": name, "labels": {"a": "b"}, "annotations": {"c": "d"}})
}

const RBAC: &str = "rbac.authorization.k8s.io/v1";
const ADMISSION: &str = "admissionregistration.k8s.io/v1";
const AUTHORIZATION: &str = "authorization.k8s.io/v1";

fn role_rules(_: usize) -> Value {
    json!({"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]})
}

/// A binding of `fuzz-user` to the base role of `role_kind`.
fn binding_to(role_kind: &str) -> Value {
    json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": "fz-base"},
        "subjects": [{"kind": "User", "name": "fuzz-user"}]})
}

fn kinds() -> Vec<Kind> {
    vec![
        Kind::stored("/api/v1/namespaces", "v1", "Namespace", |_| json!({})),
        Kind::stored(
            "/api/v1/namespaces/default/serviceaccounts",
            "v1",
            "ServiceAccount",
            |_| json!({"secrets": [{"name": "s"}]}),
        ),
        Kind::stored(
            "/api/v1/namespaces/default/secrets",
            "v1",
            "Secret",
            |_| json!({"type": "Opaque", "data": {"a": "eA=="}, "stringData": {"b": "y"}}),
        ),
        Kind::stored(
            "/api/v1/namespaces/default/configmaps",
            "v1",
            "ConfigMap",
            |_| json!({"data": {"a": "b"}, "binaryData": {"c": "eA=="}}),
        ),
        Kind::stored(
            "/api/v1/namespaces/default/services",
            "v1",
            "Service",
            |_| json!({"spec": {"type": "ClusterIP", "ports": [{"name": "http", "port": 80}], "selector": {"a": "b"}}}),
        ),
        Kind::stored("/api/v1/namespaces/default/events", "v1", "Event", |_| {
            json!({"involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                "reason": "R", "message": "m", "type": "Normal", "source": {"component": "c"}})
        }),
        Kind::stored("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", RBAC, "Role", role_rules),
        Kind::stored("/apis/rbac.authorization.k8s.io/v1/clusterroles", RBAC, "ClusterRole", role_rules),
        Kind::stored(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            RBAC,
            "RoleBinding",
            |_| binding_to("Role"),
        ),
        Kind::stored(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            RBAC,
            "ClusterRoleBinding",
            |_| binding_to("ClusterRole"),
        ),
        Kind::stored(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            |n| {
                let group = format!("g{n}.fz.io");
                json!({"metadata": meta(format!("fuzzes.{group}")),
                    "spec": {"group": group, "scope": "Namespaced",
                        "names": {"plural": "fuzzes", "singular": "fuzz", "kind": "Fuzz", "listKind": "FuzzList"},
                        "versions": [{"name": "v1", "served": true, "storage": true,
                            "subresources": {"status": {}},
                            "schema": {"openAPIV3Schema": {"type": "object",
                                "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})
            },
        ),
        Kind::stored(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            ADMISSION,
            "ValidatingAdmissionPolicy",
            |_| {
                json!({"spec": {"failurePolicy": "Fail",
                    "matchConstraints": {"resourceRules": [{"apiGroups": ["fz.io"], "apiVersions": ["v1"],
                        "operations": ["CREATE"], "resources": ["fuzzes"]}]},
                    "validations": [{"expression": "object.metadata.name != 'x'", "message": "no x"}]}})
            },
        ),
        Kind::stored(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
            ADMISSION,
            "ValidatingAdmissionPolicyBinding",
            |n| json!({"spec": {"policyName": format!("fz-{n}"), "validationActions": ["Deny"]}}),
        ),
        Kind::review(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            AUTHORIZATION,
            "SubjectAccessReview",
            |_| json!({"spec": {"user": "u", "groups": ["g"], "resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "default"}}}),
        ),
        Kind::review(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            AUTHORIZATION,
            "SelfSubjectAccessReview",
            |_| json!({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/version"}}}),
        ),
        Kind::review(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            AUTHORIZATION,
            "SelfSubjectRulesReview",
            |_| json!({"spec": {"namespace": "default"}}),
        ),
        Kind::review(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            "authentication.k8s.io/v1",
            "SelfSubjectReview",
            |_| json!({}),
        ),
    ]
}

/// Where the base object of a stored kind lives (PUT target).
fn base_name(k: &Kind) -> String {
    let t = k.template(0);
    t["metadata"]["name"].as_str().unwrap().replace("fz-0", "fz-base").replace("g0.fz.io", "gbase.fz.io")
}

fn base(k: &Kind) -> Value {
    let mut t = k.template(0);
    if k.kind == "CustomResourceDefinition" {
        t["spec"]["group"] = json!("gbase.fz.io");
    }
    t["metadata"]["name"] = json!(base_name(k));
    t
}

/// Every JSON pointer of a value, and some fields a body may add.
fn pointers(v: &Value, prefix: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            let p = format!("{prefix}/{k}");
            out.push(p.clone());
            pointers(v, p, out);
        }),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| {
            let p = format!("{prefix}/{i}");
            out.push(p.clone());
            pointers(v, p, out);
        }),
        _ => {}
    }
}

const EXTRA: &[&str] = &[
    "/metadata/finalizers",
    "/metadata/ownerReferences",
    "/metadata/generateName",
    "/metadata/resourceVersion",
    "/metadata/uid",
    "/spec",
    "/status",
    "/data",
    "/stringData",
    "/rules",
    "/roleRef",
    "/subjects",
];

fn replace(v: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = v.pointer_mut(pointer) {
        *slot = new;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    if let Some(m) = v.pointer_mut(parent).and_then(Value::as_object_mut) {
        m.insert(key.to_string(), new);
    }
}

const KEYS: &[&str] = &[
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "spec",
    "status",
    "data",
    "stringData",
    "type",
    "ports",
    "port",
    "rules",
    "verbs",
    "roleRef",
    "subjects",
    "kind",
    "apiVersion",
    "group",
    "names",
    "plural",
    "versions",
    "user",
    "resourceAttributes",
    "involvedObject",
    "x",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        proptest::sample::select(&["", "x", "fz-1", "eA==", "%%", "ClusterRole", "v1", "a/b", "Opaque"][..])
            .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(proptest::sample::select(KEYS), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Body {
    /// Any JSON value as the whole body.
    Any(Value),
    /// The valid object with the field at the `n`th pointer replaced.
    Replaced(usize, Value),
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        1 => json_value().prop_map(Body::Any),
        3 => (any::<usize>(), json_value()).prop_map(|(n, v)| Body::Replaced(n, v)),
    ]
}

fn build(k: &Kind, valid: Value, b: &Body) -> Value {
    match b {
        Body::Any(v) => {
            let mut v = v.clone();
            // Half of these look like the kind, so that they get past the first checks.
            if let Some(m) = v.as_object_mut()
                && m.len() % 2 == 0
            {
                m.insert("apiVersion".into(), valid["apiVersion"].clone());
                m.insert("kind".into(), json!(k.kind));
            }
            v
        }
        Body::Replaced(n, new) => {
            let mut all = Vec::new();
            pointers(&valid, String::new(), &mut all);
            all.extend(EXTRA.iter().map(|s| s.to_string()));
            let mut v = valid;
            replace(&mut v, &all[n % all.len()], new.clone());
            v
        }
    }
}

fn check(k: &Kind, method: &Method, body: &Value, code: u16, answer: &Value) -> Result<(), TestCaseError> {
    prop_assert!(code < 500, "{method} {}: {code} {answer} for {body}", k.collection);
    if (200..300).contains(&code) {
        prop_assert!(answer["kind"] == k.kind || answer["kind"] == "Status", "{answer}");
    } else {
        prop_assert_eq!(&answer["kind"], "Status", "{}", answer);
        prop_assert_eq!(&answer["code"], &json!(code), "{}", answer);
    }
    Ok(())
}

#[test]
fn arbitrary_bodies_get_a_status_never_a_5xx() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (_tc, client) = rt.block_on(common::admin_client());
    let kinds = kinds();
    for k in kinds.iter().filter(|k| k.stored) {
        let (code, v) = rt.block_on(call(&client, Method::POST, k.collection, &base(k)));
        assert_eq!(code, 201, "{}: {v}", k.kind);
    }
    let counter = AtomicUsize::new(1);
    let config = ProptestConfig { failure_persistence: None, ..fundament_fuzzing::config(2000) };
    proptest!(config, |(which in 0..kinds.len(), b in body(), op in 0..4u8, patch in json_value())| {
        let k = &kinds[which];
        let n = counter.fetch_add(1, Ordering::Relaxed);
        if op == 3 && k.stored {
            // A merge patch of any shape onto the existing object.
            let path = format!("{}/{}", k.collection, base_name(k));
            let (code, answer) =
                rt.block_on(call_as(&client, Method::PATCH, &path, "application/merge-patch+json", &patch));
            check(k, &Method::PATCH, &patch, code, &answer)?;
        } else if op == 2 && k.stored {
            let mut valid = base(k);
            let name = base_name(k);
            let body = build(k, valid.take(), &b);
            let path = format!("{}/{name}", k.collection);
            let (code, answer) = rt.block_on(call(&client, Method::PUT, &path, &body));
            check(k, &Method::PUT, &body, code, &answer)?;
        } else {
            let body = build(k, k.template(n), &b);
            let (code, answer) = rt.block_on(call(&client, Method::POST, k.collection, &body));
            check(k, &Method::POST, &body, code, &answer)?;
        }
        let (code, _) = rt.block_on(call(&client, Method::GET, "/api/v1/namespaces/default", &Value::Null));
        prop_assert_eq!(code, 200, "the server still answers");
    });
    // Every case ran (the closure form of proptest! runs them in place).
    assert!(counter.load(Ordering::Relaxed) > 2000, "{counter:?}");
}

async fn expect_invalid(
    client: &kube::Client,
    method: Method,
    path: &str,
    body: Value,
    field: &str,
    message: &str,
) {
    let (code, v) = call(client, method, path, &body).await;
    assert_eq!(code, 422, "{body}: {v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    let causes = v["details"]["causes"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert!(
        causes
            .iter()
            .any(|c| c["field"] == field && c["message"].as_str().is_some_and(|m| m.contains(message))),
        "{field}: {message} in {v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_of_the_wrong_shape_are_invalid_not_a_panic() {
    let (_tc, c) = common::admin_client().await;
    let secrets = "/api/v1/namespaces/default/secrets";
    let object = "in body must be of type object";
    expect_invalid(
        &c,
        Method::POST,
        secrets,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": "x", "stringData": {"a": "b"}}),
        "data",
        "Invalid value: \"string\": data in body must be of type object",
    )
    .await;
    expect_invalid(
        &c,
        Method::POST,
        "/api/v1/namespaces/default/services",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": "x"}),
        "spec",
        "Invalid value: \"string\": spec in body must be of type object",
    )
    .await;
    for path in [secrets, "/api/v1/namespaces", "/apis/rbac.authorization.k8s.io/v1/clusterroles"] {
        expect_invalid(&c, Method::POST, path, json!({"metadata": "x"}), "metadata", object).await;
        expect_invalid(
            &c,
            Method::POST,
            path,
            json!({"metadata": {"name": "fine", "labels": ["a"]}}),
            "metadata.labels",
            "Invalid value: \"array\": metadata.labels in body must be of type object",
        )
        .await;
    }
    // Onto an existing object: refused, and the object is as it was.
    let cm =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shape"}, "data": {"a": "b"}});
    let (code, before) = call(&c, Method::POST, "/api/v1/namespaces/default/configmaps", &cm).await;
    assert_eq!(code, 201, "{before}");
    let path = "/api/v1/namespaces/default/configmaps/shape";
    expect_invalid(&c, Method::PUT, path, json!({"metadata": "x"}), "metadata", object).await;
    expect_invalid(
        &c,
        Method::PUT,
        path,
        json!({"metadata": {"name": "shape", "finalizers": "x"}}),
        "metadata.finalizers",
        "must be of type array",
    )
    .await;
    let (code, after) = call(&c, Method::GET, path, &Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(after, before);
    let secret =
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "shape"}, "stringData": {"a": 1}});
    expect_invalid(&c, Method::POST, secrets, secret, "stringData[a]", "must be of type string").await;
}
