//! The console router over `oneshot`: server rendering, sign-in, session
//! forgery, theme cookie, 404, cross-origin writes.

use axum::{Router, body::Body};
use fundament_session::SessionKey;
use fundament_settings::resolve;
use http::{Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

fn console() -> Router {
    let settings = resolve(&[]).expect("defaults resolve");
    let state = server::console::console_state(&settings, SessionKey::from_bytes([1; 32]));
    server::console::router(
        server::console::leptos_options(&settings),
        state,
        &settings.urls.console,
    )
}

async fn send(request: Request<Body>) -> (StatusCode, http::HeaderMap, String) {
    let response: Response<Body> = console().oneshot(request).await.expect("router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

fn get(path: &str, cookie: Option<&str>) -> Request<Body> {
    let mut builder = Request::get(path).header(header::ACCEPT, "text/html");
    if let Some(cookie) = cookie {
        builder = builder.header(header::COOKIE, cookie);
    }
    builder.body(Body::empty()).unwrap()
}

fn sign_in_form(email: &str, origin: &str) -> Request<Body> {
    Request::post("/api/sign-in")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::ORIGIN, origin)
        .header(header::REFERER, "http://localhost:3000/sign-in")
        .body(Body::from(format!(
            "email={}&next=%2Fclusters",
            email.replace('@', "%40")
        )))
        .unwrap()
}

async fn session_cookie(email: &str) -> String {
    let (status, headers, _) = send(sign_in_form(email, "http://localhost:3000")).await;
    assert_eq!(status, StatusCode::FOUND);
    assert_eq!(headers[header::LOCATION], "/clusters");
    let set_cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(
        set_cookie.contains("HttpOnly; SameSite=Strict; Path=/"),
        "{set_cookie}"
    );
    set_cookie.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn signed_out_home_is_the_server_rendered_sign_in_page() {
    let (status, headers, body) = send(get("/", None)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("Sign in to Fundament"), "{body}");
    assert!(body.contains("alice@acme-corp.com") && body.contains("bob@acme-corp.com"));
    assert!(
        body.contains("/pkg/console.js") && body.contains("/pkg/console.css"),
        "no hydration script or CSS"
    );
    assert!(body.contains(r#"data-theme="system""#));
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("'nonce-"),
        "{csp}"
    );
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
}

#[tokio::test]
async fn signing_in_renders_the_shell_for_that_user() {
    let cookie = session_cookie("alice@acme-corp.com").await;
    let (status, _, body) = send(get("/clusters", Some(&cookie))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(r#"aria-label="Sidebar""#), "{body}");
    assert!(
        body.contains("prod-eu") && !body.contains("restricted"),
        "{body}"
    );
    assert!(body.contains("User menu for Alice"));
}

#[tokio::test]
async fn unknown_users_cannot_sign_in() {
    let (status, _, body) = send(sign_in_form(
        "mallory@acme-corp.com",
        "http://localhost:3000",
    ))
    .await;
    assert_ne!(status, StatusCode::OK);
    assert!(
        body.contains("is not a user of this development stack"),
        "{body}"
    );
}

#[tokio::test]
async fn a_forged_or_foreign_session_is_ignored() {
    let other_key = SessionKey::from_bytes([2; 32]).issue("alice@acme-corp.com", 1, u64::MAX / 2);
    for cookie in [
        format!("fundament_auth={other_key}"),
        "fundament_auth=alice@acme-corp.com".to_owned(),
    ] {
        let (status, _, body) = send(get("/", Some(&cookie))).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("Sign in to Fundament"), "accepted {cookie}");
    }
}

#[tokio::test]
async fn sign_in_from_another_origin_is_refused() {
    let (status, headers, _) =
        send(sign_in_form("alice@acme-corp.com", "http://localhost:8082")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(headers.get(header::SET_COOKIE).is_none());
}

#[tokio::test]
async fn the_theme_cookie_sets_data_theme_before_any_script() {
    let (_, _, body) = send(get("/", Some("fundament_theme=dark"))).await;
    assert!(body.contains(r#"data-theme="dark""#));
    let (_, _, body) = send(get("/", Some("fundament_theme=%22%3E%3Cscript%3E"))).await;
    assert!(body.contains(r#"data-theme="system""#));
}

#[tokio::test]
async fn unknown_paths_are_404_pages() {
    let (status, _, body) = send(get("/no/such/page", None)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("Not found"));
}
