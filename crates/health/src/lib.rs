//! What a service knows of the services it depends on, and what its `/readyz` answers.
//!
//! A [`DependencyHealth`] records the outcome of a service's own calls to one dependency
//! (OpenFGA, a cluster): whether the latest call worked, and while calls fail, since when and
//! what is wrong, in words any client may read. Nothing is probed for it: a readiness probe
//! that called every dependency would multiply their load by the number of replicas and make
//! the probe as slow as the slowest of them, while the service's traffic already tells.
//!
//! [`Readiness`] is one `/readyz` answer: the checks that gate (the service cannot serve
//! without them, so the load balancer should send it nothing) and the observed dependencies
//! that do not (the service still serves, answering the calls that need the dependency with a
//! clear error). Plain `/readyz` answers `ok`, or `503` and the first gating reason;
//! `/readyz?verbose` lists every check as kube-apiserver does:
//!
//! ```text
//! [+]authn-keys ok
//! [-]openfga failed: unavailable since 12s (not gating)
//! readyz check passed
//! ```
#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http::StatusCode;

/// The outcome of a service's latest calls to one dependency.
///
/// Cheap to record on every call: a success is one atomic store and one atomic load (the lock
/// is taken only for a failure, and for the first success after failures).
#[derive(Debug)]
pub struct DependencyHealth {
    /// The zero of [`DependencyHealth::last_ok`].
    epoch: Instant,
    /// Milliseconds from `epoch` to the latest success, plus one; 0 while there was none.
    last_ok: AtomicU64,
    /// Whether the latest outcome was a failure: read on every success without the lock.
    failing: AtomicBool,
    failure: Mutex<Option<Failure>>,
}

#[derive(Debug, Clone)]
struct Failure {
    /// The first failure since the latest success.
    since: Instant,
    /// The latest failure's account.
    problem: String,
}

/// What the latest calls found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// No call was made yet.
    NotCalled,
    /// The latest call worked.
    Ok,
    /// Calls fail: the latest failure's account, and how long since the first one.
    Failing { problem: String, lasting: Duration },
}

impl Default for DependencyHealth {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            last_ok: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            failure: Mutex::new(None),
        }
    }
}

impl DependencyHealth {
    pub fn new() -> Self {
        Self::default()
    }

    /// A call worked.
    pub fn record_ok(&self) {
        let since_epoch = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1);
        self.last_ok.store(since_epoch + 1, Ordering::Relaxed);
        if self.failing.load(Ordering::Acquire) {
            let mut failure = self.lock();
            *failure = None;
            self.failing.store(false, Ordering::Release);
        }
    }

    /// A call failed. `problem` is shown to anyone who asks `/readyz?verbose`: a short account
    /// ("unavailable", "answered HTTP 500"), never an address or an error's text.
    pub fn record_failure(&self, problem: impl Into<String>) {
        let problem = problem.into();
        let mut failure = self.lock();
        match failure.as_mut() {
            Some(failure) => failure.problem = problem,
            None => *failure = Some(Failure { since: Instant::now(), problem }),
        }
        self.failing.store(true, Ordering::Release);
    }

    /// What the latest calls found.
    pub fn observed(&self) -> Observed {
        if let Some(Failure { since, problem }) = self.lock().clone() {
            return Observed::Failing { problem, lasting: since.elapsed() };
        }
        if self.last_ok.load(Ordering::Relaxed) == 0 { Observed::NotCalled } else { Observed::Ok }
    }

    /// A panic while the lock was held cannot leave a half-written failure (each write is one
    /// assignment), so a poisoned lock is used as it is.
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Failure>> {
        self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One line of a readiness answer.
#[derive(Debug, Clone)]
struct Check {
    name: String,
    /// Whether a failure makes the service unready.
    gating: bool,
    /// Why it failed; `None`: it holds.
    failure: Option<String>,
    /// Said after `ok` (`no call yet`).
    note: Option<&'static str>,
}

/// A `/readyz` answer: the checks in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct Readiness {
    checks: Vec<Check>,
}

impl Readiness {
    pub fn new() -> Self {
        Self::default()
    }

    /// A check the service cannot serve without: its failure makes `/readyz` answer 503, with
    /// `Err`'s text as the reason.
    pub fn gate(&mut self, name: impl Into<String>, result: Result<(), String>) -> &mut Self {
        self.checks.push(Check { name: name.into(), gating: true, failure: result.err(), note: None });
        self
    }

    /// A dependency as the service's calls found it. Never gates: the service answers the
    /// calls that need it with a clear error, and taking every replica out of the load
    /// balancer because of it would fail the calls that do not need it as well.
    pub fn observe(&mut self, name: impl Into<String>, health: &DependencyHealth) -> &mut Self {
        let (failure, note) = match health.observed() {
            Observed::NotCalled => (None, Some("no call yet")),
            Observed::Ok => (None, None),
            Observed::Failing { problem, lasting } => {
                (Some(format!("{problem} since {}s", lasting.as_secs())), None)
            }
        };
        self.checks.push(Check { name: name.into(), gating: false, failure, note });
        self
    }

    /// Whether every gating check holds.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| !c.gating || c.failure.is_none())
    }

    /// Every check on a line of its own, then `readyz check passed` or `readyz check failed`,
    /// as kube-apiserver's `/readyz?verbose` writes them.
    pub fn verbose(&self) -> String {
        let mut text = String::new();
        for check in &self.checks {
            // Writing to a String cannot fail.
            let _ = match (&check.failure, check.note) {
                (None, None) => writeln!(text, "[+]{} ok", check.name),
                (None, Some(note)) => writeln!(text, "[+]{} ok: {note}", check.name),
                (Some(why), _) if check.gating => writeln!(text, "[-]{} failed: {why}", check.name),
                (Some(why), _) => writeln!(text, "[-]{} failed: {why} (not gating)", check.name),
            };
        }
        let verdict = if self.passed() { "passed" } else { "failed" };
        let _ = writeln!(text, "readyz check {verdict}");
        text
    }

    /// The answer: `200` when every gating check holds, else `503`. The body is the verbose
    /// listing when asked for, else `ok` or the first gating check's reason (what a probe's
    /// log shows).
    pub fn answer(&self, verbose: bool) -> (StatusCode, String) {
        let status = if self.passed() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
        if verbose {
            return (status, self.verbose());
        }
        let reason =
            self.checks.iter().find(|c| c.gating && c.failure.is_some()).and_then(|c| c.failure.clone());
        (status, reason.unwrap_or_else(|| "ok".to_owned()))
    }
}

/// Whether a `/readyz` query asks for the verbose listing: a `verbose` parameter with any
/// value or none, as kube-apiserver reads it (`/readyz?verbose`, `?verbose=1`).
pub fn wants_verbose(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|pair| pair.split('=').next() == Some("verbose")))
}

/// A cluster id as `/readyz` names it: its first 8 and last 4 characters. Enough for an
/// operator to tell the clusters apart; `/readyz` is answered to anyone, and a whole id is
/// what a caller would need to address a cluster it was not told of.
pub fn short_id(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    if chars.len() <= 12 {
        return id.to_owned();
    }
    let head: String = chars[..8].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dependency_is_not_called_then_ok_then_failing_since_its_first_failure_then_ok() {
        let health = DependencyHealth::new();
        assert_eq!(health.observed(), Observed::NotCalled);
        health.record_ok();
        assert_eq!(health.observed(), Observed::Ok);
        health.record_failure("unavailable");
        std::thread::sleep(Duration::from_millis(20));
        health.record_failure("timeout");
        let Observed::Failing { problem, lasting } = health.observed() else { panic!("not failing") };
        // The latest account, timed from the first failure.
        assert_eq!(problem, "timeout");
        assert!(lasting >= Duration::from_millis(20), "{lasting:?}");
        health.record_ok();
        assert_eq!(health.observed(), Observed::Ok);
    }

    #[test]
    fn a_failure_before_any_success_is_failing() {
        let health = DependencyHealth::new();
        health.record_failure("answered HTTP 500");
        assert!(matches!(health.observed(), Observed::Failing { .. }));
    }

    #[test]
    fn the_verbose_answer_lists_every_check_and_only_gating_ones_fail_it() {
        let openfga = DependencyHealth::new();
        openfga.record_failure("unavailable");
        let cluster = DependencyHealth::new();
        cluster.record_ok();
        let idle = DependencyHealth::new();
        let mut readiness = Readiness::new();
        readiness
            .gate("authn-keys", Ok(()))
            .observe("openfga", &openfga)
            .observe("cluster a", &cluster)
            .observe("cluster b", &idle);
        let (status, text) = readiness.answer(true);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            text,
            "[+]authn-keys ok\n[-]openfga failed: unavailable since 0s (not gating)\n[+]cluster a ok\n\
             [+]cluster b ok: no call yet\nreadyz check passed\n"
        );
        assert_eq!(readiness.answer(false), (StatusCode::OK, "ok".to_owned()));

        readiness.gate("authn-revocations", Err("not received yet".into())).gate("x", Err("second".into()));
        let (status, text) = readiness.answer(true);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            text.ends_with(
                "[-]authn-revocations failed: not received yet\n[-]x failed: second\nreadyz check failed\n"
            ),
            "{text}"
        );
        assert_eq!(readiness.answer(false), (StatusCode::SERVICE_UNAVAILABLE, "not received yet".to_owned()));
    }

    #[test]
    fn verbose_is_asked_for_by_the_parameter_with_or_without_a_value() {
        assert!(wants_verbose(Some("verbose")));
        assert!(wants_verbose(Some("verbose=true")));
        assert!(wants_verbose(Some("exclude=x&verbose")));
        assert!(!wants_verbose(None));
        assert!(!wants_verbose(Some("verbosely")));
        assert!(!wants_verbose(Some("x=verbose")));
    }

    #[test]
    fn cluster_ids_are_shortened() {
        assert_eq!(short_id("019b4000-2000-7000-8000-000000000001"), "019b4000…0001");
        assert_eq!(short_id("short"), "short");
    }
}
