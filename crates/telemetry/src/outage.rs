//! A dependency that fails again and again until it is back (a shared store that cannot be
//! reached, a stream that keeps being refused): its first failure is worth a warning, each retry
//! after it is not. [`Outage`] counts the failures so that a caller logs the first at WARN, the
//! repeats at DEBUG and the recovery once at INFO, instead of a line per retry, which filled
//! logs with hundreds of lines a minute while Redis was down.

use std::sync::atomic::{AtomicU64, Ordering};

/// The failures of one dependency since it last worked.
#[derive(Debug, Default)]
pub struct Outage {
    failures: AtomicU64,
}

impl Outage {
    pub const fn new() -> Self {
        Outage { failures: AtomicU64::new(0) }
    }

    /// Counts a failure: `true` for the first since the dependency last worked (log it at WARN),
    /// `false` for a repeat (DEBUG).
    pub fn failed(&self) -> bool {
        self.failures.fetch_add(1, Ordering::SeqCst) == 0
    }

    /// The dependency works: how many failures the outage counted (0 when there was none, and
    /// nothing to log).
    pub fn recovered(&self) -> u64 {
        self.failures.swap(0, Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_failure_of_an_outage_is_news_and_the_recovery_counts_them() {
        let outage = Outage::new();
        assert_eq!(outage.recovered(), 0, "no outage, nothing to say");
        assert!(outage.failed());
        assert!(!outage.failed());
        assert!(!outage.failed());
        assert_eq!(outage.recovered(), 3);
        assert_eq!(outage.recovered(), 0);
        assert!(outage.failed(), "a new outage is news again");
    }
}
