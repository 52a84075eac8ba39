//! Page answers in flight, per installation (in this replica): a plugin whose runtime answers
//! slowly, or a user who opens its pages without end, holds at most
//! [`PAGES_IN_FLIGHT_PER_INSTALLATION`] of plugin-proxy's answers, and every other plugin's
//! pages are served on. Each answer also ends within [`PAGE_ANSWER_TIME`], however its
//! runtime trickles it (each chunk within the idle time, for ever).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Page answers of one installation in flight at once.
pub const PAGES_IN_FLIGHT_PER_INSTALLATION: usize = 256;
/// The longest a page answer may take from its head to its end (a 32 MiB file at 270 KB/s).
pub const PAGE_ANSWER_TIME: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
pub struct PageLimits {
    per_installation: usize,
    answer_time: Duration,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

impl Default for PageLimits {
    fn default() -> Self {
        Self::new(PAGES_IN_FLIGHT_PER_INSTALLATION, PAGE_ANSWER_TIME)
    }
}

impl PageLimits {
    /// Other bounds than the defaults (tests).
    pub fn new(per_installation: usize, answer_time: Duration) -> Self {
        Self { per_installation, answer_time, in_flight: Arc::default() }
    }

    pub(crate) fn answer_time(&self) -> Duration {
        self.answer_time
    }

    /// A slot for one more answer of `installation`, or `None` when it has all of its own.
    pub(crate) fn take(&self, installation: &str) -> Option<PageSlot> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = in_flight.entry(installation.to_owned()).or_default();
        if *count >= self.per_installation {
            return None;
        }
        *count += 1;
        Some(PageSlot { in_flight: Arc::clone(&self.in_flight), installation: installation.to_owned() })
    }
}

/// One answer in flight; dropping it (when its body ends: [`fundament_body_limits::holding`])
/// gives the slot back.
pub(crate) struct PageSlot {
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    installation: String,
}

impl Drop for PageSlot {
    fn drop(&mut self) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = in_flight.get_mut(&self.installation) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&self.installation);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_installation_has_slots_of_its_own_given_back_when_dropped() {
        let limits = PageLimits::new(2, PAGE_ANSWER_TIME);
        let (a1, _a2) = (limits.take("a").unwrap(), limits.take("a").unwrap());
        assert!(limits.take("a").is_none());
        assert!(limits.take("b").is_some(), "another plugin is served on");
        drop(a1);
        assert!(limits.take("a").is_some());
    }
}
