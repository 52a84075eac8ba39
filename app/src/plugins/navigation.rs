//! How the console follows a page's request to move it (`plugin:navigate`, `plugin:create`,
//! `plugin:navigate-back`).
//!
//! A page that asks right after the user clicked in it moves the console as a link would: a new
//! history entry. One that asks on its own (on load, on a timer) is followed too, since a page
//! may open the only item of its list, but it replaces the current entry, so that the back button
//! always leads out, and only [`UNPROMPTED_PER_WINDOW`] times per [`UNPROMPTED_WINDOW_MS`] in a
//! tab: two pages of a plugin that send each other back and forth would otherwise fill the history
//! and keep the console minting a PluginToken and a frame ticket on every hop.
//!
//! A click is followed once: Chromium keeps a window "activated" for [`ACTIVATION_MS`] after a
//! click, and a move does not use that up, so a page that moves the console again as soon as it
//! loads would otherwise get a new history entry (and a mint and a ticket) on every hop for five
//! seconds. Within that time of a move it pushed, a page's request counts as its own. The
//! browser cannot tell a fresh click from the activation still running, so a user who clicks
//! through two plugin pages within 5 s gets the second in place of the first (Back then skips
//! it), and past three such moves in 10 s, a click is not followed: the price of the bound.
//!
//! A state machine without timers or I/O: the frame host asks the browser whether the user has
//! just interacted (`navigator.userActivation`, which a click in the frame gives the console's
//! window too).

use std::collections::VecDeque;

/// Moves a page may make on its own within [`UNPROMPTED_WINDOW_MS`].
pub const UNPROMPTED_PER_WINDOW: usize = 3;
/// The window of [`UNPROMPTED_PER_WINDOW`].
pub const UNPROMPTED_WINDOW_MS: f64 = 10_000.0;
/// How long Chromium keeps a window activated after a click (its transient activation).
pub const ACTIVATION_MS: f64 = 5_000.0;

/// What to do about one request to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// The user just acted in the page: a new history entry.
    Push,
    /// The page asked on its own: in place of the current entry.
    Replace,
    /// Too many moves of the page's own: ignored; `first`: the first since the last one followed.
    Refuse { first: bool },
}

/// The moves pages made on their own in one tab.
#[derive(Debug, Default)]
pub struct NavigationGate {
    /// When the followed ones were (ms), oldest first, within the window.
    unprompted: VecDeque<f64>,
    refusing: bool,
    /// When a click's move was last followed with a new entry (ms).
    pushed_at: Option<f64>,
}

impl NavigationGate {
    /// Whether and how to follow a request at `now_ms`; `user_activated`: the user has just
    /// interacted with the page (or the console).
    pub fn decide(&mut self, user_activated: bool, now_ms: f64) -> Follow {
        let spent = self.pushed_at.is_some_and(|at| now_ms - at < ACTIVATION_MS);
        if user_activated && !spent {
            self.refusing = false;
            self.pushed_at = Some(now_ms);
            return Follow::Push;
        }
        while self.unprompted.front().is_some_and(|&at| now_ms - at >= UNPROMPTED_WINDOW_MS) {
            self.unprompted.pop_front();
        }
        if self.unprompted.len() >= UNPROMPTED_PER_WINDOW {
            let first = !std::mem::replace(&mut self.refusing, true);
            return Follow::Refuse { first };
        }
        self.refusing = false;
        self.unprompted.push_back(now_ms);
        Follow::Replace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_is_followed_with_a_new_entry_once() {
        let mut gate = NavigationGate::default();
        assert_eq!(gate.decide(true, 0.0), Follow::Push);
        // The window is still activated: a page moving again on load, every 100 ms, gets the
        // moves of its own accord only.
        let moves: Vec<Follow> = (1..40).map(|i| gate.decide(true, f64::from(i) * 100.0)).collect();
        assert_eq!(moves.iter().filter(|f| **f == Follow::Replace).count(), UNPROMPTED_PER_WINDOW);
        assert!(!moves.contains(&Follow::Push));
        // A later click is followed again.
        assert_eq!(gate.decide(true, ACTIVATION_MS + 1.0), Follow::Push);
    }

    #[test]
    fn a_click_pushes_a_page_of_its_own_accord_replaces() {
        let mut gate = NavigationGate::default();
        assert_eq!(gate.decide(true, 0.0), Follow::Push);
        assert_eq!(gate.decide(false, 1.0), Follow::Replace);
    }

    #[test]
    fn two_pages_sending_each_other_back_and_forth_get_three_moves_in_ten_seconds() {
        let mut gate = NavigationGate::default();
        let mut followed = 0;
        let mut warned = 0;
        // A move every 50 ms for a minute.
        for i in 0..1_200 {
            match gate.decide(false, f64::from(i) * 50.0) {
                Follow::Replace => followed += 1,
                Follow::Refuse { first: true } => warned += 1,
                _ => {}
            }
        }
        assert_eq!(followed, 3 * 6, "three per ten seconds");
        assert_eq!(warned, 6, "said once per run of refusals");
        // A click after the page's own moves is followed with a new entry (no click's move
        // was pushed within the last 5 s).
        assert_eq!(gate.decide(true, 60_001.0), Follow::Push);
    }
}
