//! Bounds on what one caller can hold open: concurrent watches per user
//! (both paths together) and per PluginToken. A watch past a bound is refused
//! with a 429 Status; the count goes down when the watch's stream ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fundament_kube_core::Status;

/// Concurrent watches one user may hold through the gateway (the console's tabs and every
/// plugin page together).
pub const WATCHES_PER_USER: usize = 100;
/// Concurrent watches one PluginToken may hold: a page needs a handful.
pub const WATCHES_PER_PLUGIN_TOKEN: usize = 16;
/// Longest watch the gateway lets through; longer or unbounded `timeoutSeconds` are capped.
pub const MAX_WATCH_SECONDS: u64 = 1800;

#[derive(Debug, Default)]
pub struct WatchLimits {
    counts: Mutex<HashMap<String, usize>>,
}

/// One open watch; dropping it (when the stream ends) gives the slot back.
#[derive(Debug)]
pub struct WatchPermit {
    limits: Arc<WatchLimits>,
    keys: Vec<String>,
}

impl Drop for WatchPermit {
    fn drop(&mut self) {
        let mut counts = self.limits.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for key in &self.keys {
            if let Some(n) = counts.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(key);
                }
            }
        }
    }
}

impl WatchLimits {
    /// Takes a slot for `user` (and for the PluginToken `token_id`, if any), or refuses.
    pub fn acquire(self: &Arc<Self>, user: &str, token_id: Option<&str>) -> Result<WatchPermit, Status> {
        let mut counts = self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let user_key = format!("user:{user}");
        if counts.get(&user_key).copied().unwrap_or(0) >= WATCHES_PER_USER {
            return Err(too_many(format!(
                "too many watches: user {user} has {WATCHES_PER_USER} open through kube-api-proxy (the limit); close some first"
            )));
        }
        let token_key = token_id.map(|t| format!("token:{t}"));
        if let Some(key) = &token_key
            && counts.get(key).copied().unwrap_or(0) >= WATCHES_PER_PLUGIN_TOKEN
        {
            return Err(too_many(format!(
                "too many watches: this plugin page has {WATCHES_PER_PLUGIN_TOKEN} open (the limit per PluginToken)"
            )));
        }
        let keys: Vec<String> = std::iter::once(user_key).chain(token_key).collect();
        for key in &keys {
            *counts.entry(key.clone()).or_default() += 1;
        }
        Ok(WatchPermit { limits: Arc::clone(self), keys })
    }

    /// Open watches of `user`.
    pub fn open(&self, user: &str) -> usize {
        let counts = self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        counts.get(&format!("user:{user}")).copied().unwrap_or(0)
    }
}

fn too_many(message: String) -> Status {
    Status::too_many_requests(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_user_and_per_token_and_gives_slots_back() {
        let limits = Arc::new(WatchLimits::default());
        let mut held: Vec<WatchPermit> =
            (0..WATCHES_PER_PLUGIN_TOKEN).map(|_| limits.acquire("alice", Some("t1")).unwrap()).collect();
        let refused = limits.acquire("alice", Some("t1")).unwrap_err();
        assert_eq!((refused.code, refused.reason.as_str()), (429, "TooManyRequests"));
        assert!(limits.acquire("alice", Some("t2")).is_ok(), "another token of the same user");
        held.pop();
        assert!(limits.acquire("alice", Some("t1")).is_ok());
        while limits.open("alice") < WATCHES_PER_USER {
            held.push(limits.acquire("alice", None).unwrap());
        }
        assert_eq!(limits.acquire("alice", None).unwrap_err().code, 429);
        assert!(limits.acquire("bob", None).is_ok());
        held.clear();
        assert_eq!(limits.open("alice"), 0);
    }
}
