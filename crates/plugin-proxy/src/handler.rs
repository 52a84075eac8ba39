//! The two routes: plugin pages, and the SDK.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use fundament_kube_api_proxy::upstream::UpstreamError;
use fundament_kube_core::Query;
use fundament_plugin_origin::{PluginHost, console_file_type};

use crate::asset_path::{self, AssetPath};
use crate::frame_cookie::{self, FrameSession};
use crate::{MAX_ASSET, PluginProxy, TICKET_PARAM};

fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

pub(crate) fn not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "not found")
}

/// A frame ticket that cannot be checked now (authn's keys cannot be fetched): 503, try again.
fn keys_unavailable() -> Response {
    let mut response = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "this page cannot be opened now: the sign-in service's keys cannot be fetched; try again",
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
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
    let value = frame_cookie::from_headers(headers, &path.cluster_id)?;
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
        if matches!(&e, fundament_authn_client::CredentialError::Token(t) if t.is_passing()) {
            // Not a bad ticket: its key cannot be looked up while authn's keys cannot be
            // fetched. A 404 would tell an operator the page is missing; the ticket is unused.
            tracing::warn!(reason = %e, "plugin-proxy: frame ticket not checked");
            return keys_unavailable();
        }
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
    let cookie = frame_cookie::set_cookie(
        &path.cluster_id,
        &proxy.frame_key.seal(&session),
        (session.exp - now).max(0),
    );
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
    let stored = match up.installation_shared(&path.installation).await {
        Ok(Some(i)) => i,
        Ok(None) => return Err(not_found()),
        Err(e) => {
            tracing::warn!(error = %e, "plugin-proxy: installation lookup failed");
            return Err(plain(StatusCode::BAD_GATEWAY, "plugin unavailable"));
        }
    };
    // An object that is not a PluginInstallation pins no version, so none of its URLs is served.
    let Ok(installation) = stored.installation() else {
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

/// Why a file could not be had from its runtime. The frame is told the installation and this
/// kind, nothing more: the detail (the cluster's or the connection's words) is logged once,
/// where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum RuntimeFailure {
    /// No connection, or the service proxy could not reach the runtime (no endpoints, refused).
    #[error("cannot be reached")]
    Unreachable,
    /// No answer head within our wait ([`PluginProxy::runtime_timeout`]).
    #[error("did not answer within {}", Wait(.0))]
    Timeout(std::time::Duration),
    /// A gateway on the way gave up waiting (the service proxy's own `504`).
    #[error("did not answer in time")]
    TimedOutOnTheWay,
    /// An error status other than 404.
    #[error("answered an error (HTTP {0})")]
    Error(u16),
    /// 200, declared as something other than what the file's name says it is.
    #[error("answered something that is not {0}")]
    NotWhatWasAsked(&'static str),
    /// An answer too large to pass on.
    #[error("answered more than plugin-proxy passes on")]
    TooLarge,
    /// As many of its page answers in flight as one installation may have.
    #[error("has too many pages on their way; try again shortly")]
    Busy,
}

/// A wait as people read it: `10 s`, or `1500 ms` when it is not whole seconds.
struct Wait<'a>(&'a std::time::Duration);

impl std::fmt::Display for Wait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.subsec_millis() == 0 {
            write!(f, "{} s", self.0.as_secs())
        } else {
            write!(f, "{} ms", self.0.as_millis())
        }
    }
}

impl RuntimeFailure {
    fn status(self) -> StatusCode {
        match self {
            RuntimeFailure::Unreachable | RuntimeFailure::Busy => StatusCode::SERVICE_UNAVAILABLE,
            RuntimeFailure::Timeout(_) | RuntimeFailure::TimedOutOnTheWay => StatusCode::GATEWAY_TIMEOUT,
            RuntimeFailure::Error(_) | RuntimeFailure::NotWhatWasAsked(_) | RuntimeFailure::TooLarge => {
                StatusCode::BAD_GATEWAY
            }
        }
    }

    /// What the frame shows. It stands where the page would have: the plugin CSP (only the
    /// console may frame it) and `nosniff` as on every page, but never cached, so the page
    /// loads once the runtime is back.
    fn answer(self, proxy: &PluginProxy, installation: &str) -> Response {
        let text = format!("the runtime of plugin installation {installation} {self}\n");
        let mut response = plain_text(self.status(), text);
        let h = response.headers_mut();
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Ok(v) = HeaderValue::from_str(&proxy.origins.csp()) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        response
    }
}

fn plain_text(status: StatusCode, text: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// What a file must be declared as, by its name: a page, a script or a stylesheet that comes
/// as anything else (a runtime answering garbage, an error page with a 200) is refused rather
/// than passed on under the name's type, where it would be cached for a year as that version's
/// file. `None`: any type the runtime declares is passed on.
fn declared_as(file: &str) -> Option<(&'static str, &'static [&'static str])> {
    let lower = file.to_ascii_lowercase();
    match lower.rsplit('.').next().unwrap_or_default() {
        "html" | "htm" => Some(("a page", &["text/html"])),
        "js" | "mjs" => {
            Some(("a script", &["text/javascript", "application/javascript", "application/x-javascript"]))
        }
        "css" => Some(("a stylesheet", &["text/css"])),
        _ => None,
    }
}

/// The content type a file is served with: the runtime's if it declared one (a page, script or
/// stylesheet only as what its name says), else the one its name implies.
fn served_type(file: &str, declared: Option<&str>) -> Result<String, RuntimeFailure> {
    let declared = declared.map(str::trim).filter(|v| !v.is_empty());
    let Some(declared) = declared else { return Ok(console_file_type(file)) };
    let essence = declared.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match declared_as(file) {
        Some((what, types)) if !types.contains(&essence.as_str()) => {
            Err(RuntimeFailure::NotWhatWasAsked(what))
        }
        Some(_) => Ok(declared.to_string()),
        // A runtime that only knows bytes says nothing about what the file is.
        None if essence == "application/octet-stream" => Ok(console_file_type(file)),
        None => Ok(declared.to_string()),
    }
}

/// What an upstream error means for the frame (logged here, once).
fn upstream_failure(installation: &str, error: &UpstreamError) -> RuntimeFailure {
    let failure = match error {
        UpstreamError::Timeout { .. } => RuntimeFailure::TimedOutOnTheWay,
        UpstreamError::Body(_) | UpstreamError::TooLarge { .. } => RuntimeFailure::TooLarge,
        _ => RuntimeFailure::Unreachable,
    };
    tracing::warn!(installation, %error, %failure, "plugin-proxy: a plugin page could not be fetched from its runtime");
    failure
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
    let failed = |failure: RuntimeFailure| failure.answer(proxy, name);
    let slot = proxy.pages.take(name).ok_or_else(|| {
        tracing::warn!(installation = %name, "plugin-proxy: too many page answers of one installation in flight");
        failed(RuntimeFailure::Busy)
    })?;
    let wait = proxy.runtime_timeout;
    let fetched = tokio::time::timeout(wait, up.get_stream(&upstream, MAX_ASSET)).await.map_err(|_| {
        tracing::warn!(installation = %name, wait_ms = wait.as_millis(), "plugin-proxy: the plugin's runtime did not answer in time");
        failed(RuntimeFailure::Timeout(wait))
    })?;
    let (status, upstream_headers, body) = fetched.map_err(|e| failed(upstream_failure(name, &e)))?;
    let failure = match status {
        StatusCode::OK => None,
        StatusCode::NOT_FOUND => return Err(not_found()),
        // The service proxy's words for a runtime it cannot reach (no endpoints, refused,
        // cut), or that kept it waiting.
        StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE => Some(RuntimeFailure::Unreachable),
        StatusCode::GATEWAY_TIMEOUT => Some(RuntimeFailure::TimedOutOnTheWay),
        other => Some(RuntimeFailure::Error(other.as_u16())),
    };
    if let Some(failure) = failure {
        tracing::warn!(installation = %name, status = status.as_u16(), %failure, "plugin-proxy: no page from the plugin's runtime");
        return Err(failed(failure));
    }
    let last = path.file.last().map(String::as_str).unwrap_or_default();
    // A type that is not even text says as little as "bytes".
    let declared =
        upstream_headers.get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("application/octet-stream"));
    let content_type = served_type(last, declared).map_err(|failure| {
        tracing::warn!(installation = %name, file = last, declared, %failure, "plugin-proxy: the plugin's runtime answered something else");
        failed(failure)
    })?;
    let body = fundament_body_limits::within(body, proxy.pages.answer_time());
    Ok((content_type, fundament_body_limits::holding(body, slot), development))
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
                (header::CONTENT_TYPE, console_file_type(&file)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_scripts_and_stylesheets_pass_only_as_what_their_names_say() {
        let ok = |file: &str, declared: Option<&str>| served_type(file, declared);
        assert_eq!(ok("a.html", Some("text/html; charset=utf-8")).as_deref(), Ok("text/html; charset=utf-8"));
        assert_eq!(ok("A.HTM", Some("Text/HTML")).as_deref(), Ok("Text/HTML"));
        assert_eq!(ok("a.mjs", Some("application/javascript")).as_deref(), Ok("application/javascript"));
        assert_eq!(ok("a.css", Some("text/css")).as_deref(), Ok("text/css"));
        // Nothing declared: the name's type, as before.
        assert_eq!(ok("a.html", None).as_deref(), Ok("text/html; charset=utf-8"));
        assert_eq!(ok("a.js", Some(" ")).as_deref(), Ok("text/javascript; charset=utf-8"));
        for (file, declared, what) in [
            ("a.html", "application/octet-stream", "a page"),
            ("a.html", "text/plain", "a page"),
            ("a.html", "application/xhtml+xml", "a page"),
            ("a.js", "application/octet-stream", "a script"),
            ("a.js", "text/html", "a script"),
            ("a.css", "text/plain", "a stylesheet"),
        ] {
            assert_eq!(
                ok(file, Some(declared)),
                Err(RuntimeFailure::NotWhatWasAsked(what)),
                "{file} as {declared}"
            );
        }
        // Other files: what the runtime declares, its name's type for bare bytes.
        assert_eq!(ok("logo.png", Some("application/octet-stream")).as_deref(), Ok("image/png"));
        assert_eq!(ok("data.json", Some("application/json")).as_deref(), Ok("application/json"));
        assert_eq!(ok("font.woff2", Some("font/woff2")).as_deref(), Ok("font/woff2"));
    }

    #[test]
    fn failures_say_the_kind_and_the_wait() {
        use std::time::Duration;
        assert_eq!(
            RuntimeFailure::Timeout(Duration::from_secs(10)).to_string(),
            "did not answer within 10 s"
        );
        assert_eq!(
            RuntimeFailure::Timeout(Duration::from_millis(1500)).to_string(),
            "did not answer within 1500 ms"
        );
        assert_eq!(RuntimeFailure::Timeout(Duration::ZERO).status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(RuntimeFailure::TimedOutOnTheWay.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(RuntimeFailure::Unreachable.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(RuntimeFailure::Error(500).status(), StatusCode::BAD_GATEWAY);
        assert_eq!(RuntimeFailure::NotWhatWasAsked("a page").status(), StatusCode::BAD_GATEWAY);
        assert_eq!(RuntimeFailure::TooLarge.status(), StatusCode::BAD_GATEWAY);
    }
}
