//! The cluster's PluginInstallations as the gateway last heard of them: listed once, then
//! kept current by a watch, so that the installation check of every PluginToken call reads
//! memory instead of asking the cluster — and sees a deletion or a replacement (a new uid)
//! as soon as the cluster announces it, not after a cache lifetime.
//!
//! Until the first list, and whenever the watch is broken (the cluster unreachable, the
//! watch too far behind), the store knows nothing and every lookup asks the cluster itself:
//! nothing is ever answered from a copy that has stopped following the cluster.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use bytes::BytesMut;
use http::{Method, header};
use http_body_util::BodyExt;
use serde_json::Value;

use fundament_plugin_types::{InstallationError, PluginInstallation};

use crate::upstream::UpstreamError;

/// The PluginInstallations of a cluster (cluster-scoped).
pub const PATH: &str = "/apis/plugins.fundament.io/v1/plugininstallations";
/// How long one watch stays open before it is renewed from its last resourceVersion (below
/// kube-rs's read timeout, so the server ends it, cleanly).
const WATCH_SECONDS: u64 = 240;
/// How long to wait before listing again after a failure, doubled after each further one up
/// to [`RETRY_MAX`] (a cluster that refuses the list is not asked every second).
const RETRY: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// How long a lookup waits for the first list before asking the cluster itself.
const FIRST_SYNC: Duration = Duration::from_secs(5);

/// A PluginInstallation as the cluster announced it, read once when it arrived: every call
/// that checks it uses the typed reading, and streams compare the object itself.
#[derive(Debug)]
pub struct StoredInstallation {
    object: Value,
    reading: Result<PluginInstallation, InstallationError>,
}

impl StoredInstallation {
    pub fn new(object: Value) -> Self {
        let reading = PluginInstallation::from_value(&object);
        Self { object, reading }
    }

    /// The object as the cluster answered it.
    pub fn object(&self) -> &Value {
        &self.object
    }

    /// Its typed reading; an error for an object that is no readable PluginInstallation (one
    /// that names no definition).
    pub fn installation(&self) -> Result<&PluginInstallation, &InstallationError> {
        self.reading.as_ref()
    }
}

#[derive(Default)]
struct Known {
    /// By name; `None` while the store does not follow the cluster.
    items: Option<HashMap<String, Arc<StoredInstallation>>>,
    /// The resourceVersion the watch continues from.
    resource_version: String,
}

/// The store; its watch runs on a task of its own from the first lookup on, for as long as the
/// store lives.
pub struct InstallationStore {
    known: RwLock<Known>,
    /// Bumped on each change applied (and on each loss of sync), so tests and the first lookup
    /// can wait for one.
    applied: tokio::sync::watch::Sender<u64>,
    /// Set once the first list was tried (whether or not it worked): until then lookups wait
    /// for it, so a burst of first calls costs one list, not one read each.
    tried: std::sync::atomic::AtomicBool,
    task: std::sync::Mutex<Option<tokio::task::AbortHandle>>,
}

/// What the store's task needs of its cluster: a client on the gateway's own identity, as it
/// is now (credentials may be renewed).
pub trait OwnClient: Send + Sync + 'static {
    fn own_client(&self) -> kube::Client;
}

/// What a lookup found.
pub enum Lookup {
    /// The store follows the cluster: the installation as last announced, or `None` if there is
    /// no such installation.
    Known(Option<Arc<StoredInstallation>>),
    /// The store does not follow the cluster right now: ask it.
    Unknown,
}

impl Default for InstallationStore {
    fn default() -> Self {
        Self {
            known: RwLock::default(),
            applied: tokio::sync::watch::Sender::new(0),
            tried: std::sync::atomic::AtomicBool::new(false),
            task: std::sync::Mutex::default(),
        }
    }
}

impl Drop for InstallationStore {
    fn drop(&mut self) {
        if let Some(task) = self.task.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            task.abort();
        }
    }
}

impl InstallationStore {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Known> {
        self.known.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Known> {
        self.known.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts following `cluster` (once); the first callers wait up to [`FIRST_SYNC`] for the
    /// first list.
    pub async fn follow<C: OwnClient + ?Sized>(self: &Arc<Self>, cluster: Weak<C>) {
        if self.tried.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let mut applied = self.applied.subscribe();
        {
            let mut task = self.task.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if task.is_none() {
                let store = Arc::downgrade(self);
                *task = Some(tokio::spawn(run(store, cluster)).abort_handle());
            }
        }
        let synced = applied.wait_for(|_| self.tried.load(std::sync::atomic::Ordering::Acquire));
        let _ = tokio::time::timeout(FIRST_SYNC, synced).await;
    }

    /// The installation `name`, if the store follows the cluster.
    pub fn lookup(&self, name: &str) -> Lookup {
        match &self.read().items {
            Some(items) => Lookup::Known(items.get(name).cloned()),
            None => Lookup::Unknown,
        }
    }

    /// Every installation, if the store follows the cluster.
    pub fn all(&self) -> Option<Vec<Value>> {
        self.read().items.as_ref().map(|items| items.values().map(|v| v.object.clone()).collect())
    }

    /// A receiver that changes whenever the store applied an event (tests wait on it).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.applied.subscribe()
    }

    /// Resolves once the store shows the installation `name` no longer as `admitted` (at once if
    /// it does not show it so already): deleted,
    /// replaced (another uid), or its spec changed (another version, so other allowedResources
    /// and rights). A stream a plugin page opened ends then, and the page's next one is checked
    /// against what is there now. While the store does not follow the cluster it waits: the
    /// token's expiry still bounds the stream.
    pub fn changed_from(
        self: &Arc<Self>,
        name: &str,
        admitted: &Arc<StoredInstallation>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let store = Arc::downgrade(self);
        let mut changes = self.applied.subscribe();
        let name = name.to_owned();
        let admitted = Arc::clone(admitted);
        async move {
            // States are compared, not events: it looks first (a change applied between the
            // admission's read and this subscription woke nothing), then at each applied event
            // or loss of sync. The store gone (shutdown) ends it.
            loop {
                let Some(current) = store.upgrade() else { return };
                if let Lookup::Known(now) = current.lookup(&name) {
                    let same = now.is_some_and(|now| {
                        let (now, admitted) = (now.object(), admitted.object());
                        now.pointer("/metadata/uid") == admitted.pointer("/metadata/uid")
                            && now.get("spec") == admitted.get("spec")
                    });
                    if !same {
                        return;
                    }
                }
                drop(current);
                if changes.changed().await.is_err() {
                    return;
                }
            }
        }
    }

    /// The resourceVersion of the last event or list applied ("" while not following).
    pub fn resource_version(&self) -> String {
        let known = self.read();
        if known.items.is_some() { known.resource_version.clone() } else { String::new() }
    }

    fn bump(&self) {
        self.applied.send_modify(|n| *n += 1);
    }

    fn replace(&self, items: Vec<Value>, resource_version: String) {
        let items = items
            .into_iter()
            .filter_map(|item| Some((name_of(&item)?, Arc::new(StoredInstallation::new(item)))))
            .collect();
        *self.write() = Known { items: Some(items), resource_version };
        self.bump();
    }

    fn forget(&self) {
        let was_following = std::mem::take(&mut *self.write()).items.is_some();
        if was_following {
            self.bump();
        }
    }

    /// Applies one watch event; `false` if it says the watch must start over (an ERROR).
    fn apply(&self, event: &Value) -> bool {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
        let Some(object) = event.get("object") else { return false };
        let version = object["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string();
        {
            let mut known = self.write();
            let Some(items) = known.items.as_mut() else { return false };
            match (kind, name_of(object)) {
                ("ADDED" | "MODIFIED", Some(name)) => {
                    items.insert(name, Arc::new(StoredInstallation::new(object.clone())));
                }
                ("DELETED", Some(name)) => {
                    items.remove(&name);
                }
                ("BOOKMARK", _) => {}
                _ => return false,
            }
            if !version.is_empty() {
                known.resource_version = version;
            }
        }
        self.bump();
        true
    }
}

fn name_of(object: &Value) -> Option<String> {
    object["metadata"]["name"].as_str().map(str::to_string)
}

/// Lists, then watches from the list's resourceVersion, renewing the watch from the last one
/// seen; any failure forgets everything and starts over with a list.
async fn run<C: OwnClient + ?Sized>(store: Weak<InstallationStore>, cluster: Weak<C>) {
    let mut retry = RETRY;
    loop {
        let Some(client) = cluster.upgrade().map(|c| c.own_client()) else { return };
        let listed = list(&client).await;
        let Some(strong) = store.upgrade() else { return };
        if !strong.tried.swap(true, std::sync::atomic::Ordering::AcqRel) && listed.is_err() {
            strong.bump();
        }
        drop(strong);
        match listed {
            Ok((items, version)) => match store.upgrade() {
                Some(store) => store.replace(items, version),
                None => return,
            },
            Err(error) => {
                tracing::warn!(%error, retry_s = retry.as_secs(), "PluginInstallations cannot be listed; each lookup asks the cluster");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_MAX);
                continue;
            }
        }
        loop {
            let Some(version) = store.upgrade().map(|s| s.read().resource_version.clone()) else { return };
            let started = std::time::Instant::now();
            match watch(&client, &version, &store).await {
                // A watch that ran its course: the next one goes on from where it ended.
                Ok(true) if started.elapsed() > RETRY => {
                    retry = RETRY;
                    continue;
                }
                Ok(_) => tracing::debug!("the PluginInstallation watch must start over: listing again"),
                Err(error) => tracing::warn!(%error, "the PluginInstallation watch broke; listing again"),
            }
            break;
        }
        let Some(strong) = store.upgrade() else { return };
        strong.forget();
        drop(strong);
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(RETRY_MAX);
    }
}

#[derive(serde::Deserialize)]
struct List {
    #[serde(default)]
    items: Vec<Value>,
    #[serde(default)]
    metadata: ListMeta,
}

#[derive(serde::Deserialize, Default)]
struct ListMeta {
    #[serde(default, rename = "resourceVersion")]
    resource_version: String,
}

fn request(path: &str) -> Result<http::Request<kube::client::Body>, UpstreamError> {
    http::Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::ACCEPT, "application/json")
        .body(kube::client::Body::empty())
        .map_err(|e| UpstreamError::Transport(e.to_string()))
}

async fn list(client: &kube::Client) -> Result<(Vec<Value>, String), UpstreamError> {
    let res = tokio::time::timeout(Duration::from_secs(15), client.send(request(PATH)?))
        .await
        .map_err(|_| UpstreamError::Transport("timeout".into()))?
        .map_err(|e| UpstreamError::Transport(fundament_kube_core::cause::chain(&e)))?;
    let status = res.status();
    let bytes = res.into_body().collect_bytes().await.map_err(|e| UpstreamError::Body(e.to_string()))?;
    // A 404 (no PluginInstallation CRD yet) too: nothing to follow, each lookup asks.
    if !status.is_success() {
        return Err(UpstreamError::Status { status: status.as_u16(), message: String::new() });
    }
    let list: List = serde_json::from_slice(&bytes).map_err(|e| UpstreamError::Body(e.to_string()))?;
    Ok((list.items, list.metadata.resource_version))
}

/// One watch from `version`: `Ok(true)` when it ended cleanly (renew it), `Ok(false)` when
/// the cluster said to start over.
async fn watch(
    client: &kube::Client,
    version: &str,
    store: &Weak<InstallationStore>,
) -> Result<bool, UpstreamError> {
    let path = format!(
        "{PATH}?watch=1&allowWatchBookmarks=true&timeoutSeconds={WATCH_SECONDS}&resourceVersion={version}"
    );
    let res = tokio::time::timeout(Duration::from_secs(30), client.send(request(&path)?))
        .await
        .map_err(|_| UpstreamError::Transport("timeout".into()))?
        .map_err(|e| UpstreamError::Transport(fundament_kube_core::cause::chain(&e)))?;
    if !res.status().is_success() {
        return Ok(false);
    }
    let mut body = res.into_body();
    let mut pending = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| UpstreamError::Body(e.to_string()))?;
        let Ok(data) = frame.into_data() else { continue };
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line = pending.split_to(end + 1);
            let line = &line[..end];
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let event: Value =
                serde_json::from_slice(line).map_err(|e| UpstreamError::Body(e.to_string()))?;
            let Some(store) = store.upgrade() else { return Ok(true) };
            if !store.apply(&event) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
