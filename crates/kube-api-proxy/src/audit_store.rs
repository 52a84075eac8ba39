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
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;
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
}

/// The latest plugin-path calls (see the module documentation).
pub struct AuditStore {
    retention: Retention,
    state: Mutex<State>,
    /// The id of the newest call: a live tail waits on it for the next one.
    newest: tokio::sync::watch::Sender<u64>,
    /// The file, when there is one: written by a thread of its own.
    record: Option<RecordFile>,
}

/// A line for the record's writer, or a request to say once every line before it is written.
enum ToWriter {
    Line { at_ms: i64, bytes: Vec<u8> },
    Flush(mpsc::SyncSender<()>),
}

/// The handle on the record's writer thread. No request waits for the file: a call is sent to
/// the thread, which appends it and, once the file holds twice the retention, rewrites it (with
/// an fsync, which took every auditing request's time while it ran under the store's lock).
struct RecordFile {
    to_writer: Option<mpsc::Sender<ToWriter>>,
    thread: Option<JoinHandle<()>>,
}

/// What the writer thread owns: the file, how many lines it holds (kept and dropped), and the
/// lines kept within the retention, from which it rewrites the file. That copy costs as much
/// memory again as the calls kept (about 4 MB at the default 10,000), and keeps the writer
/// from ever taking the store's lock.
struct Writer {
    path: PathBuf,
    retention: Retention,
    file: File,
    lines: usize,
    kept: VecDeque<(i64, Vec<u8>)>,
}

impl Writer {
    fn run(mut self, from_store: mpsc::Receiver<ToWriter>) {
        for message in from_store {
            match message {
                ToWriter::Line { at_ms, bytes } => self.append(at_ms, bytes),
                ToWriter::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }

    fn append(&mut self, at_ms: i64, bytes: Vec<u8>) {
        match self.file.write_all(&bytes) {
            Ok(()) => self.lines += 1,
            // The call is still kept in memory; the file misses it.
            Err(error) => tracing::error!(%error, "audit view: a call could not be written to its record"),
        }
        self.kept.push_back((at_ms, bytes));
        expire(&mut self.kept, self.retention, at_ms, |(at, _)| *at);
        self.compact_if_needed();
    }

    /// Rewrites the file with what is kept once it holds twice the retention (a new file
    /// renamed over the old, so a crash leaves one or the other whole).
    fn compact_if_needed(&mut self) {
        if self.lines <= self.retention.entries.saturating_mul(2).max(64) {
            return;
        }
        let fresh = self.path.with_extension("jsonl.new");
        let written = (|| -> std::io::Result<File> {
            let mut out = std::io::BufWriter::new(File::create(&fresh)?);
            for (_, line) in &self.kept {
                out.write_all(line)?;
            }
            let out = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
            out.sync_all()?;
            std::fs::rename(&fresh, &self.path)?;
            OpenOptions::new().append(true).open(&self.path)
        })();
        match written {
            Ok(file) => {
                self.file = file;
                self.lines = self.kept.len();
            }
            Err(error) => {
                tracing::error!(path = %self.path.display(), %error, "audit view: its record could not be compacted; it goes on growing");
                let _ = std::fs::remove_file(&fresh);
            }
        }
    }
}

impl Drop for RecordFile {
    /// Every call sent is written before the store is gone.
    fn drop(&mut self) {
        drop(self.to_writer.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn unix_ms(at: time::OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// Drops what is past the retention: the store's calls, and the writer's lines alike.
fn expire<T>(kept: &mut VecDeque<T>, retention: Retention, now_ms: i64, at_ms: impl Fn(&T) -> i64) {
    let oldest = now_ms.saturating_sub(i64::try_from(retention.age.as_millis()).unwrap_or(i64::MAX));
    while kept.len() > retention.entries || kept.front().is_some_and(|e| at_ms(e) < oldest) {
        kept.pop_front();
    }
}

/// A call as a line of the record.
fn entry_line(entry: &AuditEntry) -> Vec<u8> {
    // An entry is strings and numbers: it always serializes.
    let mut line = serde_json::to_vec(entry).unwrap_or_default();
    line.push(b'\n');
    line
}

impl AuditStore {
    /// A store kept in memory only (gone with the process).
    pub fn in_memory(retention: Retention) -> AuditStore {
        AuditStore {
            retention,
            state: Mutex::new(State { entries: VecDeque::new(), next_id: 1 }),
            newest: tokio::sync::watch::Sender::new(0),
            record: None,
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
        let now_ms = unix_ms(time::OffsetDateTime::now_utc());
        let mut state = State { entries, next_id };
        expire(&mut state.entries, retention, now_ms, |e| e.at_ms);
        let file = OpenOptions::new().append(true).create(true).open(&path).map_err(|e| io("open", e))?;
        let kept = state.entries.iter().map(|e| (e.at_ms, entry_line(e))).collect();
        let mut writer = Writer { path: path.clone(), retention, file, lines, kept };
        writer.compact_if_needed();
        let (to_writer, from_store) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("audit-record".into())
            .spawn(move || writer.run(from_store))
            .map_err(|e| io("start the writer of", e))?;
        Ok(AuditStore {
            retention,
            newest: tokio::sync::watch::Sender::new(next_id - 1),
            state: Mutex::new(state),
            record: Some(RecordFile { to_writer: Some(to_writer), thread: Some(thread) }),
        })
    }

    /// Returns once every call pushed before is in the file (at once without one).
    pub fn flush(&self) {
        let Some(to_writer) = self.record.as_ref().and_then(|r| r.to_writer.as_ref()) else { return };
        let (done, written) = mpsc::sync_channel(1);
        if to_writer.send(ToWriter::Flush(done)).is_ok() {
            let _ = written.recv();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
        if let Some(to_writer) = self.record.as_ref().and_then(|r| r.to_writer.as_ref()) {
            // Sent under the lock, so the file has the calls in the order of their ids.
            let _ = to_writer.send(ToWriter::Line { at_ms: entry.at_ms, bytes: entry_line(&entry) });
        }
        let id = entry.id;
        state.entries.push_back(entry);
        expire(&mut state.entries, self.retention, unix_ms(now), |e| e.at_ms);
        drop(state);
        self.newest.send_replace(id);
    }

    /// The calls on `cluster_id` that pass `filter`, newest first, with `only_user`'s alone
    /// when given (a user who may not see everyone's); and the id of the newest call the caller
    /// may see (0 for none), where a tail starts. Not the newest of all: ids count every
    /// cluster's and every user's calls, so that would tell how many calls others make, and when.
    pub fn query(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> (Vec<AuditEntry>, u64) {
        let mut state = self.lock();
        expire(&mut state.entries, self.retention, unix_ms(time::OffsetDateTime::now_utc()), |e| e.at_ms);
        let visible = |e: &&AuditEntry| {
            e.cluster_id.eq_ignore_ascii_case(cluster_id) && only_user.is_none_or(|u| e.user == u)
        };
        let last_id = state.entries.iter().rev().find(visible).map_or(0, |e| e.id);
        let items = state
            .entries
            .iter()
            .rev()
            .filter(visible)
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

    #[test]
    fn the_writer_thread_has_every_call_in_order_once_flushed() {
        let dir = std::env::temp_dir().join(format!("fundament-audit-flush-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("plugin-calls.jsonl");
        let store = AuditStore::open(&path, Retention { entries: 100, ..Retention::default() }).unwrap();
        for i in 0..50 {
            store.push(&line(&format!("u{i}"), "allowed"));
        }
        store.flush();
        let ids: Vec<u64> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<AuditEntry>(l).unwrap().id)
            .collect();
        assert_eq!(ids, (1..=50).collect::<Vec<_>>());
        // Without a file there is nothing to wait for.
        AuditStore::in_memory(Retention::default()).flush();
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
