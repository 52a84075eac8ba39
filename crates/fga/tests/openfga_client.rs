//! The OpenFGA client against a fake OpenFGA server on 127.0.0.1:0: the exact
//! request it sends, and how it reads every kind of answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use fundament_fga::{CanView, FgaError, OpenFgaClient};
use serde_json::{Value, json};

/// What the fake server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    path: String,
    content_type: Option<String>,
    body: Value,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// Answers by the user in the tuple key, so one server covers every case.
async fn fake_openfga(
    State(log): State<Log>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let content_type = headers.get("content-type").map(|v| v.to_str().unwrap().to_string());
    log.lock().unwrap().push(Seen { method, path: uri.path().to_string(), content_type, body: body.clone() });
    match body["tuple_key"]["user"].as_str().unwrap_or_default() {
        "user:alice" => axum::Json(json!({"allowed": true, "resolution": ""})).into_response(),
        "user:bob" => axum::Json(json!({"allowed": false, "resolution": ""})).into_response(),
        "user:boom" => (StatusCode::INTERNAL_SERVER_ERROR, r#"{"code":"internal_error","message":"boom"}"#)
            .into_response(),
        "user:garbage" => (StatusCode::OK, "<html>not openfga</html>").into_response(),
        "user:shapeless" => axum::Json(json!({"allowed": "yes"})).into_response(),
        "user:slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            axum::Json(json!({"allowed": true})).into_response()
        }
        _ => (StatusCode::BAD_REQUEST, "unexpected").into_response(),
    }
}

/// Starts the fake server; returns its base URL and the request log.
async fn start() -> (String, Log) {
    let log = Log::default();
    let app = Router::new().fallback(fake_openfga).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), log)
}

const CLUSTER: &str = "019b4000-2000-7000-8000-000000000001";

#[tokio::test]
async fn sends_the_exact_check_request_with_the_model_id() {
    let (url, log) = start().await;
    let client = OpenFgaClient::new(&url, "01HVSTORE", Some("01HVMODEL".into())).unwrap();
    assert!(client.can_view("alice", CLUSTER).await.unwrap());
    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(seen.method, Method::POST);
    assert_eq!(seen.path, "/stores/01HVSTORE/check");
    assert_eq!(seen.content_type.as_deref(), Some("application/json"));
    assert_eq!(
        seen.body,
        json!({
            "tuple_key": {"user": "user:alice", "relation": "can_view", "object": format!("cluster:{CLUSTER}")},
            "authorization_model_id": "01HVMODEL",
        })
    );
}

#[tokio::test]
async fn leaves_the_model_id_out_when_unset() {
    let (url, log) = start().await;
    let client = OpenFgaClient::new(&format!("{url}/"), "01HVSTORE", None).unwrap();
    assert!(!client.can_view("bob", CLUSTER).await.unwrap());
    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/stores/01HVSTORE/check");
    assert_eq!(
        seen.body,
        json!({"tuple_key": {"user": "user:bob", "relation": "can_view", "object": format!("cluster:{CLUSTER}")}})
    );
}

#[tokio::test]
async fn allowed_true_and_false() {
    let (url, _) = start().await;
    let client = OpenFgaClient::new(&url, "s", None).unwrap();
    assert!(client.can_view("alice", CLUSTER).await.unwrap());
    assert!(!client.can_view("bob", CLUSTER).await.unwrap());
}

#[tokio::test]
async fn a_server_error_is_an_error_with_the_status() {
    let (url, _) = start().await;
    let client = OpenFgaClient::new(&url, "s", None).unwrap();
    match client.can_view("boom", CLUSTER).await {
        Err(FgaError::Status { status, body }) => {
            assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
            assert_eq!(body, r#"{"code":"internal_error","message":"boom"}"#);
        }
        other => panic!("expected a status error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_body_that_is_not_a_check_answer_is_an_error() {
    let (url, _) = start().await;
    let client = OpenFgaClient::new(&url, "s", None).unwrap();
    let garbage = client.can_view("garbage", CLUSTER).await.unwrap_err();
    assert!(matches!(garbage, FgaError::BadResponse(_)), "{garbage:?}");
    assert!(garbage.to_string().contains("<html>not openfga</html>"), "{garbage}");
    let shapeless = client.can_view("shapeless", CLUSTER).await.unwrap_err();
    assert!(matches!(shapeless, FgaError::BadResponse(_)), "{shapeless:?}");
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let (url, _) = start().await;
    let client = OpenFgaClient::new(&url, "s", None).unwrap().with_timeout(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let err = client.can_view("slow", CLUSTER).await.unwrap_err();
    assert!(matches!(err, FgaError::Timeout(d) if d == Duration::from_millis(200)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    let port = fundament_shared_store::testing::refused_port();
    let client = OpenFgaClient::new(&format!("http://127.0.0.1:{port}"), "s", None).unwrap();
    let err = client.can_view("alice", CLUSTER).await.unwrap_err();
    assert!(matches!(err, FgaError::Transport(_)), "{err:?}");
}

#[tokio::test]
async fn works_behind_a_shared_dyn_checker() {
    let (url, _) = start().await;
    let checker: Arc<dyn CanView> = Arc::new(OpenFgaClient::new(&url, "s", None).unwrap());
    assert!(checker.can_view("alice", CLUSTER).await.unwrap());
}
