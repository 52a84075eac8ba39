//! Fuzz target: organization-api's Connect procedures with arbitrary bodies,
//! content types and methods, and bodies close to valid ones. Every answer is
//! 200 or a Connect error JSON with a 4xx status: never a panic, never a 500.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use fundament_organization_api::{Catalog, router};
use http::Request;
use http_body_util::BodyExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::ServiceExt;

const PATHS: &[&str] = &[
    "/organization.v1.PluginService/GetPluginDefinition",
    "/organization.v1.PluginService/ListPlugins",
    "/organization.v1.PluginService/",
    "/organization.v1.PluginService/%00",
];

const CONTENT_TYPES: &[&str] = &["application/json", "application/json;charset=utf-8", "text/plain", ""];

fn valid_body() -> Vec<u8> {
    json!({"organization": "acme-corp", "pluginName": "cert-manager", "pluginVersion": "v1.17.2"})
        .to_string()
        .into_bytes()
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        fundament_fuzzing::json().prop_map(|v| v.to_string().into_bytes()),
        // The request's fields with values of any type.
        (fundament_fuzzing::json(), fundament_fuzzing::json(), fundament_fuzzing::json()).prop_map(
            |(o, n, v)| {
                json!({"organization": o, "plugin_name": n, "pluginVersion": v}).to_string().into_bytes()
            }
        ),
        prop::collection::vec(any::<u8>(), 0..128),
        fundament_fuzzing::mutated(valid_body()),
    ]
}

proptest! {
    #![proptest_config(fundament_fuzzing::config(256))]

    #[test]
    fn every_answer_is_a_connect_answer(
        path in prop::sample::select(PATHS),
        content_type in prop::sample::select(CONTENT_TYPES),
        post in prop::bool::weighted(0.9),
        body in body(),
    ) {
        let catalog = Arc::new(Catalog::load(&common::plugins_dir()).unwrap());
        let mut request = Request::builder().method(if post { "POST" } else { "PUT" }).uri(path);
        if !content_type.is_empty() {
            request = request.header("content-type", content_type);
        }
        let request = request.body(Body::from(body)).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (status, bytes) = runtime.block_on(async {
            let response = router(catalog).oneshot(request).await.unwrap();
            (response.status().as_u16(), response.into_body().collect().await.unwrap().to_bytes())
        });
        let text = String::from_utf8_lossy(&bytes);
        prop_assert!(status == 200 || (400..500).contains(&status), "{status}: {text}");
        if status != 200 {
            let error: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            prop_assert!(error["code"].is_string() && error["message"].is_string(), "{status}: {text}");
        }
    }
}
