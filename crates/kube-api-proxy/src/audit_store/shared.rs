//! The record of every replica's calls, in the shared store (`--shared-store`): one bounded log
//! per cluster, `audit:<cluster id>`, as the in-process record (the newest `entries` calls of
//! each cluster, numbered per cluster), each call listed by number in its user's sub-log, so a
//! view of one user's calls reads only theirs. The store numbers a cluster's calls in the order
//! they reach it, from whichever replica.
//!
//! A request never waits for the store: its call goes to a writer task, which appends what has
//! come in batches. While the store is down the writer retries, holding up to [`PENDING`]
//! calls; past that a call is missing from the view (counted in the log), never from the audit
//! lines, which are the audit trail.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use fundament_plugin_types::audit::{AuditEntry, AuditFilter};
use fundament_shared_store::{LogBounds, LogRecord, SharedStore, StoreError};
use tokio::sync::{mpsc, watch};

use super::{Retention, cluster_key, unix_ms};

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

/// The log of a cluster's calls.
fn cluster_log(cluster_id: &str) -> String {
    format!("audit:{}", cluster_key(cluster_id))
}

/// The sub-log of a user's calls in their cluster's log.
fn user_calls(user: &str) -> String {
    format!("user:{user}")
}

enum ToWriter {
    Call {
        log: String,
        record: LogRecord,
    },
    /// Answered once every call sent before it is in the store: the count of calls sent
    /// ([`Flushes::sent`]) when it was queued.
    Flush(u64),
}

/// What a read waits for: this replica's calls sent before it, in the store. A read (a live
/// tail reads every 100–500 ms) queues a flush only when calls were sent since the last one
/// answered, and only one flush is in the queue at a time: flushes in the writer's queue take
/// the places of calls, which are dropped once it is full.
#[derive(Default)]
struct Flushes {
    /// Calls handed to the writer so far.
    sent: AtomicU64,
    /// How many of those the store has, as of the last flush answered.
    written: watch::Sender<u64>,
    /// Whether a flush is in the writer's queue, unanswered.
    queued: AtomicBool,
    /// Flushes queued so far, for tests.
    #[cfg(test)]
    requested: AtomicU64,
}

impl Flushes {
    /// The writer answered a flush queued when `through` calls had been sent.
    fn answered(&self, through: u64) {
        // Cleared first: a read woken by the answer that needs a later flush can queue it.
        self.queued.store(false, Ordering::SeqCst);
        self.written.send_modify(|written| *written = (*written).max(through));
    }
}

/// The shared record (see the module documentation).
pub(super) struct SharedRecord {
    store: Arc<dyn SharedStore>,
    retention: Retention,
    to_writer: mpsc::Sender<ToWriter>,
    flushes: Arc<Flushes>,
    dropped: AtomicU64,
}

impl SharedRecord {
    /// Starts the writer task: call within a Tokio runtime.
    pub(super) fn start(store: Arc<dyn SharedStore>, retention: Retention) -> SharedRecord {
        let (to_writer, calls) = mpsc::channel(PENDING);
        let bounds = LogBounds { keep: retention.entries.max(1), idle: retention.age };
        let flushes = Arc::new(Flushes::default());
        tokio::spawn(write(Arc::clone(&store), bounds, calls, Arc::clone(&flushes)));
        SharedRecord { store, retention, to_writer, flushes, dropped: AtomicU64::new(0) }
    }

    pub(super) fn describe(&self) -> String {
        self.store.describe()
    }

    pub(super) fn push(&self, entry: &AuditEntry) {
        // An entry is strings and numbers: it always serializes. Its id is the store's number.
        let bytes = serde_json::to_vec(entry).unwrap_or_default();
        let record = LogRecord { subs: vec![user_calls(&entry.user)], bytes };
        let call = ToWriter::Call { log: cluster_log(&entry.cluster_id), record };
        if self.to_writer.try_send(call).is_ok() {
            self.flushes.sent.fetch_add(1, Ordering::SeqCst);
            return;
        }
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

    /// Waits, up to [`FLUSH_WAIT`], until the calls this replica sent before are in the store.
    pub(super) async fn flush(&self) {
        self.flush_within(FLUSH_WAIT).await;
    }

    /// The number of the newest call on `cluster_id` (any user's): a tail reads again only when
    /// it moved.
    pub(super) async fn head(&self, cluster_id: &str) -> Result<u64, StoreError> {
        self.flush().await;
        self.store.log_head(&cluster_log(cluster_id)).await
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
        let log = cluster_log(cluster_id);
        let oldest_ms = unix_ms(time::OffsetDateTime::now_utc())
            .saturating_sub(i64::try_from(self.retention.age.as_millis()).unwrap_or(i64::MAX));
        let visible = |e: &AuditEntry| {
            e.cluster_id.eq_ignore_ascii_case(cluster_id) && only_user.is_none_or(|u| e.user == u)
        };
        let only = only_user.map(user_calls);
        let last_id = self
            .store
            .read_log(&log, only.as_deref(), u64::MAX, 1)
            .await?
            .first()
            .and_then(entry)
            .filter(|e| e.at_ms >= oldest_ms && visible(e))
            .map_or(0, |e| e.id);

        // One user's calls (the caller's own, or the one a filter names) are in their sub-log.
        let sub = only_user.or(filter.user.as_deref()).map(user_calls);
        let limit = filter.effective_limit();
        let mut below = filter.before.unwrap_or(u64::MAX);
        let mut items = Vec::new();
        let mut page = FIRST_PAGE;
        'scan: loop {
            let records = self.store.read_log(&log, sub.as_deref(), below, page).await?;
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

    /// [`Self::flush`] waiting up to `wait` (at shutdown: longer than a read would). At once
    /// when no call was sent since the last flush answered; else it queues a flush unless one
    /// is queued already, and waits for the answer that covers its calls.
    pub(super) async fn flush_within(&self, wait: Duration) {
        let flushes = &self.flushes;
        let target = flushes.sent.load(Ordering::SeqCst);
        let mut written = flushes.written.subscribe();
        let _ = tokio::time::timeout(wait, async {
            loop {
                if *written.borrow_and_update() >= target {
                    return;
                }
                if !flushes.queued.swap(true, Ordering::SeqCst) {
                    let through = flushes.sent.load(Ordering::SeqCst);
                    // Never waits for room: a full queue (the store is behind) or a writer gone
                    // is a read that goes on without waiting.
                    if self.to_writer.try_send(ToWriter::Flush(through)).is_err() {
                        flushes.queued.store(false, Ordering::SeqCst);
                        return;
                    }
                    #[cfg(test)]
                    flushes.requested.fetch_add(1, Ordering::SeqCst);
                }
                if written.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }

    /// Flushes queued so far.
    #[cfg(test)]
    pub(super) fn flushes_requested(&self) -> u64 {
        self.flushes.requested.load(Ordering::SeqCst)
    }

    /// Messages in the writer's queue, calls and flushes.
    #[cfg(test)]
    pub(super) fn queued(&self) -> usize {
        PENDING - self.to_writer.capacity()
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

/// The writer task: appends the calls as they come, a batch at a time (one append per cluster's
/// log), retrying while the store is down (a retried batch is appended once:
/// [`SharedStore::append`]).
async fn write(
    store: Arc<dyn SharedStore>,
    bounds: LogBounds,
    mut calls: mpsc::Receiver<ToWriter>,
    flushes: Arc<Flushes>,
) {
    let mut failing = false;
    while let Some(first) = calls.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match calls.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        // Each cluster's calls in the order they came; the clusters in the order of their first.
        let mut logs: Vec<(String, Vec<LogRecord>)> = Vec::new();
        let mut flushed = Vec::new();
        for message in batch {
            match message {
                ToWriter::Call { log, record } => match logs.iter_mut().find(|(l, _)| *l == log) {
                    Some((_, records)) => records.push(record),
                    None => logs.push((log, vec![record])),
                },
                ToWriter::Flush(through) => flushed.push(through),
            }
        }
        for (log, records) in &logs {
            // One id for the batch and its retries: a retry after an answer lost on its way
            // (the store did append) appends nothing.
            let batch = uuid::Uuid::new_v4().to_string();
            let mut delay = Duration::from_millis(250);
            loop {
                match store.append(log, &batch, records, bounds).await {
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
        for through in flushed {
            flushes.answered(through);
        }
    }
}
