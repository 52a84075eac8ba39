//! A small async cache: one fetch at a time per key (concurrent callers wait
//! for it and share its answer), answers fresh for as long as the fetch says.
//! Bounded: when full, the least recently used tenth goes (never everything at
//! once, so a flood of new keys cannot empty the cache of the hot ones).
//!
//! A hit takes one short synchronous lock and never awaits: every request of a
//! busy gateway looks the same few keys up (its user's ServiceAccount token, a
//! review), and an async lock per key would queue them all behind each other,
//! one wake-up at a time. Only a miss waits, for the one fetch of its key.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Held by the one caller fetching a key; the others wait on it, then read what it stored.
type Fetching = Arc<tokio::sync::Mutex<()>>;

struct Entry<V> {
    value: Option<(V, Instant)>,
    fetching: Fetching,
    /// The last use, for eviction.
    used: u64,
}

struct Slots<K, V> {
    map: HashMap<K, Entry<V>>,
    /// Bumped on every use: the last use of each key, for eviction.
    clock: u64,
}

pub struct Cache<K, V> {
    slots: Mutex<Slots<K, V>>,
    capacity: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> Cache<K, V> {
    pub fn new(capacity: usize) -> Self {
        Self { slots: Mutex::new(Slots { map: HashMap::new(), clock: 0 }), capacity: capacity.max(1) }
    }

    fn slots(&self) -> MutexGuard<'_, Slots<K, V>> {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many keys are held.
    pub fn len(&self) -> usize {
        self.slots().map.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fresh value of `key`, or the lock to take before fetching it.
    fn lookup(&self, key: &K) -> Result<V, Fetching> {
        let mut slots = self.slots();
        slots.clock += 1;
        let now = slots.clock;
        if let Some(entry) = slots.map.get_mut(key) {
            entry.used = now;
            return match &entry.value {
                Some((value, until)) if Instant::now() < *until => Ok(value.clone()),
                _ => Err(Arc::clone(&entry.fetching)),
            };
        }
        if slots.map.len() >= self.capacity {
            evict_least_recent(&mut slots.map, self.capacity / 10 + 1);
        }
        let fetching = Fetching::default();
        slots.map.insert(key.clone(), Entry { value: None, fetching: Arc::clone(&fetching), used: now });
        Err(fetching)
    }

    /// The cached value of `key`, or what `fetch` answers (fresh for the duration it gives).
    pub async fn get<F, Fut, E>(&self, key: K, fetch: F) -> Result<V, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(V, Duration), E>>,
    {
        let (fetching, _only_fetch) = loop {
            let fetching = match self.lookup(&key) {
                Ok(value) => return Ok(value),
                Err(fetching) => fetching,
            };
            let held = Arc::clone(&fetching).lock_owned().await;
            // Whoever held the lock before may have fetched it meanwhile.
            match self.lookup(&key) {
                Ok(value) => return Ok(value),
                // The entry was forgotten (or evicted) while this caller waited: start over.
                Err(current) if !Arc::ptr_eq(&current, &fetching) => continue,
                Err(_) => break (fetching, held),
            }
        };
        let (value, fresh_for) = fetch().await?;
        let until = Instant::now() + fresh_for;
        let mut slots = self.slots();
        // Stored only in the entry this fetch was for: a `forget` during the fetch means what
        // was fetched may already be stale, so the next caller fetches again.
        if let Some(entry) = slots.map.get_mut(&key)
            && Arc::ptr_eq(&entry.fetching, &fetching)
        {
            entry.value = Some((value.clone(), until));
        }
        Ok(value)
    }

    /// Forgets `key` (e.g. after the upstream refused what was cached).
    pub fn forget(&self, key: &K) {
        self.slots().map.remove(key);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.slots().map.clear();
    }
}

/// Removes the `n` least recently used entries (one pass, O(len log len), once per `n` inserts).
fn evict_least_recent<K: Eq + Hash + Clone, V>(map: &mut HashMap<K, Entry<V>>, n: usize) {
    let mut uses: Vec<(u64, K)> = map.iter().map(|(k, entry)| (entry.used, k.clone())).collect();
    uses.sort_unstable_by_key(|(used, _)| *used);
    for (_, key) in uses.into_iter().take(n) {
        map.remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn concurrent_misses_fetch_once() {
        let cache = Arc::new(Cache::<&str, u32>::new(10));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let (cache, calls) = (Arc::clone(&cache), Arc::clone(&calls));
            tasks.push(tokio::spawn(async move {
                cache
                    .get("k", || async {
                        calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok::<_, ()>((7, Duration::from_secs(60)))
                    })
                    .await
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap(), Ok(7));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_full_cache_drops_the_least_recently_used_not_everything() {
        let cache = Cache::<u32, u32>::new(10);
        for k in 0..10 {
            cache.get(k, || async move { Ok::<_, ()>((k, Duration::from_secs(60))) }).await.unwrap();
        }
        // Key 0 is hot: used again, so it is the most recent.
        cache.get(0, || async { Ok::<_, ()>((99, Duration::from_secs(60))) }).await.unwrap();
        for k in 100..200 {
            cache.get(k, || async move { Ok::<_, ()>((k, Duration::from_secs(60))) }).await.unwrap();
            cache.get(0, || async { Ok::<_, ()>((99, Duration::from_secs(60))) }).await.unwrap();
        }
        assert!(cache.len() <= 10, "bounded: {}", cache.len());
        assert_eq!(
            cache.get(0, || async { Ok::<_, ()>((99, Duration::ZERO)) }).await,
            Ok(0),
            "the hot key survived"
        );
    }

    #[tokio::test]
    async fn stale_entries_and_errors_refetch() {
        let cache = Cache::<&str, u32>::new(10);
        assert_eq!(cache.get("k", || async { Ok::<_, ()>((1, Duration::ZERO)) }).await, Ok(1));
        assert_eq!(cache.get("k", || async { Ok::<_, ()>((2, Duration::from_secs(9))) }).await, Ok(2));
        assert_eq!(cache.get("k", || async { Ok::<_, ()>((3, Duration::from_secs(9))) }).await, Ok(2));
        cache.forget(&"k");
        assert_eq!(cache.get("k", || async { Err::<(u32, Duration), _>("down") }).await, Err("down"));
        assert_eq!(cache.get("k", || async { Ok::<_, ()>((4, Duration::from_secs(9))) }).await, Ok(4));
    }
}
