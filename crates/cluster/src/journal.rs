//! The write-ahead journal of `--state-file`: every committed change is
//! appended to `<state-file>.journal` (one JSON line per write, its cascade
//! included) before anyone can see it, and the API answers a write only
//! after an fsync that covers it. So a process killed at any moment restarts
//! with every write it acknowledged, and the file on disk is never torn: the
//! snapshot is replaced atomically, and a journal line cut short by a crash
//! was never acknowledged and is dropped when read.
//!
//! Every [`COMPACT_RECORDS`] records (or [`COMPACT_BYTES`]) the whole state
//! becomes the new snapshot and the journal starts empty; the same happens
//! at start, at shutdown, and whenever the journal must be reopened after a
//! failed write. A write that cannot be made durable (a full disk, a
//! read-only directory) is undone and refused with a 500 Status that names
//! the cause; reads go on meanwhile, and writes work again once the disk does.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cluster::State;
use crate::resource::StorageKey;
use crate::snapshot::{self, Contents, SnapshotError};
use crate::status::ApiError;
use crate::store::{Change, EventType};

/// Records between two snapshots.
pub const COMPACT_RECORDS: usize = 2_000;
/// Journal bytes between two snapshots.
pub const COMPACT_BYTES: u64 = 16 << 20;

/// A write that could not be made durable.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("cannot write the journal {path}: {source}")]
    Journal { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// Written, but the fsync after it failed: the change is in effect and may not survive a crash of the machine.
    #[error("cannot fsync the journal {path}: {source}")]
    Sync { path: PathBuf, source: std::io::Error },
}

impl PersistError {
    fn io(&self) -> Option<&std::io::Error> {
        match self {
            Self::Journal { source, .. }
            | Self::Sync { source, .. }
            | Self::Snapshot(SnapshotError::Write { source, .. }) => Some(source),
            Self::Snapshot(_) => None,
        }
    }

    /// The Status a client gets: the cause in words, without paths or internal detail.
    pub fn to_status(&self) -> ApiError {
        use std::io::ErrorKind;
        let cause = match self.io().map(std::io::Error::kind) {
            Some(ErrorKind::StorageFull | ErrorKind::QuotaExceeded) => {
                "the disk that holds the cluster's state file is full"
            }
            Some(ErrorKind::ReadOnlyFilesystem) => "the directory of the cluster's state file is read-only",
            Some(ErrorKind::PermissionDenied) => "the cluster may not write its state file",
            _ => "the cluster cannot write its state file",
        };
        let message = match self {
            Self::Sync { .. } => {
                format!("the change is made but may not survive a crash of the machine: {cause}")
            }
            _ => format!("the change was not saved, and nothing changed: {cause}"),
        };
        ApiError::failure(500, "InternalError", message)
    }
}

/// One committed write, as a journal line.
#[derive(Serialize)]
struct RecordOut<'a> {
    rv: u64,
    changes: Vec<StepOut<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum StepOut<'a> {
    Put { group: &'a str, resource: &'a str, object: &'a Value },
    Remove { group: &'a str, resource: &'a str, namespace: &'a str, name: &'a str },
}

#[derive(Deserialize)]
struct RecordIn {
    rv: u64,
    changes: Vec<StepIn>,
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum StepIn {
    Put { group: String, resource: String, object: Value },
    Remove { group: String, resource: String, namespace: String, name: String },
}

/// The journal's path beside a state file.
pub fn path_for(state_file: &Path) -> PathBuf {
    let mut name = state_file.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// Reads the state file and replays its journal over it; `Ok(None)` when
/// there is no state yet.
pub fn read(state_file: &Path) -> Result<Option<Contents>, SnapshotError> {
    let journal = path_for(state_file);
    let mut contents = snapshot::read(state_file)?;
    let bytes = match std::fs::read(&journal) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(contents),
        Err(source) => return Err(SnapshotError::Read { path: journal, source }),
    };
    let corrupt = |detail: String| SnapshotError::Corrupt { path: journal.clone(), detail };
    for (index, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        if !line.ends_with(b"\n") {
            // Cut short by a crash: never fsynced, so never acknowledged.
            tracing::warn!(journal = %journal.display(), line = number, "incomplete last journal line dropped");
            break;
        }
        let record: RecordIn =
            serde_json::from_slice(line).map_err(|e| corrupt(format!("line {number}: {e}")))?;
        let Some(contents) = contents.as_mut() else {
            return Err(corrupt(format!("a journal without its state file {}", state_file.display())));
        };
        // Already in the snapshot: the process stopped between writing it and emptying the journal.
        if record.rv <= contents.resource_version {
            continue;
        }
        contents.resource_version = record.rv;
        for step in record.changes {
            match step {
                StepIn::Put { group, resource, object } => {
                    let Some(name) = object["metadata"]["name"].as_str().map(str::to_string) else {
                        return Err(corrupt(format!("line {number}: an object without metadata.name")));
                    };
                    let ns = object["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
                    contents.objects.insert((StorageKey { group, resource }, ns, name), object);
                }
                StepIn::Remove { group, resource, namespace, name } => {
                    contents.objects.remove(&(StorageKey { group, resource }, namespace, name));
                }
            }
        }
    }
    Ok(contents)
}

/// The open journal of one state file.
pub struct Journal {
    state_file: PathBuf,
    path: PathBuf,
    writer: Mutex<Writer>,
    /// Serializes fsyncs; whoever syncs covers every record written before it started.
    syncing: Mutex<()>,
    /// The sequence number of the last record known to be on disk.
    synced: AtomicU64,
}

struct Writer {
    /// `None` until the first snapshot, and after a failure left the file in doubt.
    file: Option<File>,
    /// A second handle on the journal, to fsync without holding the writer;
    /// kept when `file` is closed, so what was written before still syncs.
    sync: Option<Arc<File>>,
    records: usize,
    bytes: u64,
    /// Sequence number of the last record (or snapshot) written.
    written: u64,
}

impl Journal {
    pub fn new(state_file: &Path) -> Self {
        Self {
            state_file: state_file.to_path_buf(),
            path: path_for(state_file),
            writer: Mutex::new(Writer { file: None, sync: None, records: 0, bytes: 0, written: 0 }),
            syncing: Mutex::new(()),
            synced: AtomicU64::new(0),
        }
    }

    fn writer(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes `changes` (already applied to `state`) durable in the page cache:
    /// appended to the journal, or, when the journal is due for compaction or
    /// not open, by writing the whole state as a new snapshot.
    pub fn persist(&self, state: &State, changes: &[Arc<Change>]) -> Result<(), PersistError> {
        let mut w = self.writer();
        if w.file.is_none() || w.records >= COMPACT_RECORDS || w.bytes >= COMPACT_BYTES {
            return self.compact_locked(&mut w, state);
        }
        let before = w.bytes;
        let appended = record_line(state.store.resource_version(), changes)
            .and_then(|line| w.file.as_mut().map_or(Ok(0), |f| f.write_all(&line).map(|()| line.len())));
        let length = match appended {
            Ok(length) => length,
            Err(source) => {
                // Take back what part of the line went out; if even that fails,
                // the next write starts over with a snapshot.
                if w.file.as_mut().is_none_or(|f| f.set_len(before).is_err()) {
                    w.file = None;
                }
                return Err(PersistError::Journal { path: self.path.clone(), source });
            }
        };
        w.records += 1;
        w.bytes += length as u64;
        w.written += 1;
        Ok(())
    }

    /// Writes the whole state as the snapshot and starts an empty journal.
    pub fn compact(&self, state: &State) -> Result<(), PersistError> {
        let mut w = self.writer();
        self.compact_locked(&mut w, state)
    }

    fn compact_locked(&self, w: &mut Writer, state: &State) -> Result<(), PersistError> {
        w.file = None;
        // The journal opens first: a snapshot that counts is never written
        // without a journal to go on from.
        let journal_err = |source| PersistError::Journal { path: self.path.clone(), source };
        let file = OpenOptions::new().create(true).append(true).open(&self.path).map_err(journal_err)?;
        let sync = Arc::new(file.try_clone().map_err(journal_err)?);
        snapshot::write(state, &self.state_file)?;
        // The old records are in the snapshot now (and skipped by their
        // resourceVersion should emptying the journal fail).
        let bytes = match file.set_len(0) {
            Ok(()) => 0,
            Err(error) => {
                tracing::warn!(%error, journal = %self.path.display(), "journal not emptied after a snapshot");
                file.metadata().map_or(0, |m| m.len())
            }
        };
        w.file = Some(file);
        w.sync = Some(sync);
        w.records = 0;
        w.bytes = bytes;
        w.written += 1;
        // The snapshot was fsynced: everything up to here is on disk.
        self.synced.fetch_max(w.written, Ordering::SeqCst);
        Ok(())
    }

    /// Waits until every record written so far is on disk (group commit: one
    /// fsync covers all writers that appended before it began).
    pub fn sync(&self) -> Result<(), PersistError> {
        let _one_at_a_time = self.syncing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (file, target) = {
            let w = self.writer();
            if self.synced.load(Ordering::SeqCst) >= w.written {
                return Ok(());
            }
            match &w.sync {
                Some(sync) => (Arc::clone(sync), w.written),
                None => return Ok(()),
            }
        };
        file.sync_data().map_err(|source| PersistError::Sync { path: self.path.clone(), source })?;
        self.synced.fetch_max(target, Ordering::SeqCst);
        Ok(())
    }
}

/// One record as a line: the resourceVersion after the write and its steps.
fn record_line(rv: u64, changes: &[Arc<Change>]) -> std::io::Result<Vec<u8>> {
    let steps = changes
        .iter()
        .map(|c| match c.kind {
            EventType::Added | EventType::Modified => {
                StepOut::Put { group: &c.key.group, resource: &c.key.resource, object: &c.object }
            }
            EventType::Deleted => StepOut::Remove {
                group: &c.key.group,
                resource: &c.key.resource,
                namespace: crate::object::namespace(&c.object),
                name: crate::object::name(&c.object),
            },
        })
        .collect();
    let mut line = serde_json::to_vec(&RecordOut { rv, changes: steps })?;
    line.push(b'\n');
    Ok(line)
}
