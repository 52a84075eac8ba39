//! How many messages a plugin frame may send, and how long reading them may take. Each message
//! costs the console's window a structured clone of whatever the page posted (the browser makes
//! it before any check can look, and decodes it on the console's thread when first read), an
//! event and a parse; `plugin:ready` also costs an init sent back. A page that sends
//! more than any page needs (the SDK sends a handful per user action: ready, a debounced
//! resize, a token request, a move) is flooding the tab it shares with the console: the console
//! stops taking its messages and unloads it, until the user opens it again.

/// Messages a frame may send at once.
pub const BURST: u32 = 500;

/// Messages a frame may send per second, past a burst: ten times what a page resizing on every
/// animation frame sends after the SDK's debounce.
pub const PER_SECOND: u32 = 50;

/// Milliseconds of the console's main thread that reading one frame's messages may take at
/// once. The browser decodes what a page posted when the console first reads it, on the
/// console's thread: a page posting a few hundred megabytes in a handful of messages froze the
/// console for seconds at a time without passing the count (a 100 MB string takes about
/// 400 ms here). The SDK's messages take microseconds.
pub const COST_BURST_MS: f64 = 200.0;

/// Milliseconds of reading a frame's messages may take per second, past a burst: 5 % of the
/// console's main thread.
pub const COST_PER_SECOND_MS: f64 = 50.0;

/// An allowance refilled with time: unlike a count per fixed window, no burst twice as large
/// passes across a window's edge.
#[derive(Debug)]
struct Bucket {
    burst: f64,
    per_second: f64,
    left: f64,
    at_ms: Option<f64>,
}

impl Bucket {
    fn new(burst: f64, per_second: f64) -> Self {
        Self { burst, per_second, left: burst, at_ms: None }
    }

    fn refill(&mut self, now_ms: f64) {
        let elapsed_ms = self.at_ms.map_or(0.0, |at| (now_ms - at).max(0.0));
        self.at_ms = Some(now_ms);
        self.left = (self.left + elapsed_ms * self.per_second / 1000.0).min(self.burst);
    }
}

/// One frame's allowance: [`BURST`] messages refilled at [`PER_SECOND`], and
/// [`COST_BURST_MS`] of reading them refilled at [`COST_PER_SECOND_MS`].
#[derive(Debug)]
pub struct MessageBudget {
    messages: Bucket,
    cost: Bucket,
}

impl Default for MessageBudget {
    fn default() -> Self {
        Self {
            messages: Bucket::new(f64::from(BURST), f64::from(PER_SECOND)),
            cost: Bucket::new(COST_BURST_MS, COST_PER_SECOND_MS),
        }
    }
}

impl MessageBudget {
    /// Counts a message arriving at `now_ms`; false once the frame has used its allowance.
    pub fn take(&mut self, now_ms: f64) -> bool {
        self.messages.refill(now_ms);
        if self.messages.left < 1.0 {
            return false;
        }
        self.messages.left -= 1.0;
        true
    }

    /// Counts `cost_ms` spent reading a message, at `now_ms`: the time is only known once spent,
    /// so the message that passes the allowance is the last one read. False from then on.
    pub fn spend(&mut self, cost_ms: f64, now_ms: f64) -> bool {
        self.cost.refill(now_ms);
        self.cost.left -= cost_ms.max(0.0);
        self.cost.left >= 0.0
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

    #[test]
    fn messages_too_costly_to_read_are_cut_off_and_cheap_ones_are_not() {
        // A busy page: 50 messages a second, each 0.5 ms to read, for a minute.
        let mut budget = MessageBudget::default();
        for i in 0..3_000 {
            assert!(budget.spend(0.5, f64::from(i) * 20.0), "message {i}");
        }
        // One 100 MB string, about 400 ms to read: the first such message is the last.
        let mut budget = MessageBudget::default();
        assert!(!budget.spend(400.0, 0.0));
        assert!(!budget.spend(0.0, 100.0), "still past its allowance");
        // Medium ones, 60 ms each: the burst, then 50 ms a second.
        let mut budget = MessageBudget::default();
        assert!((0..3).all(|i| budget.spend(60.0, f64::from(i))));
        assert!(!budget.spend(60.0, 3.0));
        budget.reset();
        assert!(budget.spend(COST_BURST_MS, 0.0));
        assert!(budget.spend(COST_PER_SECOND_MS, 1_000.0), "refilled at its rate");
        assert!(!budget.spend(1.0, 1_000.0));
    }
}
