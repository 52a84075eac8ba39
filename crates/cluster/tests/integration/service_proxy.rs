//! The service proxy reaches what runs behind a Service over real HTTP, and
//! never passes the caller's credentials on.

use crate::common;

use http::{Method, Request};

async fn get(client: &kube::Client, path: &str) -> (u16, String) {
    let req =
        Request::builder().method(Method::GET).uri(path).body(kube::client::Body::from(Vec::new())).unwrap();
    let res = client.send(req).await.unwrap();
    let code = res.status().as_u16();
    let body = res.into_body().collect_bytes().await.unwrap();
    (code, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_to_the_registered_backend_without_credentials() {
    let tc = common::start().await;
    let backend = axum::Router::new().route(
        "/console/{file}",
        axum::routing::get(
            |axum::extract::Path(file): axum::extract::Path<String>, headers: http::HeaderMap| async move {
                let auth = if headers.contains_key("authorization") { "leaked" } else { "none" };
                format!("file={file} auth={auth}")
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, backend).await.unwrap() });
    let ns = "plugin-acme-corp--demo";
    let client = tc.client().await;
    let path =
        format!("/api/v1/namespaces/{ns}/services/http:plugin-acme-corp--demo:8080/proxy/console/list.html");

    let (code, _) = get(&client, &format!("/api/v1/namespaces/{ns}/services/nope:8080/proxy/x")).await;
    assert_eq!(code, 404);
    let (code, body) = get(&client, &path).await;
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("no endpoints available for service"), "{body}");

    tc.running.backends.register(ns, "plugin-acme-corp--demo", 8080, addr);
    let (code, body) = get(&client, &path).await;
    assert_eq!((code, body.as_str()), (200, "file=list.html auth=none"));

    let (code, _) = get(&client, &format!("/api/v1/namespaces/{ns}/services/nope:8080/proxy/x")).await;
    assert_eq!(code, 404);
    let (code, body) = get(
        &client,
        &format!("/api/v1/namespaces/{ns}/services/plugin-acme-corp--demo:8080/proxy/console/../secret"),
    )
    .await;
    assert!((400..500).contains(&code), "{code} {body}");

    // Anonymous callers are refused before anything is forwarded.
    let anonymous =
        common::client_for(&tc.kubeconfig_with_token("x").replace("  user:\n    token: x\n", "  user: {}\n"))
            .await;
    let (code, _) = get(&anonymous, &path).await;
    assert_eq!(code, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_answers_up_to_the_cap_and_cuts_larger_ones() {
    let tc = common::start().await;
    let cap = fundament_cluster::proxy::MAX_RESPONSE;
    let backend = axum::Router::new()
        .route("/small", axum::routing::get(|| async { "x".repeat(1024) }))
        // Declares its size: refused before a byte is passed on.
        .route("/declared", axum::routing::get(move || async move { "x".repeat(cap + 1) }))
        // Streams without a length: cut off at the cap.
        .route(
            "/streamed",
            axum::routing::get(move || async move {
                let chunk = bytes::Bytes::from(vec![b'x'; 1024 * 1024]);
                let stream = futures::stream::iter(
                    (0..(cap / (1024 * 1024) + 2)).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
                );
                axum::body::Body::from_stream(stream)
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, backend).await.unwrap() });
    let ns = "plugin-acme-corp--demo";
    tc.running.backends.register(ns, "plugin-acme-corp--demo", 8080, addr);
    let client = tc.client().await;
    let base = format!("/api/v1/namespaces/{ns}/services/http:plugin-acme-corp--demo:8080/proxy");
    let (code, body) = get(&client, &format!("{base}/small")).await;
    assert_eq!((code, body.len()), (200, 1024));
    let (code, body) = get(&client, &format!("{base}/declared")).await;
    assert_eq!(code, 502, "{body}");
    assert!(body.contains("larger than the proxy passes"), "{body}");
    let req = Request::builder()
        .method(Method::GET)
        .uri(format!("{base}/streamed"))
        .body(kube::client::Body::from(Vec::new()))
        .unwrap();
    let res = client.send(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let read = res.into_body().collect_bytes().await;
    assert!(read.is_err() || read.unwrap().len() <= cap, "never more than the cap arrives whole");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_the_query_as_kube_apiserver_and_has_no_post_by_name() {
    let (_tc, client) = common::admin_client().await;
    let send = async |method: Method, path: &str| {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(kube::client::Body::from(
                br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}"#.to_vec(),
            ))
            .unwrap();
        let res = client.send(req).await.unwrap();
        (res.status().as_u16(), res.headers().get("content-type").cloned())
    };
    let get = async |path: &str| {
        let req = Request::get(path).body(kube::client::Body::from(Vec::new())).unwrap();
        client.send(req).await.unwrap().into_body().collect_bytes().await.unwrap()
    };
    // An encoded key is the key: a watch (a stream of events), not a list.
    let text = String::from_utf8(
        get("/api/v1/namespaces/default/configmaps?wat%63h=1&timeoutSeconds=1").await.to_vec(),
    )
    .unwrap();
    // No configmaps in default: a watch ends after its second with no events, a list would not.
    assert!(!text.contains("ConfigMapList"), "a watch stream, not a list: {text:.80}");
    assert!(text.is_empty() || text.starts_with("{\"type\":"), "{text:.80}");
    // Of repeated parameters the first counts: a list.
    let list: serde_json::Value =
        serde_json::from_slice(&get("/api/v1/namespaces/default/configmaps?watch=0&watch=1").await).unwrap();
    assert_eq!(list["kind"], "ConfigMapList");
    // A POST to a named path creates nothing under another name: 405.
    let (code, _) = send(Method::POST, "/api/v1/namespaces/default/configmaps/chosen").await;
    assert_eq!(code, 405);
    let (code, _) = send(Method::GET, "/api/v1/namespaces/default/configmaps/other").await;
    assert_eq!(code, 404, "nothing was created");
}
