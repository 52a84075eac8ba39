//! The file backend: a YAML file an operator edits (or a ConfigMap mounts), checked on
//! load and reloaded when it changes. A change that does not parse or is inconsistent is
//! refused with every problem logged, and the last good directory stays in use: a typo
//! must not sign everyone out.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::model::DirectoryData;
use crate::{Directory, DirectoryError};

/// How often the file is looked at. ConfigMap updates reach pods after a minute or so
/// anyway; reading a small file every few seconds costs nothing.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(2);

/// A directory read from a YAML file.
#[derive(Debug)]
pub struct FileDirectory {
    path: PathBuf,
    state: RwLock<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    data: Arc<DirectoryData>,
    /// The bytes `data` came from, or the last refused bytes: unchanged bytes are not parsed
    /// (nor their problems logged) again.
    seen: Vec<u8>,
}

/// Parses and checks directory YAML; `shown` names the source in errors.
pub fn parse(bytes: &[u8], shown: &str) -> Result<DirectoryData, DirectoryError> {
    let data: DirectoryData = serde_yaml::from_slice(bytes)
        .map_err(|e| DirectoryError::Parse { path: shown.to_owned(), message: e.to_string() })?;
    let problems = crate::validate::problems(&data);
    if problems.is_empty() {
        Ok(data)
    } else {
        Err(DirectoryError::Invalid { path: shown.to_owned(), problems })
    }
}

impl FileDirectory {
    /// Reads and checks `path`; an unreadable or inconsistent file is an error at start.
    pub fn load(path: &Path) -> Result<Arc<FileDirectory>, DirectoryError> {
        let bytes = read(path)?;
        let data = parse(&bytes, &path.display().to_string())?;
        Ok(Arc::new(FileDirectory {
            path: path.to_path_buf(),
            state: RwLock::new(Loaded { data: Arc::new(data), seen: bytes }),
        }))
    }

    /// Looks at the file once: a changed, good file replaces the directory. Returns whether it did.
    pub fn reload(&self) -> Result<bool, DirectoryError> {
        let bytes = read(&self.path)?;
        if bytes == self.lock().seen {
            return Ok(false);
        }
        let parsed = parse(&bytes, &self.path.display().to_string());
        let mut state = self.state.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.seen = bytes;
        state.data = Arc::new(parsed?);
        Ok(true)
    }

    /// Reloads every [`RELOAD_INTERVAL`] for as long as the process runs.
    pub fn spawn_reload(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(RELOAD_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                match this.reload() {
                    Ok(true) => tracing::info!(path = %this.path.display(), "directory reloaded"),
                    Ok(false) => {}
                    Err(error) => {
                        tracing::error!(%error, "directory change refused; the previous directory stays in use")
                    }
                }
            }
        })
    }

    fn lock(&self) -> std::sync::RwLockReadGuard<'_, Loaded> {
        self.state.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Directory for FileDirectory {
    fn current(&self) -> Arc<DirectoryData> {
        Arc::clone(&self.lock().data)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, DirectoryError> {
    std::fs::read(path).map_err(|source| DirectoryError::Read { path: path.display().to_string(), source })
}
