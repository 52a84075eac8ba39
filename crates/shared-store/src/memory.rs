//! The store in this process's memory: right for one replica (and `fundament dev`), wrong for
//! two, which would each see only their own half.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use crate::{LogBounds, LogRecord, Numbered, Revoked, SharedStore, StoreError, StoreFuture, now_unix};

/// Bound on single-use keys held at once; past it, expired keys go first, and a table full of
/// live keys refuses new ones (they then fail like a used key) rather than forget a live one.
pub const ONCE_CAPACITY: usize = 100_000;

/// State kept in memory; revocations optionally written to a file too.
#[derive(Debug)]
pub struct InProcess {
    once: Mutex<HashMap<String, Instant>>,
    revoked: Mutex<HashMap<String, i64>>,
    events: broadcast::Sender<Revoked>,
    leases: Mutex<HashMap<String, HashMap<String, Instant>>>,
    logs: Mutex<HashMap<String, Log>>,
    file: Option<PathBuf>,
}

/// One bounded log: its records newest first, what each sub-log lists (numbers, newest
/// first), and its numbering, which outlives the records when they go for being idle.
#[derive(Debug, Default)]
struct Log {
    head: u64,
    records: VecDeque<Numbered>,
    subs: HashMap<String, VecDeque<u64>>,
    idle_until: Option<Instant>,
    /// Batch ids appended, until when they are remembered.
    batches: HashMap<String, Instant>,
}

impl Log {
    /// Drops the records once the log has been idle past its bound.
    fn expire(&mut self, now: Instant) {
        if self.idle_until.is_some_and(|until| until <= now) {
            self.records.clear();
            self.subs.clear();
            self.idle_until = None;
        }
    }

    fn append(&mut self, batch: &str, records: &[LogRecord], bounds: LogBounds, now: Instant) -> u64 {
        self.expire(now);
        self.batches.retain(|_, until| *until > now);
        if records.is_empty() || self.batches.insert(batch.to_owned(), now + crate::BATCH_MEMORY).is_some() {
            return self.head;
        }
        for record in records {
            self.head += 1;
            for sub in &record.subs {
                let listed = self.subs.entry(sub.clone()).or_default();
                listed.push_front(self.head);
                listed.truncate(bounds.keep);
            }
            self.records.push_front(Numbered { number: self.head, bytes: record.bytes.clone() });
        }
        // A sub-log may still list numbers the log dropped: reading skips them.
        self.records.truncate(bounds.keep);
        if !records.is_empty() {
            self.idle_until = Some(now + bounds.idle);
        }
        self.head
    }

    /// The record numbered `number`: the records' numbers have no gaps, newest first.
    fn get(&self, number: u64) -> Option<&Numbered> {
        let index = usize::try_from(self.head.checked_sub(number)?).ok()?;
        self.records.get(index).filter(|r| r.number == number)
    }

    fn read(&self, sub: Option<&str>, below: u64, count: usize) -> Vec<Numbered> {
        match sub {
            None => self.records.iter().filter(|r| r.number < below).take(count).cloned().collect(),
            Some(sub) => self.subs.get(sub).map_or_else(Vec::new, |listed| {
                listed
                    .iter()
                    .filter(|n| **n < below)
                    .filter_map(|n| self.get(*n))
                    .take(count)
                    .cloned()
                    .collect()
            }),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct File {
    revoked: Vec<Revoked>,
}

impl Default for InProcess {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl InProcess {
    /// Memory only.
    pub fn new() -> InProcess {
        InProcess {
            once: Mutex::new(HashMap::new()),
            revoked: Mutex::new(HashMap::new()),
            events: broadcast::channel(1024).0,
            leases: Mutex::new(HashMap::new()),
            logs: Mutex::new(HashMap::new()),
            file: None,
        }
    }

    /// Revocations loaded from `path` (none when it does not exist) and written there
    /// atomically on each new one. A file that exists but cannot be read is an error and is
    /// never overwritten.
    pub fn with_revocations_file(path: &Path) -> Result<InProcess, StoreError> {
        let shown = path.display().to_string();
        let revoked = match std::fs::read(path) {
            Ok(bytes) => {
                let file: File = serde_json::from_slice(&bytes)
                    .map_err(|source| StoreError::Parse { path: shown, source })?;
                file.revoked.into_iter().map(|r| (r.sid, r.exp)).collect()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(source) => return Err(StoreError::Read { path: shown, source }),
        };
        Ok(InProcess { revoked: Mutex::new(revoked), file: Some(path.to_path_buf()), ..InProcess::new() })
    }

    fn take(&self, key: &str, ttl: Duration) -> bool {
        let now = Instant::now();
        let mut once = lock(&self.once);
        if once.get(key).is_some_and(|until| *until > now) {
            return false;
        }
        if once.len() >= ONCE_CAPACITY {
            once.retain(|_, until| *until > now);
            if once.len() >= ONCE_CAPACITY {
                tracing::warn!(
                    "shared store (in-process): the table of single-use keys is full; refusing new ones"
                );
                return false;
            }
        }
        once.insert(key.to_string(), now + ttl);
        true
    }

    fn add_revoked(&self, r: &Revoked) -> Result<(), StoreError> {
        let snapshot = {
            let mut set = lock(&self.revoked);
            let now = now_unix();
            set.retain(|_, exp| fundament_tokens::accepted_at(*exp, now));
            set.insert(r.sid.clone(), r.exp);
            set.iter().map(|(sid, exp)| Revoked { sid: sid.clone(), exp: *exp }).collect::<Vec<_>>()
        };
        if let Some(path) = &self.file {
            write_atomically(path, &File { revoked: snapshot })?;
        }
        // Nobody listening is fine: listeners that come later read the set.
        let _ = self.events.send(r.clone());
        Ok(())
    }

    fn lease_now(&self, group: &str, holder: &str, limit: usize, ttl: Duration) -> bool {
        let now = Instant::now();
        let mut leases = lock(&self.leases);
        let held = leases.entry(group.to_string()).or_default();
        held.retain(|_, until| *until > now);
        if !held.contains_key(holder) && held.len() >= limit {
            return false;
        }
        held.insert(holder.to_string(), now + ttl);
        true
    }
}

impl SharedStore for InProcess {
    fn describe(&self) -> String {
        "in-process (one replica only)".into()
    }

    fn is_shared(&self) -> bool {
        false
    }

    fn take_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(self.take(key, ttl)) })
    }

    fn revoke<'a>(&'a self, revoked: &'a Revoked) -> StoreFuture<'a, ()> {
        Box::pin(async move { self.add_revoked(revoked) })
    }

    fn revoked(&self, now: i64) -> StoreFuture<'_, Vec<Revoked>> {
        Box::pin(async move {
            Ok(lock(&self.revoked)
                .iter()
                .filter(|(_, exp)| fundament_tokens::accepted_at(**exp, now))
                .map(|(sid, exp)| Revoked { sid: sid.clone(), exp: *exp })
                .collect())
        })
    }

    fn revocation_events(&self) -> StoreFuture<'_, futures::stream::BoxStream<'static, Revoked>> {
        let events = BroadcastStream::new(self.events.subscribe());
        // A listener that lagged behind ends, like a lost connection: it starts over from the set.
        Box::pin(async move {
            Ok(events.take_while(|e| std::future::ready(e.is_ok())).filter_map(|e| async { e.ok() }).boxed())
        })
    }

    fn lease<'a>(
        &'a self,
        group: &'a str,
        holder: &'a str,
        limit: usize,
        ttl: Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(self.lease_now(group, holder, limit, ttl)) })
    }

    fn release<'a>(&'a self, group: &'a str, holder: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut leases = lock(&self.leases);
            if let Some(held) = leases.get_mut(group) {
                held.remove(holder);
                if held.is_empty() {
                    leases.remove(group);
                }
            }
            Ok(())
        })
    }

    fn leases<'a>(&'a self, group: &'a str) -> StoreFuture<'a, usize> {
        Box::pin(async move {
            let now = Instant::now();
            Ok(lock(&self.leases).get(group).map_or(0, |held| held.values().filter(|u| **u > now).count()))
        })
    }

    fn append<'a>(
        &'a self,
        log: &'a str,
        batch: &'a str,
        records: &'a [LogRecord],
        bounds: LogBounds,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            Ok(lock(&self.logs).entry(log.to_string()).or_default().append(
                batch,
                records,
                bounds,
                Instant::now(),
            ))
        })
    }

    fn read_log<'a>(
        &'a self,
        log: &'a str,
        sub: Option<&'a str>,
        below: u64,
        count: usize,
    ) -> StoreFuture<'a, Vec<Numbered>> {
        Box::pin(async move {
            let mut logs = lock(&self.logs);
            let Some(log) = logs.get_mut(log) else { return Ok(Vec::new()) };
            log.expire(Instant::now());
            Ok(log.read(sub, below, count))
        })
    }

    fn log_head<'a>(&'a self, log: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move { Ok(lock(&self.logs).get(log).map_or(0, |l| l.head)) })
    }
}

fn write_atomically(path: &Path, file: &File) -> Result<(), StoreError> {
    let fail = |source| StoreError::Write { path: path.display().to_string(), source };
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec(file).map_err(|e| fail(std::io::Error::other(e)))?;
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::File::open(&tmp).and_then(|f| f.sync_all()).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_revocation_is_kept_while_its_token_would_verify() {
        let store = InProcess::new();
        let now = now_unix();
        store.revoke(&Revoked { sid: "within-leeway".into(), exp: now - 10 }).await.unwrap();
        store
            .revoke(&Revoked { sid: "past-it".into(), exp: now - fundament_tokens::EXP_LEEWAY_SECS })
            .await
            .unwrap();
        store.revoke(&Revoked { sid: "later".into(), exp: now + 600 }).await.unwrap();
        let mut sids: Vec<_> = store.revoked(now).await.unwrap().into_iter().map(|r| r.sid).collect();
        sids.sort();
        assert_eq!(sids, ["later", "within-leeway"]);
    }

    #[tokio::test]
    async fn revocations_survive_a_restart_and_a_broken_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("revoked-sessions.json");
        let store = InProcess::with_revocations_file(&path).unwrap();
        store.revoke(&Revoked { sid: "a".into(), exp: i64::MAX }).await.unwrap();
        let again = InProcess::with_revocations_file(&path).unwrap();
        assert_eq!(again.revoked(0).await.unwrap(), vec![Revoked { sid: "a".into(), exp: i64::MAX }]);
        std::fs::write(&path, "not json").unwrap();
        let err = InProcess::with_revocations_file(&path).unwrap_err().to_string();
        assert!(err.contains("is not a revoked-sessions file"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json", "left untouched");
    }
}
