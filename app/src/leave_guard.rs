//! Edits that are not saved are not lost without a question. A page with edits (the generated
//! form and its YAML) registers how to tell ([`guard_edits`]); the tab then asks ("Leave this
//! page? …") before a click on one of the console's links leaves it for another page, before
//! Back or Forward does, and before a reload or close (the browser's own question there).
//! A "no" keeps the page as it is. Browser only.
//!
//! Its listeners are the window's first ([`install`] runs before the router mounts; one added by
//! the form itself, even for the capture phase, was called after the router's for `popstate`,
//! whose target is the window, once the router had already unmounted the form): a click
//! is asked about before the router starts its navigation (which leaves a click whose default
//! is prevented alone), and a Back or Forward before the router shows the page returned to
//! (which it never hears of when the user stays).
//!
//! The one way out that does not ask: "Sign in again", once the session ended under the edits
//! (`crate::session_end`). That link keeps them ([`keep_draft_for`], `crate::kept_draft`) and
//! the form takes them back when its user returns to it ([`take_draft`]).

use std::cell::{Cell, RefCell};

use leptos::ev;
use leptos::prelude::*;
use leptos_router::location::Location;
use wasm_bindgen::JsCast;

use crate::kept_draft::KeptDraft;

/// What the tab asks.
pub const QUESTION: &str = "Leave this page? The changes you made are not saved.";

struct Guard {
    id: u64,
    edited: Box<dyn Fn() -> bool>,
    /// The page's own record of its edits, kept across a sign-in.
    draft: Box<dyn Fn() -> String>,
    /// The guarded page's path and query, as the router has them.
    location: Location,
}

thread_local! {
    static GUARD: RefCell<Option<Guard>> = const { RefCell::new(None) };
    static GUARDS: Cell<u64> = const { Cell::new(0) };
    /// The edits were kept for a sign-in: the page may go without asking.
    static KEPT: Cell<bool> = const { Cell::new(false) };
}

/// Guards the page at `location` while it lives: `edited` tells whether leaving loses edits,
/// `draft` what to keep of them for a sign-in.
pub fn guard_edits(
    edited: impl Fn() -> bool + 'static,
    draft: impl Fn() -> String + 'static,
    location: Location,
) {
    let id = GUARDS.get() + 1;
    GUARDS.set(id);
    GUARD.set(Some(Guard { id, edited: Box::new(edited), draft: Box::new(draft), location }));
    on_cleanup(move || {
        GUARD.with_borrow_mut(|guard| {
            if guard.as_ref().is_some_and(|g| g.id == id) {
                *guard = None;
            }
        })
    });
}

/// The page's edits are saved, and the page is about to go (to what was saved): nothing is
/// asked from here on. Its own unmounting comes later, once the next page is ready, and a Back
/// meanwhile was asked about (and, refused, pushed the page shown again).
pub fn edits_saved() {
    GUARD.set(None);
}

/// Whether leaving loses edits.
pub fn edited() -> bool {
    GUARD.with_borrow(|guard| guard.as_ref().is_some_and(|g| (g.edited)()))
}

fn session_storage() -> Option<web_sys::Storage> {
    window().session_storage().ok().flatten()
}

/// The tab's signed-in page is `user`'s (a user id): a draft another user's session left in
/// this tab is dropped, unread.
pub fn signed_in_as(user: &str) {
    let Some(storage) = session_storage() else { return };
    let Ok(Some(text)) = storage.get_item(crate::kept_draft::STORAGE_KEY) else { return };
    if KeptDraft::parse(&text).is_none_or(|d| d.user != user) {
        let _ = storage.remove_item(crate::kept_draft::STORAGE_KEY);
    }
}

/// The session ended under the page and `user` follows "Sign in again": the page's edits, if
/// any, are kept for their return, and the page goes without asking. Whether they were kept
/// (not when the storage refuses them: then the browser asks as before).
pub fn keep_draft_for(user: &str) -> bool {
    if !edited() {
        return false;
    }
    let page = page_shown();
    let form = GUARD.with_borrow(|guard| guard.as_ref().map(|g| (g.draft)())).unwrap_or_default();
    let draft = KeptDraft { user: user.to_owned(), page, kept_at_ms: js_sys::Date::now() as u64, form };
    let kept = session_storage()
        .is_some_and(|s| s.set_item(crate::kept_draft::STORAGE_KEY, &draft.to_text()).is_ok());
    KEPT.set(kept);
    kept
}

/// The page's path and query as the address bar has them: what "Sign in again" comes back to.
fn page_shown() -> String {
    let location = window().location();
    crate::components::layout::path_and_query(
        &location.pathname().unwrap_or_default(),
        &location.search().unwrap_or_default(),
    )
}

/// The edits kept for `user` (the signed-in user's id) at the page shown, once: the draft is
/// gone from the tab whether it was theirs or not.
pub fn take_draft(user: &str) -> Option<String> {
    let page = page_shown();
    let storage = session_storage()?;
    let text = storage.get_item(crate::kept_draft::STORAGE_KEY).ok().flatten()?;
    let _ = storage.remove_item(crate::kept_draft::STORAGE_KEY);
    KeptDraft::parse(&text)?.returned_to(user, &page, js_sys::Date::now() as u64)
}

/// The guarded page's path (without its query) and its path and query.
fn guarded_page() -> Option<(String, String)> {
    GUARD.with_borrow(|guard| {
        guard.as_ref().map(|g| {
            let path = g.location.pathname.get_untracked();
            let search = g.location.search.get_untracked();
            let full = crate::components::layout::path_and_query(&path, &search);
            (path, full)
        })
    })
}

/// Whether the user, asked, chooses to leave.
fn leaves() -> bool {
    window().confirm_with_message(QUESTION).unwrap_or(true)
}

/// From hydration on, for the tab's life; before the router mounts.
pub fn install() {
    // Capture: before any other click listener. A link to the same page (the form's own tabs)
    // is not asked about.
    let on_click =
        wasm_bindgen::closure::Closure::<dyn Fn(web_sys::MouseEvent)>::new(|event: web_sys::MouseEvent| {
            let Some(to) = crate::scroll_memory::in_app_link(&event) else { return };
            let to = to.split('?').next().unwrap_or_default();
            let elsewhere = guarded_page().is_some_and(|(path, _)| path != to);
            if elsewhere && edited() && !leaves() {
                event.prevent_default();
            }
        });
    let _ =
        window().add_event_listener_with_callback_and_bool("click", on_click.as_ref().unchecked_ref(), true);
    // For the tab's life.
    on_click.forget();
    let _ = window_event_listener(ev::popstate, |event| {
        let Some((_, page)) = guarded_page() else { return };
        if !edited() || leaves() {
            return;
        }
        // Staying: nobody else hears of the return, and the address is the page's again (as a
        // new entry: the one left is not known to be before or after).
        event.stop_immediate_propagation();
        if let Ok(history) = window().history() {
            let _ = history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&page));
        }
    });
    let _ = window_event_listener(ev::beforeunload, |event| {
        if edited() && !KEPT.get() {
            event.prevent_default();
        }
    });
}
