//! plugin-proxy over real HTTP, in front of the embedded cluster whose
//! service proxy reaches a plugin's pages on loopback.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::IntoResponse;
use fundament_authn_client::RevokedSessions;
use fundament_dev_faults::runtime::{RuntimeFault, RuntimeSwitch};
use fundament_kube_api_proxy_testing::{self as testing, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_plugin_proxy::{FrameKey, Origins, PluginProxy};
use fundament_tokens::Signer;
use http::{Method, Request, header};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

const PROD: &str = testing::CLUSTER_ID;

struct Stack {
    port: u16,
    signer: Signer,
    revoked: Arc<RevokedSessions>,
    cluster: SeededCluster,
}

/// The cert-manager plugin's pages, as its runtime would serve them.
fn pages() -> axum::Router {
    axum::Router::new()
        .route(
            "/api/ping",
            axum::routing::get(|headers: http::HeaderMap| async move {
                if headers.contains_key(header::AUTHORIZATION) || headers.contains_key(header::COOKIE) {
                    "credentials leaked"
                } else {
                    "mock backend"
                }
            }),
        )
        .route(
            "/api/hostile-headers",
            axum::routing::get(|| async {
                (
                    [
                        (header::CONTENT_TYPE, "application/json"),
                        (header::HeaderName::from_static("clear-site-data"), "\"cookies\", \"storage\""),
                        (header::SET_COOKIE, "__Host-fundament_auth=; Path=/; Max-Age=0"),
                        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                        (header::HeaderName::from_static("service-worker-allowed"), "/"),
                        (header::REFRESH, "0; url=https://evil.example"),
                        (header::CACHE_CONTROL, "public, max-age=9999"),
                    ],
                    "{}",
                )
            }),
        )
        .route(
            "/api/stream",
            axum::routing::get(|| async {
                use futures::StreamExt;
                // One chunk, then nothing, for as long as the caller listens.
                let chunks =
                    futures::stream::once(async { Ok::<_, std::io::Error>(bytes::Bytes::from("event\n")) })
                        .chain(futures::stream::pending());
                ([(header::CONTENT_TYPE, "text/event-stream")], Body::from_stream(chunks))
            }),
        )
        .route("/livez", axum::routing::get(|| async { "ok" }))
        .route(
            "/console/{file}",
            axum::routing::get(|axum::extract::Path(file): axum::extract::Path<String>| async move {
                match file.as_str() {
                    "certificates-list.html" => {
                        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], "<!doctype html><p>list</p>")
                            .into_response()
                    }
                    "list.js" => ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], "void 0;")
                        .into_response(),
                    // A chunk, then nothing, for as long as anyone waits.
                    "trickle.js" => {
                        use futures::StreamExt;
                        let chunks = futures::stream::once(async {
                            Ok::<_, std::io::Error>(bytes::Bytes::from("void 0;"))
                        })
                        .chain(futures::stream::pending());
                        ([(header::CONTENT_TYPE, "text/javascript")], Body::from_stream(chunks))
                            .into_response()
                    }
                    "broken.html" => (http::StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
                    _ => (http::StatusCode::NOT_FOUND, "no such file").into_response(),
                }
            }),
        )
}

/// What serves the cert-manager installation's pages behind its Service.
enum Runtime {
    /// Nothing: the Service has no endpoints.
    Missing,
    Plain,
    /// Behind a development fault switch, as `fundament dev` runs it.
    Switched(RuntimeSwitch),
}

async fn start(register_backend: bool) -> Stack {
    let runtime = if register_backend { Runtime::Plain } else { Runtime::Missing };
    start_with(runtime, fundament_plugin_proxy::RUNTIME_ANSWER_TIMEOUT, testing::fga()).await
}

/// [`start`], with `can_view` asked of `fga`.
async fn start_checked_by(register_backend: bool, fga: Arc<dyn fundament_fga::CanView>) -> Stack {
    let runtime = if register_backend { Runtime::Plain } else { Runtime::Missing };
    start_with(runtime, fundament_plugin_proxy::RUNTIME_ANSWER_TIMEOUT, fga).await
}

async fn start_with(
    runtime: Runtime,
    runtime_timeout: Duration,
    fga: Arc<dyn fundament_fga::CanView>,
) -> Stack {
    start_full(runtime, runtime_timeout, fga, Default::default()).await
}

/// [`start_with`], with page answers bounded by `page_limits`.
async fn start_full(
    runtime: Runtime,
    runtime_timeout: Duration,
    fga: Arc<dyn fundament_fga::CanView>,
    page_limits: fundament_plugin_proxy::in_flight::PageLimits,
) -> Stack {
    let cluster = SeededCluster::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let registered = !matches!(runtime, Runtime::Missing);
    match runtime {
        Runtime::Missing => drop(listener),
        Runtime::Plain => {
            tokio::spawn(async move { axum::serve(listener, pages()).await.unwrap() });
        }
        Runtime::Switched(switch) => {
            let (router, listener) = switch.wrap(pages(), listener);
            tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        }
    }
    if registered {
        let ns = "plugin-acme-corp--cert-manager";
        cluster.running.backends.register(ns, ns, 8080, addr);
    }
    let sdk = cluster.dir().join("sdk");
    std::fs::create_dir_all(&sdk).unwrap();
    // The readable source and the minified file plugin-sdk/minify.mjs makes of it: the second is served.
    std::fs::write(sdk.join("plugin-sdk.js"), "window.fundament = { readable: true };").unwrap();
    std::fs::write(sdk.join("plugin-sdk.min.js"), "window.fundament={};").unwrap();
    let signer = Signer::generate();
    let revoked = RevokedSessions::none();
    let proxy = PluginProxy {
        origins: Origins {
            console: "http://localhost:3000".into(),
            kube_api_proxy: "http://localhost:8081".into(),
            plugins: PluginOrigins::from_base("http://localhost:8082").unwrap(),
        },
        credentials: testing::credentials(&signer, &revoked),
        fga,
        fga_health: Default::default(),
        clusters: cluster.clusters(),
        sdk_dir: Some(sdk),
        frame_key: FrameKey::generate(),
        used_tickets: Default::default(),
        runtimes: Default::default(),
        runtime_timeout,
        streams: Default::default(),
        bodies: Default::default(),
        pages: page_limits,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        axum::serve(listener, fundament_plugin_proxy::router(Arc::new(proxy))).await.unwrap()
    });
    Stack { port, signer, revoked, cluster }
}

const CERTS: &str = "acme-corp--cert-manager";

impl Stack {
    fn uid(&self, name: &str) -> String {
        self.cluster.installation(name).metadata.uid
    }

    /// A PluginToken of `user` for the cert-manager installation, as if it had the uid `uid`.
    fn plugin_token(&self, user: &str, uid: &str, now: i64) -> String {
        let claims =
            Signer::plugin_claims(user, PROD, uid, CERTS, "cert-manager", "v1.17.2", "", "s", now, 900);
        self.signer.sign_plugin(&claims)
    }

    /// A frame ticket as authn mints it, for `installation` (by name) with this uid.
    fn ticket_for(&self, user: &str, sid: &str, installation: &str, uid: &str) -> String {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        self.signer.sign_frame_ticket(user, sid, now + 3600, PROD, uid, installation, now, 60)
    }

    fn ticket(&self, user: &str) -> String {
        self.ticket_for(user, "session-1", CERTS, &self.uid(CERTS))
    }

    /// A request to plugin-proxy on the origin of `host` (`acme-corp--cert-manager.localhost`).
    async fn get_on(
        &self,
        host: &str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (u16, http::HeaderMap, String) {
        let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
        let mut req = Request::builder()
            .method(method)
            .uri(format!("http://127.0.0.1:{}{path}", self.port))
            .header(header::HOST, format!("{host}:8082"));
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let res = client.request(req.body(Body::empty()).unwrap()).await.unwrap();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        (status, headers, String::from_utf8_lossy(&body).into_owned())
    }

    async fn get(&self, method: Method, path: &str, cookie: Option<&str>) -> (u16, http::HeaderMap, String) {
        let headers: Vec<(&str, &str)> = cookie.map(|c| vec![("cookie", c)]).unwrap_or_default();
        self.get_on(&format!("{CERTS}.localhost"), method, path, &headers).await
    }

    /// Exchanges a ticket for the frame cookie, as a frame's first navigation does.
    async fn frame_cookie(&self, user: &str) -> String {
        let (code, h, body) = self
            .get(Method::GET, &ticketed(&page("v1.17.2", "certificates-list.html"), &self.ticket(user)), None)
            .await;
        assert_eq!(code, 303, "{body}");
        let set = h[header::SET_COOKIE].to_str().unwrap();
        set.split(';').next().unwrap().to_string()
    }
}

fn page(version: &str, file: &str) -> String {
    format!("/clusters/{PROD}/plugins/{CERTS}/{version}/console/{file}")
}

fn ticketed(path: &str, ticket: &str) -> String {
    format!("{path}?fundament-ticket={ticket}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_opens_the_frame_once_and_becomes_a_cookie_of_that_origin_only() {
    let s = start(true).await;
    let path = page("v1.17.2", "certificates-list.html");
    let ticket = s.ticket("alice");
    let (code, h, _) = s.get(Method::GET, &format!("{}&theme=dark", ticketed(&path, &ticket)), None).await;
    assert_eq!(code, 303);
    assert_eq!(h[header::LOCATION], format!("{path}?theme=dark"), "the clean URL, the ticket gone");
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    let set = h[header::SET_COOKIE].to_str().unwrap();
    for attribute in ["Path=/", "Secure", "HttpOnly", "SameSite=None", "Partitioned"] {
        assert!(set.split("; ").any(|a| a == attribute), "{attribute} in {set}");
    }
    assert!(set.starts_with(&format!("__Host-fundament_frame-{PROD}=")) && !set.contains("Domain"), "{set}");
    // Single use: the same ticket again opens nothing.
    assert_eq!(s.get(Method::GET, &ticketed(&path, &ticket), None).await.0, 404);
    // The cookie loads the page on its own origin…
    let cookie = set.split(';').next().unwrap();
    let (code, _, body) = s.get(Method::GET, &path, Some(cookie)).await;
    assert_eq!((code, body.as_str()), (200, "<!doctype html><p>list</p>"));
    // …and nowhere else: not on another installation's origin, not on the plugins host.
    let demo = "/clusters/019b4000-2000-7000-8000-000000000001/plugins/acme-corp--demo/v0.1.0/console/x.html";
    assert_eq!(s.get_on("acme-corp--demo.localhost", Method::GET, demo, &[("cookie", cookie)]).await.0, 404);
    assert_eq!(s.get_on("localhost", Method::GET, &path, &[("cookie", cookie)]).await.0, 404);
    // A page of one installation is never served on another's origin, even with the right cookie.
    assert_eq!(s.get_on("acme-corp--demo.localhost", Method::GET, &path, &[("cookie", cookie)]).await.0, 404);
    // Two frame cookies are refused, not resolved to one.
    let two = format!("{cookie}; {cookie}");
    assert_eq!(s.get(Method::GET, &path, Some(&two)).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickets_for_another_installation_user_or_session_open_nothing() {
    let s = start(true).await;
    let path = page("v1.17.2", "certificates-list.html");
    let uid = s.uid(CERTS);
    // A ticket of another installation, on this one's origin.
    let demo = s.ticket_for("alice", "s", "acme-corp--demo", &s.uid("acme-corp--demo"));
    assert_eq!(s.get(Method::GET, &ticketed(&path, &demo), None).await.0, 404);
    // A ticket for this name but an installation that was replaced since (another uid).
    let replaced = s.ticket_for("alice", "s", CERTS, "00000000-0000-0000-0000-000000000099");
    assert_eq!(s.get(Method::GET, &ticketed(&path, &replaced), None).await.0, 404);
    // A user who may not view the cluster.
    assert_eq!(
        s.get(Method::GET, &ticketed(&path, &s.ticket_for("carol", "s", CERTS, &uid)), None).await.0,
        404
    );
    // A UserToken or a PluginToken is not a ticket.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let user = s.signer.sign_user("alice", "alice@acme-corp.com", "Alice", now, 3600);
    assert_eq!(s.get(Method::GET, &ticketed(&path, &user), None).await.0, 404);
    let plugin = s.plugin_token("alice", &uid, now);
    assert_eq!(s.get(Method::GET, &ticketed(&path, &plugin), None).await.0, 404);
    // A signed-out session: its tickets and its frames' cookies stop working.
    let cookie = s.frame_cookie("alice").await;
    assert_eq!(s.get(Method::GET, &path, Some(&cookie)).await.0, 200);
    s.revoked.record("session-1", now + 3600);
    assert_eq!(s.get(Method::GET, &path, Some(&cookie)).await.0, 404);
    assert_eq!(s.get(Method::GET, &ticketed(&path, &s.ticket("alice")), None).await.0, 404);
    // The console's session cookie is nothing here.
    let console = format!("__Host-fundament_auth={user}; fundament_auth={user}");
    assert_eq!(s.get(Method::GET, &path, Some(&console)).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_come_with_the_plugin_csp_and_immutable_caching() {
    let s = start(true).await;
    let alice = s.frame_cookie("alice").await;
    let (code, h, body) = s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body, "<!doctype html><p>list</p>");
    assert!(h[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    let cache = h[header::CACHE_CONTROL].to_str().unwrap();
    assert!(cache.contains("private") && cache.contains("immutable") && !cache.contains("public"), "{cache}");
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self' http://localhost:8081",
        "form-action 'self'",
        "frame-src 'self'",
        "child-src 'self'",
        "worker-src 'self'",
        "frame-ancestors http://localhost:3000",
        "base-uri 'none'",
        "object-src 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval") && !csp.contains('*'));
    assert!(h.get("service-worker-allowed").is_none());
    let (code, _, body) = s.get(Method::HEAD, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!((code, body.as_str()), (200, ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_else_is_a_refusal_that_reveals_nothing() {
    let s = start(true).await;
    let alice = s.frame_cookie("alice").await;
    // version mismatch, missing file, no cookie, a forged cookie: 404 alike.
    assert_eq!(s.get(Method::GET, &page("v9.9.9", "certificates-list.html"), Some(&alice)).await.0, 404);
    let (code, headers, _) = s.get(Method::GET, &page("v1.17.2", "nope.html"), Some(&alice)).await;
    assert_eq!(code, 404);
    // A refusal asks for an origin-keyed agent cluster too: the first document of an origin in
    // a tab decides its keying, and then its process (lib.rs `origin_keyed`).
    assert_eq!(headers["origin-agent-cluster"], "?1");
    let (code, headers, _) =
        s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!((code, &headers["origin-agent-cluster"]), (200, &http::HeaderValue::from_static("?1")));
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), None).await.0, 404);
    let forged = format!("__Host-fundament_frame-{PROD}=eyJzdWIiOiJhbGljZSJ9.AAAA");
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&forged)).await.0, 404);
    // The cookie of this installation's frame on another cluster (the same origin) sits beside
    // this cluster's and changes nothing; a second cookie of this cluster is refused.
    let other = "019b4000-2000-7000-8000-0000000000ff";
    let both = format!("{alice}; __Host-fundament_frame-{other}=another-clusters-frame");
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&both)).await.0, 200);
    let doubled = format!("{alice}; __Host-fundament_frame-{PROD}=planted");
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&doubled)).await.0, 404);
    // A host name that is not ours (DNS rebinding) and the bare plugins host serve no page.
    for host in ["evil.example", "localhost", "acme-corp--cert-manager.localhost.evil.example"] {
        let (code, _, _) = s
            .get_on(host, Method::GET, &page("v1.17.2", "certificates-list.html"), &[("cookie", &alice)])
            .await;
        assert_eq!(code, 404, "{host}");
    }
    // Traversal and junk.
    for path in [
        page("v1.17.2", "../../etc/passwd"),
        page("v1.17.2", "%2e%2e/secret"),
        page("v1.17.2", ""),
        "/clusters/not-a-uuid/plugins/acme-corp--cert-manager/v1.17.2/console/a.html".to_string(),
        "/plugins/acme-corp--cert-manager/v1.17.2/console/a.html".to_string(),
        format!("/clusters/{PROD}/plugins//v1.17.2/console/a.html"),
    ] {
        let (code, _, _) = s.get(Method::GET, &path, Some(&alice)).await;
        assert!((400..500).contains(&code), "{path}: {code}");
    }
    // Only GET and HEAD.
    let (code, h, _) = s.get(Method::POST, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!(code, 405);
    assert_eq!(h[header::ALLOW], "GET, HEAD");
    // No CSP or caching on refusals.
    let (_, h, _) = s.get(Method::GET, &page("v9.9.9", "certificates-list.html"), Some(&alice)).await;
    assert!(h.get(header::CONTENT_SECURITY_POLICY).is_none() && h.get(header::CACHE_CONTROL).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_plugin_is_503_naming_it_and_the_sdk_is_served_on_every_origin_of_ours() {
    let s = start(false).await;
    let alice = s.frame_cookie("alice").await;
    // The Service has no endpoints: the service proxy's 503, as a stopped pod's.
    let (code, h, body) = s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!(
        (code, body.as_str()),
        (503, "the runtime of plugin installation acme-corp--cert-manager cannot be reached\n")
    );
    assert_failure_headers(&h);
    for host in ["localhost", "acme-corp--cert-manager.localhost"] {
        let (code, h, body) = s.get_on(host, Method::GET, "/plugins/sdk/v1/plugin-sdk.js", &[]).await;
        assert_eq!((code, body.as_str()), (200, "window.fundament={};"), "{host}: the minified file");
        assert!(h[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/javascript"));
    }
    assert_eq!(s.get_on("evil.example", Method::GET, "/plugins/sdk/v1/plugin-sdk.js", &[]).await.0, 404);
    assert_eq!(s.get(Method::GET, "/plugins/sdk/v1/", None).await.0, 404);
    assert_eq!(
        s.get(Method::GET, "/plugins/sdk/v1/plugin-sdk.min.js", None).await.0,
        404,
        "one name per file"
    );
    assert_eq!(s.get(Method::GET, "/plugins/sdk/v1/secret.txt", None).await.0, 404);
    assert_eq!(s.get(Method::GET, "/plugins/sdk/v1/..%2fCargo.toml", None).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_route_needs_the_installations_own_token_on_its_own_origin() {
    let s = start(true).await;
    let uid = s.uid(CERTS);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let token = |user: &str, uid: &str| s.plugin_token(user, uid, now);
    let call = |host: &'static str, path: String, auth: Option<String>| {
        let port = s.port;
        async move {
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
            let mut req = Request::get(format!("http://127.0.0.1:{port}{path}"))
                .header(header::HOST, format!("{host}:8082"))
                .header(header::COOKIE, "__Host-fundament_auth=x");
            if let Some(a) = auth {
                req = req.header(header::AUTHORIZATION, format!("Bearer {a}"));
            }
            let res = client.request(req.body(Body::empty()).unwrap()).await.unwrap();
            let status = res.status().as_u16();
            (
                status,
                String::from_utf8_lossy(&res.into_body().collect().await.unwrap().to_bytes()).into_owned(),
            )
        }
    };
    let own = "acme-corp--cert-manager.localhost";
    let ping = format!("/installations/{uid}/runtime/api/ping");
    assert_eq!(call(own, ping.clone(), None).await.0, 401);
    assert_eq!(call(own, ping.clone(), Some("garbage".into())).await.0, 401);
    assert_eq!(call(own, ping.clone(), Some(token("alice", &uid))).await, (200, "mock backend".to_string()));
    // The right token from another installation's origin, or from the plugins host.
    assert_eq!(call("acme-corp--demo.localhost", ping.clone(), Some(token("alice", &uid))).await.0, 403);
    assert_eq!(call("localhost", ping.clone(), Some(token("alice", &uid))).await.0, 403);
    let other = "00000000-0000-0000-0000-000000000099";
    assert_eq!(
        call(own, format!("/installations/{other}/runtime/api/ping"), Some(token("alice", &uid))).await.0,
        403
    );
    assert_eq!(
        call(own, format!("/installations/{uid}/runtime/livez"), Some(token("alice", &uid))).await.0,
        404
    );
    assert_eq!(call(own, ping.clone(), Some(token("carol", &uid))).await.0, 403);
    // What the runtime answers reaches the page; how it would reach past the page does not.
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let res = client
        .request(
            Request::get(format!(
                "http://127.0.0.1:{}/installations/{uid}/runtime/api/hostile-headers",
                s.port
            ))
            .header(header::HOST, format!("{own}:8082"))
            .header(header::AUTHORIZATION, format!("Bearer {}", token("alice", &uid)))
            .body(Body::empty())
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let h = res.headers();
    assert_eq!(h[header::CONTENT_TYPE], "application/json");
    for gone in
        ["clear-site-data", "set-cookie", "access-control-allow-origin", "service-worker-allowed", "refresh"]
    {
        assert!(h.get(gone).is_none(), "{gone} passed: {h:?}");
    }
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    // A token for an installation id that is not this installation's uid.
    assert_eq!(
        call(own, format!("/installations/{other}/runtime/api/ping"), Some(token("alice", other))).await.0,
        403
    );
}

/// A failure stands where the page would have: the plugin CSP and nosniff, never cached.
fn assert_failure_headers(h: &http::HeaderMap) {
    assert_eq!(h[header::CONTENT_TYPE], "text/plain; charset=utf-8");
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.contains("frame-ancestors http://localhost:3000") && csp.contains("default-src 'self'"),
        "{csp}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_runtime_is_504_naming_the_installation_within_the_timeout_and_serves_again_when_back() {
    let switch = RuntimeSwitch::new(CERTS);
    let s = start_with(Runtime::Switched(switch.clone()), Duration::from_secs(1), testing::fga()).await;
    let alice = s.frame_cookie("alice").await;
    let path = page("v1.17.2", "certificates-list.html");
    switch.set(RuntimeFault::Hang);
    for method in [Method::GET, Method::HEAD] {
        let started = Instant::now();
        let (code, h, body) = s.get(method.clone(), &path, Some(&alice)).await;
        let took = started.elapsed();
        assert_eq!(code, 504, "{method}: {body}");
        if method == Method::GET {
            assert_eq!(
                body,
                "the runtime of plugin installation acme-corp--cert-manager did not answer within 1 s\n"
            );
        }
        assert!(
            took >= Duration::from_secs(1) && took < Duration::from_secs(4),
            "{method}: answered after {took:?}"
        );
        assert_failure_headers(&h);
    }
    switch.set(RuntimeFault::None);
    let (code, h, body) = s.get(Method::GET, &path, Some(&alice)).await;
    assert_eq!((code, body.as_str()), (200, "<!doctype html><p>list</p>"));
    assert!(h[header::CACHE_CONTROL].to_str().unwrap().contains("immutable"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_answering_garbage_or_an_error_or_nothing_is_502_or_503_never_passed_on() {
    let switch = RuntimeSwitch::new(CERTS);
    let s = start_with(Runtime::Switched(switch.clone()), Duration::from_secs(5), testing::fga()).await;
    let alice = s.frame_cookie("alice").await;
    let name = "the runtime of plugin installation acme-corp--cert-manager";

    switch.set(RuntimeFault::Garbage);
    for (file, what) in [("certificates-list.html", "a page"), ("list.js", "a script")] {
        let (code, h, body) = s.get(Method::GET, &page("v1.17.2", file), Some(&alice)).await;
        assert_eq!((code, body), (502, format!("{name} answered something that is not {what}\n")), "{file}");
        assert_failure_headers(&h);
    }

    switch.set(RuntimeFault::Down);
    let (code, h, body) = s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!((code, body), (503, format!("{name} cannot be reached\n")));
    assert_failure_headers(&h);

    switch.set(RuntimeFault::None);
    let (code, _, body) = s.get(Method::GET, &page("v1.17.2", "broken.html"), Some(&alice)).await;
    assert_eq!((code, body), (502, format!("{name} answered an error (HTTP 500)\n")));
    for file in ["certificates-list.html", "list.js"] {
        let (code, h, _) = s.get(Method::GET, &page("v1.17.2", file), Some(&alice)).await;
        assert_eq!(code, 200, "{file} once the runtime is back");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}

/// OpenFGA failing (the development switch in front of the seeded checker, with a short
/// timeout): a page and a runtime API call answer in plain text naming the authorization
/// service, `503` while it is down or failing and `504` when it does not answer in time, never
/// the cause; `/readyz?verbose` shows it failing without gating; once it works again the same
/// proxy serves and `/readyz?verbose` shows it ok.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_openfga_is_answered_naming_it_and_shown_by_readyz_without_gating() {
    use fundament_dev_faults::{Fault, FaultyCanView, Service, Switch};
    let switch = Switch::new(Service::OpenFga);
    let fga = FaultyCanView::new(testing::fga(), switch.clone())
        .with_timeout(std::time::Duration::from_millis(500));
    let s = start_checked_by(true, Arc::new(fga)).await;
    let alice = s.frame_cookie("alice").await;
    let path = page("v1.17.2", "certificates-list.html");
    let uid = s.uid(CERTS);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let bearer = format!("Bearer {}", s.plugin_token("alice", &uid, now));
    let ping = format!("/installations/{uid}/runtime/api/ping");
    let both = || async {
        let page = s.get(Method::GET, &path, Some(&alice)).await;
        let api =
            s.get_on(&format!("{CERTS}.localhost"), Method::GET, &ping, &[("authorization", &bearer)]).await;
        [(page.0, page.2), (api.0, api.2)]
    };
    let readyz = || async { s.get_on("localhost", Method::GET, "/readyz?verbose", &[]).await };
    for (code, body) in both().await {
        assert_eq!(code, 200, "{body}");
    }
    let (code, _, text) = readyz().await;
    assert!(code == 200 && text.contains("\n[+]openfga ok\n"), "{text}");
    // Probes reach it by the pod's address; an installation's pages never read it.
    assert_eq!(s.get_on("10.0.0.7:8082", Method::GET, "/readyz", &[]).await.2, "ok");
    for path in ["/readyz?verbose", "/readyz", "/livez"] {
        let (code, _, text) = s.get_on(&format!("{CERTS}.localhost"), Method::GET, path, &[]).await;
        assert_eq!((code, text.as_str()), (404, "not found"), "{path}");
    }

    for fault in [Fault::Down, Fault::Status { status: 500 }] {
        switch.set(fault);
        for (code, body) in both().await {
            assert_eq!((code, body.as_str()), (503, fundament_fga::UNAVAILABLE), "{fault:?}");
        }
    }
    let (code, _, text) = readyz().await;
    assert_eq!(code, 200, "OpenFGA does not gate: {text}");
    assert!(text.contains("\n[-]openfga failed: answered HTTP 500 since "), "{text}");
    assert!(text.contains("s (not gating)\n") && text.ends_with("readyz check passed\n"), "{text}");
    assert_eq!(s.get_on("localhost", Method::GET, "/readyz", &[]).await.2, "ok");

    switch.set(Fault::Slow { delay_ms: 30_000 });
    for (code, body) in both().await {
        assert_eq!((code, body.as_str()), (504, fundament_fga::UNANSWERED));
    }

    switch.set(Fault::None);
    for (code, body) in both().await {
        assert_eq!(code, 200, "{body}");
    }
    let (code, _, text) = readyz().await;
    assert!(code == 200 && text.contains("\n[+]openfga ok\n"), "{text}");
    // Probes reach it by the pod's address; an installation's pages never read it.
    assert_eq!(s.get_on("10.0.0.7:8082", Method::GET, "/readyz", &[]).await.2, "ok");
    for path in ["/readyz?verbose", "/readyz", "/livez"] {
        let (code, _, text) = s.get_on(&format!("{CERTS}.localhost"), Method::GET, path, &[]).await;
        assert_eq!((code, text.as_str()), (404, "not found"), "{path}");
    }
}

/// A runtime's answer may stream without end: each open one holds a slot of its user and its
/// PluginToken, as a watch at the gateway does, so a page (or whoever holds its token) cannot
/// hold more than the limit open. Closing one gives its slot back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_runtime_calls_are_capped_per_plugin_token_with_a_429() {
    use futures::StreamExt;
    let s = start(true).await;
    let uid = s.uid(CERTS);
    let token = s.plugin_token("alice", &uid, time::OffsetDateTime::now_utc().unix_timestamp());
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let open = |path: &'static str| {
        let req = Request::get(format!("http://127.0.0.1:{}/installations/{uid}/runtime/api/{path}", s.port))
            .header(header::HOST, "acme-corp--cert-manager.localhost:8082")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        client.request(req)
    };
    let mut streams = Vec::new();
    for _ in 0..fundament_kube_api_proxy::limits::WATCHES_PER_PLUGIN_TOKEN {
        let res = open("stream").await.unwrap();
        assert_eq!(res.status(), 200);
        let mut body = res.into_body().into_data_stream();
        assert_eq!(body.next().await.unwrap().unwrap(), "event\n");
        streams.push(body);
    }
    let refused = open("ping").await.unwrap();
    assert_eq!(refused.status(), 429);
    let text = String::from_utf8_lossy(&refused.into_body().collect().await.unwrap().to_bytes()).into_owned();
    assert!(text.contains("the limit per PluginToken"), "{text}");
    drop(streams.pop());
    // The slot comes back once the proxy has seen that stream close, which on a loaded machine
    // can take longer than any fixed pause: asked again while it answers 429, for at most 5 s
    // (a slot that never comes back still fails).
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut res = open("ping").await.unwrap();
    while res.status() == 429 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        res = open("ping").await.unwrap();
    }
    assert_eq!(res.status(), 200);
}

/// The runtime route reads a request body whole before it goes on: the bytes of bodies held at
/// once are bounded per user's plugin pages (kube-api-proxy's bound), and a body that would pass it is refused
/// with a 429 and `Retry-After` while the others wait; once they end, a body is taken again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_request_bodies_held_at_once_are_bounded_per_user() {
    let s = start(true).await;
    let uid = s.uid(CERTS);
    let token = s.plugin_token("alice", &uid, time::OffsetDateTime::now_utc().unix_timestamp());
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    // Just under kube-apiserver's largest body, so that one more than fit in the bound passes it.
    let piece = bytes::Bytes::from(vec![b' '; 3 * 1024 * 1024 - 4096]);
    let fit = fundament_kube_api_proxy::in_flight::BODY_BYTES_PER_USER_PLUGINS / piece.len();
    assert!(
        fit < fundament_kube_api_proxy::limits::WATCHES_PER_PLUGIN_TOKEN,
        "the streams' bound must not bind first"
    );
    let post = |first: bytes::Bytes| {
        let (sender, pieces) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(1);
        let body = Body::from_stream(futures::stream::unfold(pieces, |mut pieces| async move {
            pieces.recv().await.map(|piece| (piece, pieces))
        }));
        let req = Request::post(format!("http://127.0.0.1:{}/installations/{uid}/runtime/api/ping", s.port))
            .header(header::HOST, "acme-corp--cert-manager.localhost:8082")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(body)
            .unwrap();
        let answer = tokio::spawn(client.request(req));
        async move {
            sender.send(Ok(first)).await.unwrap();
            (sender, answer)
        }
    };
    let mut held = Vec::new();
    for _ in 0..=fit {
        held.push(post(piece.clone()).await);
    }
    // Those read past the bound are refused (one, or more when their chunks interleave); the
    // others wait for their end.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !held.iter().any(|(_, answer)| answer.is_finished()) {
        assert!(Instant::now() < deadline, "no body was refused");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (finished, open): (Vec<_>, Vec<_>) = held.into_iter().partition(|(_, answer)| answer.is_finished());
    for (_, answer) in finished {
        let refused = answer.await.unwrap().unwrap();
        assert_eq!(refused.status(), 429);
        assert_eq!(refused.headers().get(header::RETRY_AFTER).map(|v| v.as_bytes()), Some(&b"1"[..]));
        let text =
            String::from_utf8_lossy(&refused.into_body().collect().await.unwrap().to_bytes()).into_owned();
        assert!(
            text.starts_with("too many request bytes in flight:")
                && text.contains(
                    "their limit (25165824 bytes, all plugins together; the rest is the console's)"
                ),
            "{text}"
        );
    }
    assert!(!open.is_empty() && open.len() <= fit, "{} bodies still open", open.len());
    let held = open;
    // Their bodies end and they are answered (the runtime has no POST route): their bytes come back.
    for (sender, answer) in held {
        drop(sender);
        assert_ne!(answer.await.unwrap().unwrap().status(), 429);
    }
    let (sender, answer) = post(piece).await;
    drop(sender);
    assert_ne!(answer.await.unwrap().unwrap().status(), 429);
}

/// One installation's page answers in flight are bounded (its runtime trickling them out, or a
/// user opening them without end), and each ends within its total time: then the slots come
/// back. The answer past the bound is a 503 naming the installation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_answers_in_flight_are_bounded_per_installation_and_in_time() {
    use futures::StreamExt;
    let limits = fundament_plugin_proxy::in_flight::PageLimits::new(2, Duration::from_secs(1));
    let s =
        start_full(Runtime::Plain, fundament_plugin_proxy::RUNTIME_ANSWER_TIMEOUT, testing::fga(), limits)
            .await;
    let alice = s.frame_cookie("alice").await;
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let open = || {
        let req = Request::get(format!("http://127.0.0.1:{}{}", s.port, page("v1.17.2", "trickle.js")))
            .header(header::HOST, format!("{CERTS}.localhost:8082"))
            .header(header::COOKIE, &alice)
            .body(Body::empty())
            .unwrap();
        client.request(req)
    };
    let started = Instant::now();
    let mut trickling = Vec::new();
    for _ in 0..2 {
        let res = open().await.unwrap();
        assert_eq!(res.status(), 200);
        let mut body = res.into_body().into_data_stream();
        assert_eq!(body.next().await.unwrap().unwrap(), "void 0;");
        trickling.push(body);
    }
    let (code, _, body) = s.get(Method::GET, &page("v1.17.2", "list.js"), Some(&alice)).await;
    assert_eq!(
        (code, body.as_str()),
        (
            503,
            "the runtime of plugin installation acme-corp--cert-manager has too many pages on their way; try again shortly\n"
        )
    );
    // Each trickle is broken off at its total time, never passed on as a complete answer.
    for mut body in trickling {
        assert!(body.next().await.is_none_or(|chunk| chunk.is_err()));
    }
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (code, _, body) = s.get(Method::GET, &page("v1.17.2", "list.js"), Some(&alice)).await;
    assert_eq!((code, body.as_str()), (200, "void 0;"));
}
