//! The console router over `oneshot`: server rendering, sign-in, session
//! forgery, planted and conflicting session cookies, sign-out revocation, the
//! `next` parameter, theme cookie, 404, cross-origin writes, the cluster route.

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

/// Runs a test's future as a task of the shared runtime, the way the server runs a request,
/// and waits for it. (Polled on the test's own thread with `block_on`, the sign-in flow now and
/// then never woke up again when several tests ran at once.)
fn run<F>(test: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    match runtime().block_on(runtime().spawn(test)) {
        Ok(output) => output,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
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
                fga_health: Default::default(),
                installations: Arc::new(server::services::ClusterInstallations(
                    fundament_kube_api_proxy::clusters::Clusters::Fixed(Default::default()),
                )),
                revocations: Arc::new(fundament_authn::Revocations::in_memory()),
                config: fundament_authn::AuthnConfig {
                    dev_sign_in: true,
                    fault_switches: true,
                    users: server::services::dev_users(&fundament_directory::seed()),
                    dev_hosts: Vec::new(),
                },
                fail_mint_plugin_token: Default::default(),
                oidc: None,
                mint_budget: Default::default(),
            });
            // Bound synchronously: the first caller may already be inside the runtime.
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            runtime().spawn(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, fundament_authn::router(state)).await
            });
            let _inside = runtime().enter();
            let credentials = fundament_authn_client::Credentials {
                keys: fundament_authn_client::Keys::fixed_then_follow(
                    verifier,
                    &format!("{url}/.well-known/jwks.json"),
                ),
                revoked: fundament_authn_client::RevokedSessions::follow(&format!(
                    "{url}/sessions/revocations"
                )),
            };
            server::console_auth::AuthnSessions::new(&url, credentials)
        })
        .clone()
}

/// The console's router, built once as the server builds it at start-up: building it renders
/// the app to list its routes, which must not happen while requests are being rendered (done
/// per request, it now and then left a concurrent render waiting forever).
fn console() -> Router {
    static CONSOLE: OnceLock<Router> = OnceLock::new();
    CONSOLE
        .get_or_init(|| {
            let mut settings = resolve(&[]).expect("defaults resolve");
            // Tests run in server/: the tuple file is the checkout's.
            settings.fga.tuples = crate::checkout::repo().join("fixtures/fga/tuples.yaml");
            // The built site (scripts/build --site; CI builds it before the tests), so pages
            // preload the lazy routes they rendered, as the console serves them.
            settings.site_root = crate::checkout::repo().join("target/site");
            assert!(
                server::console::check_site(&settings).is_ok(),
                "no built site at {}: run scripts/build --site first",
                settings.site_root.display()
            );
            let state = server::console::console_state(
                &settings,
                sessions(),
                settings.mode == fundament_settings::Mode::Mock,
            )
            .expect("console state");
            server::console::router(
                server::console::leptos_options(&settings),
                state,
                &settings.urls.console,
                &settings.cluster.plugin_sdk_dir,
            )
        })
        .clone()
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
    assert!(set_cookie.starts_with("__Host-fundament_auth="), "{set_cookie}");
    assert!(set_cookie.contains("Secure; HttpOnly; SameSite=Strict; Path=/"), "{set_cookie}");
    assert!(!set_cookie.contains("Domain"), "{set_cookie}");
    set_cookie.split(';').next().unwrap().to_owned()
}

/// A page as a signed-in user gets it, checked to answer `expected`: its body.
async fn page_as(email: &str, path: &str, expected: StatusCode) -> String {
    let cookie = session_cookie(email).await;
    let (status, _, body) = send(get(path, Some(&cookie))).await;
    assert_eq!(status, expected, "{path}: {body}");
    body
}

/// Posts the sign-in form, checked to give no session: the answer's status and headers.
async fn sign_in_without_session(email: &str, origin: &str) -> (StatusCode, http::HeaderMap) {
    let (status, headers, _) = send(sign_in_form(email, origin)).await;
    assert!(headers.get(header::SET_COOKIE).is_none(), "a session for {email} from {origin}");
    (status, headers)
}

fn signed_in_as(body: &str, name: &str) -> bool {
    body.contains(&format!(">{name}<")) && body.contains(r#"aria-label="Sidebar""#)
}

#[test]
fn a_session_cookie_planted_beside_the_real_one_is_refused_not_resolved() {
    run(async {
        let alice = session_cookie("alice@acme-corp.com").await;
        let bob = session_cookie("bob@acme-corp.com").await;
        // A second session cookie, as a page on a more specific path would plant it (first in
        // the header): the request is refused as signed out, never served as either user.
        for cookies in [format!("{bob}; {alice}"), format!("{alice}; {bob}"), format!("{alice}; {alice}")] {
            let (status, _, body) = send(get("/clusters", Some(&cookies))).await;
            assert_eq!(status, StatusCode::OK);
            assert!(!signed_in_as(&body, "Alice") && !signed_in_as(&body, "Bob"), "{cookies}: {body:.200}");
        }
        // An unprefixed cookie of the same name (what any subdomain may plant) is no session.
        let value = alice.split_once('=').unwrap().1;
        let (_, _, body) = send(get("/clusters", Some(&format!("fundament_auth={value}")))).await;
        assert!(!signed_in_as(&body, "Alice"));
        let (_, _, body) = send(get("/clusters", Some(&format!("fundament_auth=junk; {alice}")))).await;
        assert!(signed_in_as(&body, "Alice"), "the real session still works beside junk of another name");
    });
}

#[test]
fn a_cookie_of_bytes_past_ascii_beside_the_session_leaves_it_readable() {
    run(async {
        let alice = session_cookie("alice@acme-corp.com").await;
        // What Chromium sends when a page of a sibling host (a plugin origin under the console's
        // parent domain) set a cookie of UTF-8 for that domain. Read as text as a whole, the header
        // was unreadable and alice signed out for as long as the cookie lived. A name that is the
        // session's after a no-break space (which the browser's `__Host-` check lets a sibling
        // set) is another name, not a second session.
        for planted in ["tossed=\u{fc}", "\u{a0}__Host-fundament_auth=planted"] {
            let cookies = format!("{planted}; {alice}");
            let request = Request::get("/clusters")
                .header(header::ACCEPT, "text/html")
                .header(header::COOKIE, http::HeaderValue::from_bytes(cookies.as_bytes()).unwrap())
                .body(Body::empty())
                .unwrap();
            let (status, _, body) = send(request).await;
            assert_eq!(status, StatusCode::OK);
            assert!(signed_in_as(&body, "Alice"), "{planted:?}: {body:.200}");
        }
    });
}

#[test]
fn sign_out_revokes_the_session_on_the_server() {
    run(async {
        let cookie = session_cookie("alice@acme-corp.com").await;
        let (_, _, body) = send(get("/clusters", Some(&cookie))).await;
        assert!(signed_in_as(&body, "Alice"));
        let sign_out = Request::post("/api/sign-out")
            .header(header::COOKIE, &cookie)
            .header(header::ORIGIN, "http://localhost:3000")
            .header(header::ACCEPT, "text/html")
            .body(Body::empty())
            .unwrap();
        let (status, headers, _) = send(sign_out).await;
        assert_eq!(status, StatusCode::FOUND);
        assert!(headers[header::SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
        // A copy of the cookie, replayed after sign-out, is nobody.
        let (_, _, body) = send(get("/clusters", Some(&cookie))).await;
        assert!(!signed_in_as(&body, "Alice"), "the copied session still works: {body:.300}");
    });
}

#[test]
fn a_sign_in_ends_the_session_it_replaces() {
    run(async {
        let alice = session_cookie("alice@acme-corp.com").await;
        let (_, _, body) = send(get("/clusters", Some(&alice))).await;
        assert!(signed_in_as(&body, "Alice"));
        // Bob signs in in the same browser, which still sends Alice's cookie.
        let mut switch = sign_in_form("bob@acme-corp.com", "http://localhost:3000");
        switch.headers_mut().insert(header::COOKIE, alice.parse().unwrap());
        let (status, headers, _) = send(switch).await;
        assert_eq!(status, StatusCode::FOUND);
        let bob = headers[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned();
        let (_, _, body) = send(get("/clusters", Some(&bob))).await;
        assert!(signed_in_as(&body, "Bob"));
        // A copy of Alice's cookie, kept from before the switch, is nobody.
        let (_, _, body) = send(get("/clusters", Some(&alice))).await;
        assert!(!signed_in_as(&body, "Alice"), "the replaced session still works: {body:.300}");
        // A cookie that is no live session is no reason to refuse the sign-in.
        let mut junk = sign_in_form("alice@acme-corp.com", "http://localhost:3000");
        junk.headers_mut().insert(header::COOKIE, "__Host-fundament_auth=junk".parse().unwrap());
        let (status, headers, _) = send(junk).await;
        assert_eq!((status, headers[header::LOCATION].to_str().unwrap()), (StatusCode::FOUND, "/clusters"));
        assert!(headers[header::SET_COOKIE].to_str().unwrap().starts_with("__Host-fundament_auth=ey"));
    });
}

#[test]
fn next_after_sign_in_never_leaves_the_console() {
    run(async {
        for (next, location) in [
            ("%2F%09%2Fexample.org", "/"),
            ("%2F%0A%2Fexample.org", "/"),
            ("%2F%5Cexample.org", "/"),
            ("https%3A%2F%2Fexample.org", "/"),
            ("https%3Aexample.org", "/"),
            ("http%3Aexample.org", "/example.org"),
            ("%2Fplugins%3Fa%3D1", "/plugins?a=1"),
        ] {
            let request = Request::post("/api/sign-in")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ACCEPT, "text/html")
                .header(header::ORIGIN, "http://localhost:3000")
                .body(Body::from(format!("email=alice%40acme-corp.com&next={next}")))
                .unwrap();
            let (status, headers, _) = send(request).await;
            assert_eq!(status, StatusCode::FOUND, "{next}");
            assert_eq!(headers[header::LOCATION], location, "{next}");
        }
    });
}

#[test]
fn the_cluster_route_serves_the_consoles_own_fetches_only() {
    run(async {
        let cookie = session_cookie("alice@acme-corp.com").await;
        let path = "/kube/clusters/019b4000-2000-7000-8000-000000000001/apis/plugins.fundament.io/v1/plugininstallations";
        let request = |path: &str, headers: &[(&str, &str)]| {
            let mut b = Request::get(path).header(header::COOKIE, &cookie);
            for (k, v) in headers {
                b = b.header(*k, *v);
            }
            b.body(Body::empty()).unwrap()
        };
        let fetch =
            [("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty")];
        for (headers, code) in [
            (vec![], 403),
            (
                vec![
                    ("sec-fetch-site", "same-origin"),
                    ("sec-fetch-mode", "navigate"),
                    ("sec-fetch-dest", "document"),
                ],
                403,
            ),
            (
                vec![
                    ("sec-fetch-site", "same-origin"),
                    ("sec-fetch-mode", "navigate"),
                    ("sec-fetch-dest", "iframe"),
                ],
                403,
            ),
            (
                vec![
                    ("sec-fetch-site", "same-origin"),
                    ("sec-fetch-mode", "no-cors"),
                    ("sec-fetch-dest", "image"),
                ],
                403,
            ),
            (
                vec![
                    ("sec-fetch-site", "same-site"),
                    ("sec-fetch-mode", "cors"),
                    ("sec-fetch-dest", "empty"),
                ],
                403,
            ),
            (
                vec![
                    ("sec-fetch-site", "cross-site"),
                    ("sec-fetch-mode", "cors"),
                    ("sec-fetch-dest", "empty"),
                ],
                403,
            ),
        ] {
            let (status, headers_out, body) = send(request(path, &headers)).await;
            assert_eq!(status.as_u16(), code, "{headers:?}: {body}");
            assert_eq!(headers_out[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
            assert_eq!(headers_out[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        }
        // A proxy subresource (a plugin's own pages) never passes, nor a non-resource path.
        let proxy = "/kube/clusters/019b4000-2000-7000-8000-000000000001/api/v1/namespaces/plugin-acme-corp--demo/services/http:plugin-acme-corp--demo:8080/proxy/console/x.html";
        assert_eq!(send(request(proxy, &fetch)).await.0, StatusCode::FORBIDDEN);
        let version = "/kube/clusters/019b4000-2000-7000-8000-000000000001/version";
        assert_eq!(send(request(version, &fetch)).await.0, StatusCode::FORBIDDEN);
        // Without a session, or writing: refused.
        let anonymous = Request::get(path)
            .header("sec-fetch-site", "same-origin")
            .header("sec-fetch-mode", "cors")
            .header("sec-fetch-dest", "empty")
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(anonymous).await.0, StatusCode::UNAUTHORIZED);
        let post = Request::post(path)
            .header(header::COOKIE, &cookie)
            .header(header::ORIGIN, "http://localhost:3000")
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(post).await.0, StatusCode::METHOD_NOT_ALLOWED);
    });
}

/// A page of another site (a plugin page is the console's site in production, so the session
/// cookie goes along) reads no console page as the user; a navigation to it does.
#[test]
fn another_sites_page_reads_no_console_page_but_may_navigate_to_one() {
    run(async {
        let cookie = session_cookie("alice@acme-corp.com").await;
        let page = |site: &str, mode: &str, dest: &str| {
            Request::get("/clusters")
                .header(header::ACCEPT, "text/html")
                .header(header::COOKIE, &cookie)
                .header("sec-fetch-site", site)
                .header("sec-fetch-mode", mode)
                .header("sec-fetch-dest", dest)
                .body(Body::empty())
                .unwrap()
        };
        for (site, mode, dest, expected) in [
            ("same-site", "no-cors", "empty", StatusCode::FORBIDDEN),
            ("same-site", "navigate", "iframe", StatusCode::FORBIDDEN),
            ("cross-site", "no-cors", "image", StatusCode::FORBIDDEN),
            ("same-site", "navigate", "document", StatusCode::OK),
            ("cross-site", "navigate", "document", StatusCode::OK),
            ("same-origin", "navigate", "document", StatusCode::OK),
        ] {
            let (status, headers, body) = send(page(site, mode, dest)).await;
            assert_eq!(status, expected, "{site} {mode} {dest}");
            if status == StatusCode::FORBIDDEN {
                assert!(!body.contains("Alice"), "{body}");
                assert_eq!(headers[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
            } else {
                assert!(body.contains(">Alice<"), "{site} {mode} {dest}: {body}");
            }
        }
    });
}

#[test]
fn signed_out_home_is_the_server_rendered_sign_in_page() {
    run(async {
        let (status, headers, body) = send(get("/", None)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("Sign in to Fundament"), "{body}");
        assert!(body.contains("alice@acme-corp.com") && body.contains("bob@acme-corp.com"));
        // Hashed names (console.<hash>.js) when the site was built with them.
        assert!(
            body.contains("/pkg/console.") && body.contains(".js") && body.contains(r#"rel="stylesheet""#),
            "no hydration script or CSS"
        );
        assert_eq!(headers[header::CACHE_CONTROL], "private, no-store", "no cache keeps a page");
        assert!(body.contains(r#"data-theme="system""#));
        let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("'nonce-"), "{csp}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let permissions = headers["permissions-policy"].to_str().unwrap();
        assert!(permissions.contains("camera=()") && permissions.contains("geolocation=()"), "{permissions}");
        assert_eq!(headers["cross-origin-opener-policy"], "same-origin");
        assert!(headers.get(header::STRICT_TRANSPORT_SECURITY).is_none(), "only over https");
    });
}

#[test]
fn signing_in_renders_the_shell_for_that_user() {
    run(async {
        let body = page_as("alice@acme-corp.com", "/clusters", StatusCode::OK).await;
        assert!(body.contains(r#"aria-label="Sidebar""#), "{body}");
        assert!(body.contains("prod-eu") && !body.contains("restricted"), "{body}");
        assert!(body.contains("User menu: </span>") && body.contains(">Alice<"), "{body}");
        // No kube-api-proxy runs beside this test: the cluster is a clear state, not a spinner.
        assert!(body.contains(">Unreachable<") && body.contains("kube-api-proxy did not answer"), "{body}");
    });
}

#[test]
fn unknown_users_cannot_sign_in_and_are_told_why() {
    run(async {
        let (status, headers) =
            sign_in_without_session("mallory@acme-corp.com", "http://localhost:3000").await;
        assert_eq!(status, StatusCode::FOUND);
        let location = headers[header::LOCATION].to_str().unwrap().to_owned();
        assert_eq!(location, "/sign-in?error=unknown-user&next=/clusters");
        let (status, _, body) = send(get(&location, None)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("That user does not exist in this development stack."), "{body}");
    });
}

#[test]
fn a_forged_or_foreign_session_is_ignored() {
    run(async {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let other_key = Signer::generate().sign_user("alice", "alice@acme-corp.com", "Alice", now, 3600);
        for cookie in [
            format!("__Host-fundament_auth={other_key}"),
            "__Host-fundament_auth=alice@acme-corp.com".to_owned(),
        ] {
            let (status, _, body) = send(get("/", Some(&cookie))).await;
            assert_eq!(status, StatusCode::OK);
            assert!(body.contains("Sign in to Fundament"), "accepted {cookie}");
        }
    });
}

#[test]
fn sign_in_from_another_origin_is_refused() {
    run(async {
        let (status, _) = sign_in_without_session("alice@acme-corp.com", "http://localhost:8082").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    });
}

/// The generated form posts to its own page without JavaScript: such a post reaches the form's
/// handler (not a 405 of the page's `GET` route), which takes it only from a console page.
#[test]
fn a_generated_form_post_is_taken_from_a_console_page_only() {
    run(async {
        let post = |origin: Option<&str>, content_type: &str| {
            let mut builder =
                Request::post("/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io/create")
                    .header(header::CONTENT_TYPE, content_type);
            if let Some(origin) = origin {
                builder = builder.header(header::ORIGIN, origin);
            }
            builder.body(Body::from("metadata.name=web&metadata.namespace=default")).unwrap()
        };
        let form = "application/x-www-form-urlencoded";
        // No Origin and no fetch metadata: the layer for every write lets it pass, the form's
        // handler does not.
        let (status, _, body) = send(post(None, form)).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::FORBIDDEN, "cross-origin requests may not change anything here\n")
        );
        assert_eq!(send(post(Some("http://localhost:8082"), form)).await.0, StatusCode::FORBIDDEN);
        // From the console's origin it reaches the handler, which takes a form only.
        let (status, _, body) = send(post(Some("http://localhost:3000"), "application/json")).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
        // An object's page takes a post too.
        let edit = Request::post("/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io/web?ns=default&edit=1")
            .header(header::CONTENT_TYPE, "text/plain")
            .header(header::ORIGIN, "http://localhost:3000")
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(edit).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    });
}

#[test]
fn the_theme_cookie_sets_data_theme_before_any_script() {
    run(async {
        let (_, _, body) = send(get("/", Some("__Host-fundament_theme=dark"))).await;
        assert!(body.contains(r#"data-theme="dark""#));
        let (_, _, body) = send(get("/", Some("__Host-fundament_theme=%22%3E%3Cscript%3E"))).await;
        assert!(body.contains(r#"data-theme="system""#));
        // The unprefixed name, which a sibling host may set for the parent domain, chooses nothing.
        let (_, _, body) = send(get("/", Some("fundament_theme=dark"))).await;
        assert!(body.contains(r#"data-theme="system""#));
    });
}

#[test]
fn unknown_paths_are_404_pages() {
    run(async {
        let (status, _, body) = send(get("/no/such/page", None)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.contains("Not found"));
    });
}

#[test]
fn concurrent_renders_all_complete() {
    run(async {
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

/// Every page preloads the chunk of the lazy route it rendered and no other, and names no
/// nonce but its own, while many pages of two users render at once. (Leptos adds the preload
/// links after an `.await`, through the current reactive owner: without `own_owner`
/// (app/src/request_owner.rs) a page resumed on another worker wrote them into another page or
/// lost them, and could name that page's nonce.)
#[test]
fn each_page_preloads_its_own_routes_chunk_among_concurrent_renders() {
    run(async {
        let cookies =
            [session_cookie("bob@acme-corp.com").await, session_cookie("alice@acme-corp.com").await];
        let pages = [
            ("/", None),
            ("/projects/webshop", Some("split___project_route_view_")),
            ("/clusters", Some("split___clusters_route_view_")),
            ("/plugins", Some("split___plugins_route_view_")),
        ];
        let renders = (0..400).map(|i| {
            let cookie = cookies[i % 2].clone();
            let (path, chunk) = pages[(i / 2) % pages.len()];
            tokio::spawn(async move { (path, chunk, send(get(path, Some(&cookie))).await) })
        });
        for (path, chunk, (status, headers, body)) in futures_join_all(renders).await {
            assert_eq!(status, StatusCode::OK, "{path}");
            let preloaded: Vec<&str> = body
                .match_indices("/pkg/split___")
                .map(|(at, _)| &body[at + "/pkg/".len()..][..body[at..].find('"').unwrap() - "/pkg/".len()])
                .collect();
            match chunk {
                Some(chunk) => assert!(
                    preloaded.len() == 1 && preloaded[0].starts_with(chunk),
                    "{path} preloads {preloaded:?}, not just its {chunk}"
                ),
                None => assert!(preloaded.is_empty(), "{path} preloads {preloaded:?}"),
            }
            let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
            let nonce = csp.split("'nonce-").nth(1).and_then(|rest| rest.split('\'').next()).unwrap();
            for (at, _) in body.match_indices("nonce=\"").chain(body.match_indices("crossorigin=\"")) {
                let value = body[at..].split('"').nth(1).unwrap();
                assert!(
                    value == nonce || value.is_empty(),
                    "{path} names the nonce {value}, its own is {nonce}"
                );
            }
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
    run(async {
        let body = page_as("alice@acme-corp.com", "/projects/nope", StatusCode::NOT_FOUND).await;
        assert!(body.contains("Project nope does not exist, or you cannot see it."), "{body}");
        assert!(body.contains(r#"aria-label="Sidebar""#), "the shell stays around the 404");
    });
}

#[test]
fn readyz_answers_ok_once_authns_revocations_arrived_and_livez_always() {
    run(async {
        let (status, _, body) = send(get("/livez", None)).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));
        // The revocation stream's first snapshot arrives within moments of start-up.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let (status, body) = loop {
            let (status, _, body) = send(get("/readyz", None)).await;
            if status == StatusCode::OK || std::time::Instant::now() > deadline {
                break (status, body);
            }
            assert_eq!(
                (status, body.as_str()),
                (StatusCode::SERVICE_UNAVAILABLE, "the revoked sessions not received from authn yet")
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));
    });
}
