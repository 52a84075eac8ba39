//! How many calls the console's server makes at once to kube-api-proxy for one user, and in all
//! (server only). An answer is read whole (up to `MAX_ANSWER_BYTES`) and parsed before a page
//! uses it, so without a bound a user firing hundreds of server functions at a list of
//! several MiB at once held that many answers in memory. Calls past a bound wait their turn;
//! one that waits longer than [`WAIT`] is refused as busy. Long-lived streams (the console's
//! cluster route, watches) are not counted here: kube-api-proxy bounds those per user.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Calls of one user at once (a page's server functions run a few at a time).
pub const PER_USER: usize = 8;
/// Calls at once in all.
pub const IN_ALL: usize = 64;
/// How long a call waits for its turn before it is refused as busy.
pub const WAIT: Duration = Duration::from_secs(10);
/// Users with a call under way or waiting, at most; past it, new users' calls count on a
/// shared slot set (each user's semaphore is dropped once idle).
const USERS_TRACKED: usize = 10_000;

/// The bounds (see the module documentation).
#[derive(Debug)]
pub struct CallLimits {
    all: Arc<Semaphore>,
    users: Mutex<HashMap<u64, Arc<Semaphore>>>,
    /// Keys users by a hash of their id (a user's sessions share their turns).
    hasher: RandomState,
    per_user: usize,
    wait: Duration,
}

/// A call's turn: held while the call runs, its answer read included.
#[derive(Debug)]
pub struct CallTurn {
    _user: OwnedSemaphorePermit,
    _all: OwnedSemaphorePermit,
}

/// No turn within [`WAIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many calls at once")]
pub struct Busy;

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits::new(PER_USER, IN_ALL, WAIT)
    }
}

impl CallLimits {
    pub fn new(per_user: usize, in_all: usize, wait: Duration) -> CallLimits {
        CallLimits {
            all: Arc::new(Semaphore::new(in_all)),
            users: Mutex::new(HashMap::new()),
            hasher: RandomState::new(),
            per_user,
            wait,
        }
    }

    fn user(&self, user_id: &str) -> Arc<Semaphore> {
        let key = self.hasher.hash_one(user_id);
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        if users.len() >= USERS_TRACKED && !users.contains_key(&key) {
            // Idle users' semaphores go: one is idle when nothing holds or waits on it.
            let per_user = self.per_user;
            users.retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < per_user);
        }
        let key = if users.len() >= USERS_TRACKED && !users.contains_key(&key) { 0 } else { key };
        Arc::clone(users.entry(key).or_insert_with(|| Arc::new(Semaphore::new(self.per_user))))
    }

    /// Waits for a turn of the user `user_id` (verified: whose session the call is made with):
    /// one of theirs, then one of all.
    pub async fn turn(&self, user_id: &str) -> Result<CallTurn, Busy> {
        let user = self.user(user_id);
        tokio::time::timeout(self.wait, async {
            let user = user.acquire_owned().await.map_err(|_| Busy)?;
            let all = Arc::clone(&self.all).acquire_owned().await.map_err(|_| Busy)?;
            Ok(CallTurn { _user: user, _all: all })
        })
        .await
        .map_err(|_| Busy)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_user_has_a_few_turns_at_once_and_everyone_some() {
        let limits = CallLimits::new(2, 3, Duration::from_millis(100));
        let a1 = limits.turn("alice").await.unwrap();
        let _a2 = limits.turn("alice").await.unwrap();
        assert_eq!(limits.turn("alice").await.unwrap_err(), Busy, "alice's third waits, then is busy");
        let _b1 = limits.turn("bob").await.unwrap();
        assert_eq!(limits.turn("carol").await.unwrap_err(), Busy, "three in all");
        drop(a1);
        let _c1 = limits.turn("carol").await.expect("a turn freed is anyone's");
        // A waiting call gets its turn as soon as one ends.
        let limits = Arc::new(CallLimits::new(1, 8, Duration::from_secs(5)));
        let first = limits.turn("alice").await.unwrap();
        let waiting = tokio::spawn({
            let limits = Arc::clone(&limits);
            async move { limits.turn("alice").await.map(drop) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(first);
        assert_eq!(waiting.await.unwrap(), Ok(()));
    }
}
