//! Revoked sessions: signing out revokes the session on the server, so a
//! copied UserToken (and every PluginToken and frame ticket minted in that
//! session) stops working at sign-out, not when it expires.
//!
//! A session is the UserToken's `jti`; it is kept here until the token's own
//! `exp`, after which the token is dead anyway. The set survives restarts
//! (`<state-dir>/authn/revoked-sessions.json`, written atomically on every
//! revocation) and is published to every verifier as a stream
//! (`GET /sessions/revocations`, see [`crate::router`]): a snapshot, then
//! each revocation as it happens.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

/// One revoked session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    /// The session id (the UserToken's `jti`).
    pub sid: String,
    /// When the session's UserToken expires: the entry is dropped after that.
    pub exp: i64,
}

/// Why the revocation file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RevocationsError {
    #[error("cannot read the revoked sessions from {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not a revoked-sessions file ({source}): move it away to start with none")]
    Parse { path: String, source: serde_json::Error },
    #[error("cannot write the revoked sessions to {path}: {source}")]
    Write { path: String, source: std::io::Error },
}

/// The revoked sessions, and who listens for new ones.
pub struct Revocations {
    revoked: Mutex<HashMap<String, i64>>,
    events: broadcast::Sender<Revoked>,
    file: Option<PathBuf>,
}

impl std::fmt::Debug for Revocations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Revocations").field("file", &self.file).finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
struct File {
    revoked: Vec<Revoked>,
}

impl Revocations {
    /// Kept in memory only (tests).
    pub fn in_memory() -> Revocations {
        Revocations { revoked: Mutex::new(HashMap::new()), events: broadcast::channel(1024).0, file: None }
    }

    /// Loads `path` (none revoked when it does not exist); later revocations are written there.
    /// A file that exists but cannot be read is an error and is never overwritten.
    pub fn load(path: &Path) -> Result<Revocations, RevocationsError> {
        let shown = path.display().to_string();
        let revoked = match std::fs::read(path) {
            Ok(bytes) => {
                let file: File = serde_json::from_slice(&bytes)
                    .map_err(|source| RevocationsError::Parse { path: shown, source })?;
                file.revoked.into_iter().map(|r| (r.sid, r.exp)).collect()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(source) => return Err(RevocationsError::Read { path: shown, source }),
        };
        Ok(Revocations {
            revoked: Mutex::new(revoked),
            events: broadcast::channel(1024).0,
            file: Some(path.to_path_buf()),
        })
    }

    fn set(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.revoked.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the session `sid` was revoked.
    pub fn is_revoked(&self, sid: &str) -> bool {
        self.set().contains_key(sid)
    }

    /// Revokes `sid` until `exp`; persisted before it is announced, so a revocation that was
    /// answered survives a restart. Entries past their `exp` are dropped on the way.
    pub fn revoke(&self, sid: &str, exp: i64, now: i64) -> Result<(), RevocationsError> {
        let snapshot = {
            let mut set = self.set();
            set.retain(|_, e| *e > now);
            set.insert(sid.to_string(), exp);
            set.iter().map(|(sid, exp)| Revoked { sid: sid.clone(), exp: *exp }).collect::<Vec<_>>()
        };
        if let Some(path) = &self.file {
            write_atomically(path, &File { revoked: snapshot })?;
        }
        // Nobody listening is fine: verifiers that connect later get the snapshot.
        let _ = self.events.send(Revoked { sid: sid.to_string(), exp });
        Ok(())
    }

    /// Every session revoked and not yet expired.
    pub fn snapshot(&self, now: i64) -> Vec<Revoked> {
        let set = self.set();
        set.iter()
            .filter(|(_, exp)| **exp > now)
            .map(|(sid, exp)| Revoked { sid: sid.clone(), exp: *exp })
            .collect()
    }

    /// Revocations from now on. Subscribe before taking the snapshot, so none falls in between.
    pub fn subscribe(&self) -> broadcast::Receiver<Revoked> {
        self.events.subscribe()
    }
}

fn write_atomically(path: &Path, file: &File) -> Result<(), RevocationsError> {
    let fail = |source| RevocationsError::Write { path: path.display().to_string(), source };
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec(file).map_err(|e| fail(std::io::Error::other(e)))?;
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::File::open(&tmp).and_then(|f| f.sync_all()).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revocations_are_kept_until_the_session_expires() {
        let r = Revocations::in_memory();
        r.revoke("a", 100, 10).unwrap();
        r.revoke("b", 50, 10).unwrap();
        assert!(r.is_revoked("a") && r.is_revoked("b") && !r.is_revoked("c"));
        assert_eq!(r.snapshot(60), vec![Revoked { sid: "a".into(), exp: 100 }]);
        r.revoke("c", 200, 60).unwrap();
        assert!(!r.is_revoked("b"), "expired entries are dropped");
    }

    #[tokio::test]
    async fn new_revocations_are_announced() {
        let r = Revocations::in_memory();
        let mut events = r.subscribe();
        r.revoke("a", 100, 10).unwrap();
        assert_eq!(events.recv().await.unwrap(), Revoked { sid: "a".into(), exp: 100 });
    }

    #[test]
    fn survive_a_restart_and_refuse_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("revoked-sessions.json");
        Revocations::load(&path).unwrap().revoke("a", i64::MAX, 0).unwrap();
        assert!(Revocations::load(&path).unwrap().is_revoked("a"));
        std::fs::write(&path, "not json").unwrap();
        let err = Revocations::load(&path).unwrap_err().to_string();
        assert!(err.contains("is not a revoked-sessions file"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json", "left untouched");
    }
}
