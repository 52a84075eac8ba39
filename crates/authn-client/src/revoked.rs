//! The revoked sessions, followed from authn's `GET /sessions/revocations`
//! stream (a snapshot, then each sign-out as it happens). A token whose
//! session is in the set is refused, whatever its expiry says.
//!
//! While the stream is down the last known set stays in force and the
//! follower reconnects within a second or two, then replaces the set with a
//! fresh snapshot: a sign-out during such a gap takes effect when the stream
//! is back. The console also records its own sign-outs at once
//! ([`RevokedSessions::record`]), before any stream event could arrive.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;

/// A line of the stream.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
enum Event {
    Snapshot { revoked: Vec<Entry> },
    Revoked(Entry),
    Heartbeat,
}

#[derive(Debug, Deserialize)]
struct Entry {
    sid: String,
    exp: i64,
}

/// Without a line for this long, the stream is taken for dead (authn sends a heartbeat every 5 s).
const SILENCE: Duration = Duration::from_secs(15);

/// The revoked sessions this process knows of.
#[derive(Debug)]
pub struct RevokedSessions {
    set: RwLock<HashMap<String, i64>>,
    synced: AtomicBool,
    /// Counts changes of `set`, so an open stream learns of its session's sign-out at once.
    changes: tokio::sync::watch::Sender<u64>,
    /// authn's stream, while it cannot be followed: logged once, not per reconnection.
    outage: fundament_telemetry::Outage,
}

impl Default for RevokedSessions {
    fn default() -> Self {
        Self {
            set: RwLock::default(),
            synced: AtomicBool::default(),
            changes: tokio::sync::watch::Sender::new(0),
            outage: fundament_telemetry::Outage::new(),
        }
    }
}

impl RevokedSessions {
    /// Nothing revoked, nothing followed (tests, tools). Synced: there is no stream to wait for.
    pub fn none() -> Arc<RevokedSessions> {
        Arc::new(RevokedSessions { synced: AtomicBool::new(true), ..RevokedSessions::default() })
    }

    /// Follows authn's stream at `url` for as long as the process runs.
    pub fn follow(url: &str) -> Arc<RevokedSessions> {
        let sessions = Arc::new(RevokedSessions::default());
        let follower = Arc::clone(&sessions);
        let url = url.to_string();
        tokio::spawn(async move { follower.run(&url).await });
        sessions
    }

    /// Whether `sid` was revoked.
    pub fn is_revoked(&self, sid: &str) -> bool {
        self.set.read().unwrap_or_else(std::sync::PoisonError::into_inner).contains_key(sid)
    }

    /// Resolves when `sid` is revoked here, or when a token of it expiring at `exp` is no
    /// longer accepted: what ends an answer that streams on after its request was checked (a
    /// watch, a followed log, a proxied call), so a sign-out ends those too.
    pub fn ended(
        self: &Arc<Self>,
        sid: &str,
        exp: i64,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (sessions, sid) = (Arc::clone(self), sid.to_owned());
        let mut changes = self.changes.subscribe();
        async move {
            loop {
                changes.mark_unchanged();
                let now = now_unix();
                if sessions.is_revoked(&sid) || !fundament_tokens::accepted_at(exp, now) {
                    return;
                }
                // Past `exp` by the verifiers' leeway, the token is refused: wake up then.
                let left = (exp + fundament_tokens::EXP_LEEWAY_SECS - now).max(1) as u64;
                let mut expiry = std::pin::pin!(tokio::time::sleep(Duration::from_secs(left)));
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { expiry.await },
                    () = &mut expiry => {}
                }
            }
        }
    }

    /// Whether the first snapshot has arrived.
    pub fn synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }

    /// Records a revocation this process made itself (or learnt of).
    pub fn record(&self, sid: &str, exp: i64) {
        let now = now_unix();
        let mut set = self.set.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        set.retain(|_, exp| fundament_tokens::accepted_at(*exp, now));
        set.insert(sid.to_string(), exp);
        drop(set);
        self.changes.send_modify(|n| *n += 1);
    }

    async fn run(&self, url: &str) {
        let client: Client<_, http_body_util::Empty<bytes::Bytes>> =
            Client::builder(TokioExecutor::new()).build_http();
        let mut backoff = Duration::from_millis(250);
        loop {
            match self.follow_once(&client, url).await {
                Ok(()) => backoff = Duration::from_millis(250),
                Err(error) => {
                    // Once per outage; each retry every few seconds after it at DEBUG.
                    if self.outage.failed() {
                        tracing::warn!(%error, url, "revoked sessions: stream from authn lost, reconnecting until it is back");
                    } else {
                        tracing::debug!(%error, url, "revoked sessions: stream from authn still lost");
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
            tokio::time::sleep(backoff).await;
        }
    }

    async fn follow_once(
        &self,
        client: &Client<
            hyper_util::client::legacy::connect::HttpConnector,
            http_body_util::Empty<bytes::Bytes>,
        >,
        url: &str,
    ) -> Result<(), String> {
        let uri: http::Uri = url.parse().map_err(|e: http::uri::InvalidUri| e.to_string())?;
        let response = tokio::time::timeout(Duration::from_secs(5), client.get(uri))
            .await
            .map_err(|_| "timeout".to_string())?
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("status {}", response.status()));
        }
        let mut body = response.into_body();
        let mut buffer = Vec::new();
        loop {
            let frame = match tokio::time::timeout(SILENCE, body.frame()).await {
                Err(_) => return Err("no heartbeat".into()),
                Ok(None) => return Ok(()),
                Ok(Some(frame)) => frame.map_err(|e| e.to_string())?,
            };
            let Ok(data) = frame.into_data() else { continue };
            buffer.extend_from_slice(&data);
            if buffer.len() > 64 * 1024 * 1024 {
                return Err("stream line too long".into());
            }
            while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=end).collect();
                let event: Event = serde_json::from_slice(&line).map_err(|e| e.to_string())?;
                self.apply(event);
            }
        }
    }

    fn apply(&self, event: Event) {
        match event {
            Event::Snapshot { revoked } => {
                let mut set = self.set.write().unwrap_or_else(std::sync::PoisonError::into_inner);
                // Keep what this process recorded itself and authn may not have stored yet.
                let now = now_unix();
                set.retain(|_, exp| fundament_tokens::accepted_at(*exp, now));
                set.extend(revoked.into_iter().map(|e| (e.sid, e.exp)));
                drop(set);
                self.synced.store(true, Ordering::SeqCst);
                self.changes.send_modify(|n| *n += 1);
                let failures = self.outage.recovered();
                if failures > 0 {
                    tracing::info!(failures, "revoked sessions: following authn's stream again");
                }
            }
            Event::Revoked(Entry { sid, exp }) => self.record(&sid, exp),
            Event::Heartbeat => {}
        }
    }
}

fn now_unix() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_and_events_fill_the_set() {
        let r = RevokedSessions::default();
        assert!(!r.synced());
        r.apply(
            serde_json::from_str(r#"{"type":"SNAPSHOT","revoked":[{"sid":"a","exp":99999999999}]}"#).unwrap(),
        );
        assert!(r.synced() && r.is_revoked("a"));
        r.apply(serde_json::from_str(r#"{"type":"REVOKED","sid":"b","exp":99999999999}"#).unwrap());
        r.apply(serde_json::from_str(r#"{"type":"HEARTBEAT"}"#).unwrap());
        assert!(r.is_revoked("b") && !r.is_revoked("c"));
        r.record("old", 1);
        r.record("c", 99999999999);
        assert!(!r.is_revoked("old"), "expired entries go");
    }

    #[tokio::test]
    async fn a_stream_ends_at_its_sessions_sign_out_or_its_tokens_expiry() {
        let r = RevokedSessions::none();
        let now = now_unix();
        let mut signed_out = Box::pin(r.ended("s1", now + 900));
        let other = r.ended("s2", now + 900);
        assert!(futures::poll!(signed_out.as_mut()).is_pending());
        r.record("s1", now + 900);
        tokio::time::timeout(Duration::from_millis(10), signed_out).await.expect("ended at the sign-out");
        let mut other = Box::pin(other);
        assert!(futures::poll!(other.as_mut()).is_pending(), "another session's stream goes on");
        // A token past its leeway is refused, so its stream ends at once.
        let expired = r.ended("s3", now - fundament_tokens::EXP_LEEWAY_SECS - 1);
        tokio::time::timeout(Duration::from_millis(10), expired).await.expect("ended: expired");
    }

    #[test]
    fn a_revocation_outlives_its_tokens_exp_by_the_verifiers_leeway() {
        let r = RevokedSessions::default();
        let now = now_unix();
        // Expired 10 s ago: a verifier still accepts the token (clock leeway), so it stays refused
        // when the next revocation prunes the set.
        r.record("signed-out", now - 10);
        r.record("next", now + 600);
        assert!(r.is_revoked("signed-out"));
        r.record("long-gone", now - fundament_tokens::EXP_LEEWAY_SECS);
        r.record("after", now + 600);
        assert!(!r.is_revoked("long-gone"), "no verifier accepts its token any more");
    }
}
