//! "Updating…": shown while an answer on a page is being replaced by the next (a filter, a
//! page, a live update), which stays on screen meanwhile; only once that takes a moment
//! (`.after-a-moment`), so a quick one does not flicker. It floats, so nothing on the page moves
//! for it. A first load says "Loading…" in place instead (the stylesheet hides this notice
//! while the page shows a `[data-loading]`).
//!
//! The notice is static markup in the signed-in layout, shown and hidden directly: as a
//! reactive view of its own it put about 4 KB of wasm into the chunk that every page's
//! answers share.

use leptos::prelude::*;

/// The notice's id: `<p id=... role="status" hidden>`, hidden in the server's HTML and in
/// the first hydrated render.
pub const NOTICE_ID: &str = "updating";

/// Shows the notice while `pending` (a `Transition`'s) holds, for as long as the calling view
/// lives; several views count together. Nothing on the server.
pub fn follow(pending: RwSignal<bool>) {
    #[cfg(feature = "hydrate")]
    browser::follow(pending);
    #[cfg(not(feature = "hydrate"))]
    let _ = pending;
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::Cell;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use leptos::prelude::*;

    thread_local! {
        /// How many views are waiting for an answer.
        static WAITING: Cell<u32> = const { Cell::new(0) };
    }

    pub(super) fn follow(pending: RwSignal<bool>) {
        // Whether this view is counted among the waiting.
        let counted = Arc::new(AtomicBool::new(false));
        let counting = Arc::clone(&counted);
        Effect::new(move |_| {
            let now = pending.get();
            if counting.swap(now, Ordering::Relaxed) != now {
                count(now);
            }
        });
        on_cleanup(move || {
            if counted.swap(false, Ordering::Relaxed) {
                count(false);
            }
        });
    }

    fn count(waiting: bool) {
        let now = WAITING.get().saturating_add_signed(if waiting { 1 } else { -1 });
        WAITING.set(now);
        if let Some(notice) = document().get_element_by_id(super::NOTICE_ID) {
            let _ = notice.toggle_attribute_with_force("hidden", now == 0);
        }
    }
}
