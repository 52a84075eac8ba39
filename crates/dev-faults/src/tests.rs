use super::*;
use http_body_util::BodyExt;
use tower::ServiceExt;

fn render(refusal: &Refusal) -> Response {
    refusal.message.clone().into_response()
}

fn service(switch: &Switch) -> Router {
    let board_routes = Router::new().route(&format!("{PREFIX}/x"), get(|| async { "switch" }));
    layer(Router::new().route("/work", get(|| async { "done" })).merge(board_routes), switch.clone(), render)
}

async fn call(
    router: &Router,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, http::HeaderMap, String) {
    let request =
        http::Request::builder().method(method).uri(path).body(axum::body::Body::from(body.to_owned()));
    let response = router.clone().oneshot(request.expect("request")).await.expect("infallible");
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.expect("body").to_bytes();
    (parts.status, parts.headers, String::from_utf8_lossy(&bytes).into_owned())
}

#[test]
fn each_fault_reads_from_its_json_and_typos_are_refused() {
    let read = |s: &str| serde_json::from_str::<Fault>(s);
    assert_eq!(read(r#"{"fault":"none"}"#).ok(), Some(Fault::None));
    assert_eq!(read(r#"{"fault":"down"}"#).ok(), Some(Fault::Down));
    assert_eq!(read(r#"{"fault":"restarting","seconds":3}"#).ok(), Some(Fault::Restarting { seconds: 3 }));
    assert_eq!(read(r#"{"fault":"slow","delay_ms":250}"#).ok(), Some(Fault::Slow { delay_ms: 250 }));
    assert_eq!(read(r#"{"fault":"status","status":429}"#).ok(), Some(Fault::Status { status: 429 }));
    for typo in [
        r#"{"fault":"slow","delay":250}"#,
        r#"{"fault":"sideways"}"#,
        r#"{"fail":true}"#,
        r#"{"fault":"down","x":1}"#,
    ] {
        assert!(read(typo).is_err(), "{typo} was accepted");
    }
}

#[tokio::test]
async fn a_service_that_is_down_answers_503_and_closes_but_its_switch_still_answers() {
    let switch = Switch::new(Service::Cluster);
    let router = service(&switch);
    assert_eq!(call(&router, "GET", "/work", "").await.2, "done");
    switch.set(Fault::Down);
    let (status, headers, body) = call(&router, "GET", "/work", "").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(headers.get(http::header::CONNECTION).map(|v| v.as_bytes()), Some(&b"close"[..]));
    assert!(body.starts_with("cluster is down (development fault switch: PUT /dev/faults/cluster"), "{body}");
    assert_eq!(call(&router, "GET", "/dev/faults/x", "").await.2, "switch");
    switch.set(Fault::None);
    assert_eq!(call(&router, "GET", "/work", "").await.0, StatusCode::OK);
}

#[tokio::test]
async fn an_error_status_is_answered_as_set_and_429_says_when_to_retry() {
    let switch = Switch::new(Service::Authn);
    let router = service(&switch);
    switch.set(Fault::Status { status: 500 });
    let (status, headers, body) = call(&router, "GET", "/work", "").await;
    assert_eq!((status, headers.get(http::header::RETRY_AFTER)), (StatusCode::INTERNAL_SERVER_ERROR, None));
    assert!(body.starts_with("authn answers every request with HTTP 500"), "{body}");
    switch.set(Fault::Status { status: 429 });
    let (status, headers, _) = call(&router, "GET", "/work", "").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(headers.get(http::header::RETRY_AFTER).map(|v| v.as_bytes()), Some(&b"1"[..]));
}

#[tokio::test]
async fn a_slow_service_answers_after_its_delay() {
    let switch = Switch::new(Service::OrganizationApi);
    let router = service(&switch);
    switch.set(Fault::Slow { delay_ms: 150 });
    let started = Instant::now();
    assert_eq!(call(&router, "GET", "/work", "").await.2, "done");
    assert!(started.elapsed() >= Duration::from_millis(150), "{:?}", started.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_restart_ends_by_itself_unless_the_switch_changed_meanwhile() {
    let switch = Switch::new(Service::Cluster);
    switch.set(Fault::Restarting { seconds: 5 });
    assert!(switch.unreachable());
    let Effect::Refuse(refusal) = switch.effect() else { panic!("a restarting service answered") };
    assert_eq!((refusal.status, refusal.retry_after), (StatusCode::SERVICE_UNAVAILABLE, Some(5)));
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(switch.fault(), Fault::None);

    // Set to slow during a restart: the restart's end leaves it slow.
    switch.set(Fault::Restarting { seconds: 5 });
    switch.set(Fault::Slow { delay_ms: 10 });
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(switch.fault(), Fault::Slow { delay_ms: 10 });
}

#[tokio::test]
async fn until_unreachable_resolves_when_the_service_goes_down() {
    let switch = Switch::new(Service::Cluster);
    let waiting = tokio::spawn({
        let switch = switch.clone();
        async move { switch.until_unreachable().await }
    });
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    switch.set(Fault::Down);
    tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("resolved").expect("joined");
}

#[tokio::test]
async fn the_switchboard_sets_reads_and_refuses_what_it_cannot_set() {
    let board = Switchboard::default();
    let routes = board.routes();
    let (status, _, _) =
        call(&routes, "PUT", "/dev/faults/cluster", r#"{"fault":"status","status":429}"#).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(board.switch(Service::Cluster).fault(), Fault::Status { status: 429 });
    assert_eq!(call(&routes, "GET", "/dev/faults/cluster", "").await.2, r#"{"fault":"status","status":429}"#);
    let all = call(&routes, "GET", "/dev/faults/services", "").await.2;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&all).expect("json"),
        serde_json::json!({"authn": {"fault": "none"}, "organization-api": {"fault": "none"}, "cluster": {"fault": "status", "status": 429}, "openfga": {"fault": "none"}})
    );
    for (body, says) in [
        (r#"{"fault":"status","status":200}"#, "status must be an error status, 400 to 599, not 200"),
        (r#"{"fault":"slow","delay_ms":0}"#, "delay_ms must be 1 to 120000, not 0"),
        (r#"{"fault":"restarting","seconds":3600}"#, "seconds must be 1 to 300, not 3600"),
        (r#"{"fault":"slow"}"#, "expected {\"fault\""),
        (r#"{"fault":"down","status":500}"#, "expected {\"fault\""),
    ] {
        let (status, _, text) = call(&routes, "PUT", "/dev/faults/authn", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(text.starts_with(says), "{body}: {text}");
    }
    assert_eq!(board.switch(Service::Authn).fault(), Fault::None);
}
