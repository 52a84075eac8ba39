//! The record of every replica's calls, in the shared store (`--shared-store`): one bounded log,
//! `audit`, as the in-process record (the newest `entries` calls of every cluster), each call
//! listed by number in its cluster's and its user's sub-logs, so a view reads only its
//! cluster's or its user's calls. The store numbers the calls in the order they reach it, from
//! whichever replica.
//!
//! A request never waits for the store: its call goes to a writer task, which appends what has
//! come in batches. While the store is down the writer retries, holding up to [`PENDING`]
//! calls; past that a call is missing from the view (counted in the log), never from the audit
//! lines, which are the audit trail.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use fundament_plugin_types::audit::{AuditEntry, AuditFilter};
use fundament_shared_store::{LogBounds, LogRecord, SharedStore, StoreError};
use tokio::sync::{mpsc, oneshot};

use super::{Retention, unix_ms};

/// Calls waiting for the store, at most.
const PENDING: usize = 10_000;
#[cfg(test)]
pub(super) const PENDING_FOR_TESTS: usize = PENDING;
/// Calls appended in one step, at most.
const BATCH: usize = 256;
/// How long a read waits for this replica's calls to be written first, so a user sees the call
/// they just made.
const FLUSH_WAIT: Duration = Duration::from_secs(1);
/// How far a call's time may be behind a later call's (replicas' clocks, queueing).
const CLOCK_MARGIN_MS: i64 = 60_000;
/// Records read in the first step of a scan (a tail's news is a few), growing to [`MAX_PAGE`].
const FIRST_PAGE: usize = 50;
const MAX_PAGE: usize = 1_000;

/// The log of every cluster's calls.
const LOG: &str = "audit";

enum ToWriter {
    Call(LogRecord),
    /// Answered once every call sent before it is in the store.
    Flush(oneshot::Sender<()>),
}

/// The shared record (see the module documentation).
pub(super) struct SharedRecord {
    store: Arc<dyn SharedStore>,
    retention: Retention,
    to_writer: mpsc::Sender<ToWriter>,
    dropped: AtomicU64,
}

/// The sub-log of a cluster's calls.
fn cluster_calls(cluster_id: &str) -> String {
    format!("cluster:{}", cluster_id.to_ascii_lowercase())
}

/// The sub-log of a user's calls on a cluster (a cluster id has no `:`).
fn user_calls(cluster_id: &str, user: &str) -> String {
    format!("user:{}:{user}", cluster_id.to_ascii_lowercase())
}

impl SharedRecord {
    /// Starts the writer task: call within a Tokio runtime.
    pub(super) fn start(store: Arc<dyn SharedStore>, retention: Retention) -> SharedRecord {
        let (to_writer, calls) = mpsc::channel(PENDING);
        let bounds = LogBounds { keep: retention.entries.max(1), idle: retention.age };
        tokio::spawn(write(Arc::clone(&store), bounds, calls));
        SharedRecord { store, retention, to_writer, dropped: AtomicU64::new(0) }
    }

    pub(super) fn describe(&self) -> String {
        self.store.describe()
    }

    pub(super) fn push(&self, entry: &AuditEntry) {
        // An entry is strings and numbers: it always serializes. Its id is the store's number.
        let bytes = serde_json::to_vec(entry).unwrap_or_default();
        let subs = vec![cluster_calls(&entry.cluster_id), user_calls(&entry.cluster_id, &entry.user)];
        let call = ToWriter::Call(LogRecord { subs, bytes });
        if self.to_writer.try_send(call).is_err() {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            // Logged at 1, 2, 4, 8, …: an outage does not flood the log.
            if dropped.is_power_of_two() {
                tracing::error!(
                    dropped,
                    store = %self.store.describe(),
                    "audit view: the shared store is behind; calls are missing from the view (the audit lines have every call)"
                );
            }
        }
    }

    /// Waits, up to [`FLUSH_WAIT`], until the calls this replica sent before are in the store.
    pub(super) async fn flush(&self) {
        self.flush_within(FLUSH_WAIT).await;
    }

    /// The number of the newest call (any cluster's, any user's): a tail reads again only when
    /// it moved.
    pub(super) async fn head(&self) -> Result<u64, StoreError> {
        self.flush().await;
        self.store.log_head(LOG).await
    }

    /// As the in-process record's query (same answers), read from the store newest first until
    /// the page is full, or the calls are older than the filter or the retention allow.
    pub(super) async fn query(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> Result<(Vec<AuditEntry>, u64), StoreError> {
        self.flush().await;
        let oldest_ms = unix_ms(time::OffsetDateTime::now_utc())
            .saturating_sub(i64::try_from(self.retention.age.as_millis()).unwrap_or(i64::MAX));
        let visible = |e: &AuditEntry| {
            e.cluster_id.eq_ignore_ascii_case(cluster_id) && only_user.is_none_or(|u| e.user == u)
        };
        let calls = |user: Option<&str>| match user {
            Some(user) => user_calls(cluster_id, user),
            None => cluster_calls(cluster_id),
        };
        let last_id = self
            .store
            .read_log(LOG, Some(&calls(only_user)), u64::MAX, 1)
            .await?
            .first()
            .and_then(entry)
            .filter(|e| e.at_ms >= oldest_ms && visible(e))
            .map_or(0, |e| e.id);

        // One user's calls (the caller's own, or the one a filter names) are in their sub-log.
        let sub = calls(only_user.or(filter.user.as_deref()));
        let limit = filter.effective_limit();
        let mut below = filter.before.unwrap_or(u64::MAX);
        let mut items = Vec::new();
        let mut page = FIRST_PAGE;
        'scan: loop {
            let records = self.store.read_log(LOG, Some(&sub), below, page).await?;
            for record in &records {
                below = record.number;
                let Some(e) = entry(record) else { continue };
                // Numbers order the calls; times only nearly (replicas' clocks differ), so
                // the scan ends at the retention with a margin, and `since` is a filter.
                let past = e.at_ms < oldest_ms.saturating_sub(CLOCK_MARGIN_MS)
                    || filter.after.is_some_and(|after| e.id <= after);
                if past {
                    break 'scan;
                }
                if visible(&e) && e.at_ms >= oldest_ms && filter.matches(&e) {
                    items.push(e);
                    if items.len() >= limit {
                        break 'scan;
                    }
                }
            }
            if records.len() < page {
                break;
            }
            page = (page * 4).min(MAX_PAGE);
        }
        // A call appended between reading `last_id` and the scan is newer than `last_id`:
        // a tail that went on from `last_id` would get it twice.
        let last_id = items.first().map_or(last_id, |e: &AuditEntry| e.id.max(last_id));
        Ok((items, last_id))
    }

    /// [`Self::flush`] waiting up to `wait` (at shutdown: longer than a read would).
    pub(super) async fn flush_within(&self, wait: Duration) {
        let (done, written) = oneshot::channel();
        let _ = tokio::time::timeout(wait, async {
            if self.to_writer.send(ToWriter::Flush(done)).await.is_ok() {
                let _ = written.await;
            }
        })
        .await;
    }
}

/// A record of the log as the call it holds, numbered by the store (`None`: unreadable, logged).
fn entry(record: &fundament_shared_store::Numbered) -> Option<AuditEntry> {
    match serde_json::from_slice::<AuditEntry>(&record.bytes) {
        Ok(mut e) => {
            e.id = record.number;
            Some(e)
        }
        Err(error) => {
            tracing::warn!(number = record.number, %error, "audit view: a call in the shared store is unreadable and skipped");
            None
        }
    }
}

/// The writer task: appends the calls as they come, a batch at a time, retrying while the
/// store is down (a retried batch is appended once: [`SharedStore::append`]).
async fn write(store: Arc<dyn SharedStore>, bounds: LogBounds, mut calls: mpsc::Receiver<ToWriter>) {
    let mut failing = false;
    while let Some(first) = calls.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match calls.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let mut records = Vec::new();
        let mut flushed = Vec::new();
        for message in batch {
            match message {
                ToWriter::Call(record) => records.push(record),
                ToWriter::Flush(done) => flushed.push(done),
            }
        }
        if !records.is_empty() {
            // One id for the batch and its retries: a retry after an answer lost on its way
            // (the store did append) appends nothing.
            let batch = uuid::Uuid::new_v4().to_string();
            let mut delay = Duration::from_millis(250);
            loop {
                match store.append(LOG, &batch, &records, bounds).await {
                    Ok(_) => {
                        if failing {
                            tracing::info!(store = %store.describe(), "audit view: the shared store takes calls again");
                            failing = false;
                        }
                        break;
                    }
                    Err(error) => {
                        if !failing {
                            tracing::error!(%error, "audit view: calls cannot be written to the shared store; retrying");
                            failing = true;
                        }
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(Duration::from_secs(5));
                    }
                }
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}
