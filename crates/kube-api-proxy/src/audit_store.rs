//! What the console's audit view reads: the latest plugin-path calls, bounded by count and by
//! age, in memory and (with a state directory) in a JSON-lines file that is read back at start,
//! so the record survives a restart of the gateway.
//!
//! Each gateway process keeps its own calls: with several replicas, each view shows the calls
//! of the replica that answers. A deployment that needs one record of every replica ships the
//! audit lines (the log under the target `audit`, or `--audit-log`'s file) to its own sink; the
//! README's "Operate it" says so.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use fundament_plugin_types::audit::{AuditEntry, AuditFilter};
use time::format_description::well_known::Rfc3339;

use crate::audit::{AuditLine, AuditSink};

/// How much the store keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// At most this many calls, the newest.
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

struct State {
    entries: VecDeque<AuditEntry>,
    next_id: u64,
    /// The file and how many lines it holds (kept and dropped): rewritten when twice the
    /// retention, so it never grows without bound.
    file: Option<(File, usize)>,
}

/// The latest plugin-path calls (see the module documentation).
pub struct AuditStore {
    retention: Retention,
    path: Option<PathBuf>,
    state: Mutex<State>,
    /// The id of the newest call: a live tail waits on it for the next one.
    newest: tokio::sync::watch::Sender<u64>,
}

fn unix_ms(at: time::OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

impl AuditStore {
    /// A store kept in memory only (gone with the process).
    pub fn in_memory(retention: Retention) -> AuditStore {
        AuditStore {
            retention,
            path: None,
            state: Mutex::new(State { entries: VecDeque::new(), next_id: 1, file: None }),
            newest: tokio::sync::watch::Sender::new(0),
        }
    }

    /// A store kept in `path` too: what the file holds within the retention is read back (a
    /// line cut short by a crash is skipped), and every new call is appended.
    pub fn open(path: impl AsRef<Path>, retention: Retention) -> Result<AuditStore, AuditStoreError> {
        let path = path.as_ref().to_path_buf();
        let io = |action, source| AuditStoreError::Io { action, path: path.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("create the directory of", e))?;
        }
        let mut entries = VecDeque::new();
        let mut lines = 0;
        match File::open(&path) {
            Ok(file) => {
                for line in BufReader::new(file).lines() {
                    let line = line.map_err(|e| io("read", e))?;
                    lines += 1;
                    match serde_json::from_str::<AuditEntry>(&line) {
                        Ok(entry) => entries.push_back(entry),
                        Err(error) => {
                            tracing::warn!(path = %path.display(), line = lines, %error, "audit view: a line of its record is unreadable and skipped")
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("open", e)),
        }
        let next_id = entries.iter().map(|e| e.id).max().unwrap_or(0) + 1;
        let file = OpenOptions::new().append(true).create(true).open(&path).map_err(|e| io("open", e))?;
        let store = AuditStore {
            retention,
            path: Some(path),
            state: Mutex::new(State { entries, next_id, file: Some((file, lines)) }),
            newest: tokio::sync::watch::Sender::new(next_id - 1),
        };
        {
            let mut state = store.lock();
            store.expire(&mut state, unix_ms(time::OffsetDateTime::now_utc()));
            store.compact_if_needed(&mut state);
        }
        Ok(store)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops what is past the retention.
    fn expire(&self, state: &mut State, now_ms: i64) {
        let oldest = now_ms.saturating_sub(i64::try_from(self.retention.age.as_millis()).unwrap_or(i64::MAX));
        while state.entries.len() > self.retention.entries
            || state.entries.front().is_some_and(|e| e.at_ms < oldest)
        {
            state.entries.pop_front();
        }
    }

    /// Rewrites the file with what is kept once it holds twice the retention (a new file
    /// renamed over the old, so a crash leaves one or the other whole).
    fn compact_if_needed(&self, state: &mut State) {
        let (Some(path), Some((_, lines))) = (&self.path, &state.file) else { return };
        if *lines <= self.retention.entries.saturating_mul(2).max(64) {
            return;
        }
        let fresh = path.with_extension("jsonl.new");
        let written = (|| -> std::io::Result<File> {
            let mut out = File::create(&fresh)?;
            for entry in &state.entries {
                let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
                line.push(b'\n');
                out.write_all(&line)?;
            }
            out.sync_all()?;
            std::fs::rename(&fresh, path)?;
            OpenOptions::new().append(true).open(path)
        })();
        match written {
            Ok(file) => state.file = Some((file, state.entries.len())),
            Err(error) => {
                tracing::error!(path = %path.display(), %error, "audit view: its record could not be compacted; it goes on growing");
                let _ = std::fs::remove_file(&fresh);
            }
        }
    }

    /// Keeps one call.
    pub fn push(&self, line: &AuditLine) {
        let now = time::OffsetDateTime::now_utc();
        let now = now.replace_millisecond(now.millisecond()).unwrap_or(now);
        let time = now.format(&Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string());
        let mut state = self.lock();
        let entry = AuditEntry {
            id: state.next_id,
            time,
            at_ms: unix_ms(now),
            user: line.user.clone(),
            cluster_id: line.cluster_id.clone(),
            installation_id: line.installation_id.clone(),
            installation_name: line.installation_name.clone(),
            plugin_name: line.plugin_name.clone(),
            plugin_version: line.plugin_version.clone(),
            group: line.group.clone(),
            resource: line.resource.clone(),
            subresource: line.subresource.clone(),
            name: line.name.clone(),
            namespace: line.namespace.clone(),
            verb: line.verb.clone(),
            decision: line.decision.clone(),
            status: line.status,
            latency_ms: line.latency_ms,
        };
        state.next_id += 1;
        if let Some((file, lines)) = &mut state.file {
            let written = serde_json::to_vec(&entry).map_err(std::io::Error::other).and_then(|mut bytes| {
                bytes.push(b'\n');
                file.write_all(&bytes)
            });
            match written {
                Ok(()) => *lines += 1,
                // The call is still kept in memory; the file misses it.
                Err(error) => {
                    tracing::error!(%error, "audit view: a call could not be written to its record")
                }
            }
        }
        let id = entry.id;
        state.entries.push_back(entry);
        self.expire(&mut state, unix_ms(now));
        self.compact_if_needed(&mut state);
        drop(state);
        self.newest.send_replace(id);
    }

    /// The calls on `cluster_id` that pass `filter`, newest first, with `only_user`'s alone
    /// when given (a user who may not see everyone's); and the greatest id recorded so far.
    pub fn query(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> (Vec<AuditEntry>, u64) {
        let mut state = self.lock();
        self.expire(&mut state, unix_ms(time::OffsetDateTime::now_utc()));
        let last_id = state.next_id - 1;
        let items = state
            .entries
            .iter()
            .rev()
            .filter(|e| e.cluster_id.eq_ignore_ascii_case(cluster_id))
            .filter(|e| only_user.is_none_or(|u| e.user == u))
            .filter(|e| filter.matches(e))
            .take(filter.effective_limit())
            .cloned()
            .collect();
        (items, last_id)
    }

    /// [`AuditStore::query`], but a tail (`filter.after`) with nothing to show yet waits up to
    /// [`AuditFilter::effective_wait`] for a call that passes (a long poll: the call shows as
    /// soon as it is recorded).
    pub async fn tail(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> (Vec<AuditEntry>, u64) {
        let deadline = tokio::time::Instant::now() + filter.effective_wait();
        // Subscribed before the first look, so a call recorded in between still wakes it.
        let mut newest = self.newest.subscribe();
        loop {
            let (items, last_id) = self.query(cluster_id, only_user, filter);
            if !items.is_empty() || tokio::time::Instant::now() >= deadline {
                return (items, last_id);
            }
            match tokio::time::timeout_at(deadline, newest.changed()).await {
                Ok(Ok(())) => {}
                // The deadline, or a store being dropped: answer what there is.
                _ => return self.query(cluster_id, only_user, filter),
            }
        }
    }

    /// How many calls are kept.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
mod tests {
    use super::*;

    fn line(user: &str, decision: &str) -> AuditLine {
        AuditLine {
            audit: "plugin_request",
            user: user.into(),
            cluster_id: "019b4000-2000-7000-8000-000000000001".into(),
            installation_name: "acme-corp--cert-manager".into(),
            plugin_name: "cert-manager".into(),
            resource: "certificates".into(),
            verb: "list".into(),
            decision: decision.into(),
            status: 200,
            ..AuditLine::default()
        }
    }

    const PROD: &str = "019b4000-2000-7000-8000-000000000001";

    #[test]
    fn keeps_the_newest_within_the_count_and_answers_newest_first() {
        let store = AuditStore::in_memory(Retention { entries: 3, ..Retention::default() });
        for user in ["a", "b", "c", "d"] {
            store.push(&line(user, "allowed"));
        }
        let (items, last) = store.query(PROD, None, &AuditFilter::default());
        assert_eq!(items.iter().map(|e| e.user.as_str()).collect::<Vec<_>>(), ["d", "c", "b"]);
        assert_eq!(last, 4);
        let (mine, _) = store.query(PROD, Some("c"), &AuditFilter::default());
        assert_eq!(mine.len(), 1);
        let (other, _) = store.query("019b4000-2000-7000-8000-000000000002", None, &AuditFilter::default());
        assert!(other.is_empty(), "another cluster's view is empty");
        let (after, _) = store.query(PROD, None, &AuditFilter { after: Some(3), ..Default::default() });
        assert_eq!(after.iter().map(|e| e.id).collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn survives_a_restart_skips_a_torn_line_and_stays_bounded_on_disk() {
        let dir = std::env::temp_dir().join(format!("fundament-audit-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("audit/plugin-calls.jsonl");
        let retention = Retention { entries: 40, ..Retention::default() };
        {
            let store = AuditStore::open(&path, retention).unwrap();
            for i in 0..500 {
                store.push(&line(&format!("u{i}"), "allowed"));
            }
        }
        // A crash in the middle of a line.
        OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"id\": 9").unwrap();
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert!(lines <= 2 * 64 + 1, "compacted on the way: {lines} lines");
        let store = AuditStore::open(&path, retention).unwrap();
        assert_eq!(store.len(), 40);
        let (items, last) = store.query(PROD, None, &AuditFilter { limit: Some(1), ..Default::default() });
        assert_eq!((items[0].user.as_str(), last), ("u499", 500));
        store.push(&line("next", "allowed"));
        assert_eq!(store.query(PROD, None, &AuditFilter::default()).1, 501, "ids go on after a restart");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_tail_waits_for_the_next_matching_call_and_no_longer() {
        let store = std::sync::Arc::new(AuditStore::in_memory(Retention::default()));
        store.push(&line("a", "allowed"));
        let tail = AuditFilter {
            after: Some(1),
            wait_ms: Some(3_000),
            user: Some("b".into()),
            ..Default::default()
        };
        let waiting = tokio::spawn({
            let store = store.clone();
            let tail = tail.clone();
            async move {
                let started = std::time::Instant::now();
                (store.tail(PROD, None, &tail).await, started.elapsed())
            }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        store.push(&line("a", "allowed")); // not a match: the tail goes on waiting
        tokio::time::sleep(Duration::from_millis(100)).await;
        store.push(&line("b", "denied:allowed-resources"));
        let ((items, last), waited) = waiting.await.unwrap();
        assert_eq!(items.iter().map(|e| e.id).collect::<Vec<_>>(), [3]);
        assert_eq!(last, 3);
        assert!(
            waited < Duration::from_millis(2_000),
            "answered at the call, not at the deadline: {waited:?}"
        );

        // Nothing comes: an empty answer at the (capped) deadline.
        let quiet = AuditFilter { after: Some(3), wait_ms: Some(150), ..Default::default() };
        let started = std::time::Instant::now();
        let (items, _) = store.tail(PROD, None, &quiet).await;
        assert!(items.is_empty());
        assert!(started.elapsed() >= Duration::from_millis(150));
        // Without `after`, no wait at all.
        let started = std::time::Instant::now();
        let _ = store
            .tail(PROD, Some("nobody"), &AuditFilter { wait_ms: Some(3_000), ..Default::default() })
            .await;
        assert!(started.elapsed() < Duration::from_millis(500));
    }

    #[test]
    fn old_calls_expire() {
        let store = AuditStore::in_memory(Retention { entries: 10, age: Duration::from_millis(50) });
        store.push(&line("a", "allowed"));
        std::thread::sleep(Duration::from_millis(80));
        store.push(&line("b", "denied:allowed-resources"));
        let (items, _) = store.query(PROD, None, &AuditFilter::default());
        assert_eq!(items.iter().map(|e| e.user.as_str()).collect::<Vec<_>>(), ["b"]);
    }
}
