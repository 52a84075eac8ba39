//! `organization.v1.PluginService/GetPluginDefinition` over the router, with
//! the Connect error mapping.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use fundament_organization_api::{Catalog, router};
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const PATH: &str = "/organization.v1.PluginService/GetPluginDefinition";

fn catalog() -> Arc<Catalog> {
    Arc::new(Catalog::load(&common::plugins_dir()).unwrap())
}

async fn send(request: Request<Body>) -> (StatusCode, http::HeaderMap, Value) {
    let response = router(catalog()).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    (status, headers, body)
}

fn post(path: &str, content_type: &str, body: impl Into<Body>) -> Request<Body> {
    Request::post(path).header(header::CONTENT_TYPE, content_type).body(body.into()).unwrap()
}

async fn call(body: Value) -> (StatusCode, Value) {
    let (status, headers, body) = send(post(PATH, "application/json", body.to_string())).await;
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    (status, body)
}

#[tokio::test]
async fn returns_manifest_hash_and_definition() {
    let (status, body) =
        call(json!({"organization": "acme-corp", "pluginName": "cert-manager", "pluginVersion": "v1.17.2"}))
            .await;
    assert_eq!(status, StatusCode::OK);
    let catalog = catalog();
    let def = catalog.get("cert-manager", "v1.17.2").unwrap();
    assert_eq!(body["manifest"], def.manifest.as_str());
    assert_eq!(body["hash"], def.hash.as_str());
    assert_eq!(body["definition"], def.definition);
    assert_eq!(
        body["definition"]["spec"]["customComponents"]["Certificate"]["list"],
        "certificates-list.html"
    );
    assert_eq!(body["definition"]["spec"]["menu"]["project"][0]["crd"], "certificates.cert-manager.io");
    assert_eq!(body.as_object().unwrap().len(), 3);
}

#[tokio::test]
async fn the_hash_is_the_same_on_every_call() {
    let request = json!({"pluginName": "demo", "pluginVersion": "v0.1.0"});
    let (_, first) = call(request.clone()).await;
    let (_, second) = call(request).await;
    assert_eq!(first["hash"], second["hash"]);
    let bytes = std::fs::read(common::plugins_dir().join("demo/definition.yaml")).unwrap();
    assert_eq!(first["hash"], fundament_organization_api::hash_manifest(&bytes));
}

#[tokio::test]
async fn organization_may_be_empty_and_proto_names_work() {
    let (status, _) =
        call(json!({"organization": "", "pluginName": "demo", "pluginVersion": "v0.1.0"})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(json!({"plugin_name": "demo", "plugin_version": "v0.1.0", "extra": 1})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, headers, _) = send(post(
        PATH,
        "application/json; charset=utf-8",
        json!({"pluginName": "demo", "pluginVersion": "v0.1.0"}).to_string(),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{headers:?}");
}

#[tokio::test]
async fn name_and_version_are_required() {
    let required =
        json!({"code": "invalid_argument", "message": "pluginName and pluginVersion are required"});
    for body in
        [json!({}), json!({"pluginName": "demo"}), json!({"pluginName": "", "pluginVersion": "v0.1.0"})]
    {
        assert_eq!(call(body).await, (StatusCode::BAD_REQUEST, required.clone()));
    }
    let (status, _, body) = send(post(PATH, "application/json", "")).await;
    assert_eq!((status, body), (StatusCode::BAD_REQUEST, required));
}

#[tokio::test]
async fn unknown_definitions_are_not_found() {
    assert_eq!(
        call(json!({"pluginName": "demo", "pluginVersion": "v9.9.9"})).await,
        (
            StatusCode::NOT_FOUND,
            json!({"code": "not_found", "message": "plugin definition demo@v9.9.9 not found"})
        )
    );
}

#[tokio::test]
async fn a_body_that_is_not_json_is_invalid_argument() {
    let (status, _, body) = send(post(PATH, "application/json", "{not json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["code"], "invalid_argument");
    assert!(body["message"].as_str().unwrap().starts_with("invalid request body: "), "{body}");
}

#[tokio::test]
async fn unknown_procedures_are_404() {
    let (status, _, body) =
        send(post("/organization.v1.PluginService/PutPluginDefinition", "application/json", "{}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body,
        json!({"code": "unimplemented", "message": "unknown procedure organization.v1.PluginService/PutPluginDefinition"})
    );
    let (status, _, _) =
        send(post("/organization.v1.OtherService/GetPluginDefinition", "application/json", "{}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn only_post_is_allowed() {
    let (status, headers, body) = send(Request::get(PATH).body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(headers[header::ALLOW], "POST");
    assert_eq!(body, json!({"code": "unimplemented", "message": "HTTP method GET is not allowed; use POST"}));
}

#[tokio::test]
async fn only_json_is_accepted() {
    for content_type in ["application/proto", "text/plain"] {
        let (status, headers, body) = send(post(PATH, content_type, "{}")).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(headers["accept-post"], "application/json");
        assert_eq!(body["code"], "invalid_argument");
        assert_eq!(
            body["message"],
            format!("content type {content_type:?} is not supported; use application/json")
        );
    }
    let (status, _, _) = send(Request::post(PATH).body(Body::from("{}")).unwrap()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn livez_and_readyz_answer_ok_once_the_catalog_is_loaded() {
    for path in ["/livez", "/readyz"] {
        let response =
            router(catalog()).oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"ok", "{path}");
    }
    let verbose = Request::get("/readyz?verbose").body(Body::empty()).unwrap();
    let response = router(catalog()).oneshot(verbose).await.unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&bytes[..], b"[+]catalog ok\nreadyz check passed\n");
}

/// Found by tests/integration/connect_fuzz.rs: the service name without a method answered axum's empty 404.
#[tokio::test]
async fn the_service_without_a_method_is_an_unknown_procedure() {
    let (status, headers, body) =
        send(post("/organization.v1.PluginService/", "application/json", "{}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert_eq!(body["code"], "unimplemented", "{body}");
}
