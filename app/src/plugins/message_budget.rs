//! How many messages a plugin frame may send. Each message costs the console's window a
//! structured clone of whatever the page posted (the browser makes it before any check can
//! look), an event and a parse; `plugin:ready` also costs an init sent back. A page that sends
//! more than any page needs (the SDK sends a handful per user action: ready, a debounced
//! resize, a token request, a move) is flooding the tab it shares with the console: the console
//! stops taking its messages and unloads it, until the user opens it again.

/// The window the count is kept over.
pub const WINDOW_MS: f64 = 10_000.0;

/// Messages a frame may send within [`WINDOW_MS`]: 50 a second, ten times what a page resizing
/// on every animation frame sends after the SDK's debounce.
pub const MESSAGES_PER_WINDOW: u32 = 500;

/// One frame's count of messages in the current window.
#[derive(Debug, Default)]
pub struct MessageBudget {
    window_started: Option<f64>,
    sent: u32,
}

impl MessageBudget {
    /// Counts a message arriving at `now_ms`; false once the frame has sent more than
    /// [`MESSAGES_PER_WINDOW`] in the window.
    pub fn take(&mut self, now_ms: f64) -> bool {
        match self.window_started {
            Some(started) if now_ms - started < WINDOW_MS => {}
            _ => {
                self.window_started = Some(now_ms);
                self.sent = 0;
            }
        }
        self.sent = self.sent.saturating_add(1);
        self.sent <= MESSAGES_PER_WINDOW
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
        // 50 a second for a minute: always within.
        for i in 0..3_000 {
            assert!(budget.take(f64::from(i) * 20.0), "message {i}");
        }
        let mut budget = MessageBudget::default();
        for i in 0..MESSAGES_PER_WINDOW {
            assert!(budget.take(1_000.0 + f64::from(i) / 1_000.0));
        }
        assert!(!budget.take(1_001.0), "one more within the window");
        assert!(budget.take(1_000.0 + WINDOW_MS), "a new window");
        budget.take(1_000.0 + WINDOW_MS);
        budget.reset();
        assert!(budget.take(1_000.0 + WINDOW_MS));
    }
}
