//! What the mode tests share: calls to a gateway served on a loopback port.
// Each test file uses a part of it.
#![allow(dead_code)]

use axum::body::Body;
use http::{Method, Request, header};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// `method path` on the gateway at `url` with `headers` (and a JSON `body`): the status,
/// the headers and the JSON answer (`Null` if it is not JSON).
pub async fn request(
    url: &str,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, http::HeaderMap, Value) {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let mut req = Request::builder().method(method).uri(format!("{url}{path}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let body = match body {
        Some(v) => {
            // JSON, unless the call names its own type (JSON is YAML too: an apply's body).
            if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
                req = req.header(header::CONTENT_TYPE, "application/json");
            }
            Body::from(v.to_string())
        }
        None => Body::empty(),
    };
    let res = client.request(req.body(body).unwrap()).await.unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// `method path` with `Authorization: Bearer token`: the status and the JSON answer.
pub async fn call(url: &str, method: Method, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let authorization = format!("Bearer {token}");
    let (status, _, answer) = request(url, method, path, &[("authorization", &authorization)], body).await;
    (status, answer)
}

/// A GET.
pub async fn get(url: &str, path: &str, token: &str) -> (u16, Value) {
    call(url, Method::GET, path, token, None).await
}

/// The message of a Status answer.
pub fn message(answer: &Value) -> &str {
    answer["message"].as_str().unwrap_or_default()
}
