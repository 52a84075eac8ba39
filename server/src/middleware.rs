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

#[cfg(test)]
mod tests {
    use axum::{Router, middleware::from_fn_with_state, routing::post};
    use tower::ServiceExt;

    use super::*;

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
