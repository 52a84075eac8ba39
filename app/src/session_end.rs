//! The end of the tab's session, as the browser learns of it:
//! - a sign-out in another tab of this browser: the sign-out button says so on a
//!   `BroadcastChannel` of the console's origin (plugin pages, on origins of their own, can
//!   neither hear nor send on it) before its form is posted;
//! - a 401 from the tab's own calls (a watch, a server function, a token or ticket request):
//!   the sign-out happened elsewhere (another browser, an administrator's revocation, the
//!   session's expiry), or the browser's session is now another user's.
//!
//! From then on the tab says so once ("You were signed out", an alert with a link to sign in
//! that comes back to the page), its watches stop and are not retried (a dead cookie would only knock at
//! the console, kube-api-proxy and authn again and again), and every plugin frame is unloaded
//! with its token forgotten: a plugin page does not go on acting for a user who left.
//!
//! Nothing here runs on the server, and nothing is read at render: the first render in the
//! browser is the server's (no notice); the end is learnt in event handlers and tasks only, and
//! the notice is added to the document then, outside the hydrated tree. It is plain DOM rather
//! than a component: every page's first load downloads the main wasm, and a view costs several
//! times its few lines there (issue 16).

use std::rc::{Rc, Weak};

/// The console origin's channel for session news between its tabs.
pub const CHANNEL: &str = "fundament-session";
/// What the sign-out button posts on [`CHANNEL`].
pub const SIGNED_OUT: &str = "signed-out";

/// Whether a message on [`CHANNEL`] says the session ended.
pub fn is_sign_out(message: Option<&str>) -> bool {
    message == Some(SIGNED_OUT)
}

/// Where "Sign in again" leads: the sign-in page, coming back to `path` with its query.
pub fn sign_in_again_href(path: &str, search: &str) -> String {
    let page = crate::components::layout::path_and_query(path, search);
    format!("/sign-in?next={}", crate::routes::sign_in::query_escape(&page))
}

/// Whether the session ended, and who is told when it does. Plain state, so the order of
/// things can be tested apart from the browser.
#[derive(Default)]
pub struct SessionEnd {
    ended: bool,
    listeners: Vec<Weak<dyn Fn()>>,
}

/// Keeps a listener registered ([`SessionEnd::listen`]); dropping it unregisters.
pub struct Listening(#[allow(dead_code)] Rc<dyn Fn()>);

impl SessionEnd {
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Registers `listener` for the end; when it has ended already, the second value is that
    /// listener, to be run by the caller at once (outside any borrow of this state).
    pub fn listen(&mut self, listener: impl Fn() + 'static) -> (Listening, Option<Rc<dyn Fn()>>) {
        let listener: Rc<dyn Fn()> = Rc::new(listener);
        self.listeners.retain(|l| l.strong_count() > 0);
        self.listeners.push(Rc::downgrade(&listener));
        let now = self.ended.then(|| Rc::clone(&listener));
        (Listening(listener), now)
    }

    /// Records the end. The first time, the listeners still registered, to be run by the
    /// caller (outside any borrow: a listener may register or drop others); later, `None`.
    pub fn end(&mut self) -> Option<Vec<Rc<dyn Fn()>>> {
        if std::mem::replace(&mut self.ended, true) {
            return None;
        }
        Some(std::mem::take(&mut self.listeners).iter().filter_map(Weak::upgrade).collect())
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::{Cell, RefCell};

    use leptos::prelude::{document, window};
    use wasm_bindgen::{JsCast, JsValue, closure::Closure};
    use web_sys::{BroadcastChannel, MessageEvent};

    use super::{CHANNEL, Listening, SIGNED_OUT, SessionEnd, is_sign_out, sign_in_again_href};

    /// The notice. Static markup, no user data; the link's `href` is set apart. The classes are
    /// the stylesheet's (Tailwind reads them here).
    const NOTICE: &str = r#"<p class="mx-auto flex max-w-3xl flex-wrap items-center gap-x-3 gap-y-1"><span class="font-semibold text-danger">You were signed out.</span> <span>Live updates and plugin pages stopped.</span> <a class="button inline-flex" rel="external">Sign in again</a></p>"#;

    /// The channel and its message handler, kept as long as the tab.
    type Tab = (BroadcastChannel, Closure<dyn FnMut(MessageEvent)>);

    thread_local! {
        static STATE: RefCell<SessionEnd> = RefCell::default();
        /// The tab's end of [`CHANNEL`]: it hears the other tabs, and tells them through the same
        /// object (a channel does not hear its own messages), so the tab that signs out does not
        /// show itself the notice while it leaves.
        static TAB: RefCell<Option<Tab>> = const { RefCell::new(None) };
        /// A signed-in page was drawn in this tab: only such a page is told it was signed out.
        static SIGNED_IN: Cell<bool> = const { Cell::new(false) };
    }

    /// Whether the tab learnt that its session ended.
    pub fn has_ended() -> bool {
        STATE.with_borrow(SessionEnd::ended)
    }

    /// The session ended: stops the tab's watches, tells the listeners (the plugin frames) and
    /// shows the notice, once.
    pub fn end() {
        let Some(listeners) = STATE.with_borrow_mut(SessionEnd::end) else { return };
        crate::resource_views::watch::stop_all();
        for listener in listeners {
            listener();
        }
        if SIGNED_IN.get() {
            show_notice();
        }
    }

    /// Adds the notice at the top of the page: an alert (read out when it appears) whose link
    /// signs in again and comes back to the page the tab shows when it is followed.
    fn show_notice() {
        let (Ok(notice), Some(body)) = (document().create_element("div"), document().body()) else { return };
        let _ = notice.set_attribute("role", "alert");
        let _ = notice.set_attribute("data-signed-out", "");
        notice.set_class_name(
            "fixed inset-x-0 top-0 z-50 border-b border-danger/40 bg-canvas p-3 text-sm shadow-lg",
        );
        notice.set_inner_html(NOTICE);
        let Ok(Some(link)) = notice.query_selector("a") else { return };
        let here = || {
            let location = window().location();
            sign_in_again_href(
                &location.pathname().unwrap_or_default(),
                &location.search().unwrap_or_default(),
            )
        };
        let _ = link.set_attribute("href", &here());
        // The page may still move (its own links): the way back is the page of the moment.
        let target = link.clone();
        let on_click = Closure::<dyn Fn()>::new(move || {
            let _ = target.set_attribute("href", &here());
        });
        let _ = link.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
        // Kept as long as the tab: there is one notice, once.
        on_click.forget();
        let _ = body.append_child(&notice);
    }

    /// Runs `listener` when the session ends (at once if it has).
    pub fn on_end(listener: impl Fn() + 'static) -> Listening {
        let (listening, now) = STATE.with_borrow_mut(|s| s.listen(listener));
        if let Some(now) = now {
            now();
        }
        listening
    }

    /// A signed-in page is shown: listens on [`CHANNEL`] for a sign-out in another tab (once
    /// per tab), and the end, however it is learnt, is shown.
    pub fn follow_other_tabs() {
        SIGNED_IN.set(true);
        TAB.with_borrow_mut(|tab| {
            if tab.is_some() {
                return;
            }
            // A browser without BroadcastChannel still learns of the end by the 401s.
            let Ok(channel) = BroadcastChannel::new(CHANNEL) else { return };
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
                if is_sign_out(event.data().as_string().as_deref()) {
                    end();
                }
            });
            channel.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            *tab = Some((channel, on_message));
        });
    }

    /// Tells the other tabs that this one signs out (the sign-out form is being posted). The
    /// sign-out button is only on signed-in pages, which opened the tab's channel
    /// ([`follow_other_tabs`]) as they hydrated; without one, the browser has no channels.
    pub fn announce() {
        TAB.with_borrow(|tab| {
            if let Some((channel, _)) = tab {
                let _ = channel.post_message(&JsValue::from_str(SIGNED_OUT));
            }
        });
    }
}

#[cfg(feature = "hydrate")]
pub use browser::{end, follow_other_tabs, has_ended, on_end};

/// Tells the other tabs of this browser that the session ends (from the sign-out form's submit).
pub fn announce() {
    #[cfg(feature = "hydrate")]
    browser::announce();
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn the_end_is_told_once_to_each_listener_and_at_once_to_a_late_one() {
        let told = Rc::new(Cell::new(0));
        let mut state = SessionEnd::default();
        let t = told.clone();
        let (first, now) = state.listen(move || t.set(t.get() + 1));
        assert!(now.is_none(), "not ended yet: nothing to run");
        let t = told.clone();
        let (gone, _) = state.listen(move || t.set(t.get() + 100));
        drop(gone);
        assert!(!state.ended());

        for listener in state.end().expect("the first end") {
            listener();
        }
        assert_eq!(told.get(), 1, "the listener that is still registered, and only it");
        assert!(state.ended());
        assert!(state.end().is_none(), "a second 401 or message tells nobody again");

        let t = told.clone();
        let (_late, now) = state.listen(move || t.set(t.get() + 10));
        now.expect("a frame mounted after the end learns of it at once")();
        assert_eq!(told.get(), 11);
        drop(first);
    }

    #[test]
    fn only_the_sign_out_message_ends_the_session() {
        assert!(is_sign_out(Some("signed-out")));
        assert!(!is_sign_out(Some("signed-in")));
        assert!(!is_sign_out(None), "an object or anything else is not ours");
    }

    #[test]
    fn sign_in_again_comes_back_to_the_page_with_its_query() {
        assert_eq!(sign_in_again_href("/", ""), "/sign-in?next=/");
        assert_eq!(
            sign_in_again_href("/audit", "?user=alice&live=1"),
            "/sign-in?next=/audit%3Fuser%3Dalice%26live%3D1"
        );
        assert_eq!(
            sign_in_again_href(
                "/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io",
                ""
            ),
            "/sign-in?next=/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io"
        );
    }
}
