//! The two routes: plugin pages, and the SDK.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use crate::asset_path::{self, AssetPath};
use crate::{MAX_ASSET, PluginProxy};

fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

fn not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "not found")
}

fn content_type(file: &str) -> String {
    let lower = file.to_ascii_lowercase();
    match lower.rsplit('.').next().unwrap_or_default() {
        "html" | "htm" => "text/html; charset=utf-8".into(),
        "js" | "mjs" => "text/javascript; charset=utf-8".into(),
        "css" => "text/css; charset=utf-8".into(),
        "json" => "application/json".into(),
        "ts" => "text/plain; charset=utf-8".into(),
        _ => mime_guess::from_path(&lower).first_or_octet_stream().essence_str().to_string(),
    }
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    fundament_session::session_token(headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()))
        .map(str::to_string)
}

fn user_token(headers: &HeaderMap) -> Option<String> {
    if let Some(v) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
        && let Some((scheme, token)) = v.split_once(' ')
        && scheme.eq_ignore_ascii_case("bearer")
    {
        return Some(token.trim().to_string());
    }
    cookie(headers)
}

/// `GET /clusters/<cluster>/plugins/<installation>/<version>/console/<file>`.
pub async fn asset(State(proxy): State<Arc<PluginProxy>>, req: Request) -> Response {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "GET, HEAD")], "method not allowed")
            .into_response();
    }
    let Some(path) = asset_path::parse(req.uri().path()) else { return not_found() };
    let head = req.method() == Method::HEAD;
    match serve(&proxy, req.headers(), &path).await {
        Ok((content_type, body, development)) => {
            page(&proxy, content_type, if head { bytes::Bytes::new() } else { body }, development)
        }
        Err(response) => response,
    }
}

async fn serve(
    proxy: &PluginProxy,
    headers: &HeaderMap,
    path: &AssetPath,
) -> Result<(String, bytes::Bytes, bool), Response> {
    // Unauthenticated, not allowed to view, no such installation or version: all the same 404.
    let token = user_token(headers).ok_or_else(not_found)?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let user = proxy.keys.verify_user(&token, now).await.map_err(|_| not_found())?;
    match proxy.fga.can_view(&user.sub, &path.cluster_id).await {
        Ok(true) => {}
        Ok(false) => return Err(not_found()),
        Err(e) => {
            tracing::error!(error = %e, "plugin-proxy: can_view check failed");
            return Err(plain(StatusCode::INTERNAL_SERVER_ERROR, "internal server error"));
        }
    }
    let up = proxy.clusters.get(&path.cluster_id).ok_or_else(not_found)?;
    let installation = match up.installation(&path.installation).await {
        Ok(Some(i)) => i,
        Ok(None) => return Err(not_found()),
        Err(e) => {
            tracing::warn!(error = %e, "plugin-proxy: installation lookup failed");
            return Err(plain(StatusCode::BAD_GATEWAY, "plugin unavailable"));
        }
    };
    // A versioned URL is content-stable only if the version is the pinned one.
    if installation["spec"]["definitionRef"]["pluginVersion"].as_str() != Some(path.version.as_str()) {
        return Err(not_found());
    }
    let name = &path.installation;
    let file: Vec<String> = path.file.iter().map(|s| asset_path::encode(s)).collect();
    let upstream = format!(
        "/api/v1/namespaces/plugin-{name}/services/http:plugin-{name}:8080/proxy/console/{}",
        file.join("/")
    );
    let (status, upstream_headers, body) = up.get_raw(&upstream, MAX_ASSET).await.map_err(|e| {
        tracing::warn!(installation = %name, error = %e, "plugin-proxy: plugin unreachable");
        plain(StatusCode::BAD_GATEWAY, "plugin unavailable")
    })?;
    match status {
        StatusCode::OK => {}
        StatusCode::NOT_FOUND => return Err(not_found()),
        other => {
            tracing::warn!(installation = %name, status = other.as_u16(), "plugin-proxy: plugin answered an error");
            return Err(plain(StatusCode::BAD_GATEWAY, "plugin unavailable"));
        }
    }
    let last = path.file.last().map(String::as_str).unwrap_or_default();
    let content_type = upstream_headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && !v.starts_with("application/octet-stream"))
        .map(str::to_string)
        .unwrap_or_else(|| content_type(last));
    let development = installation["metadata"]["labels"]["fundament.io/development"].as_str() == Some("true");
    Ok((content_type, body, development))
}

fn page(proxy: &PluginProxy, content_type: String, body: bytes::Bytes, development: bool) -> Response {
    let mut response = Response::new(Body::from(body));
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    // A published version's pages never change; a development folder's change on every edit.
    let cache = if development { "no-cache" } else { "private, max-age=31536000, immutable" };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(&proxy.origins.csp()) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// `GET /plugins/sdk/v1/<file>`: the SDK files only, never a listing.
pub async fn sdk(State(proxy): State<Arc<PluginProxy>>, Path(file): Path<String>) -> Response {
    const FILES: &[&str] = &["plugin-sdk.js", "plugin-sdk.css", "plugin-sdk.d.ts"];
    let Some(dir) = &proxy.sdk_dir else { return not_found() };
    if !FILES.contains(&file.as_str()) {
        return not_found();
    }
    match tokio::fs::read(dir.join(&file)).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, content_type(&file)),
                // The v1 path keeps its name across compatible releases: revalidate after a while.
                (header::CACHE_CONTROL, "public, max-age=300".to_string()),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
                (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
            ],
            bytes,
        )
            .into_response(),
        Err(_) => not_found(),
    }
}
