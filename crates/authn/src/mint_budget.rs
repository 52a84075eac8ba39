//! How many PluginTokens and frame tickets one user may have minted, per authn replica: a
//! token bucket per user of [`BURST`], refilled at [`PER_SECOND`].
//!
//! Each frame ticket is single-use, so plugin-proxy records every one it opens for its minute
//! of life; with one replica that record is an in-process table of 100,000 entries
//! (`fundament_shared_store::memory::ONCE_CAPACITY`) that refuses new tickets when full. One
//! session minting and opening some 850 tickets a second filled it, and nobody's plugin frame
//! opened while that lasted. Bounded per user, a user gets [`PER_SECOND`] a second at most
//! after the burst: far more than a person opening plugin pages needs (each page takes one
//! ticket and one token, and a token lasts minutes), and far fewer than the table's turnover.
//! The check comes right after the caller is known, before any call to OpenFGA or the cluster.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Mints a user may make at once, after being idle: a person opening a dozen plugin pages in
/// a few seconds, with room to spare (a tab's retries included).
pub const BURST: f64 = 300.0;
/// Mints a second a user gets back.
pub const PER_SECOND: f64 = 10.0;
/// Users tracked at most; past it, users whose bucket is full again (idle for a while) are
/// forgotten, and if none is, the new user shares one bucket with the others past the bound.
const USERS_TRACKED: usize = 10_000;

/// The users' buckets (see the module documentation).
#[derive(Debug, Default)]
pub struct MintBudget {
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    left: f64,
    at: Instant,
}

impl Bucket {
    fn refilled(self, now: Instant) -> f64 {
        (self.left + now.saturating_duration_since(self.at).as_secs_f64() * PER_SECOND).min(BURST)
    }
}

/// No mint left for this user now; one comes back within a second or so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many plugin tokens and frame tickets for this user at once; try again in a moment")]
pub struct Exhausted;

impl MintBudget {
    /// Takes one mint of `user`'s (a `sub`), or says there is none left.
    pub fn take(&self, user: &str) -> Result<(), Exhausted> {
        self.take_at(user, Instant::now())
    }

    fn take_at(&self, user: &str, now: Instant) -> Result<(), Exhausted> {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let key = if buckets.len() >= USERS_TRACKED && !buckets.contains_key(user) {
            buckets.retain(|_, b| b.refilled(now) < BURST);
            if buckets.len() >= USERS_TRACKED { "" } else { user }
        } else {
            user
        };
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket { left: BURST, at: now });
        let left = bucket.refilled(now);
        if left < 1.0 {
            return Err(Exhausted);
        }
        *bucket = Bucket { left: left - 1.0, at: now };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_user_has_a_burst_then_the_rate_and_others_are_not_held_up() {
        let budget = MintBudget::default();
        let t0 = Instant::now();
        for _ in 0..BURST as usize {
            budget.take_at("mallory", t0).unwrap();
        }
        assert_eq!(budget.take_at("mallory", t0), Err(Exhausted));
        budget.take_at("alice", t0).expect("alice has her own");
        // A tenth of a second gives one back (10 a second), and no more than that.
        let later = t0 + Duration::from_millis(100);
        budget.take_at("mallory", later).unwrap();
        assert_eq!(budget.take_at("mallory", later), Err(Exhausted));
        // Idle long enough, the bucket is full again, never fuller.
        let much_later = t0 + Duration::from_secs(3_600);
        for _ in 0..BURST as usize {
            budget.take_at("mallory", much_later).unwrap();
        }
        assert_eq!(budget.take_at("mallory", much_later), Err(Exhausted));
    }
}
