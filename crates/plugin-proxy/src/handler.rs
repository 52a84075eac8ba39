//! The two routes: plugin pages, and the SDK.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use fundament_kube_core::Query;
use fundament_plugin_origin::PluginHost;
use fundament_plugin_types::PluginInstallation;

use crate::asset_path::{self, AssetPath};
use crate::frame_cookie::{self, FrameSession};
use crate::{MAX_ASSET, PluginProxy, TICKET_PARAM};

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

/// `GET /clusters/<cluster>/plugins/<installation>/<version>/console/<file>`, on that
/// installation's origin only.
pub async fn asset(State(proxy): State<Arc<PluginProxy>>, req: Request) -> Response {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "GET, HEAD")], "method not allowed")
            .into_response();
    }
    // Pages exist on their installation's origin only: never on the plugins host, never on
    // another installation's origin, never on a host name that is not ours.
    let Some(PluginHost::Installation(host)) = proxy.host_of(&req) else { return not_found() };
    let Some(path) = asset_path::parse(req.uri().path()).filter(|p| p.installation == host) else {
        return not_found();
    };
    let query = Query::parse(req.uri().query().unwrap_or_default());
    if let Some(ticket) = query.get(TICKET_PARAM) {
        return exchange(&proxy, &path, ticket, &query).await.unwrap_or_else(|r| r);
    }
    let head = req.method() == Method::HEAD;
    let session = match frame_session(&proxy, req.headers(), &path) {
        Some(s) => s,
        None => return not_found(),
    };
    match serve(&proxy, &session, &path).await {
        Ok((content_type, body, development)) => {
            page(&proxy, content_type, if head { Body::empty() } else { body }, development)
        }
        Err(response) => response,
    }
}

/// The frame cookie of this installation's origin, for this cluster, of a live session.
fn frame_session(proxy: &PluginProxy, headers: &HeaderMap, path: &AssetPath) -> Option<FrameSession> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let value = frame_cookie::from_headers(headers)?;
    let session = proxy.frame_key.open(value, now)?;
    let fits = session.installation_name == path.installation
        && session.cluster_id == path.cluster_id
        && !proxy.credentials.revoked.is_revoked(&session.sid);
    fits.then_some(session)
}

/// A frame's first navigation: the ticket, once, for the frame cookie and the clean URL.
async fn exchange(
    proxy: &PluginProxy,
    path: &AssetPath,
    ticket: &str,
    query: &Query,
) -> Result<Response, Response> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = proxy.credentials.verify_frame_ticket(ticket, now).await.map_err(|e| {
        tracing::info!(reason = %e, "plugin-proxy: frame ticket refused");
        not_found()
    })?;
    let cluster = claims.cluster_id.to_ascii_lowercase();
    if claims.installation_name != path.installation || cluster != path.cluster_id {
        tracing::warn!(ticket_for = %claims.installation_name, used_on = %path.installation, "plugin-proxy: frame ticket used for another installation");
        return Err(not_found());
    }
    if !proxy.used_tickets.take(&claims.jti, claims.exp, now).await {
        tracing::warn!(user = %claims.sub, installation = %claims.installation_name, "plugin-proxy: frame ticket used again");
        return Err(not_found());
    }
    let session = FrameSession {
        sub: claims.sub,
        sid: claims.sid,
        cluster_id: cluster,
        installation_name: claims.installation_name,
        installation_id: claims.installation_id.to_ascii_lowercase(),
        exp: claims.session_exp,
    };
    entitled(proxy, &session, path).await?;
    // The clean URL: the same path and whatever else the query held, without the ticket.
    let rest: Vec<String> = query
        .pairs()
        .iter()
        .filter(|(k, _)| k != TICKET_PARAM)
        .map(|(k, v)| format!("{}={}", asset_path::encode(k), asset_path::encode(v)))
        .collect();
    let file: Vec<String> = path.file.iter().map(|s| asset_path::encode(s)).collect();
    let mut location = format!(
        "/clusters/{}/plugins/{}/{}/console/{}",
        path.cluster_id,
        path.installation,
        asset_path::encode(&path.version),
        file.join("/")
    );
    if !rest.is_empty() {
        location.push('?');
        location.push_str(&rest.join("&"));
    }
    let cookie = frame_cookie::set_cookie(&proxy.frame_key.seal(&session), (session.exp - now).max(0));
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let h = response.headers_mut();
    for (name, value) in [
        (header::LOCATION, location.as_str()),
        (header::SET_COOKIE, cookie.as_str()),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(name, v);
        }
    }
    Ok(response)
}

/// The user may still view the cluster, and the installation is the one the frame was
/// opened for and pinned to the path's version. Returns whether it is a development folder.
async fn entitled(proxy: &PluginProxy, session: &FrameSession, path: &AssetPath) -> Result<bool, Response> {
    if !proxy.can_view(&session.sub, &path.cluster_id).await? {
        return Err(not_found());
    }
    let up = proxy.clusters.get(&path.cluster_id).await.map_err(|_| not_found())?;
    let installation = match up.installation(&path.installation).await {
        Ok(Some(i)) => i,
        Ok(None) => return Err(not_found()),
        Err(e) => {
            tracing::warn!(error = %e, "plugin-proxy: installation lookup failed");
            return Err(plain(StatusCode::BAD_GATEWAY, "plugin unavailable"));
        }
    };
    // An object that is not a PluginInstallation pins no version, so none of its URLs is served.
    let Ok(installation) = PluginInstallation::from_value(&installation) else {
        return Err(not_found());
    };
    let same = installation.metadata.uid.eq_ignore_ascii_case(&session.installation_id);
    // A versioned URL is content-stable only if the version is the pinned one.
    let pinned = installation.definition_ref().plugin_version == path.version;
    if !same || !pinned {
        return Err(not_found());
    }
    Ok(installation.is_development())
}

async fn serve(
    proxy: &PluginProxy,
    session: &FrameSession,
    path: &AssetPath,
) -> Result<(String, Body, bool), Response> {
    let development = entitled(proxy, session, path).await?;
    let up = proxy.clusters.get(&path.cluster_id).await.map_err(|_| not_found())?;
    let name = &path.installation;
    let file: Vec<String> = path.file.iter().map(|s| asset_path::encode(s)).collect();
    let (up, upstream) =
        proxy.runtimes.route(up, name, &format!("console/{}", file.join("/"))).ok_or_else(not_found)?;
    let (status, upstream_headers, body) = up.get_stream(&upstream, MAX_ASSET).await.map_err(|e| {
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
    Ok((content_type, body, development))
}

fn page(proxy: &PluginProxy, content_type: String, body: Body, development: bool) -> Response {
    let mut response = Response::new(body);
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

/// `GET /plugins/sdk/v1/<file>`: the SDK files only, never a listing; on the plugins host and
/// on every installation's origin (pages load it from their own origin, `script-src 'self'`).
pub async fn sdk(State(proxy): State<Arc<PluginProxy>>, Path(file): Path<String>, req: Request) -> Response {
    const FILES: &[&str] = &["plugin-sdk.js", "plugin-sdk.css", "plugin-sdk.d.ts"];
    if proxy.host_of(&req).is_none() {
        return not_found();
    }
    let Some(dir) = &proxy.sdk_dir else { return not_found() };
    if !FILES.contains(&file.as_str()) {
        return not_found();
    }
    // The script is served minified (plugin-sdk/minify.mjs makes it from the readable source).
    let stored = if file == "plugin-sdk.js" { "plugin-sdk.min.js" } else { file.as_str() };
    match tokio::fs::read(dir.join(stored)).await {
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
