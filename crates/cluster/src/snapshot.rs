//! `--state-file`: the whole store as one JSON document, written atomically
//! (temp file + rename) shortly after each change and loaded at start. A file
//! that cannot be read stops start-up; it is never silently replaced.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cluster::Cluster;
use crate::resource::StorageKey;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot read the state file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("the state file {path} is corrupt ({detail}); fix or move it away — it is not overwritten")]
    Corrupt { path: PathBuf, detail: String },
    #[error("cannot write the state file {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    format: u32,
    #[serde(rename = "resourceVersion")]
    resource_version: u64,
    objects: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    group: String,
    resource: String,
    object: Value,
}

/// Loads a snapshot into `cluster`. `Ok(false)` when there is no file yet.
pub fn load(cluster: &Cluster, path: &Path) -> Result<bool, SnapshotError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => return Err(SnapshotError::Read { path: path.to_path_buf(), source }),
    };
    let corrupt = |detail: String| SnapshotError::Corrupt { path: path.to_path_buf(), detail };
    let snapshot: Snapshot = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    if snapshot.format != 1 {
        return Err(corrupt(format!("unknown format {}", snapshot.format)));
    }
    let mut objects = Vec::with_capacity(snapshot.objects.len());
    for (i, e) in snapshot.objects.into_iter().enumerate() {
        if !e.object["metadata"]["name"].is_string() {
            return Err(corrupt(format!("object {i} has no metadata.name")));
        }
        objects.push((StorageKey { group: e.group, resource: e.resource }, e.object));
    }
    cluster.restore(objects, snapshot.resource_version);
    Ok(true)
}

/// Writes the current state to `path` atomically.
pub fn save(cluster: &Cluster, path: &Path) -> Result<(), SnapshotError> {
    let snapshot = {
        let state = cluster.read();
        Snapshot {
            format: 1,
            resource_version: state.store.resource_version(),
            objects: state
                .store
                .all()
                .map(|(k, v)| Entry {
                    group: k.group.clone(),
                    resource: k.resource.clone(),
                    object: (**v).clone(),
                })
                .collect(),
        }
    };
    let write_err = |source| SnapshotError::Write { path: path.to_path_buf(), source };
    let text = serde_json::to_vec(&snapshot).map_err(|e| write_err(std::io::Error::other(e)))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(write_err)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(write_err)?;
    std::fs::rename(&tmp, path).map_err(write_err)
}

/// Saves after every burst of changes (100 ms quiet), until the cluster is dropped.
pub fn spawn_writer(cluster: Arc<Cluster>, path: PathBuf) -> tokio::task::JoinHandle<()> {
    let mut rx = cluster.changed.subscribe();
    tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            rx.mark_unchanged();
            let (c, p) = (Arc::clone(&cluster), path.clone());
            match tokio::task::spawn_blocking(move || save(&c, &p)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "state not saved"),
                Err(e) => tracing::error!(error = %e, "state writer failed"),
            }
        }
    })
}
