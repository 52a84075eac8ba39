//! When the console mints PluginTokens for a plugin frame: at mount, at 80 %
//! of each token's lifetime, and when the page asks. A failed mint is retried
//! after 2, 4 and 8 s; then the page is told `fundament:auth-failed` and the
//! console keeps trying every [`RECOVERY_RETRY_MS`], so the frame recovers by
//! itself once minting works again (the original left it stranded).
//!
//! A state machine without timers or I/O: the frame host runs the timers.

use serde::{Deserialize, Serialize};

/// Refresh when this share of a token's lifetime has passed.
pub const REFRESH_RATIO: f64 = 0.8;
/// Never refresh sooner than this after a mint.
pub const MIN_REFRESH_MS: u32 = 1_000;
/// Delays of the retries after a failed mint.
pub const RETRY_DELAYS_MS: [u32; 3] = [2_000, 4_000, 8_000];
/// After giving up, try again this often.
pub const RECOVERY_RETRY_MS: u32 = 10_000;
/// A page's requests for a new token within this long of a fresh one, or of the last mint a
/// request started, are ignored: a token that was refused right after its mint is not helped by
/// another mint, and a page that floods the console with requests gets a few mints, not
/// hundreds, also after the console gave up (authn failing is not asked again at once).
pub const REQUESTED_REFRESH_GAP_MS: f64 = 5_000.0;

/// Why the console could not get a PluginToken (`reason` of `fundament:auth-failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AuthFailure {
    /// authn failed or could not be reached.
    MintFailed,
    /// The user's session is no longer valid.
    Unauthorized,
    /// The user may no longer use this installation (or it is gone).
    Revoked,
}

impl AuthFailure {
    /// The protocol's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthFailure::MintFailed => "mint_failed",
            AuthFailure::Unauthorized => "unauthorized",
            AuthFailure::Revoked => "revoked",
        }
    }

    /// What the console tells the user.
    pub fn explanation(self) -> &'static str {
        match self {
            AuthFailure::MintFailed => "The console could not get a plugin token from authn.",
            AuthFailure::Unauthorized => "Your session has ended. Sign in again to continue.",
            AuthFailure::Revoked => "You no longer have access to this plugin on this cluster.",
        }
    }

    /// Whether retrying soon can help (a passing failure), or only a change
    /// elsewhere can (signing in again, being granted access).
    pub fn is_transient(self) -> bool {
        self == AuthFailure::MintFailed
    }
}

/// A PluginToken and when it expires (unix seconds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Minted {
    pub token: String,
    pub expires_at: i64,
}

/// What to do after a failed mint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Try again after this many ms; the page is not told yet.
    Retry(u32),
    /// Tell the page (`announce`: the first time in this run of failures) and
    /// try again after this many ms.
    GiveUp { reason: AuthFailure, announce: bool, retry_in: u32 },
}

/// What to do about a page's `plugin:request-token-refresh`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshRequest {
    /// Mint now.
    Mint,
    /// A retry is scheduled: the page waits for it.
    Wait,
    /// Too soon after a fresh token; `first`: the first such request of this frame (log it once).
    Ignore { first: bool },
}

/// The token state of one plugin frame.
#[derive(Debug, Default)]
pub struct TokenKeeper {
    token: Option<Minted>,
    in_flight: bool,
    failures: u32,
    failed: Option<AuthFailure>,
    /// When the last token arrived (unix ms).
    minted_at: Option<f64>,
    /// When a page's request last started a mint (unix ms).
    requested_at: Option<f64>,
    /// A request was ignored already (logged once per frame).
    ignored_once: bool,
}

impl TokenKeeper {
    /// Starts a mint unless one is already running (requests are deduplicated).
    pub fn begin(&mut self) -> bool {
        !std::mem::replace(&mut self.in_flight, true)
    }

    /// Whether a mint is running.
    pub fn in_flight(&self) -> bool {
        self.in_flight
    }

    /// The current token, if it has not expired at `now_ms` (unix ms).
    pub fn token(&self, now_ms: f64) -> Option<&Minted> {
        self.token.as_ref().filter(|t| (t.expires_at as f64) * 1000.0 > now_ms)
    }

    /// Whether a retry is scheduled and the page has not been told of a
    /// failure yet: a page asking for a token then waits for that retry
    /// instead of starting another mint, so the backoff holds.
    pub fn in_backoff(&self) -> bool {
        self.failures > 0 && self.failed.is_none()
    }

    /// The failure the page was told about, while it lasts.
    pub fn failure(&self) -> Option<AuthFailure> {
        self.failed
    }

    /// Whether to mint for a page that asks for a new token at `now_ms`.
    pub fn refresh_requested(&mut self, now_ms: f64) -> RefreshRequest {
        if self.in_backoff() {
            return RefreshRequest::Wait;
        }
        let recent = |at: Option<f64>| at.is_some_and(|at| now_ms - at < REQUESTED_REFRESH_GAP_MS);
        if recent(self.minted_at) || recent(self.requested_at) {
            let first = !std::mem::replace(&mut self.ignored_once, true);
            return RefreshRequest::Ignore { first };
        }
        self.requested_at = Some(now_ms);
        RefreshRequest::Mint
    }

    /// Records a new token; returns the delay until its refresh (ms).
    pub fn minted(&mut self, minted: Minted, now_ms: f64) -> u32 {
        let delay = refresh_delay_ms(minted.expires_at, now_ms);
        self.minted_at = Some(now_ms);
        self.token = Some(minted);
        self.in_flight = false;
        self.failures = 0;
        self.failed = None;
        delay
    }

    /// Records a failed mint.
    pub fn failed(&mut self, reason: AuthFailure) -> AfterFailure {
        self.in_flight = false;
        self.failures += 1;
        if reason.is_transient()
            && self.failed.is_none()
            && let Some(&delay) = RETRY_DELAYS_MS.get(self.failures as usize - 1)
        {
            return AfterFailure::Retry(delay);
        }
        let announce = self.failed != Some(reason);
        self.token = None;
        self.failed = Some(reason);
        AfterFailure::GiveUp { reason, announce, retry_in: RECOVERY_RETRY_MS }
    }
}

/// 80 % of the remaining lifetime, at least [`MIN_REFRESH_MS`].
pub fn refresh_delay_ms(expires_at: i64, now_ms: f64) -> u32 {
    let remaining = (expires_at as f64) * 1000.0 - now_ms;
    let delay = (remaining * REFRESH_RATIO).clamp(f64::from(MIN_REFRESH_MS), f64::from(u32::MAX));
    delay as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(exp: i64) -> Minted {
        Minted { token: "t".into(), expires_at: exp }
    }

    #[test]
    fn refreshes_at_eighty_percent_and_not_too_soon() {
        assert_eq!(refresh_delay_ms(1_000 + 900, 1_000_000.0), 720_000);
        assert_eq!(refresh_delay_ms(1_000, 1_000_000.0), MIN_REFRESH_MS);
        assert_eq!(refresh_delay_ms(0, 1_000_000.0), MIN_REFRESH_MS);
    }

    #[test]
    fn deduplicates_mints() {
        let mut k = TokenKeeper::default();
        assert!(k.begin());
        assert!(!k.begin(), "a second request joins the running mint");
        k.minted(token(2_000), 1_000_000.0);
        assert!(k.begin());
    }

    #[test]
    fn retries_after_two_four_eight_seconds_then_gives_up_and_keeps_trying() {
        let mut k = TokenKeeper::default();
        let mut seen = Vec::new();
        for _ in 0..3 {
            k.begin();
            seen.push(k.failed(AuthFailure::MintFailed));
        }
        assert_eq!(
            seen,
            [AfterFailure::Retry(2_000), AfterFailure::Retry(4_000), AfterFailure::Retry(8_000)]
        );
        assert_eq!(k.failure(), None, "the page is not told during the retries");
        assert!(k.in_backoff(), "a page's request waits for the scheduled retry");
        k.begin();
        assert_eq!(
            k.failed(AuthFailure::MintFailed),
            AfterFailure::GiveUp {
                reason: AuthFailure::MintFailed,
                announce: true,
                retry_in: RECOVERY_RETRY_MS
            }
        );
        k.begin();
        assert_eq!(
            k.failed(AuthFailure::MintFailed),
            AfterFailure::GiveUp {
                reason: AuthFailure::MintFailed,
                announce: false,
                retry_in: RECOVERY_RETRY_MS
            },
            "told once per run of failures"
        );
        assert_eq!(k.failure(), Some(AuthFailure::MintFailed));
        assert!(!k.in_backoff(), "after giving up, a page's request mints at once");
        k.begin();
        k.minted(token(9_999_999_999), 0.0);
        assert_eq!(k.failure(), None, "recovers");
        assert!(k.token(0.0).is_some());
        k.begin();
        assert_eq!(k.failed(AuthFailure::MintFailed), AfterFailure::Retry(2_000), "a new run starts over");
    }

    #[test]
    fn lasting_failures_are_reported_at_once_and_a_changed_reason_again() {
        let mut k = TokenKeeper::default();
        k.begin();
        k.minted(token(2_000), 1_000_000.0);
        k.begin();
        assert_eq!(
            k.failed(AuthFailure::Revoked),
            AfterFailure::GiveUp {
                reason: AuthFailure::Revoked,
                announce: true,
                retry_in: RECOVERY_RETRY_MS
            }
        );
        assert!(k.token(1_000_000.0).is_none(), "a revoked token is dropped");
        k.begin();
        assert!(matches!(
            k.failed(AuthFailure::Unauthorized),
            AfterFailure::GiveUp { reason: AuthFailure::Unauthorized, announce: true, .. }
        ));
    }

    #[test]
    fn a_flood_of_refresh_requests_after_a_fresh_token_mints_nothing() {
        let mut k = TokenKeeper::default();
        assert_eq!(k.refresh_requested(0.0), RefreshRequest::Mint, "no token yet");
        k.begin();
        k.minted(token(9_999_999_999), 1_000.0);
        let mut mints = 0;
        let mut firsts = 0;
        for i in 0..1_000 {
            match k.refresh_requested(1_000.0 + f64::from(i)) {
                RefreshRequest::Mint => mints += 1,
                RefreshRequest::Ignore { first: true } => firsts += 1,
                _ => {}
            }
        }
        assert_eq!((mints, firsts), (0, 1), "ignored, and said so once");
        assert_eq!(k.refresh_requested(1_000.0 + REQUESTED_REFRESH_GAP_MS), RefreshRequest::Mint);
        k.begin();
        k.failed(AuthFailure::MintFailed);
        assert_eq!(k.refresh_requested(1_000_000.0), RefreshRequest::Wait, "a retry is scheduled");
    }

    #[test]
    fn after_giving_up_a_flood_of_requests_mints_once_per_gap() {
        let mut k = TokenKeeper::default();
        k.begin();
        for _ in 0..=RETRY_DELAYS_MS.len() {
            k.failed(AuthFailure::MintFailed);
            k.begin();
        }
        assert!(matches!(k.failed(AuthFailure::MintFailed), AfterFailure::GiveUp { .. }));
        assert_eq!(k.failure(), Some(AuthFailure::MintFailed));
        let mut mints = 0;
        // 20 s of a request every millisecond, each mint failing at once.
        for ms in 0..20_000 {
            if k.refresh_requested(1_000_000.0 + f64::from(ms)) == RefreshRequest::Mint {
                mints += 1;
                k.begin();
                k.failed(AuthFailure::MintFailed);
            }
        }
        assert_eq!(mints, 4, "one per {REQUESTED_REFRESH_GAP_MS} ms, not one per request");
    }

    #[test]
    fn expired_tokens_are_not_handed_out() {
        let mut k = TokenKeeper::default();
        k.begin();
        k.minted(token(100), 0.0);
        assert!(k.token(99_000.0).is_some());
        assert!(k.token(100_000.0).is_none());
    }
}
