//! Watches: a stream of `{"type","object"}` lines, from a resourceVersion or
//! with the current objects first, as Tables when asked, ending after
//! `timeoutSeconds`. A watcher that falls too far behind gets 410 and relists.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::{StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::api::Format;
use crate::cluster::{Cluster, at_version, event_for};
use crate::path::ResourcePath;
use crate::query::ListQuery;
use crate::resource::ResourceType;
use crate::status::ApiError;
use crate::store::{Change, EventType};
use crate::table::{self, IncludeObject};

/// Longest a watch stays open without `timeoutSeconds` (the apiserver picks 30–60 min).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

struct Watcher {
    rt: Arc<ResourceType>,
    namespace: String,
    name: String,
    query: ListQuery,
    format: Format,
    include: IncludeObject,
    sent_columns: bool,
}

impl Watcher {
    fn wants(&self, change: &Change) -> Option<EventType> {
        if change.key != self.rt.storage_key() {
            return None;
        }
        let meta = &change.object["metadata"];
        if !self.namespace.is_empty() && meta["namespace"].as_str() != Some(self.namespace.as_str()) {
            return None;
        }
        if !self.name.is_empty() && meta["name"].as_str() != Some(self.name.as_str()) {
            return None;
        }
        event_for(change, &self.query)
    }

    fn line(&mut self, kind: &str, object: &Value) -> bytes::Bytes {
        let object = at_version(object, &self.rt);
        let rendered = match self.format {
            Format::Object => object,
            Format::Metadata => {
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]})
            }
            Format::Table => {
                let with_columns = !self.sent_columns;
                self.sent_columns = true;
                table::table(
                    &self.rt,
                    std::slice::from_ref(&object),
                    json!({"resourceVersion": object["metadata"]["resourceVersion"]}),
                    self.include,
                    with_columns,
                )
            }
        };
        let mut line = json!({"type": kind, "object": rendered}).to_string();
        line.push('\n');
        bytes::Bytes::from(line)
    }
}

fn error_line(e: &ApiError) -> bytes::Bytes {
    bytes::Bytes::from(format!("{}\n", json!({"type": "ERROR", "object": e.to_status()})))
}

fn bookmark(rt: &ResourceType, rv: u64, initial_end: bool) -> bytes::Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let obj = json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": meta});
    bytes::Bytes::from(format!("{}\n", json!({"type": "BOOKMARK", "object": obj})))
}

pub fn serve(
    cluster: Arc<Cluster>,
    rt: Arc<ResourceType>,
    p: &ResourcePath,
    query: ListQuery,
    format: Format,
    include: IncludeObject,
) -> Result<Response, ApiError> {
    query.check_fields(&rt)?;
    let from: Option<u64> = match query.resource_version.as_str() {
        "" | "0" => None,
        rv => Some(rv.parse().map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?),
    };
    let mut watcher = Watcher {
        rt: Arc::clone(&rt),
        namespace: p.namespace.clone(),
        name: p.name.clone(),
        query: query.clone(),
        format,
        include,
        sent_columns: false,
    };
    // Subscribe, then read the backlog under the same lock: nothing falls between.
    let (mut rx, start_rv, initial, too_old) = {
        let state = cluster.read();
        let (rx, rv) = cluster.subscribe_locked(&state);
        match from {
            None => {
                // Shared, not copied: the store's objects are immutable once stored.
                let objects: Vec<(&str, Arc<Value>)> = state
                    .store
                    .iter(&rt.storage_key(), &p.namespace)
                    .filter(|((_, name), obj)| (p.name.is_empty() || *name == p.name) && query.matches(obj))
                    .map(|(_, obj)| ("ADDED", Arc::clone(obj)))
                    .collect();
                (rx, rv, objects, None)
            }
            Some(from) => match state.store.changes_since(from) {
                None => (
                    rx,
                    rv,
                    Vec::new(),
                    Some(ApiError::gone(format!(
                        "too old resource version: {from} ({})",
                        state.store.oldest_resumable() + 1
                    ))),
                ),
                Some(changes) => {
                    let events = changes
                        .iter()
                        .filter_map(|c| watcher.wants(c).map(|k| (k.as_str(), Arc::clone(&c.object))))
                        .collect();
                    (rx, rv, events, None)
                }
            },
        }
    };
    let timeout = query.timeout_seconds.map(Duration::from_secs).unwrap_or(DEFAULT_TIMEOUT);
    let send_initial_end = query.send_initial_events && from.is_none();
    let (tx, out) = mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(64);
    let closed = cluster.closed();
    let allow_bookmarks = query.allow_bookmarks;
    tokio::spawn(async move {
        if let Some(e) = too_old {
            let _ = tx.send(Ok(error_line(&e))).await;
            return;
        }
        // Consumed, so the backlog is freed once sent: a watch lives for many minutes, and
        // holding its first list for all of them cost ~200 KB per idle watch
        // (bench/results/watches.json).
        for (kind, obj) in initial {
            if tx.send(Ok(watcher.line(kind, &obj))).await.is_err() {
                return;
            }
        }
        if send_initial_end && tx.send(Ok(bookmark(&watcher.rt, start_rv, true))).await.is_err() {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        tokio::pin!(closed);
        // Every change up to here went out (or was not this watch's).
        let mut delivered = start_rv;
        loop {
            tokio::select! {
                _ = &mut deadline => return,
                _ = tx.closed() => return,
                () = &mut closed => {
                    // Shutdown: what is queued goes out, then a BOOKMARK tells the
                    // client where to resume, then the stream ends.
                    while let Ok(change) = rx.try_recv() {
                        if change.rv <= delivered {
                            continue;
                        }
                        delivered = change.rv;
                        if let Some(kind) = watcher.wants(&change)
                            && tx.send(Ok(watcher.line(kind.as_str(), &change.object))).await.is_err()
                        {
                            return;
                        }
                    }
                    if allow_bookmarks {
                        let _ = tx.send(Ok(bookmark(&watcher.rt, delivered, false))).await;
                    }
                    return;
                }
                next = rx.recv() => match next {
                    Ok(change) => {
                        if change.rv <= start_rv {
                            continue;
                        }
                        delivered = change.rv;
                        if let Some(kind) = watcher.wants(&change)
                            && tx.send(Ok(watcher.line(kind.as_str(), &change.object))).await.is_err()
                        {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let e = ApiError::gone("the watcher fell behind; list again and watch from the new resourceVersion");
                        let _ = tx.send(Ok(error_line(&e))).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(out));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CACHE_CONTROL, "no-cache, private")
        .body(body)
        .map_err(|e| ApiError::internal(&e))
}

#[cfg(test)]
mod tests {
    use fundament_kube_core::Query;
    use http::Method;
    use http_body_util::BodyExt;

    use super::*;
    use crate::authn::User;
    use crate::cluster::WriteOptions;
    use crate::path::{Route, route};

    /// A watch lives for many minutes: the first list it sends must not stay with it. Once the
    /// list is out, each object has the holders it had before the watch (bench/results/
    /// watches.json: holding it was ~200 KiB per idle watch on 100 objects).
    #[tokio::test]
    async fn a_watch_lets_go_of_its_first_list_once_sent() {
        let cluster = Arc::new(Cluster::new());
        let namespaces = cluster.resource("", "v1", "namespaces").unwrap();
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}});
        cluster.create(&User::system(), &namespaces, "", namespace, WriteOptions::SYSTEM).unwrap();
        let rt = cluster.resource("", "v1", "configmaps").unwrap();
        for i in 0..3 {
            let body =
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}});
            cluster.create(&User::system(), &rt, "default", body, WriteOptions::SYSTEM).unwrap();
        }
        // How many hold each object without the watch (the store, its change log).
        let holders = || {
            let state = cluster.read();
            state
                .store
                .iter(&rt.storage_key(), "default")
                .map(|(_, obj)| Arc::strong_count(obj))
                .collect::<Vec<_>>()
        };
        let before = holders();
        let path = "/api/v1/namespaces/default/configmaps";
        let Ok(Route::Resource(r)) = route(&Method::GET, path, &Query::parse("watch=1")) else {
            panic!("{path} is a resource route");
        };
        let response = serve(
            Arc::clone(&cluster),
            Arc::clone(&rt),
            &r.path,
            ListQuery::default(),
            Format::Object,
            IncludeObject::None,
        )
        .unwrap();
        let mut body = response.into_body();
        let mut lines = 0;
        while lines < 3 {
            let frame = body.frame().await.unwrap().unwrap();
            lines += frame.into_data().unwrap().iter().filter(|b| **b == b'\n').count();
        }
        // The watch task frees the list right after its last send: give it a moment to get there.
        for _ in 0..100 {
            if holders() == before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(holders(), before, "the open watch still holds objects of its first list");
        drop(body);
    }
}
