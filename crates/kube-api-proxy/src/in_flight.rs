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
//! A call's body is read whole before anything is forwarded (up to 3 MiB), so the calls bound
//! what one caller holds only to 320 × 3 MiB, about a gigabyte, and nothing bounds all callers
//! together. The bytes of bodies being held are counted too, per user and in all
//! ([`BODY_BYTES_PER_USER`], [`BODY_BYTES_IN_ALL`]), and of those, what plugin pages may hold
//! ([`BODY_BYTES_PER_USER_PLUGINS`], [`BODY_BYTES_PLUGINS_IN_ALL`]), so the console's own saves
//! always find room: a body that would pass any of its bounds is refused with the same 429
//! before the chunk that would pass it is kept.
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
/// Bytes of request bodies one user's calls may hold at once, in one replica: ten bodies of
/// kube-apiserver's largest (3 MiB) and more. A person applies one object at a time; a page that
/// sends many large bodies at once waits for its earlier ones.
pub const BODY_BYTES_PER_USER: usize = 32 * 1024 * 1024;
/// Bytes of request bodies all calls may hold at once, in one replica: with the per-user bound,
/// the memory request bodies can take is bounded whoever sends them (eight users' worth).
pub const BODY_BYTES_IN_ALL: usize = 256 * 1024 * 1024;
/// Of [`BODY_BYTES_PER_USER`], what one user's plugin pages may hold, all plugins and tokens
/// together. A page (or its copied PluginToken) that trickles large bodies would otherwise hold
/// all of the user's bytes, and every save of the console's forms would be refused; the rest
/// (8 MiB, two of kube-apiserver's largest bodies) stays the console's.
pub const BODY_BYTES_PER_USER_PLUGINS: usize = 24 * 1024 * 1024;
/// Of [`BODY_BYTES_IN_ALL`], what the plugin pages of all users may hold: eight users of one
/// hostile plugin leave the console's saves of every user 64 MiB.
pub const BODY_BYTES_PLUGINS_IN_ALL: usize = 192 * 1024 * 1024;
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
    body_bytes: BodyBytesLimits,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

/// The bounds on request body bytes held at once.
#[derive(Debug, Clone, Copy)]
struct BodyBytesLimits {
    per_user: usize,
    in_all: usize,
    per_user_plugins: usize,
    plugins_in_all: usize,
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
        let body_bytes = BodyBytesLimits {
            per_user: BODY_BYTES_PER_USER,
            in_all: BODY_BYTES_IN_ALL,
            per_user_plugins: BODY_BYTES_PER_USER_PLUGINS,
            plugins_in_all: BODY_BYTES_PLUGINS_IN_ALL,
        };
        Self { per_user, per_user_plugins, per_token, body_bytes, in_flight: Arc::default() }
    }

    /// Other bounds on request body bytes held at once than the defaults (tests); plugin pages
    /// get three quarters of each, as by default.
    pub fn with_body_bytes(self, per_user: usize, in_all: usize) -> Self {
        let body_bytes = BodyBytesLimits {
            per_user,
            in_all,
            per_user_plugins: per_user * 3 / 4,
            plugins_in_all: in_all * 3 / 4,
        };
        Self { body_bytes, ..self }
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
            body: Arc::new(BodyBytes {
                in_flight: Arc::clone(&self.in_flight),
                limits: self.body_bytes,
                user: user.to_string(),
                plugin: token_id.is_some(),
                held: Mutex::new(0),
            }),
        })
    }

    /// Calls of `user` in flight in this replica.
    pub fn in_flight(&self, user: &str) -> usize {
        let in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        in_flight.get(&self.key(Bound::User, user)).copied().unwrap_or(0)
    }

    /// Bytes of request bodies `user`'s calls hold in this replica.
    pub fn body_bytes(&self, user: &str) -> usize {
        let in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        in_flight.get(&body_bytes_key(user)).copied().unwrap_or(0)
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
/// [`fundament_body_limits::holding`]) gives its slots back, and the bytes its body held.
#[derive(Debug)]
pub struct CallSlot {
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    keys: Vec<String>,
    body: Arc<BodyBytes>,
}

impl CallSlot {
    /// The call's body, counted as it arrives against the bounds on body bytes held at once.
    /// The bytes it takes come back when the slot and the body are both dropped: a body read
    /// whole is held until it has been sent on.
    pub fn counted(&self, body: axum::body::Body) -> axum::body::Body {
        use futures::StreamExt;
        if axum::body::HttpBody::is_end_stream(&body) {
            return body;
        }
        let bytes = Arc::clone(&self.body);
        axum::body::Body::from_stream(body.into_data_stream().map(move |chunk| {
            chunk.map_err(BodyError::Broken).and_then(|data| bytes.take(data.len()).map(|()| data))
        }))
    }
}

/// Why a counted body ends early.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// It would pass a bound on body bytes held at once: the 429 to answer.
    #[error("{}", .0.message)]
    TooMuchInFlight(Box<Status>),
    #[error(transparent)]
    Broken(axum::Error),
}

impl BodyError {
    /// The 429 a counted body ended with, if `e` is (or wraps: a body's error is wrapped again
    /// each time the body is) that refusal.
    pub fn refusal_in<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a Status> {
        let mut cause = Some(e);
        while let Some(e) = cause {
            if let Some(BodyError::TooMuchInFlight(status)) = e.downcast_ref::<BodyError>() {
                return Some(status);
            }
            cause = e.source();
        }
        None
    }
}

/// The bytes one call's body holds, against the bounds of its user and of all calls, and for a
/// plugin page's call those of the user's plugin pages and of all plugin pages.
#[derive(Debug)]
struct BodyBytes {
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    limits: BodyBytesLimits,
    user: String,
    plugin: bool,
    held: Mutex<usize>,
}

/// One count of body bytes a call's body is held against.
#[derive(Debug, Clone, Copy)]
enum BodyBound {
    UserPlugins,
    User,
    PluginsInAll,
    InAll,
}

/// Keys of the body byte counts in the map of calls in flight (`:` never starts a user's key
/// there, nor `*` a user name: a verified token's subject).
const BODY_BYTES_IN_ALL_KEY: &str = "body-bytes:*";
const BODY_BYTES_PLUGINS_IN_ALL_KEY: &str = "body-bytes:plugins:*";

/// The key of `user`'s body byte count.
fn body_bytes_key(user: &str) -> String {
    format!("body-bytes:user:{user}")
}

impl BodyBytes {
    /// The bounds this body counts against, the most particular first: its refusal says best
    /// what to do.
    fn bounds(&self) -> &'static [BodyBound] {
        if self.plugin {
            &[BodyBound::UserPlugins, BodyBound::User, BodyBound::PluginsInAll, BodyBound::InAll]
        } else {
            &[BodyBound::User, BodyBound::InAll]
        }
    }

    fn key(&self, bound: BodyBound) -> String {
        match bound {
            BodyBound::UserPlugins => format!("body-bytes:user-plugins:{}", self.user),
            BodyBound::User => body_bytes_key(&self.user),
            BodyBound::PluginsInAll => BODY_BYTES_PLUGINS_IN_ALL_KEY.to_string(),
            BodyBound::InAll => BODY_BYTES_IN_ALL_KEY.to_string(),
        }
    }

    fn limit(&self, bound: BodyBound) -> usize {
        match bound {
            BodyBound::UserPlugins => self.limits.per_user_plugins,
            BodyBound::User => self.limits.per_user,
            BodyBound::PluginsInAll => self.limits.plugins_in_all,
            BodyBound::InAll => self.limits.in_all,
        }
    }

    /// What the caller is told when `bound`, holding `held` bytes, would be passed.
    fn refusal(&self, bound: BodyBound, held: usize) -> String {
        let (user, limit) = (&self.user, self.limit(bound));
        match bound {
            BodyBound::UserPlugins => format!(
                "too many request bytes in flight: user {user}'s plugin pages hold {held} bytes of request bodies, and this body would pass their limit ({limit} bytes, all plugins together; the rest is the console's); wait for some to end"
            ),
            BodyBound::User => format!(
                "too many request bytes in flight: user {user}'s calls hold {held} bytes of request bodies, and this body would pass the limit per user ({limit} bytes); wait for some to end"
            ),
            BodyBound::PluginsInAll => format!(
                "too many request bytes in flight: the plugin pages of all users hold {held} bytes of request bodies, and this body would pass their limit in this kube-api-proxy ({limit} bytes); try again"
            ),
            BodyBound::InAll => format!(
                "too many request bytes in flight: the calls of all users hold {held} bytes of request bodies, and this body would pass the limit of this kube-api-proxy ({limit} bytes); try again"
            ),
        }
    }

    fn take(&self, n: usize) -> Result<(), BodyError> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        for &bound in self.bounds() {
            let held = in_flight.get(&self.key(bound)).copied().unwrap_or(0);
            if held + n > self.limit(bound) {
                tracing::debug!(user = %self.user, "call refused: too many request bytes in flight");
                let status =
                    Status::too_many_requests(self.refusal(bound, held)).with_details(StatusDetails {
                        retry_after_seconds: RETRY_AFTER_SECONDS,
                        ..Default::default()
                    });
                return Err(BodyError::TooMuchInFlight(Box::new(status)));
            }
        }
        for &bound in self.bounds() {
            *in_flight.entry(self.key(bound)).or_default() += n;
        }
        *self.held.lock().unwrap_or_else(PoisonError::into_inner) += n;
        Ok(())
    }
}

impl Drop for BodyBytes {
    fn drop(&mut self) {
        let held = *self.held.get_mut().unwrap_or_else(PoisonError::into_inner);
        if held == 0 {
            return;
        }
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        for &bound in self.bounds() {
            let key = self.key(bound);
            if let Some(count) = in_flight.get_mut(&key) {
                *count -= held.min(*count);
                if *count == 0 {
                    in_flight.remove(&key);
                }
            }
        }
    }
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

    #[tokio::test]
    async fn body_bytes_are_counted_as_they_arrive_and_come_back_with_the_call() {
        use http_body_util::BodyExt;
        let limits = CallLimits::default().with_body_bytes(10, 15);
        let body = |n: usize| axum::body::Body::from(vec![b'x'; n]);
        let slot = limits.acquire("alice", None).unwrap();
        let read = slot.counted(body(6)).collect().await.unwrap().to_bytes();
        assert_eq!(read.len(), 6);
        // The body was read whole and dropped; the slot still holds its bytes (they are sent on).
        let second = limits.acquire("alice", None).unwrap();
        let refused = second.counted(body(6)).collect().await.unwrap_err();
        let status = BodyError::refusal_in(&refused).expect("a refusal");
        assert_eq!(status.code, 429);
        assert!(status.message.contains("the limit per user (10 bytes)"), "{}", status.message);
        let bob = limits.acquire("bob", None).unwrap();
        bob.counted(body(9)).collect().await.unwrap();
        let refused = second.counted(body(1)).collect().await.unwrap_err();
        let status = BodyError::refusal_in(&refused).expect("a refusal");
        assert!(status.message.contains("hold 15 bytes"), "{}", status.message);
        // An empty body is not counted at all.
        second.counted(axum::body::Body::empty()).collect().await.unwrap();
        drop((slot, second, bob));
        assert!(limits.in_flight.lock().unwrap().is_empty(), "every byte came back");
    }

    /// Plugin pages that trickle large bodies hold their share and no more: the console's saves,
    /// of the same user or of everyone, still find room.
    #[tokio::test]
    async fn plugin_pages_leave_the_console_its_share_of_body_bytes() {
        use http_body_util::BodyExt;
        // Plugin pages: 300 bytes per user, 750 in all.
        let limits = CallLimits::default().with_body_bytes(400, 1_000);
        let body = |n: usize| axum::body::Body::from(vec![b'x'; n]);
        let refusal = |e: axum::Error| BodyError::refusal_in(&e).expect("a refusal").message.clone();
        let alice_page = limits.acquire("alice", Some("t1")).unwrap();
        alice_page.counted(body(300)).collect().await.unwrap();
        // Another page of hers, with a token of its own: refused, her pages' share is full.
        let another = limits.acquire("alice", Some("t2")).unwrap();
        let message = refusal(another.counted(body(1)).collect().await.unwrap_err());
        assert!(message.contains("alice's plugin pages hold 300 bytes"), "{message}");
        assert!(
            message.contains("(300 bytes, all plugins together; the rest is the console's)"),
            "{message}"
        );
        // The console saves for her.
        let console = limits.acquire("alice", None).unwrap();
        console.counted(body(100)).collect().await.unwrap();
        // Bob's and carol's pages fill what all plugin pages may hold; dave's console saves.
        let bob_page = limits.acquire("bob", Some("t3")).unwrap();
        bob_page.counted(body(300)).collect().await.unwrap();
        let carol_page = limits.acquire("carol", Some("t4")).unwrap();
        let message = refusal(carol_page.counted(body(151)).collect().await.unwrap_err());
        assert!(message.contains("the plugin pages of all users hold 600 bytes"), "{message}");
        assert!(message.contains("their limit in this kube-api-proxy (750 bytes)"), "{message}");
        let dave = limits.acquire("dave", None).unwrap();
        dave.counted(body(250)).collect().await.unwrap();
        drop((alice_page, another, console, bob_page, carol_page, dave));
        assert!(limits.in_flight.lock().unwrap().is_empty(), "every byte came back");
    }

    #[test]
    fn clones_count_together() {
        let limits = CallLimits::new(1, 1, 1);
        let _held = limits.clone().acquire("alice", None).unwrap();
        assert_eq!(limits.acquire("alice", None).unwrap_err().code, 429);
    }
}
