//! The record of this process's calls: in memory and (with a state directory) in a JSON-lines
//! file that is read back at start, so the record survives a restart of the gateway.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;

use fundament_plugin_types::audit::{AuditEntry, AuditFilter};

use super::{AuditStoreError, Retention, cluster_key, unix_ms};

/// The calls of one cluster, numbered on their own.
#[derive(Default)]
struct Cluster {
    entries: VecDeque<AuditEntry>,
    /// The id of the newest call it had (0: none yet); the next is one past it.
    newest: u64,
}

/// Every cluster's calls, by [`cluster_key`]. A cluster stays once it had a call, its calls
/// gone, so its numbering goes on: there is one per cluster a verified token named. A cluster's
/// calls past the age go when it is next read or written (none is ever answered), and until
/// then they are within its count.
#[derive(Default)]
struct State {
    clusters: HashMap<String, Cluster>,
}

/// The latest plugin-path calls of this process (see the module documentation).
pub(super) struct LocalRecord {
    retention: Retention,
    state: Mutex<State>,
    /// The file, when there is one: written by a thread of its own.
    record: Option<RecordFile>,
}

/// A line for the record's writer, or a request to say once every line before it is written.
enum ToWriter {
    Line { cluster: String, at_ms: i64, bytes: Vec<u8> },
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
/// lines kept within the retention, per cluster, from which it rewrites the file. That copy
/// costs as much memory again as the calls kept (about 4 MB a cluster at the default 10,000),
/// and keeps the writer from ever taking the store's lock.
struct Writer {
    path: PathBuf,
    retention: Retention,
    file: File,
    lines: usize,
    kept: HashMap<String, VecDeque<(i64, Vec<u8>)>>,
}

/// How long the writer rests after writing what it had. Meanwhile the calls recorded wait in
/// the channel and go to the file in one write; and since the thread is not waiting on the
/// channel then, a request that records a call does not have to wake it (a futex call and a
/// context switch per call: together with a write per line, a quarter of the gateway's time on
/// the plugin path under load). The file is for a restart; the audit view reads memory.
const REST_AFTER_WRITING: std::time::Duration = std::time::Duration::from_millis(5);

/// Lines received and not yet written.
#[derive(Default)]
struct Unwritten {
    bytes: Vec<u8>,
    lines: usize,
    newest_ms: i64,
}

impl Writer {
    fn run(mut self, from_store: mpsc::Receiver<ToWriter>) {
        let mut unwritten = Unwritten::default();
        while let Ok(first) = from_store.recv() {
            let mut waiting = Vec::new();
            let mut next = Some(first);
            while let Some(message) = next {
                match message {
                    ToWriter::Line { cluster, at_ms, bytes } => {
                        self.keep(cluster, at_ms, bytes, &mut unwritten)
                    }
                    ToWriter::Flush(done) => waiting.push(done),
                }
                next = from_store.try_recv().ok();
            }
            self.write(&mut unwritten);
            for done in waiting {
                let _ = done.send(());
            }
            std::thread::sleep(REST_AFTER_WRITING);
        }
    }

    fn keep(&mut self, cluster: String, at_ms: i64, bytes: Vec<u8>, unwritten: &mut Unwritten) {
        unwritten.bytes.extend_from_slice(&bytes);
        unwritten.lines += 1;
        unwritten.newest_ms = at_ms;
        let kept = self.kept.entry(cluster).or_default();
        kept.push_back((at_ms, bytes));
        expire(kept, self.retention, at_ms, |(at, _)| *at);
    }

    /// Appends what was received since the last write, in one write.
    fn write(&mut self, unwritten: &mut Unwritten) {
        if unwritten.lines == 0 {
            return;
        }
        match self.file.write_all(&unwritten.bytes) {
            Ok(()) => self.lines += unwritten.lines,
            // The calls are still kept in memory; the file misses them.
            Err(error) => {
                tracing::error!(%error, lines = unwritten.lines, "audit view: calls could not be written to its record")
            }
        }
        // Emptied, its buffer kept for the next.
        unwritten.bytes.clear();
        unwritten.lines = 0;
        self.compact_if_needed(unwritten.newest_ms);
    }

    /// Rewrites the file with what is kept once it holds twice that (a new file renamed over
    /// the old, so a crash leaves one or the other whole). Every cluster's calls past the age
    /// go first, so a cluster that has no calls any more does not keep its old ones on disk.
    fn compact_if_needed(&mut self, now_ms: i64) {
        let kept = |w: &Writer| w.kept.values().map(VecDeque::len).sum::<usize>();
        if self.lines <= kept(self).saturating_mul(2).max(64) {
            return;
        }
        for lines in self.kept.values_mut() {
            expire(lines, self.retention, now_ms, |(at, _)| *at);
        }
        self.kept.retain(|_, lines| !lines.is_empty());
        if self.lines <= kept(self).saturating_mul(2).max(64) {
            return;
        }
        let fresh = self.path.with_extension("jsonl.new");
        let written = (|| -> std::io::Result<File> {
            let mut out = std::io::BufWriter::new(File::create(&fresh)?);
            // Cluster by cluster, each in the order of its ids, as reading it back needs.
            for (_, line) in self.kept.values().flatten() {
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
                self.lines = kept(self);
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

impl LocalRecord {
    /// A record kept in memory only (gone with the process).
    pub(super) fn in_memory(retention: Retention) -> LocalRecord {
        LocalRecord { retention, state: Mutex::new(State::default()), record: None }
    }

    /// A store kept in `path` too: what the file holds within the retention is read back (a
    /// line cut short by a crash is skipped), and every new call is appended.
    pub(super) fn open(path: impl AsRef<Path>, retention: Retention) -> Result<LocalRecord, AuditStoreError> {
        let path = path.as_ref().to_path_buf();
        let io = |action, source| AuditStoreError::Io { action, path: path.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("create the directory of", e))?;
        }
        let mut state = State::default();
        let mut lines = 0;
        match File::open(&path) {
            Ok(file) => {
                for line in BufReader::new(file).lines() {
                    let line = line.map_err(|e| io("read", e))?;
                    lines += 1;
                    match serde_json::from_str::<AuditEntry>(&line) {
                        Ok(entry) => {
                            // A file of an older version numbered every cluster's calls at once:
                            // each cluster's go on from its highest.
                            let cluster = state.clusters.entry(cluster_key(&entry.cluster_id)).or_default();
                            cluster.newest = cluster.newest.max(entry.id);
                            cluster.entries.push_back(entry);
                        }
                        Err(error) => {
                            tracing::warn!(path = %path.display(), line = lines, %error, "audit view: a line of its record is unreadable and skipped")
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("open", e)),
        }
        let now_ms = unix_ms(time::OffsetDateTime::now_utc());
        let mut kept = HashMap::new();
        for (key, cluster) in &mut state.clusters {
            expire(&mut cluster.entries, retention, now_ms, |e| e.at_ms);
            kept.insert(key.clone(), cluster.entries.iter().map(|e| (e.at_ms, entry_line(e))).collect());
        }
        let file = OpenOptions::new().append(true).create(true).open(&path).map_err(|e| io("open", e))?;
        let mut writer = Writer { path: path.clone(), retention, file, lines, kept };
        writer.compact_if_needed(now_ms);
        let (to_writer, from_store) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("audit-record".into())
            .spawn(move || writer.run(from_store))
            .map_err(|e| io("start the writer of", e))?;
        Ok(LocalRecord {
            retention,
            state: Mutex::new(state),
            record: Some(RecordFile { to_writer: Some(to_writer), thread: Some(thread) }),
        })
    }

    /// Returns once every call pushed before is in the file (at once without one).
    pub(super) fn flush(&self) {
        let Some(to_writer) = self.record.as_ref().and_then(|r| r.to_writer.as_ref()) else { return };
        let (done, written) = mpsc::sync_channel(1);
        if to_writer.send(ToWriter::Flush(done)).is_ok() {
            let _ = written.recv();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps one call, numbering it after its cluster's newest.
    pub(super) fn push(&self, mut entry: AuditEntry) {
        let key = cluster_key(&entry.cluster_id);
        let mut state = self.lock();
        let cluster = state.clusters.entry(key.clone()).or_default();
        cluster.newest += 1;
        entry.id = cluster.newest;
        if let Some(to_writer) = self.record.as_ref().and_then(|r| r.to_writer.as_ref()) {
            // Sent under the lock, so the file has each cluster's calls in the order of their ids.
            let _ = to_writer.send(ToWriter::Line {
                cluster: key,
                at_ms: entry.at_ms,
                bytes: entry_line(&entry),
            });
        }
        let at_ms = entry.at_ms;
        cluster.entries.push_back(entry);
        expire(&mut cluster.entries, self.retention, at_ms, |e| e.at_ms);
    }

    /// The calls on `cluster_id` that pass `filter`, newest first, with `only_user`'s alone
    /// when given (a user who may not see everyone's); and the id of the newest call the caller
    /// may see (0 for none), where a tail starts. Not the newest of the cluster: ids count every
    /// user's calls on it, so that would tell how many calls others make, and when.
    pub(super) fn query(
        &self,
        cluster_id: &str,
        only_user: Option<&str>,
        filter: &AuditFilter,
    ) -> (Vec<AuditEntry>, u64) {
        let mut state = self.lock();
        let Some(cluster) = state.clusters.get_mut(&cluster_key(cluster_id)) else { return (Vec::new(), 0) };
        expire(&mut cluster.entries, self.retention, unix_ms(time::OffsetDateTime::now_utc()), |e| e.at_ms);
        let visible = |e: &&AuditEntry| only_user.is_none_or(|u| e.user == u);
        let last_id = cluster.entries.iter().rev().find(visible).map_or(0, |e| e.id);
        let items = cluster
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

    /// The id of the newest call on `cluster_id` (0: none yet).
    pub(super) fn newest(&self, cluster_id: &str) -> u64 {
        self.lock().clusters.get(&cluster_key(cluster_id)).map_or(0, |c| c.newest)
    }

    /// How many calls are kept, of every cluster.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().clusters.values().map(|c| c.entries.len()).sum()
    }
}
