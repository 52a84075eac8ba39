//! Request guards and response headers shared by the console's routes.

use std::time::Instant;

use axum::{
    body::Body,
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http::{HeaderValue, Method, StatusCode, header};

/// The console's own origin, e.g. `http://localhost:3000`.
#[derive(Debug, Clone)]
pub struct ConsoleOrigin(pub String);

/// Refuses state-changing requests sent from another origin (cross-site
/// request forgery): a form on another site must not sign a user in or out.
pub async fn same_origin_writes(
    State(origin): State<ConsoleOrigin>,
    request: Request,
    next: Next,
) -> Response {
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(request).await;
    }
    let headers = request.headers();
    // Only the console's own pages (`same-origin`) and what a user did themselves (`none`):
    // `same-site` is refused too, since plugin origins share the console's site in the
    // documented production layout (`console.example.io`, `*.plugins.example.io`).
    let cross_site = headers.get("sec-fetch-site").is_some_and(|v| v != "same-origin" && v != "none");
    let foreign_origin = headers.get(header::ORIGIN).is_some_and(|o| o.as_bytes() != origin.0.as_bytes());
    if cross_site || foreign_origin {
        tracing::warn!(origin = ?headers.get(header::ORIGIN), "refused a cross-origin write");
        return (StatusCode::FORBIDDEN, "cross-origin requests may not change anything here\n")
            .into_response();
    }
    next.run(request).await
}

/// Refuses reads of the console that another site's page makes without the user navigating
/// there (fetch metadata's resource isolation policy). In the documented production layout
/// (`console.example.io`, `*.plugins.example.io`) a plugin page is the console's *site*, so the
/// `SameSite=Strict` session cookie goes along with its requests: a `no-cors` fetch, an image
/// or a nested frame of a console page would have the console render it as the user (their
/// token's reads, their call turns), and nested `/sign-in/oidc/start`s would push the sign-ins
/// in progress out of the browser (it keeps the newest three). The plugin page's own CSP already stops those; this holds without it.
/// A top-level navigation passes (a link, the identity provider's redirect back), and so do the
/// console's static files (`/pkg/`, `/plugin-ui/`), which hold nothing of a user. Browsers that
/// send no fetch metadata pass as before.
pub async fn no_foreign_reads(request: Request, next: Next) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let is = |name: &str, value: &str| headers.get(name).is_some_and(|v| v == value);
    let foreign = headers.get("sec-fetch-site").is_some_and(|v| v != "same-origin" && v != "none");
    let top_level = is("sec-fetch-mode", "navigate") && is("sec-fetch-dest", "document");
    let path = request.uri().path();
    let static_file = path.starts_with("/pkg/") || path.starts_with("/plugin-ui/");
    if foreign && !top_level && !static_file {
        tracing::warn!(
            site = ?headers.get("sec-fetch-site"),
            mode = ?headers.get("sec-fetch-mode"),
            dest = ?headers.get("sec-fetch-dest"),
            path,
            "refused a read of the console by another site's page"
        );
        // A refusal, never a page: nothing in it may run or load.
        return (
            StatusCode::FORBIDDEN,
            [(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"))],
            "another site's page may not read the console\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// Adds `Server-Timing: app;dur=<ms>`: how long the server took until the
/// response head was ready (for server-rendered pages: the render). The
/// benchmark script reads it.
pub async fn server_timing(request: Request, next: Next) -> Response<Body> {
    let started = Instant::now();
    let mut response = next.run(request).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Ok(value) = HeaderValue::from_str(&format!("app;dur={ms:.3}")) {
        response.headers_mut().insert("server-timing", value);
    }
    response
}

/// Where a page asked for with a trailing slash (`/clusters/`, `/audit/?live=1`) is: the same
/// URL without it, for a permanent redirect. The router knows each page by one path only, and
/// would answer the other with a 404 that still shows the page. `None` for everything else:
/// `/`, other methods than GET and HEAD, and a path that would read as another host's URL once
/// trimmed (`//evil.example/`, `/\evil.example/`: browsers take both for a host).
pub fn without_trailing_slash(method: &Method, uri: &http::Uri) -> Option<String> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    let path = uri.path();
    let trimmed = path.trim_end_matches('/');
    if trimmed.len() == path.len() || !trimmed.as_bytes().get(1).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    if trimmed.contains('\\') {
        return None;
    }
    Some(match uri.query() {
        Some(query) => format!("{trimmed}?{query}"),
        None => trimmed.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use axum::{Router, middleware::from_fn_with_state, routing::post};
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn a_page_with_a_trailing_slash_is_sent_to_its_url() {
        let to = |method: Method, uri: &str| without_trailing_slash(&method, &uri.parse().unwrap());
        assert_eq!(to(Method::GET, "/clusters/").as_deref(), Some("/clusters"));
        assert_eq!(to(Method::HEAD, "/audit//?live=1&user=bob").as_deref(), Some("/audit?live=1&user=bob"));
        assert_eq!(
            to(
                Method::GET,
                "/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io/"
            )
            .as_deref(),
            Some("/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io")
        );
        for (method, uri) in [
            (Method::GET, "/"),
            (Method::GET, "//"),
            (Method::GET, "/clusters"),
            (Method::GET, "/clusters?x=/"),
            (Method::POST, "/clusters/"),
            (Method::GET, "//evil.example/"),
            (Method::GET, "///evil.example//"),
            (Method::GET, "/%5Cevil.example/"),
            (Method::GET, "/.well-known/"),
        ] {
            assert_eq!(to(method.clone(), uri), None, "{method} {uri}");
        }
    }

    fn app() -> Router {
        Router::new()
            .route("/api/sign-out", post(|| async { "ok" }))
            .layer(from_fn_with_state(ConsoleOrigin("http://localhost:3000".into()), same_origin_writes))
    }

    async fn status(origin: Option<&str>, fetch_site: Option<&str>) -> StatusCode {
        let mut request = http::Request::post("/api/sign-out");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(site) = fetch_site {
            request = request.header("sec-fetch-site", site);
        }
        app().oneshot(request.body(Body::empty()).unwrap()).await.unwrap().status()
    }

    async fn read(path: &str, site: Option<&str>, mode: &str, dest: &str) -> StatusCode {
        let app = Router::new()
            .route("/projects", axum::routing::get(|| async { "page" }))
            .route("/pkg/console.js", axum::routing::get(|| async { "file" }))
            .layer(axum::middleware::from_fn(no_foreign_reads));
        let mut request =
            http::Request::get(path).header("sec-fetch-mode", mode).header("sec-fetch-dest", dest);
        if let Some(site) = site {
            request = request.header("sec-fetch-site", site);
        }
        app.oneshot(request.body(Body::empty()).unwrap()).await.unwrap().status()
    }

    #[tokio::test]
    async fn another_sites_page_reads_nothing_but_a_navigation_and_static_files() {
        for site in ["same-site", "cross-site"] {
            assert_eq!(
                read("/projects", Some(site), "no-cors", "empty").await,
                StatusCode::FORBIDDEN,
                "{site}"
            );
            assert_eq!(
                read("/projects", Some(site), "navigate", "iframe").await,
                StatusCode::FORBIDDEN,
                "{site}"
            );
            assert_eq!(
                read("/projects", Some(site), "no-cors", "image").await,
                StatusCode::FORBIDDEN,
                "{site}"
            );
            assert_eq!(read("/projects", Some(site), "navigate", "document").await, StatusCode::OK, "{site}");
            assert_eq!(read("/pkg/console.js", Some(site), "cors", "script").await, StatusCode::OK, "{site}");
        }
        assert_eq!(read("/projects", Some("same-origin"), "cors", "empty").await, StatusCode::OK);
        assert_eq!(read("/projects", Some("none"), "navigate", "document").await, StatusCode::OK);
        assert_eq!(read("/projects", None, "", "").await, StatusCode::OK, "no fetch metadata: as before");
    }

    #[tokio::test]
    async fn writes_from_the_console_pass() {
        assert_eq!(status(Some("http://localhost:3000"), Some("same-origin")).await, StatusCode::OK);
        // Old clients and curl send no Origin.
        assert_eq!(status(None, None).await, StatusCode::OK);
    }

    #[tokio::test]
    async fn writes_from_elsewhere_are_refused() {
        assert_eq!(status(Some("http://localhost:8082"), None).await, StatusCode::FORBIDDEN);
        assert_eq!(status(Some("null"), None).await, StatusCode::FORBIDDEN);
        assert_eq!(status(None, Some("cross-site")).await, StatusCode::FORBIDDEN);
        // A plugin origin of the same site, without an Origin header.
        assert_eq!(status(None, Some("same-site")).await, StatusCode::FORBIDDEN);
        assert_eq!(status(None, Some("none")).await, StatusCode::OK);
    }
}
