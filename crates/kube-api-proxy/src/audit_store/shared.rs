//! The record of every replica's calls, in the shared store (`--shared-store`): one bounded log
//! per cluster (`audit-<cluster-id>`), each call listed in its user's sub-log too, so a view of
//! one user's calls reads only theirs. The store numbers the calls in the order they reach it,
//! from whichever replica.
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
/// Records read in the first step of a scan (a tail's news is a few), growing to [`MAX_PAGE`].
const FIRST_PAGE: usize = 50;
const MAX_PAGE: usize = 1_000;

enum ToWriter {
    Call {
        log: String,
        record: LogRecord,
    },
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

/// The log of a cluster's calls.
fn log_name(cluster_id: &str) -> String {
    format!("audit-{}", cluster_id.to_ascii_lowercase())
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
        let call = ToWriter::Call {
            log: log_name(&entry.cluster_id),
            record: LogRecord { sub: entry.user.clone(), bytes },
        };
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
        let (done, written) = oneshot::channel();
        let _ = tokio::time::timeout(FLUSH_WAIT, async {
            if self.to_writer.send(ToWriter::Flush(done)).await.is_ok() {
                let _ = written.await;
            }
        })
        .await;
    }

    /// The number of the newest call on the cluster (any user's): a tail reads again only
    /// when it moved.
    pub(super) async fn head(&self, cluster_id: &str) -> Result<u64, StoreError> {
        self.flush().await;
        self.store.log_head(&log_name(cluster_id)).await
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
        let log = log_name(cluster_id);
        let oldest_ms = unix_ms(time::OffsetDateTime::now_utc())
            .saturating_sub(i64::try_from(self.retention.age.as_millis()).unwrap_or(i64::MAX));
        let visible = |e: &AuditEntry| {
            e.cluster_id.eq_ignore_ascii_case(cluster_id) && only_user.is_none_or(|u| e.user == u)
        };
        // Numbers have no gaps in the log (trimming drops the oldest), so the newest `entries`
        // numbers are what it keeps. A sub-log keeps its own newest `entries`, older than that.
        let head = self.store.log_head(&log).await?;
        let floor = head.saturating_sub(self.retention.entries as u64);
        let kept = |e: &AuditEntry| e.id > floor && e.at_ms >= oldest_ms;
        let last_id = self
            .store
            .read_log(&log, only_user, 0, 1)
            .await?
            .first()
            .and_then(entry)
            .filter(|e| kept(e) && visible(e))
            .map_or(0, |e| e.id);

        // One user's calls (the caller's own, or the one a filter names) are in their sub-log.
        let sub = only_user.or(filter.user.as_deref());
        let mut skip = 0;
        if sub.is_none()
            && let Some(before) = filter.before
        {
            // The export pages with `before`: the call numbered `before - 1` is
            // `head + 1 - before` from the newest, so no page reads the log from its newest again.
            skip = usize::try_from((head + 1).saturating_sub(before)).unwrap_or(usize::MAX);
        }
        let limit = filter.effective_limit();
        let mut items = Vec::new();
        let mut page = FIRST_PAGE;
        'scan: loop {
            let records = self.store.read_log(&log, sub, skip, page).await?;
            for record in &records {
                let Some(e) = entry(record) else { continue };
                let past = !kept(&e)
                    || filter.after.is_some_and(|after| e.id <= after)
                    || filter.since_ms.is_some_and(|since| e.at_ms < since);
                if past {
                    break 'scan;
                }
                if visible(&e) && filter.matches(&e) {
                    items.push(e);
                    if items.len() >= limit {
                        break 'scan;
                    }
                }
            }
            if records.len() < page {
                break;
            }
            skip += records.len();
            page = (page * 4).min(MAX_PAGE);
        }
        Ok((items, last_id))
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

/// The writer task: appends the calls as they come, a batch per cluster at a time, retrying
/// while the store is down (a retry after an answer lost on the way may list a call twice).
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
        let mut logs: Vec<(String, Vec<LogRecord>)> = Vec::new();
        let mut flushed = Vec::new();
        for message in batch {
            match message {
                ToWriter::Call { log, record } => match logs.iter_mut().find(|(l, _)| *l == log) {
                    Some((_, records)) => records.push(record),
                    None => logs.push((log, vec![record])),
                },
                ToWriter::Flush(done) => flushed.push(done),
            }
        }
        for (log, records) in &logs {
            let mut delay = Duration::from_millis(250);
            loop {
                match store.append(log, records, bounds).await {
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
