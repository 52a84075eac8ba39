//! A small async cache: one fetch at a time per key (concurrent callers wait
//! for it and share its answer), answers fresh for as long as the fetch says.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Slot<V> = Arc<tokio::sync::Mutex<Option<(V, Instant)>>>;

pub struct Cache<K, V> {
    slots: Mutex<HashMap<K, Slot<V>>>,
    capacity: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> Cache<K, V> {
    pub fn new(capacity: usize) -> Self {
        Self { slots: Mutex::new(HashMap::new()), capacity }
    }

    /// The cached value of `key`, or what `fetch` answers (fresh for the duration it gives).
    pub async fn get<F, Fut, E>(&self, key: K, fetch: F) -> Result<V, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(V, Duration), E>>,
    {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if slots.len() >= self.capacity && !slots.contains_key(&key) {
                // Crude but bounded: forget everything rather than grow without limit.
                slots.clear();
            }
            Arc::clone(slots.entry(key).or_default())
        };
        let mut guard = slot.lock().await;
        if let Some((value, until)) = guard.as_ref()
            && Instant::now() < *until
        {
            return Ok(value.clone());
        }
        let (value, fresh_for) = fetch().await?;
        *guard = Some((value.clone(), Instant::now() + fresh_for));
        Ok(value)
    }

    /// Forgets `key` (e.g. after the upstream refused what was cached).
    pub fn forget(&self, key: &K) {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(key);
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
