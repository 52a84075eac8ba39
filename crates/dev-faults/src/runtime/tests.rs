use std::time::Duration;

use super::*;
use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

const CERTS: &str = "acme-corp--cert-manager";

async fn call(router: &Router, method: &str, path: &str, body: &str) -> (StatusCode, String) {
    let request =
        http::Request::builder().method(method).uri(path).body(axum::body::Body::from(body.to_owned()));
    let response = router.clone().oneshot(request.expect("request")).await.expect("infallible");
    let status = response.status();
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

#[test]
fn each_fault_reads_from_its_json_and_anything_else_is_refused() {
    let read = |s: &str| serde_json::from_str::<RuntimeFault>(s);
    assert_eq!(read(r#"{"fault":"none"}"#).ok(), Some(RuntimeFault::None));
    assert_eq!(read(r#"{"fault":"hang"}"#).ok(), Some(RuntimeFault::Hang));
    assert_eq!(read(r#"{"fault":"garbage"}"#).ok(), Some(RuntimeFault::Garbage));
    assert_eq!(read(r#"{"fault":"down"}"#).ok(), Some(RuntimeFault::Down));
    for bad in [
        r#"{"fault":"slow","delay_ms":10}"#,
        r#"{"fault":"hung"}"#,
        r#"{"fault":"hang","seconds":3}"#,
        r#"{"fail":true}"#,
        r#"{}"#,
        r#""hang""#,
    ] {
        assert!(read(bad).is_err(), "{bad} was accepted");
    }
    assert_eq!(serde_json::to_string(&RuntimeFault::Garbage).expect("json"), r#"{"fault":"garbage"}"#);
    assert!(PATH.starts_with(crate::PREFIX), "the guard and the layers know the prefix");
}

#[tokio::test]
async fn the_switches_are_listed_read_and_set_by_installation_name() {
    let switches = RuntimeSwitches::default();
    let certs = switches.add(CERTS);
    switches.add("acme-corp--demo");
    assert_eq!(switches.add(CERTS).fault(), RuntimeFault::None, "adding again keeps the one switch");
    let routes: Router = switches.routes();

    let put = |body: &'static str| {
        call(&routes, "PUT", "/dev/faults/plugin-runtimes/acme-corp--cert-manager", body)
    };
    assert_eq!(put(r#"{"fault": "hang"}"#).await, (StatusCode::NO_CONTENT, String::new()));
    assert_eq!(certs.fault(), RuntimeFault::Hang, "the runtime's own switch");
    assert_eq!(
        call(&routes, "GET", "/dev/faults/plugin-runtimes/acme-corp--cert-manager", "").await,
        (StatusCode::OK, r#"{"fault":"hang"}"#.to_owned())
    );
    let (status, all) = call(&routes, "GET", PATH, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&all).expect("json"),
        serde_json::json!({"acme-corp--cert-manager": {"fault": "hang"}, "acme-corp--demo": {"fault": "none"}})
    );

    for (body, says) in [
        (
            r#"{"fault": "slow"}"#,
            r#"expected {"fault": "none" | "hang" | "garbage" | "down"}: unknown fault "slow""#,
        ),
        (
            r#"{"fault": "down", "seconds": 5}"#,
            r#"expected {"fault": "none" | "hang" | "garbage" | "down"}: unknown field `seconds`"#,
        ),
        ("down", r#"expected {"fault": "none" | "hang" | "garbage" | "down"}: expected value"#),
        ("", r#"expected {"fault": "none" | "hang" | "garbage" | "down"}: EOF"#),
    ] {
        let (status, text) = put(body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(text.starts_with(says), "{body}: {text}");
    }
    assert_eq!(certs.fault(), RuntimeFault::Hang, "a refused body changes nothing");

    for method in ["GET", "PUT"] {
        let (status, text) =
            call(&routes, method, "/dev/faults/plugin-runtimes/acme-corp--nope", r#"{"fault":"none"}"#).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}");
        assert_eq!(
            text,
            "no plugin runtime \"acme-corp--nope\" runs in this stack (GET /dev/faults/plugin-runtimes lists them)\n"
        );
    }
    assert!(switches.get("acme-corp--nope").is_none(), "a PUT makes no switch");
}

#[tokio::test]
async fn the_switchboard_serves_the_runtime_switches_beside_the_services() {
    let board = crate::Switchboard::default();
    board.runtimes().add(CERTS);
    let routes: Router = board.routes();
    let path = "/dev/faults/plugin-runtimes/acme-corp--cert-manager";
    assert_eq!(call(&routes, "PUT", path, r#"{"fault":"down"}"#).await.0, StatusCode::NO_CONTENT);
    assert_eq!(board.runtimes().get(CERTS).map(|s| s.fault()), Some(RuntimeFault::Down));
    assert_eq!(call(&routes, "GET", "/dev/faults/cluster", "").await.1, r#"{"fault":"none"}"#);
}

/// A runtime on loopback behind `switch`: `/console/page.html` answers `<p>page</p>`.
async fn runtime(switch: &RuntimeSwitch) -> SocketAddr {
    let router = Router::new().route(
        "/console/page.html",
        get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], "<p>page</p>") }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (router, listener) = switch.wrap(router, listener);
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// One request on a new connection, read until the runtime closes it: the raw answer, or
/// what ended the connection.
async fn ask(addr: SocketAddr, path: &str) -> io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes())
        .await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(answer)
}

fn text(answer: &io::Result<Vec<u8>>) -> String {
    match answer {
        Ok(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Err(e) => format!("error: {e}"),
    }
}

/// Nothing was answered: the connection closed (or was reset) before a byte came.
fn nothing(answer: &io::Result<Vec<u8>>) -> bool {
    answer.as_ref().map_or(true, Vec::is_empty)
}

#[tokio::test]
async fn garbage_is_200_random_bytes_that_are_not_what_was_asked_for() {
    let switch = RuntimeSwitch::new(CERTS);
    let addr = runtime(&switch).await;
    assert!(text(&ask(addr, "/console/page.html").await).ends_with("\r\n\r\n<p>page</p>"));
    switch.set(RuntimeFault::Garbage);
    let mut seen = Vec::new();
    for path in ["/console/page.html", "/readyz"] {
        let answer = ask(addr, path).await.expect("answered");
        let split = answer.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
        let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200 ok"), "{head}");
        assert!(head.contains("content-type: application/octet-stream\r\n"), "{head}");
        let body = &answer[split..];
        assert_eq!(body.len(), GARBAGE_BYTES);
        assert_eq!(body[0], 0xFF);
        assert!(std::str::from_utf8(body).is_err(), "never text");
        seen.push(body.to_vec());
    }
    assert_ne!(seen[0], seen[1], "random, not a fixed blob");
    switch.set(RuntimeFault::None);
    assert!(text(&ask(addr, "/console/page.html").await).ends_with("\r\n\r\n<p>page</p>"));
}

#[tokio::test]
async fn a_hung_runtime_answers_nothing_until_switched_back_then_serves_what_waited() {
    let switch = RuntimeSwitch::new(CERTS);
    let addr = runtime(&switch).await;
    switch.set(RuntimeFault::Hang);
    let page = tokio::spawn(ask(addr, "/console/page.html"));
    // Its health too: a hung process hangs every request.
    let ready = tokio::spawn(ask(addr, "/readyz"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!page.is_finished() && !ready.is_finished(), "a hung runtime answered");
    switch.set(RuntimeFault::None);
    let page = tokio::time::timeout(Duration::from_secs(5), page).await.expect("answered").expect("joined");
    assert!(text(&page).ends_with("\r\n\r\n<p>page</p>"), "{}", text(&page));
    let ready = tokio::time::timeout(Duration::from_secs(5), ready).await.expect("answered").expect("joined");
    assert!(text(&ready).starts_with("HTTP/1.1 404"), "no /readyz on this router: {}", text(&ready));
}

#[tokio::test]
async fn a_runtime_that_is_down_answers_nothing_cuts_what_is_open_and_comes_back() {
    let switch = RuntimeSwitch::new(CERTS);
    let addr = runtime(&switch).await;

    // A kept-alive connection, idle after one answer, and a request hung when it goes down.
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    idle.write_all(b"GET /console/page.html HTTP/1.1\r\nhost: x\r\n\r\n").await.expect("write");
    let mut first = Vec::new();
    while !first.ends_with(b"<p>page</p>") {
        let mut chunk = [0u8; 512];
        let n = idle.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&first));
        first.extend_from_slice(&chunk[..n]);
    }
    switch.set(RuntimeFault::Hang);
    let hung = tokio::spawn(ask(addr, "/console/page.html"));
    tokio::time::sleep(Duration::from_millis(200)).await;

    switch.set(RuntimeFault::Down);
    let hung = tokio::time::timeout(Duration::from_secs(5), hung).await.expect("cut").expect("joined");
    assert!(nothing(&hung), "the hung request was answered: {}", text(&hung));
    let mut rest = Vec::new();
    let idle_end = tokio::time::timeout(Duration::from_secs(5), idle.read_to_end(&mut rest)).await;
    assert!(matches!(idle_end, Ok(Err(_)) | Ok(Ok(0))), "the idle connection stayed open: {idle_end:?}");
    let fresh = ask(addr, "/console/page.html").await;
    assert!(nothing(&fresh), "a new connection was answered: {}", text(&fresh));

    switch.set(RuntimeFault::None);
    assert!(text(&ask(addr, "/console/page.html").await).ends_with("\r\n\r\n<p>page</p>"));
}
