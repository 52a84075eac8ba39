//! What replicas of a service share, so that any replica accepts any session
//! and a bound or a revocation made at one holds at all of them:
//!
//! - **revoked sessions** (authn writes, every authn replica serves them to
//!   verifiers): a set of `(sid, exp)` and a channel announcing each new one;
//! - **single-use keys** (plugin-proxy's frame tickets): taken once, until they expire;
//! - **leases** (kube-api-proxy's concurrent watch limits): at most `limit`
//!   holders per group, each lease lapsing unless renewed, so a replica that
//!   crashed gives its slots back by itself;
//! - **bounded logs** (kube-api-proxy's record for the audit view): records numbered in the
//!   order they were appended, whichever replica appended them, the newest kept.
//!
//! [`InProcess`] keeps all of it in this process's memory (one replica only;
//! revocations optionally in a file). [`RedisStore`] keeps it in Redis
//! (`--shared-store redis://host:port[/db]`), which every replica reaches.
//! The choice of Redis over the cluster's API: leases and single-use keys
//! need an atomic compare-and-set with expiry on every watch and frame load,
//! which a Kubernetes API server does with an etcd write per call and no
//! expiry of its own, and the revocation channel needs pub/sub.
//!
//! Store errors are [`StoreError`]s; what a caller does with one (refuse,
//! retry) is the caller's to decide and document: a revocation check is never
//! skipped because the store is down.
#![forbid(unsafe_code)]

mod memory;
mod redis_store;
pub mod testing;

use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

pub use memory::InProcess;
pub use redis_store::RedisStore;

/// One revoked session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    /// The session id (the UserToken's `jti`).
    pub sid: String,
    /// When the session's UserToken expires (unix seconds): the entry is kept while a verifier
    /// would still accept that token ([`fundament_tokens::accepted_at`]).
    pub exp: i64,
}

/// How much a bounded log keeps ([`SharedStore::append`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogBounds {
    /// The newest this many records.
    pub keep: usize,
    /// The records go once nothing was appended for this long (the numbering does not restart).
    pub idle: Duration,
}

/// How long a log remembers a batch id it appended ([`SharedStore::append`]).
pub const BATCH_MEMORY: Duration = Duration::from_secs(600);

/// A record to append to a log: its bytes, and the sub-logs that list it (by number only: a
/// sub-log is a way to read some of the log's records without the others', e.g. one user's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    pub subs: Vec<String>,
    pub bytes: Vec<u8>,
}

/// A record read back with its number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    pub number: u64,
    pub bytes: Vec<u8>,
}

/// Why the store could not answer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The shared store cannot be reached or refused the command.
    #[error("the shared store {store} is unavailable: {detail}")]
    Unavailable { store: String, detail: String },
    /// The setting is not a store URL this build understands.
    #[error("invalid shared store URL {url:?}: {detail} (expected redis://host:port[/db])")]
    BadUrl { url: String, detail: String },
    #[error("cannot read the revoked sessions from {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not a revoked-sessions file ({source}): move it away to start with none")]
    Parse { path: String, source: serde_json::Error },
    #[error("cannot write the revoked sessions to {path}: {source}")]
    Write { path: String, source: std::io::Error },
}

/// A future of the store.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// The state replicas share. Every method is one atomic step in the store.
pub trait SharedStore: Send + Sync + std::fmt::Debug {
    /// Where the state lives, for logs (never a password).
    fn describe(&self) -> String;

    /// Whether more than one replica can share this store (false: in-process).
    fn is_shared(&self) -> bool;

    /// Takes `key` for `ttl`: true the first time, false while it is taken.
    fn take_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool>;

    /// Revokes `sid` until `exp` and announces it on the revocation channel. Stored before it
    /// is announced, so a revocation that was answered survives a restart of every replica.
    fn revoke<'a>(&'a self, revoked: &'a Revoked) -> StoreFuture<'a, ()>;

    /// Every revocation whose token would still be accepted at `now` (unix seconds).
    fn revoked(&self, now: i64) -> StoreFuture<'_, Vec<Revoked>>;

    /// Revocations announced from now on, whichever replica made them. The stream ends when the
    /// connection to the store is lost: subscribe again, then take a fresh [`Self::revoked`].
    fn revocation_events(&self) -> StoreFuture<'_, BoxStream<'static, Revoked>>;

    /// Takes or renews `holder`'s lease in `group` for `ttl`. A new holder gets one only while
    /// fewer than `limit` unexpired leases are held; renewing one held always succeeds. False:
    /// the group is full.
    fn lease<'a>(
        &'a self,
        group: &'a str,
        holder: &'a str,
        limit: usize,
        ttl: Duration,
    ) -> StoreFuture<'a, bool>;

    /// Gives `holder`'s lease in `group` back (nothing if it has none).
    fn release<'a>(&'a self, group: &'a str, holder: &'a str) -> StoreFuture<'a, ()>;

    /// Unexpired leases in `group`.
    fn leases<'a>(&'a self, group: &'a str) -> StoreFuture<'a, usize>;

    /// Appends `records`, in order, to the log `log`, each listed in its sub-logs: numbered
    /// one past the newest number the log ever had, in one atomic step, so numbers never repeat
    /// and follow the order of appending across replicas. Keeps [`LogBounds`] (a number a
    /// sub-log still lists after the log dropped its record is never read). Returns the number
    /// of the last record (the log's head; unchanged for no records). A `batch` id appended in
    /// the last [`BATCH_MEMORY`] is not appended again: a writer that retries after an answer
    /// lost on its way repeats its batch id, and no record is listed twice.
    fn append<'a>(
        &'a self,
        log: &'a str,
        batch: &'a str,
        records: &'a [LogRecord],
        bounds: LogBounds,
    ) -> StoreFuture<'a, u64>;

    /// Up to `count` records of `log` numbered below `below`, newest first; with `sub`, only
    /// those that sub-log lists. The number of the last one read is the next page's `below`.
    fn read_log<'a>(
        &'a self,
        log: &'a str,
        sub: Option<&'a str>,
        below: u64,
        count: usize,
    ) -> StoreFuture<'a, Vec<Numbered>>;

    /// The number of the newest record `log` ever had (0: none): a cheap test for news.
    fn log_head<'a>(&'a self, log: &'a str) -> StoreFuture<'a, u64>;
}

/// The store of the `--shared-store` setting: Redis for a `redis://` URL, else this process.
pub fn from_setting(url: Option<&str>) -> Result<std::sync::Arc<dyn SharedStore>, StoreError> {
    Ok(match url {
        Some(url) => std::sync::Arc::new(RedisStore::new(url)?),
        None => std::sync::Arc::new(InProcess::new()),
    })
}

/// Now, in unix seconds.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
