//! Bounds on what one caller can hold open: concurrent watches per user
//! (both paths together), per user's plugin pages (all plugins together, and
//! one installation's) and per PluginToken. A followed log
//! (`pods/<name>/log?follow=true`), which streams for as long as the pod writes,
//! counts as a watch, and so does a proxied call (`…/<name>/proxy/…`, and
//! plugin-proxy's runtime route) while it is open, since its backend may stream
//! without end. A watch past a bound is refused with a 429 Status; the
//! slot comes back when the watch's stream ends.
//!
//! The count lives in the shared store (`fundament_shared_store`), so the
//! bounds hold across every replica of the gateway: each open watch holds a
//! lease in its user's group (and a plugin page's also in its user's plugins',
//! its installation's and its PluginToken's), renewed while the watch
//! is open and given back when it ends. A replica that crashes renews nothing,
//! so its leases lapse after [`LEASE_TTL`] and the slots come back by themselves.
//!
//! Fail closed: when the shared store cannot be asked, a new watch is refused
//! with a 503 Status (clients retry; the console falls back to polling); open
//! watches go on.
//!
//! Shutdown: [`WatchLimits::drain`] ends every open watch cleanly (the stream
//! closes as a watch whose timeout passed, so clients watch again, through a
//! load balancer at another replica) and refuses new ones with a 503.

use std::sync::Arc;
use std::time::Duration;

use fundament_kube_core::Status;
use fundament_shared_store::{InProcess, SharedStore};
use futures::FutureExt;
use tokio::sync::watch;

/// Concurrent watches one user may hold through the gateway (the console's tabs and every
/// plugin page together).
pub const WATCHES_PER_USER: usize = 100;
/// Concurrent watches one PluginToken may hold: a page needs a handful.
pub const WATCHES_PER_PLUGIN_TOKEN: usize = 16;
/// Concurrent watches one user's plugin pages may hold, all plugins together. A page can get a
/// fresh PluginToken every few seconds, each with its own [`WATCHES_PER_PLUGIN_TOKEN`]: without
/// this, a plugin page would take all of [`WATCHES_PER_USER`] within a minute, and the console's
/// own lists and details would be refused. The rest stays the console's.
pub const WATCHES_PER_USER_PLUGINS: usize = 64;
/// Concurrent watches one user's pages of one installation may hold: one plugin does not take
/// the other plugins' share.
pub const WATCHES_PER_INSTALLATION: usize = 32;

/// What a plugin page's stream is counted against, besides its user.
#[derive(Debug, Clone, Copy)]
pub struct PluginStream<'a> {
    /// The PluginToken's `jti`.
    pub token_id: &'a str,
    /// The installation the token is for.
    pub installation: &'a str,
}
/// Longest watch the gateway lets through; longer or unbounded `timeoutSeconds` are capped.
pub const MAX_WATCH_SECONDS: u64 = 1800;
/// A watch's lease lapses this long after its last renewal (renewed every third of it).
pub const LEASE_TTL: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct WatchLimits {
    store: Arc<dyn SharedStore>,
    lease_ttl: Duration,
    draining: watch::Sender<bool>,
}

impl Default for WatchLimits {
    /// Counted in this process only (one replica).
    fn default() -> Self {
        Self::new(Arc::new(InProcess::new()))
    }
}

/// One open watch; dropping it (when the stream ends) gives the slots back.
#[derive(Debug)]
pub struct WatchPermit {
    store: Arc<dyn SharedStore>,
    leases: Vec<(String, String)>,
    renewal: tokio::task::JoinHandle<()>,
    draining: watch::Receiver<bool>,
}

impl WatchPermit {
    /// Resolves when the gateway drains (shutdown): the watch should end now.
    pub fn drained(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut draining = self.draining.clone();
        async move {
            let _ = draining.wait_for(|d| *d).await;
        }
    }

    /// `body`, holding this permit until it ends. At shutdown ([`WatchLimits::drain`]), and
    /// when `ends` resolves (the caller's session signed out, its token expired), it ends
    /// cleanly, as a watch whose timeout passed: the client watches (or calls) again, through
    /// a load balancer at another replica, and is checked again.
    pub fn hold(
        self,
        body: axum::body::Body,
        ends: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> axum::body::Body {
        use futures::StreamExt;
        let drained = self.drained();
        let until = futures::future::select(Box::pin(drained), Box::pin(ends));
        let until_ended = axum::body::Body::from_stream(body.into_data_stream().take_until(until));
        fundament_body_limits::holding(until_ended, self)
    }
}

impl Drop for WatchPermit {
    fn drop(&mut self) {
        self.renewal.abort();
        for (group, holder) in std::mem::take(&mut self.leases) {
            let store = Arc::clone(&self.store);
            // The in-process store answers at once; a remote one is asked in the background (and
            // if that fails, the lease lapses by itself).
            if store.release(&group, &holder).now_or_never().is_none()
                && let Ok(runtime) = tokio::runtime::Handle::try_current()
            {
                runtime.spawn(async move {
                    if let Err(error) = store.release(&group, &holder).await {
                        tracing::debug!(%error, "watch lease not given back; it lapses by itself");
                    }
                });
            }
        }
    }
}

fn user_group(user: &str) -> String {
    format!("watches:user:{user}")
}

fn token_group(token_id: &str) -> String {
    format!("watches:token:{token_id}")
}

fn user_plugins_group(user: &str) -> String {
    format!("watches:user-plugins:{user}")
}

fn installation_group(user: &str, installation: &str) -> String {
    format!("watches:installation:{user}:{installation}")
}

/// One count a stream is held against: the user's, and for a plugin page's stream also its
/// user's plugin pages', its installation's and its PluginToken's.
#[derive(Clone, Copy)]
enum Bound<'a> {
    User,
    UserPlugins,
    Installation(&'a str),
    Token(&'a str),
}

impl Bound<'_> {
    /// The shared store's group that counts it.
    fn group(self, user: &str) -> String {
        match self {
            Bound::User => user_group(user),
            Bound::UserPlugins => user_plugins_group(user),
            Bound::Installation(installation) => installation_group(user, installation),
            Bound::Token(token_id) => token_group(token_id),
        }
    }

    fn limit(self) -> usize {
        match self {
            Bound::User => WATCHES_PER_USER,
            Bound::UserPlugins => WATCHES_PER_USER_PLUGINS,
            Bound::Installation(_) => WATCHES_PER_INSTALLATION,
            Bound::Token(_) => WATCHES_PER_PLUGIN_TOKEN,
        }
    }

    /// What the caller is told when the count is full: written only then, not for every
    /// stream.
    fn refusal(self, user: &str) -> String {
        match self {
            Bound::User => format!(
                "too many open streams: user {user} has {WATCHES_PER_USER} watches, followed logs and proxied calls open (the limit); close some first"
            ),
            Bound::UserPlugins => format!(
                "too many open streams: user {user}'s plugin pages have {WATCHES_PER_USER_PLUGINS} open (the limit for all plugins together; the rest is the console's)"
            ),
            Bound::Installation(installation) => format!(
                "too many open streams: user {user}'s pages of {installation} have {WATCHES_PER_INSTALLATION} open (the limit per installation)"
            ),
            Bound::Token(_) => format!(
                "too many open streams: this plugin page has {WATCHES_PER_PLUGIN_TOKEN} watches, followed logs and proxied calls open (the limit per PluginToken)"
            ),
        }
    }
}

impl WatchLimits {
    /// Counted in `store`, with every replica that uses it.
    pub fn new(store: Arc<dyn SharedStore>) -> Self {
        Self::with_lease_ttl(store, LEASE_TTL)
    }

    /// With leases of `ttl` (tests of lapsing).
    pub fn with_lease_ttl(store: Arc<dyn SharedStore>, ttl: Duration) -> Self {
        Self { store, lease_ttl: ttl, draining: watch::channel(false).0 }
    }

    /// Takes a slot for `user` and, for a plugin page's stream, for its plugins, its
    /// installation and its PluginToken; or refuses, giving back what it took.
    pub async fn acquire(&self, user: &str, plugin: Option<PluginStream<'_>>) -> Result<WatchPermit, Status> {
        if *self.draining.borrow() {
            return Err(Status::service_unavailable("kube-api-proxy is shutting down; watch again"));
        }
        let holder = format!("{:032x}", rand::random::<u128>());
        let ttl = self.lease_ttl;
        let unavailable = |error: fundament_shared_store::StoreError| {
            tracing::error!(%error, "watch refused: the watch limits cannot be checked");
            Status::service_unavailable("watch limits cannot be checked right now; try again shortly")
        };
        let mut bounds = vec![Bound::User];
        if let Some(PluginStream { token_id, installation }) = plugin {
            bounds.extend([Bound::UserPlugins, Bound::Installation(installation), Bound::Token(token_id)]);
        }
        let mut leases: Vec<(String, String, usize)> = Vec::new();
        for bound in bounds {
            let (group, limit) = (bound.group(user), bound.limit());
            let refused = match self.store.lease(&group, &holder, limit, ttl).await {
                Ok(true) => None,
                Ok(false) => Some(too_many(bound.refusal(user))),
                Err(error) => Some(unavailable(error)),
            };
            if let Some(status) = refused {
                for (group, holder, _) in &leases {
                    let _ = self.store.release(group, holder).await;
                }
                return Err(status);
            }
            leases.push((group, holder.clone(), limit));
        }
        let renewal = {
            let store = Arc::clone(&self.store);
            let leases = leases.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(ttl / 3);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    for (group, holder, limit) in &leases {
                        // Renewing a held lease always succeeds while the store answers.
                        if let Err(error) = store.lease(group, holder, *limit, ttl).await {
                            tracing::warn!(%error, "watch lease not renewed");
                        }
                    }
                }
            })
        };
        Ok(WatchPermit {
            store: Arc::clone(&self.store),
            leases: leases.into_iter().map(|(group, holder, _)| (group, holder)).collect(),
            renewal,
            draining: self.draining.subscribe(),
        })
    }

    /// Open watches of `user`, at every replica sharing the store.
    pub async fn open(&self, user: &str) -> usize {
        self.store.leases(&user_group(user)).await.unwrap_or(0)
    }

    /// Ends every open watch now and refuses new ones (shutdown).
    pub fn drain(&self) {
        self.draining.send_replace(true);
    }
}

fn too_many(message: String) -> Status {
    Status::too_many_requests(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page<'a>(token_id: &'a str) -> Option<PluginStream<'a>> {
        Some(PluginStream { token_id, installation: "acme-corp--cert-manager" })
    }

    #[tokio::test]
    async fn counts_per_user_and_per_token_and_gives_slots_back() {
        let limits = Arc::new(WatchLimits::default());
        let mut held: Vec<WatchPermit> = Vec::new();
        for _ in 0..WATCHES_PER_PLUGIN_TOKEN {
            held.push(limits.acquire("alice", page("t1")).await.unwrap());
        }
        let refused = limits.acquire("alice", page("t1")).await.unwrap_err();
        assert_eq!((refused.code, refused.reason.as_str()), (429, "TooManyRequests"));
        assert_eq!(
            limits.open("alice").await,
            WATCHES_PER_PLUGIN_TOKEN,
            "the refused one gave its user slot back"
        );
        assert!(limits.acquire("alice", page("t2")).await.is_ok(), "another token of the same user");
        held.pop();
        assert!(limits.acquire("alice", page("t1")).await.is_ok());
        while limits.open("alice").await < WATCHES_PER_USER {
            held.push(limits.acquire("alice", None).await.unwrap());
        }
        assert_eq!(limits.acquire("alice", None).await.unwrap_err().code, 429);
        assert!(limits.acquire("bob", None).await.is_ok());
        held.clear();
        assert_eq!(limits.open("alice").await, 0);
    }

    /// A page that takes a fresh token every few seconds, each with its own 16, cannot take the
    /// console's share, nor another plugin's.
    #[tokio::test]
    async fn a_plugin_page_with_many_tokens_leaves_the_console_and_other_plugins_their_share() {
        let limits = WatchLimits::default();
        let mut held = Vec::new();
        let hostile = |token_id| Some(PluginStream { token_id, installation: "acme-corp--hostile" });
        let tokens: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        let mut refused = None;
        for token in &tokens {
            for _ in 0..WATCHES_PER_PLUGIN_TOKEN {
                match limits.acquire("alice", hostile(token)).await {
                    Ok(permit) => held.push(permit),
                    Err(status) => refused = Some(status),
                }
            }
        }
        assert_eq!(held.len(), WATCHES_PER_INSTALLATION);
        assert!(refused.unwrap().message.contains("the limit per installation"));
        let other = |token_id| Some(PluginStream { token_id, installation: "acme-corp--demo" });
        let others: Vec<String> = (0..10).map(|i| format!("o{i}")).collect();
        for i in 0..(WATCHES_PER_USER_PLUGINS - WATCHES_PER_INSTALLATION) {
            held.push(limits.acquire("alice", other(&others[i / WATCHES_PER_PLUGIN_TOKEN])).await.unwrap());
        }
        let all_plugins = limits.acquire("alice", other("o9")).await.unwrap_err();
        assert!(all_plugins.message.contains("all plugins together"), "{}", all_plugins.message);
        // The console's own watches have the rest.
        for _ in 0..(WATCHES_PER_USER - WATCHES_PER_USER_PLUGINS) {
            held.push(limits.acquire("alice", None).await.unwrap());
        }
        assert_eq!(limits.open("alice").await, WATCHES_PER_USER);
        // Refusals gave back what they had taken: only held permits count.
        held.clear();
        assert_eq!(limits.open("alice").await, 0);
    }

    #[tokio::test]
    async fn two_replicas_share_one_bound_and_a_crashed_ones_slots_lapse() {
        // Leases of 1.5 s, renewed every 0.5 s (a third of it): a renewal may run a second late
        // on a loaded machine before an open watch's slot lapses.
        let store: Arc<dyn SharedStore> = Arc::new(InProcess::new());
        let a = WatchLimits::with_lease_ttl(Arc::clone(&store), Duration::from_millis(1_500));
        let b = WatchLimits::with_lease_ttl(Arc::clone(&store), Duration::from_millis(1_500));
        let mut held = Vec::new();
        for i in 0..WATCHES_PER_PLUGIN_TOKEN {
            let replica = if i % 2 == 0 { &a } else { &b };
            held.push(replica.acquire("alice", page("t")).await.unwrap());
        }
        assert_eq!(b.acquire("alice", page("t")).await.unwrap_err().code, 429);
        assert_eq!(a.acquire("alice", page("t")).await.unwrap_err().code, 429);
        // Renewed while open: still full well past one lease lifetime.
        tokio::time::sleep(Duration::from_millis(3_500)).await;
        assert_eq!(b.acquire("alice", page("t")).await.unwrap_err().code, 429);
        // A crash: the renewals stop, nothing is given back, and the leases lapse.
        for permit in held.drain(..) {
            permit.renewal.abort();
            std::mem::forget(permit);
        }
        // At most a lifetime after the last renewal, and half a second more.
        tokio::time::sleep(Duration::from_millis(2_000)).await;
        assert!(b.acquire("alice", page("t")).await.is_ok(), "lapsed");
    }

    #[tokio::test]
    async fn draining_ends_open_watches_and_refuses_new_ones() {
        let limits = WatchLimits::default();
        let permit = limits.acquire("alice", None).await.unwrap();
        let drained = permit.drained();
        limits.drain();
        tokio::time::timeout(Duration::from_secs(1), drained).await.expect("told to end");
        assert_eq!(limits.acquire("alice", None).await.unwrap_err().code, 503);
    }
}
