//! Tells screen readers that the page changed. A client-side navigation swaps `<main>` and the
//! title without the page load a screen reader would announce, and the focus stays on the link
//! followed, so the new page went unannounced. A live region in the signed-in layout says the
//! new title each time the title changes after the page loaded; the focus is left where it is
//! (moving it would lose the user's place in the sidebar).
//!
//! The region is static markup whose text is set directly: a reactive view of its own cost the
//! first load about 2 KB of wasm.

/// The live region's id: `<p id=... class="sr-only" aria-live="polite" aria-atomic="true">`,
/// empty in the server's HTML and in the first hydrated render.
pub const REGION_ID: &str = "route-announcer";

/// Called with every title the browser shows (by the `<Title>` formatter, which runs whenever
/// leptos_meta sets `document.title`). The first is the page load's, which the screen reader
/// announced itself; each later change is said in the region. Nothing on the server.
pub fn title_shown(title: &str) {
    #[cfg(feature = "hydrate")]
    browser::title_shown(title);
    #[cfg(not(feature = "hydrate"))]
    let _ = title;
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::RefCell;

    thread_local! {
        /// The last title shown; `None` until the first.
        static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
    }

    pub(super) fn title_shown(title: &str) {
        let changed = LAST.with(|last| {
            let before = last.replace(Some(title.to_owned()));
            before.is_some_and(|before| before != title)
        });
        if changed && let Some(region) = leptos::prelude::document().get_element_by_id(super::REGION_ID) {
            region.set_text_content(Some(title));
        }
    }
}
