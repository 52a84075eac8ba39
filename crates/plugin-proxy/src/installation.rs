//! `/installations/<installation-id>/runtime/api/<…>`: a plugin page calling
//! its own backend. Only with a PluginToken for exactly that installation, a
//! user who may still view its cluster, and only the runtime's `api/` paths —
//! never its health or metadata endpoints, never plugin-controller (the
//! upstream design reached both with cluster-admin rights). Only from the installation's own
//! origin: a token of one installation is refused on another's.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

use fundament_plugin_origin::PluginHost;

use crate::PluginProxy;

fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// (installation id, the path after `runtime/`), or `None`.
fn route(path: &str) -> Option<(String, Vec<String>)> {
    let rest = path.strip_prefix("/installations/")?;
    let mut parts = rest.split('/');
    let id = parts.next()?.to_string();
    if parts.next()? != "runtime" {
        return None;
    }
    let tail: Vec<String> = parts.map(String::from).collect();
    let ok = tail.first().map(String::as_str) == Some("api")
        && tail.len() >= 2
        && tail.iter().all(|s| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && !s.to_ascii_lowercase().contains("%2e")
                && !s.to_ascii_lowercase().contains("%2f")
                && !s.contains('\\')
        });
    (ok && !id.is_empty()).then_some((id, tail))
}

/// What a runtime's answer may tell the browser: its body's type, length, encoding and
/// validators, and when to retry. Everything else stays behind, since the answer comes
/// from the installation's origin, which is same-site with the console in most deployments:
/// `Set-Cookie`; `Clear-Site-Data` (`"cookies"` clears the whole site's, the console's
/// session cookie among them); CORS, `Service-Worker-Allowed`, `Refresh`, `Link`, `Location`,
/// `Alt-Svc` and `Strict-Transport-Security`, which would widen or redirect the origin for
/// everyone on it. The answer is a caller's own, read with its PluginToken: never stored, and
/// never a document (a relayed answer opened as a page runs nothing, as kube-api-proxy's).
const PASSED_ON: [header::HeaderName; 10] = [
    header::CONTENT_TYPE,
    header::CONTENT_LENGTH,
    header::CONTENT_ENCODING,
    header::CONTENT_LANGUAGE,
    header::CONTENT_DISPOSITION,
    header::CONTENT_RANGE,
    header::ETAG,
    header::LAST_MODIFIED,
    header::VARY,
    header::RETRY_AFTER,
];

fn answer_headers(upstream: &http::HeaderMap) -> http::HeaderMap {
    let mut headers = http::HeaderMap::new();
    for name in PASSED_ON {
        for value in upstream.get_all(&name) {
            headers.append(name.clone(), value.clone());
        }
    }
    headers.insert(header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        http::HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, http::HeaderValue::from_static("nosniff"));
    headers
}

pub async fn handle(State(proxy): State<Arc<PluginProxy>>, req: Request) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from);
    let Some(token) = token else { return plain(StatusCode::UNAUTHORIZED, "missing bearer token") };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let Ok(claims) = proxy.credentials.verify_plugin(&token, now).await else {
        return plain(StatusCode::UNAUTHORIZED, "invalid token");
    };
    let Some((id, tail)) = route(req.uri().path()) else { return plain(StatusCode::NOT_FOUND, "not found") };
    if id != claims.installation_id {
        return plain(StatusCode::FORBIDDEN, "installation_id mismatch");
    }
    match proxy.host_of(&req) {
        Some(PluginHost::Installation(host)) if host == claims.installation_name => {}
        _ => return plain(StatusCode::FORBIDDEN, "a plugin's runtime answers on its own origin only"),
    }
    let cluster = claims.cluster_id.to_ascii_lowercase();
    match proxy.can_view(&claims.sub, &cluster).await {
        Ok(true) => {}
        Ok(false) => return plain(StatusCode::FORBIDDEN, "permission denied"),
        Err(unavailable) => return unavailable,
    }
    let Ok(up) = proxy.clusters.get(&cluster).await else {
        return plain(StatusCode::FORBIDDEN, "permission denied");
    };
    let admitted = match up.installation_shared(&claims.installation_name).await {
        Ok(Some(i)) if i.installation().is_ok_and(|i| i.metadata.uid == claims.installation_id) => i,
        Ok(_) => return plain(StatusCode::FORBIDDEN, "installation_id mismatch"),
        Err(e) => {
            tracing::warn!(error = %e, "plugin-proxy: installation lookup failed");
            return plain(StatusCode::BAD_GATEWAY, "plugin unavailable");
        }
    };
    let name = &claims.installation_name;
    // Ends with the session, or when the installation changes or goes.
    let ends = up.plugin_stream_ends(&proxy.credentials.revoked, &claims.sid, claims.exp, name, &admitted);
    let Some((up, mut target)) = proxy.runtimes.route(up, name, &tail.join("/")) else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    let page = fundament_kube_api_proxy::limits::PluginStream { token_id: &claims.jti, installation: name };
    let permit = match proxy.streams.acquire(&claims.sub, Some(page)).await {
        Ok(permit) => permit,
        Err(refused) => return too_many(&refused),
    };
    if let Some(q) = req.uri().query() {
        target.push('?');
        target.push_str(q);
    }
    // Its bounds on calls are larger than the streams' just taken: only its body bytes can refuse.
    let slot = match proxy.bodies.acquire(&claims.sub, Some(&claims.jti)) {
        Ok(slot) => slot,
        Err(refused) => return too_many(&refused),
    };
    let (parts, body) = req.into_parts();
    let sent =
        up.forward_as_gateway(parts.method, &target, &parts.headers, slot.counted(Body::new(body))).await;
    // The body's bytes are held until it has gone on.
    drop(slot);
    match sent {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            parts.headers = answer_headers(&parts.headers);
            let body =
                fundament_body_limits::capped(body, crate::MAX_ASSET, std::time::Duration::from_secs(60));
            Response::from_parts(parts, permit.hold(body, ends))
        }
        Err(fundament_kube_api_proxy::upstream::UpstreamError::BodyRefused(refused)) => too_many(&refused),
        Err(e) => {
            tracing::warn!(installation = %name, error = %e, "plugin-proxy: runtime unreachable");
            plain(StatusCode::BAD_GATEWAY, "plugin unavailable")
        }
    }
}

/// A refusal by one of kube-api-proxy's bounds (429 in the main), as text, with `Retry-After`
/// when it says how long to wait.
fn too_many(refused: &fundament_kube_core::Status) -> Response {
    let status = StatusCode::from_u16(refused.code).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
    let mut response =
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], refused.message.clone())
            .into_response();
    if let Some(seconds) = refused.retry_after_seconds() {
        response.headers_mut().insert(header::RETRY_AFTER, http::HeaderValue::from(seconds));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::{answer_headers, route};
    use http::header;

    #[test]
    fn a_runtime_answer_keeps_only_what_describes_its_body() {
        let mut upstream = http::HeaderMap::new();
        for (name, value) in [
            ("content-type", "application/json"),
            ("etag", "\"v1\""),
            ("vary", "accept"),
            ("vary", "accept-encoding"),
            ("set-cookie", "__Host-fundament_auth=; Max-Age=0"),
            ("clear-site-data", "\"cookies\""),
            ("access-control-allow-origin", "*"),
            ("service-worker-allowed", "/"),
            ("refresh", "0; url=https://evil.example"),
            ("location", "https://evil.example"),
            ("strict-transport-security", "max-age=0"),
            ("cache-control", "public, max-age=9999"),
            ("content-security-policy", "default-src *"),
        ] {
            upstream.append(name, value.parse().unwrap());
        }
        let h = answer_headers(&upstream);
        let mut names: Vec<_> = h.keys().map(|k| k.as_str()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "cache-control",
                "content-security-policy",
                "content-type",
                "etag",
                "vary",
                "x-content-type-options"
            ]
        );
        assert_eq!(h.get_all(header::VARY).iter().count(), 2);
        assert_eq!(h[header::CACHE_CONTROL], "no-store");
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }

    #[test]
    fn only_the_runtime_api_is_reachable() {
        assert_eq!(route("/installations/abc/runtime/api/ping").unwrap().1, ["api", "ping"]);
        for bad in [
            "/installations/abc/runtime/livez",
            "/installations/abc/runtime/pluginmetadata.v1.PluginMetadataService/GetStatus",
            "/installations/abc/controller/api/x",
            "/installations/abc/runtime/api",
            "/installations/abc/runtime/api/../livez",
            "/installations/abc/runtime/api/%2e%2e/livez",
            "/installations/abc/runtime/api//x",
            "/installations//runtime/api/x",
        ] {
            assert!(route(bad).is_none(), "{bad}");
        }
    }
}
