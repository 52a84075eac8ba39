//! `/kube/clusters/<cluster-id>/…`: the console's own, same-origin way for its
//! browser code (the live lists, details and the plugin registry) to reach
//! kube-api-proxy. The session cookie never leaves the console: this route
//! reads it on the server and calls the gateway with the user's token as a
//! bearer — the gateway itself takes no cookie at all.
//!
//! Only what the console's own scripts send passes: `GET`, from this origin
//! (`Sec-Fetch-Site: same-origin`), by `fetch` (`Sec-Fetch-Mode: cors` or
//! `same-origin`, `Sec-Fetch-Dest: empty`), never a navigation, a `no-cors`
//! request, a frame or an `<img>`. Resource requests only, never a `proxy`
//! subresource (a plugin's own pages could be reached through one). Answers
//! are API content only, never a document: anything else becomes a 502, and
//! every answer carries `Content-Security-Policy: sandbox` and `nosniff`.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use fundament_kube_core::{Query, RequestInfo};
use http::{HeaderMap, HeaderValue, Method, header};

use crate::state::ConsoleState;

/// Where the route is mounted; the browser code builds its URLs on it.
pub const PREFIX: &str = crate::api::CLUSTER_ROUTE;

/// The media types the route passes on (with parameters such as `;stream=watch`).
const API_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json-patch+json",
];

fn status(code: u16, reason: &str, message: &str) -> Response {
    fundament_kube_core::Status::failure(code, reason, message).into_response()
}

/// Whether the request is a `fetch` of the console's own scripts.
fn from_console_script(headers: &HeaderMap) -> Result<(), &'static str> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if get("sec-fetch-site") != Some("same-origin") {
        return Err("only the console's own pages may use this route");
    }
    if !matches!(get("sec-fetch-mode"), Some("cors" | "same-origin")) {
        return Err("navigations and no-cors requests are refused here");
    }
    if get("sec-fetch-dest") != Some("empty") {
        return Err("only fetch() may use this route, not a document, frame or image");
    }
    Ok(())
}

/// The answers still streaming through the route (watches), which the console ends when it
/// drains: each ends as a watch whose timeout passed, so the browser watches again at once,
/// through a load balancer at another replica, from the last version it saw. Without it a
/// console with open tabs would wait its whole drain period and then cut them.
#[derive(Debug, Clone)]
pub struct OpenStreams(std::sync::Arc<tokio::sync::watch::Sender<bool>>);

impl Default for OpenStreams {
    fn default() -> Self {
        Self(std::sync::Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl OpenStreams {
    /// Ends every stream open now and every one opened from now on.
    pub fn close(&self) {
        self.0.send_replace(true);
    }

    /// `body`, ending cleanly once [`OpenStreams::close`] is called.
    fn until_closed(&self, body: Body) -> Body {
        use futures::StreamExt;
        let mut closed = self.0.subscribe();
        let closing = async move {
            let _ = closed.wait_for(|closed| *closed).await;
        };
        Body::from_stream(body.into_data_stream().take_until(Box::pin(closing)))
    }
}

/// Whether an answer gets a heartbeat: only where a blank line is known to be harmless, a watch
/// of plain JSON lines (our own watch reader skips blank lines), never a list (it would break
/// the document) nor a compressed or protobuf stream.
fn takes_heartbeat(info: &RequestInfo, media: Option<&str>, headers: &HeaderMap) -> bool {
    info.verb == "watch"
        && media == Some("application/json")
        && !headers.contains_key(header::CONTENT_ENCODING)
}

/// `body` with a blank line wherever it has been quiet for `every`
/// ([`crate::api::WATCH_HEARTBEAT`]).
fn with_heartbeat(body: Body, every: std::time::Duration) -> Body {
    use futures::StreamExt;
    let beats = futures::stream::unfold(body.into_data_stream(), move |mut inner| async move {
        match tokio::time::timeout(every, inner.next()).await {
            Ok(Some(item)) => Some((item, inner)),
            Ok(None) => None,
            Err(_quiet) => Some((Ok(bytes::Bytes::from_static(b"\n")), inner)),
        }
    });
    Body::from_stream(beats)
}

/// `GET /kube/clusters/<cluster-id>/<kubernetes path>`.
pub async fn handle(State(state): State<ConsoleState>, req: Request) -> Response {
    let mut response = answer(&state, req).await;
    harden(response.headers_mut());
    response
}

async fn answer(state: &ConsoleState, req: Request) -> Response {
    if req.method() != Method::GET {
        return status(
            405,
            "MethodNotAllowed",
            "only GET passes here; changes go through the console's forms",
        );
    }
    if let Err(why) = from_console_script(req.headers()) {
        tracing::warn!(path = %req.uri().path(), why, "cluster route refused a request");
        return status(403, "Forbidden", why);
    }
    let Some(token) = crate::state::session_token_of(req.headers()) else {
        return status(401, "Unauthorized", "not signed in");
    };
    if state.sessions.verify(&token).is_none() {
        return status(401, "Unauthorized", "not signed in");
    }
    let Some(rest) = req.uri().path().strip_prefix(PREFIX).and_then(|p| p.strip_prefix("/clusters/")) else {
        return status(404, "NotFound", "not found");
    };
    let (cluster, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !crate::plugins::model::is_cluster_id(cluster) {
        return status(400, "BadRequest", "not a cluster id");
    }
    let query = Query::parse(req.uri().query().unwrap_or_default());
    let info = match RequestInfo::parse(&Method::GET, &format!("/{path}"), &query) {
        Ok(info) => info,
        Err(e) => return status(400, "BadRequest", &e.to_string()),
    };
    if !info.is_resource_request || info.subresource == "proxy" || info.verb == "proxy" {
        return status(403, "Forbidden", "only Kubernetes resources pass here, never a proxy");
    }
    let mut target = info.canonical_path();
    let query = query.canonical(false);
    if !query.is_empty() {
        target.push('?');
        target.push_str(&query);
    }
    let accept = req.headers().get(header::ACCEPT).cloned();
    let upstream = match state.backend.kube_stream(&token, cluster, &target, accept).await {
        Ok(r) => r,
        Err(error) => {
            tracing::warn!(%error, "cluster route: kube-api-proxy unreachable");
            return status(502, "InternalError", "kube-api-proxy could not be reached");
        }
    };
    let media = upstream
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    if !media.as_deref().is_some_and(|m| API_MEDIA_TYPES.contains(&m)) {
        tracing::warn!(media = ?media, "cluster route: refused an answer that is not API content");
        return status(502, "InternalError", "the cluster answered something that is not API content");
    }
    let (parts, body) = upstream.into_parts();
    let mut body = Body::new(body);
    if takes_heartbeat(&info, media.as_deref(), &parts.headers) {
        body = with_heartbeat(body, crate::api::WATCH_HEARTBEAT);
    }
    let mut response = Response::new(state.open_streams.until_closed(body));
    *response.status_mut() = parts.status;
    for name in [header::CONTENT_TYPE, header::CONTENT_ENCODING] {
        if let Some(value) = parts.headers.get(&name) {
            response.headers_mut().insert(name, value.clone());
        }
    }
    response
}

/// Never a document, never a cookie, never cached.
fn harden(headers: &mut HeaderMap) {
    headers.remove(header::SET_COOKIE);
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs.iter().map(|(k, v)| (http::HeaderName::from_static(k), HeaderValue::from_static(v))).collect()
    }

    /// Only a watch of plain JSON lines gets heartbeats.
    #[test]
    fn only_a_plain_json_watch_takes_a_heartbeat() {
        let info = |query: &str| {
            let path = "/api/v1/namespaces/default/configmaps";
            RequestInfo::parse(&Method::GET, path, &Query::parse(query)).unwrap()
        };
        let plain = HeaderMap::new();
        let gzip: HeaderMap =
            [(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"))].into_iter().collect();
        assert!(takes_heartbeat(&info("watch=1"), Some("application/json"), &plain));
        assert!(!takes_heartbeat(&info(""), Some("application/json"), &plain), "a list");
        assert!(!takes_heartbeat(&info("watch=1"), Some("application/json"), &gzip), "compressed");
        let protobuf = Some("application/vnd.kubernetes.protobuf");
        assert!(!takes_heartbeat(&info("watch=1"), protobuf, &plain), "protobuf");
        assert!(!takes_heartbeat(&info("watch=1"), None, &plain), "no media type");
    }

    /// Events pass as they come; a blank line comes only after a heartbeat's quiet, one per
    /// quiet heartbeat, and not before an event that comes sooner. (Real time, in steps large
    /// enough for a busy machine.)
    #[tokio::test]
    async fn a_blank_line_comes_on_each_quiet_heartbeat_only() {
        use futures::StreamExt;
        let beat = std::time::Duration::from_millis(500);
        // Events at once, after 100 ms (under a heartbeat), and after 1,750 ms more (3 quiet
        // heartbeats), then the end.
        let gaps = [0u64, 100, 1750];
        let events = futures::stream::iter(gaps).then(|gap| async move {
            tokio::time::sleep(std::time::Duration::from_millis(gap)).await;
            Ok::<_, std::convert::Infallible>(bytes::Bytes::from(format!("e{gap}\n")))
        });
        let seen: Vec<String> = with_heartbeat(Body::from_stream(events), beat)
            .into_data_stream()
            .map(|chunk| String::from_utf8(chunk.unwrap().to_vec()).unwrap())
            .collect()
            .await;
        assert_eq!(seen[..2], ["e0\n", "e100\n"], "{seen:?}");
        assert_eq!(seen.last().map(String::as_str), Some("e1750\n"), "{seen:?}");
        let beats = &seen[2..seen.len() - 1];
        assert!(beats.iter().all(|b| b == "\n"), "{seen:?}");
        assert!((2..=4).contains(&beats.len()), "one per quiet heartbeat: {seen:?}");
    }

    /// A drain ends a watch passing through cleanly, as a watch whose timeout passed, while the
    /// gateway still holds it open: the browser watches again at once, at another replica.
    #[tokio::test]
    async fn a_drain_ends_the_watches_passing_through() {
        use futures::StreamExt;
        let never_ending = || async {
            let events = futures::stream::pending::<Result<bytes::Bytes, std::convert::Infallible>>();
            ([(header::CONTENT_TYPE, "application/json;stream=watch")], Body::from_stream(events))
        };
        let gateway = axum::Router::new().fallback(never_ending);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, gateway).await });
        let state = crate::resource_views::api::scope_tests::state_with_gateway(&url);
        let watch = || {
            let mut request = Request::get(format!(
                "{PREFIX}/clusters/{}/api/v1/namespaces/default/configmaps?watch=1",
                crate::resource_views::api::scope_tests::CLUSTER
            ))
            .header(header::COOKIE, format!("{}=token-of-alice", fundament_session::COOKIE_NAME));
            for (name, value) in
                [("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty")]
            {
                request = request.header(name, value);
            }
            request.body(Body::empty()).unwrap()
        };
        let open = handle(State(state.clone()), watch()).await;
        assert_eq!(open.status(), 200);
        let mut events = open.into_body().into_data_stream();
        let wait = std::time::Duration::from_millis(200);
        assert!(tokio::time::timeout(wait, events.next()).await.is_err(), "open until the drain");

        state.open_streams.close();
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), events.next()).await;
        assert!(matches!(ended, Ok(None)), "ended cleanly: {ended:?}");
        // One opened during the drain ends at once too.
        let mut late = handle(State(state), watch()).await.into_body().into_data_stream();
        assert!(matches!(tokio::time::timeout(wait, late.next()).await, Ok(None)));
    }

    #[test]
    fn only_the_consoles_own_fetches_pass() {
        let ok = [("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty")];
        assert!(from_console_script(&headers(&ok)).is_ok());
        for bad in [
            vec![("sec-fetch-site", "same-site"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty")],
            vec![("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty")],
            vec![
                ("sec-fetch-site", "same-origin"),
                ("sec-fetch-mode", "navigate"),
                ("sec-fetch-dest", "document"),
            ],
            vec![
                ("sec-fetch-site", "same-origin"),
                ("sec-fetch-mode", "navigate"),
                ("sec-fetch-dest", "iframe"),
            ],
            vec![
                ("sec-fetch-site", "same-origin"),
                ("sec-fetch-mode", "no-cors"),
                ("sec-fetch-dest", "empty"),
            ],
            vec![
                ("sec-fetch-site", "same-origin"),
                ("sec-fetch-mode", "no-cors"),
                ("sec-fetch-dest", "image"),
            ],
            vec![],
        ] {
            assert!(from_console_script(&headers(&bad)).is_err(), "{bad:?}");
        }
    }
}
