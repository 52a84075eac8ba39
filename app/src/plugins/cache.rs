//! Short-lived answers of kube-api-proxy, kept per user and cluster (server only):
//! the CRDs the generated views read on every call and the cluster's plugin
//! installations (discovery), so a page and the calls it makes next do not ask
//! the cluster for the same thing again.
//!
//! An answer is the user's own: the key is the verified user, the cluster and
//! the path, so one user never gets another's (the cluster's RBAC may show them
//! different things). It lives a few seconds ([`CRD_TTL`], [`DISCOVERY_TTL`]),
//! and a caller that has seen a newer resourceVersion on a watch asks for an
//! answer at least that new ([`KubeCache::get`]): the browser's watch
//! invalidates what it knows to have changed. Errors are never kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a CRD is kept: long enough for one page and the calls it makes
/// next, short enough that a change nobody watched shows soon.
pub const CRD_TTL: Duration = Duration::from_secs(15);
/// How long a cluster's installation list is kept (each full page load reads it).
pub const DISCOVERY_TTL: Duration = Duration::from_secs(5);
/// At most this many answers are kept; past it the expired go first, then the oldest.
pub const CAPACITY: usize = 4096;
/// At most this many bytes of answers (as JSON; parsed they take a few times that), however
/// many users fill it: past it the expired go first, then the oldest.
pub const MAX_BYTES: usize = 64 << 20;
/// An answer larger than this is not kept (a few such would push out everyone else's).
pub const MAX_ENTRY_BYTES: usize = 4 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    user: String,
    cluster: String,
    path: String,
}

#[derive(Debug)]
struct Entry {
    stored: Instant,
    ttl: Duration,
    value: Arc<Value>,
    /// Its size as JSON.
    bytes: usize,
}

impl Entry {
    fn fresh(&self, now: Instant) -> bool {
        now.duration_since(self.stored) < self.ttl
    }
}

/// The answers, bounded by [`CAPACITY`] and [`MAX_BYTES`].
#[derive(Debug, Default)]
pub struct KubeCache {
    entries: Mutex<HashMap<Key, Entry>>,
}

/// The resourceVersion of an answer: the list's, else the object's.
pub fn resource_version(value: &Value) -> Option<&str> {
    value.pointer("/metadata/resourceVersion").and_then(Value::as_str)
}

/// Whether `have` is at least `want`. resourceVersions are opaque to clients, but every
/// API server this console meets counts them up as integers; anything else counts as older.
fn at_least(have: Option<&str>, want: &str) -> bool {
    match (have.and_then(|h| h.parse::<u64>().ok()), want.parse::<u64>().ok()) {
        (Some(have), Some(want)) => have >= want,
        _ => have == Some(want),
    }
}

impl KubeCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept answer of `user` for `path` on `cluster`, unless it expired or is older than
    /// `not_older_than` (a resourceVersion the caller saw on a watch); such an entry is dropped.
    pub fn get(
        &self,
        user: &str,
        cluster: &str,
        path: &str,
        not_older_than: Option<&str>,
    ) -> Option<Arc<Value>> {
        let key = Key { user: user.to_owned(), cluster: cluster.to_owned(), path: path.to_owned() };
        let mut entries = self.lock();
        let entry = entries.get(&key)?;
        let usable = entry.fresh(Instant::now())
            && not_older_than.is_none_or(|want| at_least(resource_version(&entry.value), want));
        if usable {
            Some(Arc::clone(&entry.value))
        } else {
            entries.remove(&key);
            None
        }
    }

    /// Keeps `value` as `user`'s answer for `path` on `cluster` for `ttl`.
    pub fn put(&self, user: &str, cluster: &str, path: &str, value: Arc<Value>, ttl: Duration) {
        // Measured once, when kept (a cache miss, after a call to the cluster).
        let bytes = serde_json::to_vec(&*value).map_or(usize::MAX, |json| json.len());
        if bytes > MAX_ENTRY_BYTES {
            return;
        }
        let key = Key { user: user.to_owned(), cluster: cluster.to_owned(), path: path.to_owned() };
        let mut entries = self.lock();
        entries.remove(&key);
        let mut total: usize = entries.values().map(|e| e.bytes).sum();
        let full = |count: usize, total: usize| count >= CAPACITY || total + bytes > MAX_BYTES;
        if full(entries.len(), total) {
            let now = Instant::now();
            entries.retain(|_, e| e.fresh(now));
            total = entries.values().map(|e| e.bytes).sum();
            let mut by_age: Vec<(Instant, Key)> =
                entries.iter().map(|(k, e)| (e.stored, k.clone())).collect();
            by_age.sort_by_key(|(stored, _)| *stored);
            for (_, oldest) in by_age {
                if !full(entries.len(), total) {
                    break;
                }
                total -= entries.remove(&oldest).map_or(0, |e| e.bytes);
            }
        }
        entries.insert(key, Entry { stored: Instant::now(), ttl, value, bytes });
    }

    /// How many answers are kept (expired ones included until they are met or pushed out).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(rv: &str) -> Arc<Value> {
        Arc::new(json!({"metadata": {"name": "demoitems.demo.fundament.io", "resourceVersion": rv}}))
    }

    #[test]
    fn an_answer_is_the_users_own_and_for_its_cluster_and_path() {
        let cache = KubeCache::default();
        cache.put("alice", "c1", "/apis/x", crd("5"), CRD_TTL);
        assert!(cache.get("alice", "c1", "/apis/x", None).is_some());
        assert!(cache.get("bob", "c1", "/apis/x", None).is_none(), "another user's answer is never given");
        assert!(cache.get("alice", "c2", "/apis/x", None).is_none());
        assert!(cache.get("alice", "c1", "/apis/y", None).is_none());
    }

    #[test]
    fn a_newer_version_seen_on_a_watch_drops_the_older_answer() {
        let cache = KubeCache::default();
        cache.put("alice", "c1", "/apis/x", crd("5"), CRD_TTL);
        assert!(cache.get("alice", "c1", "/apis/x", Some("5")).is_some(), "as new as asked");
        assert!(cache.get("alice", "c1", "/apis/x", Some("4")).is_some());
        assert!(cache.get("alice", "c1", "/apis/x", Some("6")).is_none(), "older than the watch says");
        assert!(cache.get("alice", "c1", "/apis/x", None).is_none(), "and gone");
        cache.put("alice", "c1", "/apis/x", crd("opaque"), CRD_TTL);
        assert!(
            cache.get("alice", "c1", "/apis/x", Some("7")).is_none(),
            "a version it cannot compare is older"
        );
    }

    #[test]
    fn answers_expire() {
        let cache = KubeCache::default();
        cache.put("alice", "c1", "/apis/x", crd("5"), Duration::ZERO);
        assert!(cache.get("alice", "c1", "/apis/x", None).is_none());
        assert!(cache.is_empty());
    }

    #[test]
    fn it_stays_within_its_bytes_and_never_keeps_a_huge_answer() {
        let cache = KubeCache::default();
        let big = |rv: &str| {
            Arc::new(json!({"metadata": {"resourceVersion": rv}, "pad": "x".repeat(MAX_ENTRY_BYTES - 100)}))
        };
        let fits = MAX_BYTES / MAX_ENTRY_BYTES;
        for i in 0..fits + 3 {
            cache.put("mallory", "c1", &format!("/apis/x{i}"), big("1"), CRD_TTL);
        }
        assert!(cache.len() <= fits, "{} answers of {} bytes", cache.len(), MAX_ENTRY_BYTES);
        assert!(cache.get("mallory", "c1", "/apis/x0", None).is_none(), "the oldest went first");
        let huge = Arc::new(json!({"pad": "x".repeat(MAX_ENTRY_BYTES + 1)}));
        cache.put("mallory", "c1", "/apis/huge", huge, CRD_TTL);
        assert!(cache.get("mallory", "c1", "/apis/huge", None).is_none(), "not kept");
    }

    #[test]
    fn it_stays_within_its_capacity() {
        let cache = KubeCache::default();
        for i in 0..CAPACITY + 10 {
            cache.put(&format!("user-{i}"), "c1", "/apis/x", crd("1"), CRD_TTL);
        }
        assert_eq!(cache.len(), CAPACITY);
        assert!(cache.get("user-0", "c1", "/apis/x", None).is_none(), "the oldest went first");
        assert!(cache.get(&format!("user-{}", CAPACITY + 9), "c1", "/apis/x", None).is_some());
    }
}
