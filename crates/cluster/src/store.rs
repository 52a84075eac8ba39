//! Objects in memory, with one resourceVersion counter for the whole cluster
//! and a bounded log of changes that watches resume from.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use crate::resource::StorageKey;

/// How many changes a watch can resume across (older → 410 Gone).
pub const LOG_CAPACITY: usize = 20_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change, as watches see it.
#[derive(Debug, Clone)]
pub struct Change {
    pub rv: u64,
    pub key: StorageKey,
    pub kind: EventType,
    pub object: Arc<Value>,
    /// The object before the change (to tell when it leaves a selection).
    pub old: Option<Arc<Value>>,
}

/// (namespace, name); namespace empty for cluster-scoped objects.
pub type ObjectKey = (String, String);

#[derive(Default)]
pub struct Store {
    rv: u64,
    objects: HashMap<StorageKey, BTreeMap<ObjectKey, Arc<Value>>>,
    log: VecDeque<Arc<Change>>,
}

impl Store {
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// The oldest resourceVersion a watch can still start after.
    pub fn oldest_resumable(&self) -> u64 {
        self.log.front().map(|c| c.rv.saturating_sub(1)).unwrap_or(self.rv)
    }

    pub fn get(&self, key: &StorageKey, ns: &str, name: &str) -> Option<&Arc<Value>> {
        self.objects.get(key)?.get(&(ns.to_string(), name.to_string()))
    }

    /// Objects of a resource in key order, optionally in one namespace.
    pub fn iter<'a>(
        &'a self,
        key: &StorageKey,
        ns: &'a str,
    ) -> Box<dyn Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)> + 'a> {
        match self.objects.get(key) {
            None => Box::new(std::iter::empty()),
            Some(map) if ns.is_empty() => Box::new(map.iter()),
            Some(map) => {
                Box::new(map.range((ns.to_string(), String::new())..).take_while(move |((n, _), _)| n == ns))
            }
        }
    }

    pub fn count(&self, key: &StorageKey) -> usize {
        self.objects.get(key).map_or(0, BTreeMap::len)
    }

    pub fn keys(&self) -> impl Iterator<Item = &StorageKey> {
        self.objects.keys()
    }

    /// The next resourceVersion; the caller stamps it on the object it puts.
    pub fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Stores `object` (already stamped with `rv`) and logs the change.
    pub fn put(&mut self, key: &StorageKey, rv: u64, object: Value) -> Arc<Change> {
        let ns = crate::object::namespace(&object).to_string();
        let name = crate::object::name(&object).to_string();
        let object = Arc::new(object);
        let old = self.objects.entry(key.clone()).or_default().insert((ns, name), Arc::clone(&object));
        let kind = if old.is_some() { EventType::Modified } else { EventType::Added };
        self.record(Change { rv, key: key.clone(), kind, object, old })
    }

    /// Removes an object; the DELETED event carries it stamped with `rv`.
    pub fn remove(&mut self, key: &StorageKey, ns: &str, name: &str, rv: u64) -> Option<Arc<Change>> {
        let old = self.objects.get_mut(key)?.remove(&(ns.to_string(), name.to_string()))?;
        let mut gone = (*old).clone();
        // The deleted object is announced at the deletion's resourceVersion; one
        // without metadata (restored from a hand-edited snapshot) has none to carry it.
        if let Some(meta) = gone.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        Some(self.record(Change {
            rv,
            key: key.clone(),
            kind: EventType::Deleted,
            object: Arc::new(gone),
            old: Some(old),
        }))
    }

    fn record(&mut self, change: Change) -> Arc<Change> {
        let change = Arc::new(change);
        if self.log.len() == LOG_CAPACITY {
            self.log.pop_front();
        }
        self.log.push_back(Arc::clone(&change));
        change
    }

    /// Takes back `changes` (the latest ones, oldest first) that could not be
    /// saved: objects as they were before, the log and the counter at `rv`.
    pub fn undo(&mut self, changes: &[Arc<Change>], rv: u64) {
        for change in changes.iter().rev() {
            let place = (
                crate::object::namespace(&change.object).to_string(),
                crate::object::name(&change.object).to_string(),
            );
            let objects = self.objects.entry(change.key.clone()).or_default();
            match &change.old {
                Some(old) => objects.insert(place, Arc::clone(old)),
                None => objects.remove(&place),
            };
            if self.log.back().is_some_and(|last| Arc::ptr_eq(last, change)) {
                self.log.pop_back();
            }
        }
        self.rv = rv;
    }

    /// Changes after `rv`, or `None` when the log no longer reaches back that far.
    pub fn changes_since(&self, rv: u64) -> Option<Vec<Arc<Change>>> {
        if rv < self.oldest_resumable() {
            return None;
        }
        let start = self.log.partition_point(|c| c.rv <= rv);
        Some(self.log.range(start..).cloned().collect())
    }

    /// Every object, for snapshots.
    pub fn all(&self) -> impl Iterator<Item = (&StorageKey, &Arc<Value>)> {
        self.objects.iter().flat_map(|(k, m)| m.values().map(move |v| (k, v)))
    }

    /// Restores the counter (after loading a snapshot).
    pub fn set_resource_version(&mut self, rv: u64) {
        self.rv = self.rv.max(rv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> StorageKey {
        StorageKey { group: String::new(), resource: "configmaps".into() }
    }

    #[test]
    fn namespaces_partition_iteration() {
        let mut s = Store::default();
        for (ns, name) in [("a", "x"), ("b", "y"), ("a", "z"), ("ab", "w")] {
            let rv = s.next_rv();
            s.put(&key(), rv, json!({"metadata": {"namespace": ns, "name": name}}));
        }
        let names: Vec<&str> = s.iter(&key(), "a").map(|((_, n), _)| n.as_str()).collect();
        assert_eq!(names, ["x", "z"]);
        assert_eq!(s.iter(&key(), "").count(), 4);
    }

    #[test]
    fn changes_resume_from_a_resource_version() {
        let mut s = Store::default();
        for i in 0..3 {
            let rv = s.next_rv();
            s.put(&key(), rv, json!({"metadata": {"namespace": "a", "name": format!("o{i}")}}));
        }
        let rv = s.next_rv();
        s.remove(&key(), "a", "o0", rv).unwrap();
        let since: Vec<(u64, EventType)> =
            s.changes_since(2).unwrap().iter().map(|c| (c.rv, c.kind)).collect();
        assert_eq!(since, [(3, EventType::Added), (4, EventType::Deleted)]);
        assert_eq!(s.changes_since(4).unwrap().len(), 0);
    }
}
