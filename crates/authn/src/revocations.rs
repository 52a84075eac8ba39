//! Revoked sessions: signing out revokes the session on the server, so a
//! copied UserToken (and every PluginToken and frame ticket minted in that
//! session) stops working at sign-out, not when it expires.
//!
//! A session is the UserToken's `jti`; it is kept until the token's own `exp`,
//! after which the token is dead anyway. The set lives in the shared store
//! (`fundament_shared_store`): in one process (and
//! `<state-dir>/authn/revoked-sessions.json`, written atomically on every
//! revocation) for a single replica, or in Redis (`--shared-store`) for many.
//! Each authn replica keeps a mirror of it, follows the store's revocation
//! channel, and publishes the set to every verifier as a stream
//! (`GET /sessions/revocations`, see [`crate::router`]): a snapshot, then each
//! revocation as it happens, whichever replica it was made at.
//!
//! Fail closed: while a replica has lost the shared store its mirror may be
//! stale, so it refuses to say a session is live ([`Revocations::check`]
//! errs), refuses to serve the stream (503, so verifiers keep their set and
//! reconnect, possibly to another replica) and ends the streams it serves;
//! a sign-out that cannot be stored is an error, never a silent success.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use fundament_shared_store::{InProcess, SharedStore, StoreError};
use fundament_telemetry::Outage;
use futures::{FutureExt, StreamExt};
use tokio::sync::broadcast;

pub use fundament_shared_store::Revoked;

/// Why the revoked sessions could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RevocationsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// This replica has not (or no longer) read the set from the shared store.
    #[error("the revoked sessions are not known right now (the shared store {0} is not reachable)")]
    NotSynced(String),
    /// The replica is shutting down.
    #[error("authn is shutting down")]
    Closing,
}

/// The revoked sessions, and who listens for new ones.
pub struct Revocations {
    store: Arc<dyn SharedStore>,
    mirror: RwLock<HashMap<String, i64>>,
    synced: AtomicBool,
    closing: AtomicBool,
    /// Replaced (closing every stream that listens) when the store is lost or at shutdown.
    events: Mutex<broadcast::Sender<Revoked>>,
    /// The shared store, while it cannot be followed: logged once, not per retry.
    store_outage: Outage,
    /// The revocation stream, while it is refused (not synced): logged once, not per verifier's
    /// reconnection.
    pub(crate) refusals: Outage,
}

impl std::fmt::Debug for Revocations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Revocations").field("store", &self.store.describe()).finish_non_exhaustive()
    }
}

impl Revocations {
    /// Kept in memory only (tests).
    pub fn in_memory() -> Revocations {
        Self::local(Arc::new(InProcess::new()))
    }

    /// In this process, loaded from `path` (none revoked when it does not exist) and written
    /// there on each revocation. A file that exists but cannot be read is an error and is never
    /// overwritten.
    pub fn load(path: &std::path::Path) -> Result<Revocations, RevocationsError> {
        Ok(Self::local(Arc::new(InProcess::with_revocations_file(path)?)))
    }

    fn local(store: Arc<InProcess>) -> Revocations {
        // The in-process store answers at once: its futures are ready when made.
        let set = store.revoked(fundament_shared_store::now_unix()).now_or_never().and_then(Result::ok);
        Revocations {
            store,
            mirror: RwLock::new(set.unwrap_or_default().into_iter().map(|r| (r.sid, r.exp)).collect()),
            synced: AtomicBool::new(true),
            closing: AtomicBool::new(false),
            events: Mutex::new(broadcast::channel(1024).0),
            store_outage: Outage::new(),
            refusals: Outage::new(),
        }
    }

    /// Shared with the other replicas through `store` (Redis): follows its revocation channel
    /// for as long as the process runs, and is usable once the first snapshot is read.
    pub fn shared(store: Arc<dyn SharedStore>) -> Arc<Revocations> {
        let revocations = Arc::new(Revocations {
            store,
            mirror: RwLock::new(HashMap::new()),
            synced: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            events: Mutex::new(broadcast::channel(1024).0),
            store_outage: Outage::new(),
            refusals: Outage::new(),
        });
        let follower = Arc::clone(&revocations);
        tokio::spawn(async move { follower.follow().await });
        revocations
    }

    fn is_shared(&self) -> bool {
        self.store.is_shared()
    }

    /// Follows the store: subscribe, then read the set (so nothing falls in between), then
    /// apply each announcement; when the connection is lost, unsync, end the streams, retry.
    async fn follow(&self) {
        let mut backoff = Duration::from_millis(100);
        loop {
            // Once per outage at WARN (the README's "logging once"), each retry at DEBUG.
            match self.follow_once().await {
                Ok(()) => {
                    if self.store_outage.failed() {
                        tracing::warn!(store = %self.store.describe(), "revoked sessions: shared store connection lost, reconnecting");
                    }
                    backoff = Duration::from_millis(100);
                }
                Err(error) => {
                    if self.store_outage.failed() {
                        tracing::warn!(%error, "revoked sessions: cannot follow the shared store, retrying until it is back");
                    } else {
                        tracing::debug!(%error, "revoked sessions: the shared store still cannot be followed");
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
            self.unsync();
            if self.closing.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(backoff).await;
        }
    }

    async fn follow_once(&self) -> Result<(), StoreError> {
        let mut events = self.store.revocation_events().await?;
        let set = self.store.revoked(fundament_shared_store::now_unix()).await?;
        {
            let mut mirror = self.mirror_mut();
            // Kept: what this replica revoked itself and the store had not announced yet.
            let now = fundament_shared_store::now_unix();
            mirror.retain(|_, exp| fundament_tokens::accepted_at(*exp, now));
            mirror.extend(set.into_iter().map(|r| (r.sid, r.exp)));
        }
        if !self.synced.swap(true, Ordering::SeqCst) {
            let failures = self.store_outage.recovered();
            tracing::info!(store = %self.store.describe(), failures, "revoked sessions: in sync with the shared store");
        }
        while let Some(revoked) = events.next().await {
            self.mirror_mut().insert(revoked.sid.clone(), revoked.exp);
            let _ = self.sender().send(revoked);
        }
        Ok(())
    }

    /// Not in sync: refuse to vouch for sessions, and end the streams so verifiers start over.
    fn unsync(&self) {
        self.synced.store(false, Ordering::SeqCst);
        *self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = broadcast::channel(1024).0;
    }

    /// Shutdown: every revocation stream ends now (verifiers reconnect to another replica) and
    /// no new one starts.
    pub fn close_streams(&self) {
        self.closing.store(true, Ordering::SeqCst);
        *self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = broadcast::channel(1024).0;
    }

    fn sender(&self) -> broadcast::Sender<Revoked> {
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn mirror_mut(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, i64>> {
        self.mirror.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn mirror(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, i64>> {
        self.mirror.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the session `sid` was revoked; an error while this replica cannot know.
    pub fn check(&self, sid: &str) -> Result<bool, RevocationsError> {
        if !self.synced.load(Ordering::SeqCst) {
            return Err(RevocationsError::NotSynced(self.store.describe()));
        }
        Ok(self.mirror().contains_key(sid))
    }

    /// Whether the session `sid` was revoked; true while this replica cannot know (fail closed).
    pub fn is_revoked(&self, sid: &str) -> bool {
        self.check(sid).unwrap_or(true)
    }

    /// Revokes `sid` until `exp`: stored (and announced to every replica) before it is
    /// answered, so a revocation that was answered holds everywhere and survives restarts.
    pub async fn revoke(&self, sid: &str, exp: i64, now: i64) -> Result<(), RevocationsError> {
        let revoked = Revoked { sid: sid.to_string(), exp };
        self.store.revoke(&revoked).await?;
        {
            let mut mirror = self.mirror_mut();
            mirror.retain(|_, exp| fundament_tokens::accepted_at(*exp, now));
            mirror.insert(revoked.sid.clone(), exp);
        }
        if !self.is_shared() {
            // The in-process store has no follower: announce it here. (Shared: the follower
            // announces it when the store's channel brings it back, as at every other replica.)
            let _ = self.sender().send(revoked);
        }
        Ok(())
    }

    /// Every revocation whose token would still be accepted; an error while this replica cannot know.
    pub fn snapshot(&self, now: i64) -> Result<Vec<Revoked>, RevocationsError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(RevocationsError::Closing);
        }
        if !self.synced.load(Ordering::SeqCst) {
            return Err(RevocationsError::NotSynced(self.store.describe()));
        }
        Ok(self
            .mirror()
            .iter()
            .filter(|(_, exp)| fundament_tokens::accepted_at(**exp, now))
            .map(|(sid, exp)| Revoked { sid: sid.clone(), exp: *exp })
            .collect())
    }

    /// Revocations from now on. Subscribe before taking the snapshot, so none falls in between.
    pub fn subscribe(&self) -> broadcast::Receiver<Revoked> {
        self.sender().subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn revocations_are_kept_until_no_verifier_would_accept_the_session() {
        let leeway = fundament_tokens::EXP_LEEWAY_SECS;
        let r = Revocations::in_memory();
        r.revoke("a", 100, 10).await.unwrap();
        r.revoke("b", 50, 10).await.unwrap();
        assert!(r.is_revoked("a") && r.is_revoked("b") && !r.is_revoked("c"));
        // Past b's exp, within the verifiers' leeway: its token still verifies, so it stays.
        assert_eq!(r.snapshot(50 + leeway - 1).unwrap().len(), 2);
        assert_eq!(r.snapshot(50 + leeway).unwrap(), vec![Revoked { sid: "a".into(), exp: 100 }]);
        r.revoke("c", 200, 50 + leeway - 1).await.unwrap();
        assert!(r.is_revoked("b"), "kept within the leeway");
        r.revoke("d", 200, 50 + leeway).await.unwrap();
        assert!(!r.is_revoked("b"), "dropped once no verifier accepts its token");
    }

    #[tokio::test]
    async fn new_revocations_are_announced_and_shutdown_ends_the_streams() {
        let r = Revocations::in_memory();
        let mut events = r.subscribe();
        r.revoke("a", i64::MAX, 10).await.unwrap();
        assert_eq!(events.recv().await.unwrap(), Revoked { sid: "a".into(), exp: i64::MAX });
        r.close_streams();
        assert!(matches!(events.recv().await, Err(broadcast::error::RecvError::Closed)));
        assert!(matches!(r.snapshot(0), Err(RevocationsError::Closing)));
    }

    #[tokio::test]
    async fn survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("revoked-sessions.json");
        Revocations::load(&path).unwrap().revoke("a", i64::MAX, 0).await.unwrap();
        assert!(Revocations::load(&path).unwrap().is_revoked("a"));
    }

    /// The README's "logging once": a store that stays down is one warning, not one per retry.
    #[tokio::test]
    async fn a_store_that_stays_down_is_logged_once_however_often_it_is_tried() {
        let warnings = fundament_telemetry::CapturedLogs::default();
        let sink = warnings.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || sink.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let r = Revocations::shared(Arc::new(fundament_shared_store::testing::Unreachable));
        // Tried at 0, 0.1, 0.3, 0.7 and 1.5 s.
        tokio::time::sleep(Duration::from_millis(1_600)).await;
        r.close_streams();
        let text = warnings.text();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("cannot follow the shared store"), "{text}");
    }

    #[tokio::test]
    async fn without_the_shared_store_nothing_is_vouched_for_and_sign_out_fails() {
        let r = Revocations::shared(Arc::new(fundament_shared_store::testing::Unreachable));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(matches!(r.check("any"), Err(RevocationsError::NotSynced(_))));
        assert!(r.is_revoked("any"), "fail closed");
        assert!(r.snapshot(0).is_err(), "no stream from a replica that cannot know");
        let err = r.revoke("a", i64::MAX, 0).await.unwrap_err().to_string();
        assert!(err.contains("redis://down") && err.contains("unavailable"), "{err}");
    }
}
