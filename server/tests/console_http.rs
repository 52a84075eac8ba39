//! The console router over `oneshot`: server rendering, sign-in, session
//! forgery, theme cookie, 404, cross-origin writes.

use axum::{Router, body::Body};
use std::sync::{Arc, OnceLock, RwLock};

use fundament_settings::resolve;
use fundament_tokens::{Signer, Verifier};
use http::{Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// One runtime for every test, as in the server, where renders of concurrent
/// requests share a multi-threaded runtime.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    })
}

/// A real authn on a loopback port (mock mode, seed users), started once.
fn sessions() -> Arc<server::console_auth::AuthnSessions> {
    static SESSIONS: OnceLock<Arc<server::console_auth::AuthnSessions>> = OnceLock::new();
    SESSIONS
        .get_or_init(|| {
            let signer = Signer::generate();
            let verifier = Verifier::from_jwks(&signer.jwks()).unwrap();
            let state = Arc::new(fundament_authn::AuthnState {
                signer: Arc::new(RwLock::new(signer)),
                fga: Arc::new(fundament_fga::TupleStore::from_tuples(Vec::new())),
                installations: Arc::new(server::services::ClusterInstallations(Default::default())),
                config: fundament_authn::AuthnConfig {
                    mock: true,
                    users: server::services::seed_users(),
                    secure_cookies: false,
                    cookie_domain: None,
                },
                fail_mint_plugin_token: Default::default(),
            });
            // Bound synchronously: the first caller may already be inside the runtime.
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            runtime().spawn(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, fundament_authn::router(state)).await
            });
            server::console_auth::AuthnSessions::new(&url, verifier)
        })
        .clone()
}

fn console() -> Router {
    let settings = resolve(&[]).expect("defaults resolve");
    let state = server::console::console_state(&settings, sessions());
    server::console::router(
        server::console::leptos_options(&settings),
        state,
        &settings.urls.console,
        &settings.cluster.plugin_sdk_dir,
    )
}

async fn send(request: Request<Body>) -> (StatusCode, http::HeaderMap, String) {
    let response: Response<Body> = console().oneshot(request).await.expect("router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.expect("body").to_bytes();
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
        .body(Body::from(format!("email={}&next=%2Fclusters", email.replace('@', "%40"))))
        .unwrap()
}

async fn session_cookie(email: &str) -> String {
    let (status, headers, _) = send(sign_in_form(email, "http://localhost:3000")).await;
    assert_eq!(status, StatusCode::FOUND);
    assert_eq!(headers[header::LOCATION], "/clusters");
    let set_cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(set_cookie.contains("HttpOnly; SameSite=Strict; Path=/"), "{set_cookie}");
    set_cookie.split(';').next().unwrap().to_owned()
}

#[test]
fn signed_out_home_is_the_server_rendered_sign_in_page() {
    runtime().block_on(async {
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
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("'nonce-"), "{csp}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    });
}

#[test]
fn signing_in_renders_the_shell_for_that_user() {
    runtime().block_on(async {
        let cookie = session_cookie("alice@acme-corp.com").await;
        let (status, _, body) = send(get("/clusters", Some(&cookie))).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains(r#"aria-label="Sidebar""#), "{body}");
        assert!(body.contains("prod-eu") && !body.contains("restricted"), "{body}");
        assert!(body.contains("User menu: </span>") && body.contains(">Alice<"), "{body}");
    });
}

#[test]
fn unknown_users_cannot_sign_in_and_are_told_why() {
    runtime().block_on(async {
        let (status, headers, _) = send(sign_in_form("mallory@acme-corp.com", "http://localhost:3000")).await;
        assert_eq!(status, StatusCode::FOUND);
        assert!(headers.get(header::SET_COOKIE).is_none());
        let location = headers[header::LOCATION].to_str().unwrap().to_owned();
        assert_eq!(location, "/sign-in?error=unknown-user&next=/clusters");
        let (status, _, body) = send(get(&location, None)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("That user does not exist in this development stack."), "{body}");
    });
}

#[test]
fn a_forged_or_foreign_session_is_ignored() {
    runtime().block_on(async {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let other_key = Signer::generate().sign_user("alice", "alice@acme-corp.com", "Alice", now, 3600);
        for cookie in [format!("fundament_auth={other_key}"), "fundament_auth=alice@acme-corp.com".to_owned()]
        {
            let (status, _, body) = send(get("/", Some(&cookie))).await;
            assert_eq!(status, StatusCode::OK);
            assert!(body.contains("Sign in to Fundament"), "accepted {cookie}");
        }
    });
}

#[test]
fn sign_in_from_another_origin_is_refused() {
    runtime().block_on(async {
        let (status, headers, _) = send(sign_in_form("alice@acme-corp.com", "http://localhost:8082")).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(headers.get(header::SET_COOKIE).is_none());
    });
}

#[test]
fn the_theme_cookie_sets_data_theme_before_any_script() {
    runtime().block_on(async {
        let (_, _, body) = send(get("/", Some("fundament_theme=dark"))).await;
        assert!(body.contains(r#"data-theme="dark""#));
        let (_, _, body) = send(get("/", Some("fundament_theme=%22%3E%3Cscript%3E"))).await;
        assert!(body.contains(r#"data-theme="system""#));
    });
}

#[test]
fn unknown_paths_are_404_pages() {
    runtime().block_on(async {
        let (status, _, body) = send(get("/no/such/page", None)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.contains("Not found"));
    });
}

#[test]
fn concurrent_renders_all_complete() {
    runtime().block_on(async {
        let cookie = session_cookie("bob@acme-corp.com").await;
        let renders = (0..256).map(|i| {
            let cookie = cookie.clone();
            tokio::spawn(async move {
                let path = ["/", "/clusters", "/plugins", "/projects/webshop"][i % 4];
                send(get(path, (i % 2 == 0).then_some(cookie.as_str()))).await
            })
        });
        let done = tokio::time::timeout(std::time::Duration::from_secs(20), futures_join_all(renders))
            .await
            .expect("256 concurrent renders finish");
        for (status, _, body) in done {
            assert_eq!(status, StatusCode::OK);
            assert!(body.contains("Fundament"));
        }
    });
}

async fn futures_join_all<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.expect("render task"));
    }
    out
}

#[test]
fn an_unknown_project_is_a_404_inside_the_shell() {
    runtime().block_on(async {
        let cookie = session_cookie("alice@acme-corp.com").await;
        let (status, _, body) = send(get("/projects/nope", Some(&cookie))).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.contains("Project nope does not exist, or you cannot see it."), "{body}");
        assert!(body.contains(r#"aria-label="Sidebar""#), "the shell stays around the 404");
    });
}
