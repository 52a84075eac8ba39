//! Back and Forward return to where a page was scrolled. The browser's own restoration runs at
//! once, while the page it returns to still says "Loading" and is too short to scroll, so a
//! long list came back at its top. Here the tab keeps each page's position (by path and query)
//! as it is left, by a click on one of the console's links or by Back and Forward, before the
//! next page replaces it (its shorter content would clamp the position); after a Back or
//! Forward it scrolls there once the page is tall enough, for up to [`SETTLE_MS`], unless the
//! user scrolls, types or clicks first. Browser only.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// How long a return waits for its page to be tall enough.
const SETTLE_MS: f64 = 3_000.0;

thread_local! {
    /// Where each page (path and query) of this tab was scrolled when it was left.
    static POSITIONS: RefCell<HashMap<String, f64>> = RefCell::default();
    /// The page shown (as far as its clicks and returns tell): the one a Back leaves.
    static SHOWN: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Bumped by each return and by the user's own input: a pending return acts only while
    /// nothing came since it began.
    static RETURNS: Cell<u64> = const { Cell::new(0) };
}

fn here() -> Option<String> {
    let location = window().location();
    Some(format!("{}{}", location.pathname().ok()?, location.search().ok()?))
}

fn keep_position_of(page: Option<String>) {
    if let Some(page) = page {
        let y = window().scroll_y().unwrap_or(0.0);
        POSITIONS.with_borrow_mut(|p| p.insert(page, y));
    }
}

/// The path and query a click on an in-app link goes to, if the router takes it (as
/// `leptos_router` decides: the main button, no modifier, no target, no download, not
/// `rel="external"`, this origin).
pub(crate) fn in_app_link(event: &web_sys::MouseEvent) -> Option<String> {
    if event.default_prevented()
        || event.button() != 0
        || event.meta_key()
        || event.ctrl_key()
        || event.shift_key()
        || event.alt_key()
    {
        return None;
    }
    let link = event.target()?.dyn_into::<web_sys::Element>().ok()?.closest("a[href]").ok()??;
    // The router leaves these to the browser: a page load (`rel="external"`: "Sign in again",
    // whose own click keeps the edits, `crate::kept_draft`), another tab, a download.
    if link.get_attribute("target").is_some_and(|t| !t.is_empty() && t != "_self")
        || link.has_attribute("download")
        || link.get_attribute("rel").is_some_and(|r| r.split_ascii_whitespace().any(|w| w == "external"))
    {
        return None;
    }
    let href = link.get_attribute("href")?;
    if !href.starts_with('/') || href.starts_with("//") {
        return None;
    }
    Some(href.split('#').next().unwrap_or_default().to_owned())
}

/// From hydration on, for the tab's life. Its listeners are the window's first (the router's
/// come after): a click is seen before the router starts the navigation, and a return before
/// the router shows the page returned to.
pub fn remember_scroll_across_history() {
    if let Ok(history) = window().history() {
        let _ = history.set_scroll_restoration(web_sys::ScrollRestoration::Manual);
    }
    SHOWN.set(here());
    let left_by_a_link = window_event_listener(ev::click, |event| {
        if let Some(target) = in_app_link(&event) {
            keep_position_of(here());
            SHOWN.set(Some(target));
        }
    });
    let interrupt = || RETURNS.set(RETURNS.get() + 1);
    let wheel = window_event_listener(ev::wheel, move |_| interrupt());
    let touch = window_event_listener(ev::touchstart, move |_| interrupt());
    let key = window_event_listener(ev::keydown, move |_| interrupt());
    let pointer = window_event_listener(ev::pointerdown, move |_| interrupt());
    let returned = window_event_listener(ev::popstate, |_| {
        keep_position_of(SHOWN.take());
        let page = here();
        let target = page.as_ref().and_then(|p| POSITIONS.with_borrow(|s| s.get(p).copied())).unwrap_or(0.0);
        SHOWN.set(page);
        let this = RETURNS.get() + 1;
        RETURNS.set(this);
        scroll_when_tall_enough(target, this, js_sys::Date::now() + SETTLE_MS);
    });
    on_cleanup(move || {
        for handle in [left_by_a_link, wheel, touch, key, pointer, returned] {
            handle.remove();
        }
    });
}

/// Scrolls to `target` at the first frame the page is tall enough for it (or as far as it goes
/// at `deadline`), unless return `this` was overtaken.
fn scroll_when_tall_enough(target: f64, this: u64, deadline: f64) {
    request_animation_frame(move || {
        if RETURNS.get() != this {
            return;
        }
        let height = window().inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
        let room = document()
            .document_element()
            .map_or(0.0, |root| f64::from(root.scroll_height()) - height)
            .max(0.0);
        if room + 1.0 >= target || js_sys::Date::now() >= deadline {
            window().scroll_to_with_x_and_y(0.0, target.min(room));
            return;
        }
        scroll_when_tall_enough(target, this, deadline);
    });
}
