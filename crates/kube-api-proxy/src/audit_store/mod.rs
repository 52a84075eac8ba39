//! What the console's audit view reads: the latest plugin-path calls, bounded by count (per
//! cluster), by age, and in size (every text field is cut to its bound, [`crate::audit::bounded`]).
//! Two records answer alike:
//!
//! - **this process's calls** ([`AuditStore::open`], [`AuditStore::in_memory`]): in memory and
//!   in a JSON-lines file read back at start (`local`). Right for one replica: with several,
//!   each view would show the calls of the replica that answers.
//! - **every replica's calls** ([`AuditStore::shared`]): in the shared store that
//!   `--shared-store` names, which every replica reads and writes (`shared`).
//!
//! Either way the audit trail is the audit lines (the log under the target `audit`, or
//! `--audit-log`'s file); this record is the view's convenience. The README's "Operate it"
//! says so.

mod local;
mod shared;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fundament_plugin_types::audit::{AuditEntry, AuditFilter};
use fundament_shared_store::{SharedStore, StoreError};
use time::format_description::well_known::Rfc3339;

use crate::audit::{AuditLine, AuditSink};
use local::LocalRecord;
use shared::SharedRecord;

/// How much the store keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// At most this many calls of each cluster, the newest. Per cluster, so one tenant's calls
    /// (a hostile plugin page's refused calls, say) never push another's out of the view; the
    /// calls of a cluster are numbered on their own too, so ids count no other cluster's calls.
    pub entries: usize,
    /// None older than this.
    pub age: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { entries: 10_000, age: Duration::from_secs(7 * 24 * 3600) }
    }
}

/// Why the store's file could not be used (at start: a bad state directory stops the service
/// rather than silently losing the record).
#[derive(Debug, thiserror::Error)]
pub enum AuditStoreError {
    #[error("cannot {action} the audit view's record {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why the record could not be read now.
#[derive(Debug, thiserror::Error)]
pub enum AuditReadError {
    #[error("the audit view's record cannot be read: {0}")]
    Store(#[from] StoreError),
}

enum Record {
    Local(LocalRecord),
    Shared(SharedRecord),
}

/// The latest plugin-path calls (see the module documentation).
pub struct AuditStore {
    record: Record,
    /// Counts the calls this process pushed: a live tail waits on it for the next one.
    pushed: tokio::sync::watch::Sender<u64>,
}

/// How often a tail of the shared record looks for other replicas' calls.
const SHARED_TAIL_POLL: Duration = Duration::from_millis(500);
/// A tail of the shared record reads at most this often.
const SHARED_TAIL_GAP: Duration = Duration::from_millis(100);

fn unix_ms(at: time::OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// The key of a cluster's calls (cluster ids come in either case).
fn cluster_key(cluster_id: &str) -> String {
    cluster_id.to_ascii_lowercase()
}

/// A call as the view shows it; its id is given where it is kept. Every text field is cut to
/// its bound here whatever the sink that pushed it did (the gateway's lines are already), so
/// an entry and a page of [`fundament_plugin_types::audit::MAX_LIMIT`] entries have a size
/// bound (`a_full_page_of_the_longest_entries_fits_the_consoles_answer_bound`).
fn entry_of(line: &AuditLine) -> AuditEntry {
    let now = time::OffsetDateTime::now_utc();
    let now = now.replace_millisecond(now.millisecond()).unwrap_or(now);
    // Bounding a bounded line changes nothing (`audit::bounded`).
    let line = line.clone().bounded();
    AuditEntry {
        id: 0,
        time: now.format(&Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string()),
        at_ms: unix_ms(now),
        user: line.user,
        cluster_id: line.cluster_id,
        installation_id: line.installation_id,
        installation_name: line.installation_name,
        plugin_name: line.plugin_name,
        plugin_version: line.plugin_version,
        group: line.group,
        resource: line.resource,
        subresource: line.subresource,
        name: line.name,
        namespace: line.namespace,
        verb: line.verb,
        decision: line.decision,
        status: line.status,
        latency_ms: line.latency_ms,
    }
}

impl AuditStore {
    fn with(record: Record) -> AuditStore {
        AuditStore { record, pushed: tokio::sync::watch::Sender::new(0) }
    }

    /// This process's calls, in memory only (gone with the process).
    pub fn in_memory(retention: Retention) -> AuditStore {
        Self::with(Record::Local(LocalRecord::in_memory(retention)))
    }

    /// This process's calls, kept in `path` too: what the file holds within the retention is
    /// read back (a line cut short by a crash is skipped), and every new call is appended.
    pub fn open(path: impl AsRef<Path>, retention: Retention) -> Result<AuditStore, AuditStoreError> {
        Ok(Self::with(Record::Local(LocalRecord::open(path, retention)?)))
    }

    /// Every replica's calls, in `store`. Starts a writer task: call within a Tokio runtime.
    pub fn shared(store: Arc<dyn SharedStore>, retention: Retention) -> AuditStore {
        Self::with(Record::Shared(SharedRecord::start(store, retention)))
    }

    /// Where the record is, for the start-up log.
    pub fn describe(&self) -> String {
        match &self.record {
            Record::Local(_) => "this process".into(),
            Record::Shared(shared) => format!("the shared store {}", shared.describe()),
        }
    }

    /// Returns once every call pushed before is in the file (at once without one) or in the
    /// shared store (waiting `wait` at most).
    pub async fn flush(&self, wait: Duration) {
        match &self.record {
            Record::Local(local) => local.flush(),
            Record::Shared(shared) => shared.flush_within(wait).await,
        }
    }

    /// Keeps one call: one whose token verified for the cluster it names
    /// ([`AuditLine::on_its_cluster`]; the others are in the audit lines only). Never waits: the
    /// file and the shared store are written by a writer of their own.
    pub fn push(&self, line: &AuditLine) {
        if !line.on_its_cluster {
            return;
        }
        let entry = entry_of(line);
        match &self.record {
            Record::Local(local) => local.push(entry),
            Record::Shared(shared) => shared.push(&entry),
        }
        self.pushed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The calls on `cluster_id` that pass `filter`, newest first, with `only_user`'s alone
    /// when given (a user who may not see everyone's); and the id of the newest call the caller
    /// may see (0 for none), where a tail starts. Not the newest of all: that would tell how
    /// many calls others make, and when.
    pub async fn query(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> Result<(Vec<AuditEntry>, u64), AuditReadError> {
        Ok(match &self.record {
            Record::Local(local) => local.query(cluster_id, only_user, filter),
            Record::Shared(shared) => shared.query(cluster_id, only_user, filter).await?,
        })
    }

    /// [`AuditStore::query`], but a tail (`filter.after`) with nothing to show yet waits up to
    /// [`AuditFilter::effective_wait`] for a call that passes (a long poll: a call made at this
    /// replica shows as soon as it is recorded, one made at another within
    /// [`SHARED_TAIL_POLL`]).
    pub async fn tail(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> Result<(Vec<AuditEntry>, u64), AuditReadError> {
        let deadline = tokio::time::Instant::now() + filter.effective_wait();
        // Subscribed before the first look, so a call recorded in between still wakes it.
        let mut pushed = self.pushed.subscribe();
        let mut filter = filter.clone();
        // Read before the query, which then has every call up to it.
        let mut newest = self.newest(cluster_id).await?;
        let (mut items, mut last_id) = self.query(cluster_id, only_user, &filter).await?;
        // Past the newest call the caller may see: the numbering started again (a record in
        // memory restarted). The tail starts over rather than wait for numbers it will not see
        // soon. Decided by what the caller may see, never by the newest of all: answering at
        // once past that one and waiting below it would let a search on `after` count the calls
        // that others make.
        if filter.after.is_some_and(|after| after > last_id) {
            filter.after = Some(0);
            (items, last_id) = self.query(cluster_id, only_user, &filter).await?;
        }
        loop {
            if !items.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok((items, last_id));
            }
            // Nothing up to `newest` passes: the next read starts after it.
            if filter.after.is_some() {
                filter.after = filter.after.max(Some(newest));
            }
            let now = tokio::time::Instant::now();
            let woken = match &self.record {
                Record::Local(_) => tokio::time::timeout_at(deadline, pushed.changed()).await,
                Record::Shared(_) => {
                    // Other replicas' calls are seen by polling; this one's wake it, but at
                    // most every SHARED_TAIL_GAP, so a busy replica's tails do not spin.
                    let poll = deadline.min(now + SHARED_TAIL_POLL);
                    let woken = match tokio::time::timeout_at(poll, pushed.changed()).await {
                        Err(_) => Ok(Ok(())),
                        woken => woken,
                    };
                    tokio::time::sleep_until(deadline.min(now + SHARED_TAIL_GAP)).await;
                    woken
                }
            };
            if !matches!(woken, Ok(Ok(()))) {
                // The deadline, or a store being dropped: answer what there is.
                return self.query(cluster_id, only_user, &filter).await;
            }
            // Read again only once there are calls past what was read (a look at one number),
            // or for the answer at the deadline.
            let seen = newest;
            newest = self.newest(cluster_id).await?;
            if newest != seen || tokio::time::Instant::now() >= deadline {
                (items, last_id) = self.query(cluster_id, only_user, &filter).await?;
            }
        }
    }

    /// The number of the newest call kept on `cluster_id` (any user's): a tail reads again only
    /// when it moved. Never answered: it counts others' calls.
    async fn newest(&self, cluster_id: &str) -> Result<u64, AuditReadError> {
        Ok(match &self.record {
            Record::Local(local) => local.newest(cluster_id),
            Record::Shared(shared) => shared.head(cluster_id).await?,
        })
    }

    /// The shared record, if this is one.
    #[cfg(test)]
    fn shared_record(&self) -> Option<&SharedRecord> {
        match &self.record {
            Record::Local(_) => None,
            Record::Shared(shared) => Some(shared),
        }
    }

    /// How many calls this process's record keeps (`None` for the shared store's).
    #[cfg(test)]
    fn kept_in_process(&self) -> Option<usize> {
        match &self.record {
            Record::Local(local) => Some(local.len()),
            Record::Shared(_) => None,
        }
    }
}

impl AuditSink for AuditStore {
    fn record(&self, line: &AuditLine) {
        self.push(line);
    }

    fn store(&self) -> Option<&AuditStore> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
