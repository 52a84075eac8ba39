//! The service proxy reaches what runs behind a Service over real HTTP, and
//! never passes the caller's credentials on.

mod common;

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
