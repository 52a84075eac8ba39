//! Bad input over real HTTPS: every one gets a 4xx Status, none a panic or a 5xx.

use crate::common;

use http::Method;
use serde_json::Value;

async fn call(
    client: &kube::Client,
    method: Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    common::send_raw(client, method, path, content_type, body).await
}

fn assert_status(code: u16, v: &Value, expected: u16, contains: &str) {
    assert_eq!(code, expected, "{v}");
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["code"], expected, "{v}");
    assert!(v["message"].as_str().unwrap_or_default().contains(contains), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_clear_4xx_status() {
    let (tc, c) = common::admin_client().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let json = "application/json";

    let (code, v) = call(&c, Method::POST, cms, json, b"{not json".to_vec()).await;
    assert_status(code, &v, 400, "could not be decoded as JSON");
    let (code, v) = call(&c, Method::POST, cms, "application/yaml", b"a: [".to_vec()).await;
    assert_status(code, &v, 400, "could not be decoded as YAML");
    let (code, v) = call(&c, Method::POST, cms, json, b"[1,2]".to_vec()).await;
    assert_status(code, &v, 400, "must be an object");
    let (code, v) = call(&c, Method::POST, cms, "application/vnd.kubernetes.protobuf", b"x".to_vec()).await;
    assert_status(code, &v, 400, "could not be decoded as protobuf");
    let (code, v) = call(&c, Method::POST, cms, "application/cbor", b"x".to_vec()).await;
    assert_status(code, &v, 415, "accepted media types include");

    // unknown kinds and versions
    let (code, v) = call(&c, Method::GET, "/apis/cert-manager.io/v9/certificates", json, vec![]).await;
    assert_status(code, &v, 404, "could not find the requested resource");
    let (code, v) = call(&c, Method::GET, "/api/v1/namespaces/default/nonsense", json, vec![]).await;
    assert_status(code, &v, 404, "could not find");
    let (code, v) = call(&c, Method::GET, "/apis/nope.io/v1", json, vec![]).await;
    assert_status(code, &v, 404, "could not find");

    // a body whose apiVersion or kind is not the endpoint's
    let body = br#"{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}"#.to_vec();
    let (code, v) = call(&c, Method::POST, cms, json, body).await;
    assert_status(code, &v, 400, "does not match the expected API version (v1)");
    let body = br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}"#.to_vec();
    let (code, v) = call(&c, Method::POST, cms, json, body).await;
    assert_status(code, &v, 400, "does not match the expected kind (ConfigMap)");
    let body =
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}"#.to_vec();
    let (code, v) = call(&c, Method::POST, cms, json, body).await;
    assert_status(code, &v, 400, "does not match the namespace");

    // over the size limit
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(4 << 20)
    );
    let (code, v) = call(&c, Method::POST, cms, json, big.into_bytes()).await;
    assert_status(code, &v, 413, "too large");

    // invalid names
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}"#.to_vec();
    let (code, v) = call(&c, Method::POST, cms, json, body).await;
    assert_status(code, &v, 422, "a lowercase RFC 1123 subdomain");
    assert_eq!(v["details"]["causes"][0]["field"], "metadata.name");
    let body =
        format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}}"#, "n".repeat(64));
    let (code, v) = call(&c, Method::POST, "/api/v1/namespaces", json, body.into_bytes()).await;
    assert_status(code, &v, 422, "must be no more than 63 characters");
    let body =
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok","labels":{"a":"has space"}}}"#
            .to_vec();
    let (code, v) = call(&c, Method::POST, cms, json, body).await;
    assert_status(code, &v, 422, "a valid label must be an empty string");

    // schema validation of a custom resource: causes name the field
    let body = br#"{"apiVersion":"cert-manager.io/v1","kind":"Certificate","metadata":{"name":"c"},"spec":{"issuerRef":{}}}"#.to_vec();
    let (code, v) =
        call(&c, Method::POST, "/apis/cert-manager.io/v1/namespaces/default/certificates", json, body).await;
    assert_status(code, &v, 422, "Certificate.cert-manager.io \"c\" is invalid");
    let fields: Vec<&str> =
        v["details"]["causes"].as_array().unwrap().iter().filter_map(|c| c["field"].as_str()).collect();
    assert!(fields.contains(&"spec.secretName") && fields.contains(&"spec.issuerRef.name"), "{v}");

    // traversal and junk in paths
    for path in
        ["/api/v1/namespaces/%2e%2e/configmaps", "/api/v1/namespaces/default/configmaps/a%2Fb", "/api//v1"]
    {
        let (code, v) = call(&c, Method::GET, path, json, vec![]).await;
        assert!((400..500).contains(&code), "{path}: {code} {v}");
    }

    // patches
    let (code, v) = call(
        &c,
        Method::PATCH,
        "/apis/demo.fundament.io/v1/namespaces/default/demoitems/hello-world",
        "application/strategic-merge-patch+json",
        b"{}".to_vec(),
    )
    .await;
    assert_status(code, &v, 415, "application/merge-patch+json");
    let (code, v) = call(
        &c,
        Method::PATCH,
        "/apis/demo.fundament.io/v1/namespaces/default/demoitems/hello-world",
        "application/json-patch+json",
        br#"[{"op":"remove","path":"/nope"}]"#.to_vec(),
    )
    .await;
    assert_eq!(code, 422, "{v}");

    // unknown namespace, conflicts, unauthenticated
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#.to_vec();
    let (code, v) = call(&c, Method::POST, "/api/v1/namespaces/nowhere/configmaps", json, body).await;
    assert_status(code, &v, 404, "namespaces \"nowhere\" not found");
    let body = br#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}"#.to_vec();
    let (code, v) = call(&c, Method::POST, "/api/v1/namespaces", json, body).await;
    assert_status(code, &v, 409, "already exists");
    let bad = common::client_for(&tc.kubeconfig_with_token("not-a-real-token")).await;
    let (code, v) = call(&bad, Method::GET, cms, json, vec![]).await;
    assert_status(code, &v, 401, "Unauthorized");
}

/// What a writer could grow without bound: an object past etcd's 1.5 MiB (in one body, or
/// by merge patches), a JSON patch whose copies double it, and a Namespace path under another
/// namespace, which RBAC would have read in that namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_and_patches_stay_within_etcds_bounds() {
    let (_tc, c) = common::admin_client().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let big = serde_json::json!({"metadata": {"name": "big"}, "data": {"k": "x".repeat(1600 * 1024)}});
    let (code, v) = call(&c, Method::POST, cms, "application/json", serde_json::to_vec(&big).unwrap()).await;
    assert_status(code, &v, 413, "request is too large");
    let small = serde_json::json!({"metadata": {"name": "grows"}, "data": {"k": "x".repeat(900 * 1024)}});
    let (code, v) =
        call(&c, Method::POST, cms, "application/json", serde_json::to_vec(&small).unwrap()).await;
    assert_eq!(code, 201, "{v}");
    let grow = serde_json::json!({"data": {"k2": "y".repeat(900 * 1024)}});
    let (code, v) = call(
        &c,
        Method::PATCH,
        &format!("{cms}/grows"),
        "application/merge-patch+json",
        serde_json::to_vec(&grow).unwrap(),
    )
    .await;
    assert_status(code, &v, 413, "request is too large");
    let copies: Vec<Value> = (0..30)
        .map(|i| serde_json::json!({"op": "copy", "from": "/data", "path": format!("/x{i}")}))
        .collect();
    let started = std::time::Instant::now();
    let (code, v) = call(
        &c,
        Method::PATCH,
        &format!("{cms}/grows?dryRun=All"),
        "application/json-patch+json",
        serde_json::to_vec(&copies).unwrap(),
    )
    .await;
    assert_eq!(code, 413, "{v}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    let (code, v) =
        call(&c, Method::GET, "/api/v1/namespaces/default/namespaces", "application/json", Vec::new()).await;
    assert_eq!(code, 404, "{v}");
    // Created "being deleted": the server clears it, as it does uid and creationTimestamp.
    let doomed = serde_json::json!({"metadata": {"name": "doomed", "finalizers": ["x.io/hold"],
        "deletionTimestamp": "2020-01-01T00:00:00Z", "deletionGracePeriodSeconds": 0}});
    let (code, v) =
        call(&c, Method::POST, cms, "application/json", serde_json::to_vec(&doomed).unwrap()).await;
    assert_eq!(code, 201, "{v}");
    assert!(v["metadata"].get("deletionTimestamp").is_none(), "{v}");
}
