//! How many messages a plugin frame may send. Each message costs the console's window a
//! structured clone of whatever the page posted (the browser makes it before any check can
//! look), an event and a parse; `plugin:ready` also costs an init sent back. A page that sends
//! more than any page needs (the SDK sends a handful per user action: ready, a debounced
//! resize, a token request, a move) is flooding the tab it shares with the console: the console
//! stops taking its messages and unloads it, until the user opens it again.

/// Messages a frame may send at once.
pub const BURST: u32 = 500;

/// Messages a frame may send per second, past a burst: ten times what a page resizing on every
/// animation frame sends after the SDK's debounce.
pub const PER_SECOND: u32 = 50;

/// One frame's allowance: a bucket of [`BURST`] messages, refilled at [`PER_SECOND`]. Unlike a
/// count per fixed window, no burst twice as large passes across a window's edge.
#[derive(Debug)]
pub struct MessageBudget {
    left: f64,
    at_ms: Option<f64>,
}

impl Default for MessageBudget {
    fn default() -> Self {
        Self { left: f64::from(BURST), at_ms: None }
    }
}

impl MessageBudget {
    /// Counts a message arriving at `now_ms`; false once the frame has used its allowance.
    pub fn take(&mut self, now_ms: f64) -> bool {
        let elapsed_ms = self.at_ms.map_or(0.0, |at| (now_ms - at).max(0.0));
        self.at_ms = Some(now_ms);
        self.left = (self.left + elapsed_ms * f64::from(PER_SECOND) / 1000.0).min(f64::from(BURST));
        if self.left < 1.0 {
            return false;
        }
        self.left -= 1.0;
        true
    }

    /// Starts again (the user opened the page again).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_off_and_a_busy_page_is_not() {
        let mut budget = MessageBudget::default();
        // 50 a second for a minute, after a burst: always within.
        for i in 0..BURST {
            assert!(budget.take(0.0), "burst message {i}");
        }
        for i in 1..3_000 {
            assert!(budget.take(f64::from(i) * 20.0), "message {i}");
        }

        let mut budget = MessageBudget::default();
        for _ in 0..BURST {
            assert!(budget.take(1_000.0));
        }
        assert!(!budget.take(1_000.0), "one more at once");
        // Across what would be a window's edge: only the refill passes.
        let passed = (0..1_000).filter(|_| budget.take(1_100.0)).count();
        assert_eq!(passed, 5, "100 ms refill 5 messages");
        assert!(budget.take(1_100.0 + 10_000.0), "refilled");
        budget.reset();
        assert!((0..BURST).all(|_| budget.take(0.0)));
    }
}
