//! plugin-proxy over real HTTP, in front of the embedded cluster whose
//! service proxy reaches a plugin's pages on loopback.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::response::IntoResponse;
use fundament_kube_api_proxy::keys::Keys;
use fundament_kube_api_proxy::upstream::{Upstream, UpstreamConfig};
use fundament_plugin_proxy::{Origins, PluginProxy};
use fundament_tokens::{Signer, Verifier};
use http::{Method, Request, header};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

const PROD: &str = "019b4000-2000-7000-8000-000000000001";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Stack {
    url: String,
    signer: Signer,
    cluster: fundament_cluster::Running,
    _dir: tempfile::TempDir,
}

async fn start(register_backend: bool) -> Stack {
    let dir = tempfile::tempdir().unwrap();
    let cluster = fundament_cluster::start(
        fundament_cluster::ClusterConfig::seeded(dir.path().join("cluster"), &repo()).unwrap(),
    )
    .await
    .unwrap();
    if register_backend {
        // The cert-manager plugin's pages, as its runtime would serve them.
        let pages = axum::Router::new()
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
            .route("/livez", axum::routing::get(|| async { "ok" }))
            .route(
                "/console/{file}",
                axum::routing::get(|axum::extract::Path(file): axum::extract::Path<String>| async move {
                    match file.as_str() {
                        "certificates-list.html" => (
                            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                            "<!doctype html><p>list</p>",
                        )
                            .into_response(),
                        _ => (http::StatusCode::NOT_FOUND, "no such file").into_response(),
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, pages).await.unwrap() });
        let ns = "plugin-acme-corp--cert-manager";
        cluster.backends.register(ns, ns, 8080, addr);
    }
    std::fs::create_dir_all(dir.path().join("sdk")).unwrap();
    std::fs::write(dir.path().join("sdk/plugin-sdk.js"), "window.fundament = {};").unwrap();
    let signer = Signer::generate();
    let upstream = Upstream::new(&UpstreamConfig {
        url: cluster.url.clone(),
        ca_pem: cluster.ca_pem.clone(),
        admin_token: cluster.admin_token.clone(),
    })
    .unwrap();
    let proxy = PluginProxy {
        origins: Origins {
            console: "http://localhost:3000".into(),
            kube_api_proxy: "http://localhost:8081".into(),
            plugin_proxy: "http://localhost:8082".into(),
        },
        keys: Keys::fixed(Verifier::from_jwks(&signer.jwks()).unwrap()),
        fga: Arc::new(
            fundament_fga::TupleStore::from_yaml_file(&repo().join("fixtures/fga/tuples.yaml")).unwrap(),
        ),
        clusters: HashMap::from([(PROD.to_string(), Arc::new(upstream))]),
        sdk_dir: Some(dir.path().join("sdk")),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, fundament_plugin_proxy::router(Arc::new(proxy))).await.unwrap()
    });
    Stack { url, signer, cluster, _dir: dir }
}

impl Stack {
    fn cookie(&self, user: &str) -> String {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        format!(
            "fundament_auth={}",
            self.signer.sign_user(user, &format!("{user}@acme-corp.com"), user, now, 3600)
        )
    }

    async fn get(&self, method: Method, path: &str, cookie: Option<&str>) -> (u16, http::HeaderMap, String) {
        let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
        let mut req = Request::builder().method(method).uri(format!("{}{path}", self.url));
        if let Some(c) = cookie {
            req = req.header(header::COOKIE, c);
        }
        let res = client.request(req.body(Body::empty()).unwrap()).await.unwrap();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        (status, headers, String::from_utf8_lossy(&body).into_owned())
    }
}

fn page(version: &str, file: &str) -> String {
    format!("/clusters/{PROD}/plugins/acme-corp--cert-manager/{version}/console/{file}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_come_with_the_plugin_csp_and_immutable_caching() {
    let s = start(true).await;
    let alice = s.cookie("alice");
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
        "connect-src http://localhost:8081 http://localhost:8082",
        "form-action http://localhost:8081 http://localhost:8082",
        "frame-ancestors http://localhost:3000",
        "base-uri 'none'",
        "object-src 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(!csp.contains("unsafe-inline"));
    let (code, _, body) = s.get(Method::HEAD, &page("v1.17.2", "certificates-list.html"), Some(&alice)).await;
    assert_eq!((code, body.as_str()), (200, ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_else_is_a_refusal_that_reveals_nothing() {
    let s = start(true).await;
    let alice = s.cookie("alice");
    // version mismatch, missing file, no cookie, a user who may not view the cluster: 404 alike.
    assert_eq!(s.get(Method::GET, &page("v9.9.9", "certificates-list.html"), Some(&alice)).await.0, 404);
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "nope.html"), Some(&alice)).await.0, 404);
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), None).await.0, 404);
    let carol = s.cookie("carol");
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&carol)).await.0, 404);
    let bad = "fundament_auth=not-a-token";
    assert_eq!(s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(bad)).await.0, 404);
    // A plugin token is not a user's session.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let plugin = s.signer.sign_plugin(&Signer::plugin_claims(
        "alice",
        PROD,
        &uuid_of(&s),
        "acme-corp--cert-manager",
        "cert-manager",
        "v1.17.2",
        "",
        now,
        900,
    ));
    assert_eq!(
        s.get(
            Method::GET,
            &page("v1.17.2", "certificates-list.html"),
            Some(&format!("fundament_auth={plugin}"))
        )
        .await
        .0,
        404
    );
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

fn uuid_of(s: &Stack) -> String {
    let registry = s.cluster.cluster.registry();
    let rt = registry.get("plugins.fundament.io", "v1", "plugininstallations").unwrap();
    s.cluster.cluster.get(rt, "", "acme-corp--cert-manager").unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_plugin_is_502_and_the_sdk_is_served() {
    let s = start(false).await;
    let (code, _, body) =
        s.get(Method::GET, &page("v1.17.2", "certificates-list.html"), Some(&s.cookie("alice"))).await;
    assert_eq!((code, body.as_str()), (502, "plugin unavailable"));
    let (code, h, body) = s.get(Method::GET, "/plugins/sdk/v1/plugin-sdk.js", None).await;
    assert_eq!((code, body.as_str()), (200, "window.fundament = {};"));
    assert!(h[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/javascript"));
    assert_eq!(s.get(Method::GET, "/plugins/sdk/v1/", None).await.0, 404);
    assert_eq!(s.get(Method::GET, "/plugins/sdk/v1/secret.txt", None).await.0, 404);
    assert_eq!(s.get(Method::GET, "/plugins/sdk/v1/..%2fCargo.toml", None).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_route_needs_the_installations_own_token() {
    let s = start(true).await;
    let uid = uuid_of(&s);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let token = |user: &str, uid: &str| {
        s.signer.sign_plugin(&Signer::plugin_claims(
            user,
            PROD,
            uid,
            "acme-corp--cert-manager",
            "cert-manager",
            "v1.17.2",
            "",
            now,
            900,
        ))
    };
    let call = |path: String, auth: Option<String>| {
        let url = s.url.clone();
        async move {
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
            let mut req = Request::get(format!("{url}{path}")).header(header::COOKIE, "fundament_auth=x");
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
    let ping = format!("/installations/{uid}/runtime/api/ping");
    assert_eq!(call(ping.clone(), None).await.0, 401);
    assert_eq!(call(ping.clone(), Some("garbage".into())).await.0, 401);
    assert_eq!(call(ping.clone(), Some(token("alice", &uid))).await, (200, "mock backend".to_string()));
    let other = "00000000-0000-0000-0000-000000000099";
    assert_eq!(
        call(format!("/installations/{other}/runtime/api/ping"), Some(token("alice", &uid))).await.0,
        403
    );
    assert_eq!(call(format!("/installations/{uid}/runtime/livez"), Some(token("alice", &uid))).await.0, 404);
    assert_eq!(call(ping.clone(), Some(token("carol", &uid))).await.0, 403);
    // A token for an installation id that is not this installation's uid.
    assert_eq!(
        call(format!("/installations/{other}/runtime/api/ping"), Some(token("alice", other))).await.0,
        403
    );
}
