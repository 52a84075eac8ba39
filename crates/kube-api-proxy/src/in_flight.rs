//! Bounds on the ordinary calls one caller has in flight at once, in this replica: per user
//! (both paths together), per user's plugin pages (all plugins together) and per PluginToken.
//! Each call holds its slots from the moment its token is verified, through the checks that
//! cost the gateway a call of its own (OpenFGA's `can_view`, a SubjectAccessReview, a
//! TokenRequest) and the reading of its body (up to 3 MiB, buffered), until its answer has
//! been passed on. A stream (a watch, a followed log, a proxied call) holds slots only while it
//! is admitted: once open it is counted by [`crate::limits`] instead.
//!
//! Without these, a plugin page, or anyone holding its PluginToken (a token is taken without
//! any `Origin`, from a server too), could send a hundred thousand calls at once, each holding
//! memory, a connection to OpenFGA and one to the cluster. A call past a bound is refused with a
//! `429 TooManyRequests` Status carrying `retryAfterSeconds` (and `Retry-After`), as
//! kube-apiserver refuses a call past its own max-in-flight; clients wait and try again.
//!
//! Counted in this process only: a bound per replica, so `n` replicas behind a load balancer let
//! through at most `n` times as much. Nothing is shared, so nothing can fail to be counted, and a
//! call costs no round trip to a store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use fundament_kube_core::{Status, StatusDetails};

/// Calls of one user in flight at once, in one replica, both paths together. The console's
/// server sends at most 8 calls at once per user (`app/src/plugins/call_limits.rs`) and a
/// browser at most 6 per host over HTTP/1.1, so a person never comes near it. It is sized so
/// that one identity's 256 concurrent clients, the gateway benchmark's heaviest load
/// (`bench/gateway.sh`, issue 16: no errors at 256 clients), pass with the console's share
/// beside them; what it stops is the flood (a hundred thousand calls at once from one page or
/// one copied token), each holding a body of up to 3 MiB and a check of OpenFGA and the
/// cluster.
pub const CALLS_PER_USER: usize = 320;
/// Calls of one user's plugin pages in flight at once, all plugins and tokens together. A page
/// can get a fresh PluginToken every few seconds, each with its own [`CALLS_PER_PLUGIN_TOKEN`]:
/// without this, one page would take all of [`CALLS_PER_USER`], and the console's own lists and
/// details would be refused. The rest (64, eight sessions' worth of the console's 8) stays the
/// console's.
pub const CALLS_PER_USER_PLUGINS: usize = 256;
/// Calls of one PluginToken in flight at once: a page lists a few kinds and gets a few objects
/// at a time (a browser opens at most 6 connections per host over HTTP/1.1); 256 is the
/// benchmark's plugin-path load on one token.
pub const CALLS_PER_PLUGIN_TOKEN: usize = 256;
/// How long a refused caller is told to wait (`retryAfterSeconds`, `Retry-After`): what
/// kube-apiserver tells a caller past its max-in-flight. A slot comes back as soon as any call
/// of the caller ends, so a second is enough.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// The counts of calls in flight, by bound; shared by every clone.
#[derive(Debug, Clone)]
pub struct CallLimits {
    per_user: usize,
    per_user_plugins: usize,
    per_token: usize,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self::new(CALLS_PER_USER, CALLS_PER_USER_PLUGINS, CALLS_PER_PLUGIN_TOKEN)
    }
}

/// One count a call is held against.
#[derive(Clone, Copy)]
enum Bound<'a> {
    Token(&'a str),
    UserPlugins,
    User,
}

impl CallLimits {
    /// Other bounds than the defaults (tests).
    pub fn new(per_user: usize, per_user_plugins: usize, per_token: usize) -> Self {
        Self { per_user, per_user_plugins, per_token, in_flight: Arc::default() }
    }

    /// Slots for one call of `user` and, for a plugin page's call, of its plugin pages and its
    /// PluginToken (`token_id`, the token's `jti`); or the 429 naming the bound that is full.
    /// Nothing is taken when a bound is full.
    pub fn acquire(&self, user: &str, token_id: Option<&str>) -> Result<CallSlot, Status> {
        // The most particular bound first: its refusal says best what to do.
        let bounds: Vec<Bound> = match token_id {
            Some(token_id) => vec![Bound::Token(token_id), Bound::UserPlugins, Bound::User],
            None => vec![Bound::User],
        };
        let keys: Vec<(String, usize)> =
            bounds.iter().map(|bound| (self.key(*bound, user), self.limit(*bound))).collect();
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        for (bound, (key, limit)) in bounds.iter().zip(&keys) {
            if in_flight.get(key).copied().unwrap_or(0) >= *limit {
                tracing::debug!(user, "call refused: too many calls in flight");
                return Err(self.refusal(*bound, user));
            }
        }
        for (key, _) in &keys {
            *in_flight.entry(key.clone()).or_default() += 1;
        }
        Ok(CallSlot {
            in_flight: Arc::clone(&self.in_flight),
            keys: keys.into_iter().map(|(key, _)| key).collect(),
        })
    }

    /// Calls of `user` in flight in this replica.
    pub fn in_flight(&self, user: &str) -> usize {
        let in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        in_flight.get(&self.key(Bound::User, user)).copied().unwrap_or(0)
    }

    fn key(&self, bound: Bound, user: &str) -> String {
        match bound {
            Bound::Token(token_id) => format!("token:{token_id}"),
            Bound::UserPlugins => format!("user-plugins:{user}"),
            Bound::User => format!("user:{user}"),
        }
    }

    fn limit(&self, bound: Bound) -> usize {
        match bound {
            Bound::Token(_) => self.per_token,
            Bound::UserPlugins => self.per_user_plugins,
            Bound::User => self.per_user,
        }
    }

    /// What the caller is told when `bound` is full: written only then.
    fn refusal(&self, bound: Bound, user: &str) -> Status {
        let message = match bound {
            Bound::Token(_) => format!(
                "too many calls in flight: this plugin page has {} calls in flight (the limit per PluginToken); wait for some to end",
                self.per_token
            ),
            Bound::UserPlugins => format!(
                "too many calls in flight: user {user}'s plugin pages have {} calls in flight (the limit for all plugins together; the rest is the console's)",
                self.per_user_plugins
            ),
            Bound::User => format!(
                "too many calls in flight: user {user} has {} calls in flight through kube-api-proxy (the limit per user); wait for some to end",
                self.per_user
            ),
        };
        Status::too_many_requests(message)
            .with_details(StatusDetails { retry_after_seconds: RETRY_AFTER_SECONDS, ..Default::default() })
    }
}

/// One call in flight; dropping it (when its answer has been passed on:
/// [`fundament_body_limits::holding`]) gives its slots back.
#[derive(Debug)]
pub struct CallSlot {
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    keys: Vec<String>,
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        for key in &self.keys {
            if let Some(count) = in_flight.get_mut(key) {
                *count -= 1;
                // Counts of callers with nothing in flight are not kept: the map holds only what
                // is in flight now.
                if *count == 0 {
                    in_flight.remove(key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_leave_the_console_its_share() {
        let limits = CallLimits::default();
        let mut held = Vec::new();
        // A page with many tokens takes its plugins' share, and no more.
        for token in 0.. {
            let token_id = format!("t{token}");
            match limits.acquire("alice", Some(&token_id)) {
                Ok(slot) => held.push(slot),
                Err(refused) => {
                    assert!(refused.message.contains("all plugins together"), "{}", refused.message);
                    break;
                }
            }
        }
        assert_eq!(held.len(), CALLS_PER_USER_PLUGINS);
        // The console's own calls have the rest.
        while limits.in_flight("alice") < CALLS_PER_USER {
            held.push(limits.acquire("alice", None).unwrap());
        }
        let refused = limits.acquire("alice", None).unwrap_err();
        assert!(refused.message.contains("(the limit per user)"), "{}", refused.message);
        held.clear();
        assert_eq!(limits.in_flight("alice"), 0);
    }

    #[test]
    fn each_bound_refuses_with_a_429_to_retry_and_takes_nothing() {
        let limits = CallLimits::new(4, 3, 2);
        let t1 = [limits.acquire("alice", Some("t1")).unwrap(), limits.acquire("alice", Some("t1")).unwrap()];
        let refused = limits.acquire("alice", Some("t1")).unwrap_err();
        assert_eq!((refused.code, refused.reason.as_str()), (429, "TooManyRequests"));
        assert_eq!(refused.details.as_ref().map(|d| d.retry_after_seconds), Some(RETRY_AFTER_SECONDS));
        assert!(refused.message.contains("the limit per PluginToken"), "{}", refused.message);
        assert_eq!(limits.in_flight("alice"), 2, "the refusal took nothing");
        let t2 = limits.acquire("alice", Some("t2")).unwrap();
        let refused = limits.acquire("alice", Some("t3")).unwrap_err();
        assert!(refused.message.contains("all plugins together"), "{}", refused.message);
        let own = limits.acquire("alice", None).unwrap();
        let refused = limits.acquire("alice", None).unwrap_err();
        assert!(refused.message.contains("user alice has 4 calls in flight"), "{}", refused.message);
        // Another user has bounds of their own.
        let bob = limits.acquire("bob", Some("t9")).unwrap();
        // Each slot comes back when its call ends.
        drop(own);
        let again = limits.acquire("alice", None).unwrap();
        drop((t1, t2, again, bob));
        assert_eq!(limits.in_flight("alice"), 0);
        assert_eq!(limits.in_flight("bob"), 0);
        assert!(limits.in_flight.lock().unwrap().is_empty(), "nothing is kept of callers with no calls");
    }

    #[test]
    fn clones_count_together() {
        let limits = CallLimits::new(1, 1, 1);
        let _held = limits.clone().acquire("alice", None).unwrap();
        assert_eq!(limits.acquire("alice", None).unwrap_err().code, 429);
    }
}
