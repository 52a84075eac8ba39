//! `--state-file`: the whole store as one JSON document, written durably
//! (temporary file, fsync, rename, fsync of the directory) so a reader only
//! ever sees a complete file, and read at start. Changes between two
//! snapshots are in the journal beside it ([`crate::journal`]). A file that
//! cannot be read stops start-up; it is never silently replaced.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cluster::State;
use crate::resource::StorageKey;

/// The one format this build writes and reads.
pub const FORMAT: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot read the state file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("the state file {path} is corrupt ({detail}); fix or move it away — it is not overwritten")]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "the state file {path} is in format {found}, which this build does not read (it reads format {FORMAT}): run the fundament that wrote it, or move the file away — it is not overwritten"
    )]
    UnknownFormat { path: PathBuf, found: u64 },
    #[error("cannot write the state file {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// Where an object is: its kind's storage key, namespace and name.
pub type ObjectPlace = (StorageKey, String, String);

/// What a state file holds: every object by place, and the cluster's resourceVersion.
#[derive(Debug, Default)]
pub struct Contents {
    pub resource_version: u64,
    pub objects: HashMap<ObjectPlace, Value>,
}

#[derive(Serialize)]
struct SnapshotOut<'a> {
    format: u32,
    #[serde(rename = "resourceVersion")]
    resource_version: u64,
    objects: Vec<EntryOut<'a>>,
}

#[derive(Serialize)]
struct EntryOut<'a> {
    group: &'a str,
    resource: &'a str,
    object: &'a Value,
}

/// Read in two steps, so an unknown format is told apart from a corrupt file.
#[derive(Deserialize)]
struct Header {
    format: Option<u64>,
}

#[derive(Deserialize)]
struct SnapshotIn {
    #[serde(rename = "resourceVersion")]
    resource_version: u64,
    objects: Vec<EntryIn>,
}

#[derive(Deserialize)]
struct EntryIn {
    group: String,
    resource: String,
    object: Value,
}

/// Reads a state file; `Ok(None)` when there is none yet.
pub fn read(path: &Path) -> Result<Option<Contents>, SnapshotError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SnapshotError::Read { path: path.to_path_buf(), source }),
    };
    let corrupt = |detail: String| SnapshotError::Corrupt { path: path.to_path_buf(), detail };
    let header: Header = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    match header.format {
        Some(f) if f == u64::from(FORMAT) => {}
        Some(found) => return Err(SnapshotError::UnknownFormat { path: path.to_path_buf(), found }),
        None => return Err(corrupt("no format field".into())),
    }
    let snapshot: SnapshotIn = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    let mut objects = HashMap::with_capacity(snapshot.objects.len());
    for (i, e) in snapshot.objects.into_iter().enumerate() {
        let Some(name) = e.object["metadata"]["name"].as_str().map(str::to_string) else {
            return Err(corrupt(format!("object {i} has no metadata.name")));
        };
        let ns = e.object["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        objects.insert((StorageKey { group: e.group, resource: e.resource }, ns, name), e.object);
    }
    Ok(Some(Contents { resource_version: snapshot.resource_version, objects }))
}

/// Writes `state` to `path` so that `path` holds either the old file or the
/// complete new one, on disk, when this returns.
pub fn write(state: &State, path: &Path) -> Result<(), SnapshotError> {
    let snapshot = SnapshotOut {
        format: FORMAT,
        resource_version: state.store.resource_version(),
        objects: state
            .store
            .all()
            .map(|(k, v)| EntryOut { group: &k.group, resource: &k.resource, object: v })
            .collect(),
    };
    let write_err = |source| SnapshotError::Write { path: path.to_path_buf(), source };
    let text = serde_json::to_vec(&snapshot).map_err(|e| write_err(std::io::Error::other(e)))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_err)?;
    // One fixed name: a temporary file left by a killed process is replaced, not piled up.
    let tmp = temporary_path(path);
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    // The rename is in place; it is durable once the directory is (a failure
    // here cannot undo it, so it is only logged).
    if result.is_ok()
        && let Err(error) = std::fs::File::open(dir).and_then(|d| d.sync_all())
    {
        tracing::warn!(%error, dir = %dir.display(), "state directory not synced after a snapshot");
    }
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(write_err)
}

fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}
