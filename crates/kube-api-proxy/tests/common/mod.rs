//! What the mode tests share: calls to a gateway served on a loopback port.

use axum::body::Body;
use http::{Method, Request, header};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// `method path` on the gateway at `url` with `Authorization: Bearer token`: the status
/// and the JSON answer (`Null` if it is not JSON).
pub async fn call(url: &str, method: Method, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let mut req = Request::builder()
        .method(method)
        .uri(format!("{url}{path}"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    let body = match body {
        Some(v) => {
            req = req.header(header::CONTENT_TYPE, "application/json");
            Body::from(v.to_string())
        }
        None => Body::empty(),
    };
    let res = client.request(req.body(body).unwrap()).await.unwrap();
    let status = res.status().as_u16();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// A GET.
pub async fn get(url: &str, path: &str, token: &str) -> (u16, Value) {
    call(url, Method::GET, path, token, None).await
}

/// The message of a Status answer.
pub fn message(answer: &Value) -> &str {
    answer["message"].as_str().unwrap_or_default()
}
