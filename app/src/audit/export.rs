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
    use std::future::Future;

    use axum::extract::State;
    use axum::response::{IntoResponse, Response};
    use bytes::Bytes;
    use fundament_plugin_types::audit::{AuditEntry, AuditFilter, AuditPage};
    use futures::future::Either;
    use futures::{FutureExt as _, Stream};
    use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};

    use crate::state::ConsoleState;

    use crate::plugins::backend::BackendError;

    /// The record could not be read past a page: the download is cut short (the body ends with
    /// an error, so the browser reports the download failed rather than keeping it as whole).
    #[derive(Debug, thiserror::Error)]
    #[error("the audit record could not be read past call {before}: the export is cut short")]
    pub(super) struct ExportCut {
        before: u64,
        #[source]
        error: BackendError,
    }

    /// One page's entries as JSON lines, in one buffer.
    fn lines(entries: &[AuditEntry]) -> Bytes {
        let mut out = Vec::new();
        for entry in entries {
            // An entry is strings and numbers: it always serializes.
            if serde_json::to_writer(&mut out, entry).is_ok() {
                out.push(b'\n');
            }
        }
        out.into()
    }

    /// Where an export is: a page read (the first, read before the answer's head), or the
    /// filter of the next one to read.
    enum Step {
        Read(AuditPage, AuditFilter),
        Next(AuditFilter),
    }

    /// `first`'s lines, then each older page's (`fetch` with `before` the oldest id so far) until
    /// one is empty, each asked for only once the one before is taken: one page in memory at a
    /// time, and one of the user's call turns while a page is read, whatever the record holds.
    pub(super) fn pages<F, Fut>(
        first: AuditPage,
        filter: AuditFilter,
        fetch: F,
    ) -> impl Stream<Item = Result<Bytes, ExportCut>>
    where
        F: Fn(AuditFilter) -> Fut,
        Fut: Future<Output = Result<AuditPage, BackendError>>,
    {
        futures::stream::try_unfold(Step::Read(first, filter), move |step| {
            let read = match step {
                Step::Read(page, filter) => Either::Left(futures::future::ready(Ok((page, filter)))),
                Step::Next(filter) => {
                    let before = filter.before.unwrap_or(u64::MAX);
                    Either::Right(fetch(filter.clone()).map(move |read| match read {
                        Ok(page) => Ok((page, filter)),
                        Err(error) => {
                            tracing::warn!(%error, "audit export cut short");
                            Err(ExportCut { before, error })
                        }
                    }))
                }
            };
            async move {
                let (page, mut filter) = read.await?;
                let Some(oldest) = page.items.last().map(|e| e.id) else { return Ok(None) };
                filter.before = Some(oldest);
                Ok(Some((lines(&page.items), Step::Next(filter))))
            }
        })
    }

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
        // The first page before the answer's head: a record that cannot be read is a 502, not
        // an empty download.
        let first = match state.backend.audit(&token, &cluster, &filter).await {
            Ok(page) => page,
            Err(error) => {
                tracing::warn!(%error, "audit export failed");
                return refused(
                    StatusCode::BAD_GATEWAY,
                    "the audit record cannot be read right now; try again\n",
                );
            }
        };
        let backend = state.clone();
        let (token, cluster_id) = (token.clone(), cluster.clone());
        let rest = pages(first, filter, move |filter| {
            let (state, token, cluster_id) = (backend.clone(), token.clone(), cluster_id.clone());
            async move { state.backend.audit(&token, &cluster_id, &filter).await }
        });
        let file = format!("attachment; filename=\"plugin-calls-{cluster}.jsonl\"");
        let mut response = (StatusCode::OK, axum::body::Body::from_stream(rest)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson; charset=utf-8"));
        if let Ok(value) = HeaderValue::from_str(&file) {
            headers.insert(header::CONTENT_DISPOSITION, value);
        }
        response
    }

    #[cfg(test)]
    mod tests {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        use futures::StreamExt as _;

        use super::*;

        fn entry(id: u64) -> AuditEntry {
            AuditEntry {
                id,
                time: "2026-12-04T10:00:00.000Z".into(),
                at_ms: 1_796_378_400_000,
                user: "alice".into(),
                cluster_id: "019b4000-2000-7000-8000-000000000001".into(),
                installation_id: "uid".into(),
                installation_name: "acme-corp--cert-manager".into(),
                plugin_name: "cert-manager".into(),
                plugin_version: "v1.17.2".into(),
                group: String::new(),
                resource: "secrets".into(),
                subresource: String::new(),
                name: String::new(),
                namespace: "default".into(),
                verb: "list".into(),
                decision: "allowed".into(),
                status: 200,
                latency_ms: 0.1,
            }
        }

        /// A record of calls 1..=25 read three at a time, newest first; it fails from the
        /// `fail_at`th read on.
        fn record(
            fail_at: usize,
        ) -> (Arc<AtomicUsize>, impl Fn(AuditFilter) -> futures::future::Ready<Result<AuditPage, BackendError>>)
        {
            let reads = Arc::new(AtomicUsize::new(0));
            let counted = Arc::clone(&reads);
            let fetch = move |filter: AuditFilter| {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                if n >= fail_at {
                    let error =
                        BackendError::Unreachable { service: "kube-api-proxy", detail: "down".into() };
                    return futures::future::ready(Err(error));
                }
                let below = filter.before.unwrap_or(u64::MAX);
                let items = (1..=25u64).rev().filter(|id| *id < below).take(3).map(entry).collect();
                futures::future::ready(Ok(AuditPage { items, everyone: true, last_id: 25 }))
            };
            (reads, fetch)
        }

        fn ids(bytes: &[u8]) -> Vec<u64> {
            bytes
                .split(|b| *b == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| serde_json::from_slice::<AuditEntry>(line).unwrap().id)
                .collect()
        }

        #[tokio::test]
        async fn an_audit_export_streams_every_page_once_reading_each_only_when_needed() {
            let (reads, fetch) = record(usize::MAX);
            let first = fetch(AuditFilter::default()).await.unwrap();
            reads.store(0, Ordering::SeqCst);
            let mut stream = std::pin::pin!(pages(first, AuditFilter::default(), fetch));
            let mut all = Vec::new();
            all.extend_from_slice(&stream.next().await.unwrap().unwrap());
            assert_eq!(reads.load(Ordering::SeqCst), 0, "the first page was read before");
            all.extend_from_slice(&stream.next().await.unwrap().unwrap());
            assert_eq!(reads.load(Ordering::SeqCst), 1, "one page read per page sent");
            while let Some(chunk) = stream.next().await {
                all.extend_from_slice(&chunk.unwrap());
            }
            assert_eq!(ids(&all), (1..=25).rev().collect::<Vec<_>>());
            assert_eq!(reads.load(Ordering::SeqCst), 9, "eight more pages, and the empty one that ends it");
        }

        #[tokio::test]
        async fn an_audit_export_that_cannot_read_a_page_ends_with_an_error() {
            let (reads, fetch) = record(3);
            let first = fetch(AuditFilter::default()).await.unwrap();
            reads.store(0, Ordering::SeqCst);
            let chunks: Vec<_> = pages(first, AuditFilter::default(), fetch).collect().await;
            assert_eq!(chunks.len(), 4, "three pages, then the error: {chunks:?}");
            let sent: Vec<u8> = chunks[..3].iter().flat_map(|c| c.as_ref().unwrap().to_vec()).collect();
            assert_eq!(ids(&sent), (17..=25).rev().collect::<Vec<_>>());
            let cut = chunks[3].as_ref().unwrap_err();
            assert_eq!(
                cut.to_string(),
                "the audit record could not be read past call 17: the export is cut short"
            );
        }
    }
}
