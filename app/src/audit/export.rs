//! `GET /audit/export?<the page's filters>`: everything the audit page's filters select on the
//! selected cluster, as JSON lines, for download. A link on the audit page, so it is asked
//! for by a navigation from the console's own page: requests from anywhere else
//! (`Sec-Fetch-Site` other than `same-origin`) are refused, so another site cannot make a
//! signed-in browser download it.

/// Where the route is mounted.
pub const PATH: &str = "/audit/export";

#[cfg(feature = "ssr")]
pub use ssr::handle;

#[cfg(feature = "ssr")]
mod ssr {
    use axum::extract::State;
    use axum::response::{IntoResponse, Response};
    use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};

    use crate::state::ConsoleState;

    fn refused(status: StatusCode, message: &'static str) -> Response {
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response()
    }

    pub async fn handle(State(state): State<ConsoleState>, headers: HeaderMap, uri: Uri) -> Response {
        let mut response = answer(&state, &headers, &uri).await;
        let headers = response.headers_mut();
        headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    async fn answer(state: &ConsoleState, headers: &HeaderMap, uri: &Uri) -> Response {
        let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        if site != Some("same-origin") {
            return refused(
                StatusCode::FORBIDDEN,
                "the export is downloaded from the console's audit page\n",
            );
        }
        let Some(token) = crate::state::session_token_of(headers) else {
            return refused(StatusCode::UNAUTHORIZED, "not signed in\n");
        };
        let Some(user) = state.sessions.verify(&token) else {
            return refused(StatusCode::UNAUTHORIZED, "not signed in\n");
        };
        let directory = state.directory.current();
        let Some(cluster) = directory
            .organization_of(&user.id)
            .and_then(|org| directory.default_cluster(&org.id))
            .map(|c| c.id.clone())
        else {
            return refused(StatusCode::NOT_FOUND, "no cluster is selected for you\n");
        };
        let mut filter = match super::super::query::filter_of(uri.query().unwrap_or_default()) {
            Ok(filter) => filter,
            Err(e) => return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
        };
        filter.limit = Some(fundament_plugin_types::audit::MAX_LIMIT);
        let mut lines = Vec::new();
        // Page back from the newest until nothing older is left.
        loop {
            let page = match state.backend.audit(&token, &cluster, &filter).await {
                Ok(page) => page,
                Err(error) => {
                    tracing::warn!(%error, "audit export failed");
                    return refused(
                        StatusCode::BAD_GATEWAY,
                        "the audit record cannot be read right now; try again\n",
                    );
                }
            };
            let Some(oldest) = page.items.last().map(|e| e.id) else { break };
            for entry in &page.items {
                if let Ok(mut line) = serde_json::to_vec(entry) {
                    line.push(b'\n');
                    lines.push(line);
                }
            }
            filter.before = Some(oldest);
        }
        let file = format!("attachment; filename=\"plugin-calls-{cluster}.jsonl\"");
        let mut response = (StatusCode::OK, lines.concat()).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson; charset=utf-8"));
        if let Ok(value) = HeaderValue::from_str(&file) {
            headers.insert(header::CONTENT_DISPOSITION, value);
        }
        response
    }
}
