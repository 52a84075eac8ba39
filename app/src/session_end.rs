//! What a console tab learns of its session after its page was drawn:
//! - a hint from another tab of this browser, on a `BroadcastChannel` of the console's origin
//!   ([`CHANNEL`]; plugin pages, on origins of their own, can neither hear nor post on it):
//!   the page a sign-out lands on (the sign-in panel) posts `signed-out` as it hydrates, after
//!   the server confirmed the sign-out, and every signed-in page posts `signed-in:<user id>`
//!   with its user as it hydrates. A message is only a hint to check, never believed by
//!   itself (any page of the console's origin could post one): on `signed-out`, or on
//!   another user's `signed-in`, the tab asks the server who its session is now
//!   ([`crate::api::session::signed_in_as`], one check at a time);
//! - a 401 from the tab's own calls (a watch, a server function, a token or ticket request):
//!   the session the page was drawn for is over, signed out (here or elsewhere: another
//!   browser, an administrator's revocation, the session's expiry) or replaced by another
//!   user's sign-in, which ends it too and may be refused before the other tab's hint comes.
//!   The tab asks the server which ([`refused`], once for any number of 401s); a 401 to that
//!   question is the sign-out.
//!
//! The session ended (a 401) or is now another user's (bob signed in in another tab while
//! this one still shows alice, whose calls would now carry bob's cookie): from then on the tab
//! says so once (an alert: "You were signed out" with a link to sign in that comes back to the
//! page, or "You are now signed in as Bob in another tab" with a link that reloads the page),
//! its watches stop and are not retried (a dead cookie would only knock at the console,
//! kube-api-proxy and authn again and again, and another user's would act for them), and every
//! plugin frame is unloaded with its token forgotten: a plugin page does not go on acting for
//! a user who left, nor as one who did not open it. The same user's session (a hint that was
//! wrong, or alice signing in again) changes nothing.
//!
//! Nothing here runs on the server, and nothing is read at render: the first render in the
//! browser is the server's (no notice); the end is learnt in event handlers and tasks only, and
//! the notice is added to the document then, outside the hydrated tree. It is plain DOM rather
//! than a component: every page's first load downloads the main wasm, and a view costs several
//! times its few lines there (issue 16).

use std::rc::{Rc, Weak};

use crate::{api::session::Viewer, error::AppError};

/// The console origin's channel for session news between its tabs.
pub const CHANNEL: &str = "fundament-session";
/// What the page a sign-out lands on posts on [`CHANNEL`].
pub const SIGNED_OUT: &str = "signed-out";
/// What a signed-in page posts on [`CHANNEL`], before its user's id.
pub const SIGNED_IN: &str = "signed-in:";
/// Where the tab asks who its session is: [`crate::api::session::signed_in_as`], asked with a
/// plain `fetch` (the watches' code, in the main wasm already) rather than through its client
/// function, whose request and answer code would be the main wasm's only copy.
pub const SIGNED_IN_AS: &str = "/api/signed-in-as";

/// What a message on [`CHANNEL`] hints at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint<'a> {
    /// This browser's session ended.
    SignedOut,
    /// This browser's session is this user's (by id: an email may be shared, or empty).
    SignedIn(&'a str),
}

/// Reads a message on [`CHANNEL`]; anything else than ours (an object, another string) is `None`.
pub fn hint(message: Option<&str>) -> Option<Hint<'_>> {
    match message? {
        SIGNED_OUT => Some(Hint::SignedOut),
        other => other.strip_prefix(SIGNED_IN).filter(|user| !user.is_empty()).map(Hint::SignedIn),
    }
}

/// What a signed-in page posts on [`CHANNEL`] for the user `id`.
pub fn signed_in_message(id: &str) -> String {
    format!("{SIGNED_IN}{id}")
}

/// Whether a tab drawn for `drawn_for` (a user id) asks the server after `hint`: a sign-out, or
/// another user's sign-in. Its own user's page loaded in another tab is no news.
pub fn worth_checking(hint: Option<Hint>, drawn_for: &str) -> bool {
    match hint {
        Some(Hint::SignedOut) => true,
        Some(Hint::SignedIn(user)) => user != drawn_for,
        None => false,
    }
}

/// What the server's answer to "who is this session" means for a tab drawn for `drawn_for`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nobody: the session ended.
    Ended,
    /// Someone else, by this name.
    OtherUser(String),
    /// The tab's own user, or no answer (the server unreachable says nothing of the session;
    /// the tab's own calls will find out).
    Unchanged,
}

pub fn outcome(drawn_for: &str, answer: Result<Viewer, AppError>) -> Outcome {
    match answer {
        Ok(now) if now.id != drawn_for => Outcome::OtherUser(now.name),
        Ok(_) => Outcome::Unchanged,
        Err(e) if e.ends_session() => Outcome::Ended,
        Err(_) => Outcome::Unchanged,
    }
}

/// The server is asked once at a time: hints that come during a check lead to one more check
/// after it (its answer may predate what they hint at), however many they are.
#[derive(Debug, Default)]
pub struct Checks {
    running: bool,
    again: bool,
}

impl Checks {
    /// A hint calls for a check: whether to start one now (else one follows the running one).
    pub fn wanted(&mut self) -> bool {
        self.again = self.running;
        !std::mem::replace(&mut self.running, true)
    }

    /// The running check was answered: whether to check again.
    pub fn done(&mut self) -> bool {
        self.running = std::mem::take(&mut self.again);
        self.running
    }
}

/// The notice's words when the session is now `now`'s and the page still `drawn_for`'s (display
/// names): its title and what it means.
pub fn other_user_words(now: &str, drawn_for: &str) -> (String, String) {
    (
        format!("You are now signed in as {now} in another tab."),
        format!("This page still shows {drawn_for}'s view: its live updates and plugin pages stopped."),
    )
}

/// What the signed-out notice says below its title: with unsaved edits on the page, that
/// "Sign in again" keeps them (`crate::kept_draft`).
pub fn signed_out_words(edited: bool) -> &'static str {
    if edited {
        "Live updates and plugin pages stopped. Your unsaved changes here come back when you sign in again."
    } else {
        "Live updates and plugin pages stopped."
    }
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
    ended: Option<Ended>,
    listeners: Vec<Weak<dyn Fn()>>,
}

/// How the tab's session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Signed out (here, elsewhere, revoked or expired).
    SignedOut,
    /// Another user signed in in this browser.
    OtherUser,
}

/// Keeps a listener registered ([`SessionEnd::listen`]); dropping it unregisters.
pub struct Listening(#[allow(dead_code)] Rc<dyn Fn()>);

impl SessionEnd {
    pub fn ended(&self) -> bool {
        self.ended.is_some()
    }

    /// How it ended, once it has.
    pub fn how(&self) -> Option<Ended> {
        self.ended
    }

    /// Registers `listener` for the end; when it has ended already, the second value is that
    /// listener, to be run by the caller at once (outside any borrow of this state).
    pub fn listen(&mut self, listener: impl Fn() + 'static) -> (Listening, Option<Rc<dyn Fn()>>) {
        let listener: Rc<dyn Fn()> = Rc::new(listener);
        self.listeners.retain(|l| l.strong_count() > 0);
        self.listeners.push(Rc::downgrade(&listener));
        let now = self.ended.map(|_| Rc::clone(&listener));
        (Listening(listener), now)
    }

    /// Records the end, and how. The first time, the listeners still registered, to be run by
    /// the caller (outside any borrow: a listener may register or drop others, or read how it
    /// ended); later, `None`.
    pub fn end(&mut self, how: Ended) -> Option<Vec<Rc<dyn Fn()>>> {
        if self.ended.is_some() {
            return None;
        }
        self.ended = Some(how);
        Some(std::mem::take(&mut self.listeners).iter().filter_map(Weak::upgrade).collect())
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::RefCell;

    use leptos::prelude::{document, window};
    use leptos::server_fn::error::FromServerFnError;
    use wasm_bindgen::{JsCast, JsValue, closure::Closure};
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{BroadcastChannel, MessageEvent, RequestInit, Response};

    use super::{
        CHANNEL, Checks, Ended, Listening, Outcome, SIGNED_IN_AS, SIGNED_OUT, SessionEnd, hint,
        other_user_words, outcome, sign_in_again_href, signed_in_message, signed_out_words, worth_checking,
    };
    use crate::{api::session::Viewer, error::AppError};

    /// The notice: static markup, filled with text (a user's name among it) apart. The classes
    /// are the stylesheet's (Tailwind reads them here).
    const NOTICE: &str = r#"<p class="mx-auto flex max-w-3xl flex-wrap items-center gap-x-3 gap-y-1"><span class="font-semibold text-danger"></span> <span></span> <a class="button inline-flex" rel="external"></a></p>"#;

    /// The channel and its message handler, kept as long as the tab.
    type Tab = (BroadcastChannel, Closure<dyn FnMut(MessageEvent)>);

    thread_local! {
        static STATE: RefCell<SessionEnd> = RefCell::default();
        /// The tab's end of [`CHANNEL`]: it hears the other tabs, and tells them through the same
        /// object (a channel does not hear its own messages).
        static TAB: RefCell<Option<Tab>> = const { RefCell::new(None) };
        /// Whom the tab's signed-in page was drawn for: only such a page is told of the end.
        static DRAWN_FOR: RefCell<Option<Viewer>> = const { RefCell::new(None) };
        static CHECKS: RefCell<Checks> = RefCell::default();
        /// A refusal's question to the server is out: the refusals that follow it (every watch
        /// and call of the tab meets the same 401) wait for its answer rather than ask again.
        static ASKING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Whether the tab learnt that its session ended.
    pub fn has_ended() -> bool {
        STATE.with_borrow(SessionEnd::ended)
    }

    /// Whether the session ended because another user signed in (else it was a sign-out).
    pub fn ended_for_other_user() -> bool {
        STATE.with_borrow(SessionEnd::how) == Some(Ended::OtherUser)
    }

    /// The session ended (the server said so when asked): see [`finish`].
    fn end() {
        finish(None);
    }

    /// The session ended, or is now the user named `other`'s: stops the tab's watches, tells the
    /// listeners (the plugin frames) and shows the notice, once.
    fn finish(other: Option<String>) {
        let how = if other.is_some() { Ended::OtherUser } else { Ended::SignedOut };
        let Some(listeners) = STATE.with_borrow_mut(|s| s.end(how)) else { return };
        crate::resource_views::watch::stop_all();
        for listener in listeners {
            listener();
        }
        if let Some(drawn_for) = DRAWN_FOR.with_borrow(Clone::clone) {
            show_notice(other.as_deref(), &drawn_for.name);
        }
    }

    /// Adds the notice at the top of the page: an alert (read out when it appears) whose link
    /// leads back to the page the tab shows when it is followed: signed out, by the sign-in
    /// page; another user's, loaded again (the page drawn for that user).
    fn show_notice(other: Option<&str>, drawn_for: &str) {
        let (Ok(notice), Some(body)) = (document().create_element("div"), document().body()) else { return };
        let _ = notice.set_attribute("role", "alert");
        let _ = notice.set_attribute(if other.is_some() { "data-other-user" } else { "data-signed-out" }, "");
        notice.set_class_name(
            "fixed inset-x-0 top-0 z-50 border-b border-danger/40 bg-canvas p-3 text-sm shadow-lg",
        );
        notice.set_inner_html(NOTICE);
        let (title, text, label, href): (_, _, _, fn(&str, &str) -> String) = match other {
            None => (
                "You were signed out.".to_owned(),
                signed_out_words(crate::leave_guard::edited()).to_owned(),
                "Sign in again",
                sign_in_again_href,
            ),
            Some(now) => {
                let (title, text) = other_user_words(now, drawn_for);
                (title, text, "Reload", crate::components::layout::path_and_query)
            }
        };
        let Ok(parts) = notice.query_selector_all("span,a") else { return };
        for (i, words) in [title.as_str(), text.as_str(), label].into_iter().enumerate() {
            if let Some(part) = parts.item(i as u32) {
                part.set_text_content(Some(words));
            }
        }
        let Some(link) = parts.item(2).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) else { return };
        let here = move || {
            let location = window().location();
            href(&location.pathname().unwrap_or_default(), &location.search().unwrap_or_default())
        };
        let _ = link.set_attribute("href", &here());
        // The page may still move (its own links): the way back is the page of the moment.
        let target = link.clone();
        let signed_out = other.is_none();
        let on_click = Closure::<dyn Fn()>::new(move || {
            let _ = target.set_attribute("href", &here());
            // The page's unsaved edits wait for its user in this tab (`crate::kept_draft`).
            if signed_out && let Some(user) = DRAWN_FOR.with_borrow(|v| v.as_ref().map(|v| v.id.clone())) {
                crate::leave_guard::keep_draft_for(&user);
            }
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

    /// A page drawn for `viewer` is shown: tells the other tabs whose the browser's session is
    /// now, listens on [`CHANNEL`] for their hints (once per tab), and the end, however it is
    /// learnt, is shown.
    pub fn follow_other_tabs(viewer: &Viewer) {
        let message = JsValue::from_str(&signed_in_message(&viewer.id));
        DRAWN_FOR.set(Some(viewer.clone()));
        crate::leave_guard::signed_in_as(&viewer.id);
        TAB.with_borrow_mut(|tab| {
            if tab.is_some() {
                return;
            }
            // A browser without BroadcastChannel still learns of the end by the 401s.
            let Ok(channel) = BroadcastChannel::new(CHANNEL) else { return };
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
                let message = event.data().as_string();
                let worth = DRAWN_FOR.with_borrow(|v| {
                    v.as_ref().is_some_and(|v| worth_checking(hint(message.as_deref()), &v.id))
                });
                if worth && !has_ended() && CHECKS.with_borrow_mut(Checks::wanted) {
                    leptos::task::spawn_local(check());
                }
            });
            channel.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            let _ = channel.post_message(&message);
            *tab = Some((channel, on_message));
        });
    }

    /// The console or a service refused one of the tab's requests as no longer the session's (a
    /// 401 to a watch, a server function, a frame's ticket or token): the session ended, or it
    /// is another user's now (bob's sign-in revoked alice's session, whose tokens the tab still
    /// holds; the 401 can come before the other tab's hint). Asks which, once for any number
    /// of refusals, so the notice says so, and ends the tab either way.
    pub fn refused() {
        if has_ended() || ASKING.replace(true) {
            return;
        }
        leptos::task::spawn_local(async {
            let drawn_for = DRAWN_FOR.with_borrow(|v| v.as_ref().map(|v| v.id.clone())).unwrap_or_default();
            let mut now = ask().await.map(|answer| outcome(&drawn_for, answer));
            if now == Some(Outcome::Ended) {
                // A sign-in in another tab revokes this session before the browser holds the
                // new session's cookie: asked a moment later, the session may be that user's
                // (unless the tab learnt meanwhile, from another tab's hint).
                settle().await;
                if !has_ended() {
                    now = ask().await.map(|answer| outcome(&drawn_for, answer));
                }
            }
            ASKING.set(false);
            match now {
                Some(Outcome::OtherUser(name)) => finish(Some(name)),
                _ => end(),
            }
        });
    }

    /// Asks the server whose the session is now, until no hint came during the last answer.
    async fn check() {
        loop {
            let answer = ask().await;
            let drawn_for = DRAWN_FOR.with_borrow(|v| v.as_ref().map(|v| v.id.clone())).unwrap_or_default();
            // Unreached (`None`) says nothing of the session: the tab's own calls find out.
            match answer.map(|answer| outcome(&drawn_for, answer)) {
                Some(Outcome::Ended) => end(),
                Some(Outcome::OtherUser(name)) => finish(Some(name)),
                _ => {}
            }
            if has_ended() || !CHECKS.with_borrow_mut(Checks::done) {
                return;
            }
        }
    }

    /// How long a refusal waits before asking again after a "signed out" ([`refused`]): the
    /// other tab's sign-in answer (its cookie) is on its way within it.
    const SETTLE_MS: i32 = 1_000;

    async fn settle() {
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, SETTLE_MS);
        });
        let _ = JsFuture::from(promise).await;
    }

    /// The server function's answer, read as its client would (an error through
    /// [`AppError::de`]; a 401 as `Unauthenticated` without it, which would ask again); `None`
    /// when unreached.
    async fn ask() -> Option<Result<Viewer, AppError>> {
        let init = RequestInit::new();
        init.set_method("POST");
        let response = JsFuture::from(window().fetch_with_str_and_init(SIGNED_IN_AS, &init)).await.ok()?;
        let response: Response = response.dyn_into().ok()?;
        let text = JsFuture::from(response.text().ok()?).await.ok()?.as_string()?;
        Some(if response.ok() {
            serde_json::from_str(&text).map_err(|_| AppError::Internal)
        } else if response.status() == 401 {
            Err(AppError::Unauthenticated)
        } else {
            Err(AppError::de(text.into()))
        })
    }

    /// The page a sign-out lands on (the sign-in panel) tells the other tabs, which then ask the
    /// server: posted once the server signed out, never before (a sign-out whose post fails
    /// leaves them as they are).
    pub fn announce_signed_out() {
        if let Ok(channel) = BroadcastChannel::new(CHANNEL) {
            let _ = channel.post_message(&JsValue::from_str(SIGNED_OUT));
            // The message is on its way to the other tabs once posted.
            channel.close();
        }
    }
}

#[cfg(feature = "hydrate")]
pub use browser::{announce_signed_out, follow_other_tabs, has_ended, on_end, refused};

/// Whether the tab's session ended because another user signed in (the plugin frame's words).
pub fn ended_for_other_user() -> bool {
    #[cfg(feature = "hydrate")]
    return browser::ended_for_other_user();
    #[cfg(not(feature = "hydrate"))]
    false
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

        for listener in state.end(Ended::SignedOut).expect("the first end") {
            listener();
        }
        assert_eq!(told.get(), 1, "the listener that is still registered, and only it");
        assert!(state.ended());
        assert!(state.end(Ended::SignedOut).is_none(), "a second 401 or message tells nobody again");

        let t = told.clone();
        let (_late, now) = state.listen(move || t.set(t.get() + 10));
        now.expect("a frame mounted after the end learns of it at once")();
        assert_eq!(told.get(), 11);
        drop(first);
    }

    #[test]
    fn only_our_messages_are_hints() {
        assert_eq!(hint(Some("signed-out")), Some(Hint::SignedOut));
        assert_eq!(hint(Some("signed-in:bob@acme-corp.com")), Some(Hint::SignedIn("bob@acme-corp.com")));
        assert_eq!(
            hint(Some(&signed_in_message("bob@acme-corp.com"))),
            Some(Hint::SignedIn("bob@acme-corp.com"))
        );
        for other in ["signed-in", "signed-in:", "Signed-out", "signed-out ", "sign-out", ""] {
            assert_eq!(hint(Some(other)), None, "{other:?}");
        }
        assert_eq!(hint(None), None, "an object or anything else is not ours");
    }

    #[test]
    fn a_sign_out_or_another_users_sign_in_is_checked_never_believed() {
        let alice = "alice";
        assert!(worth_checking(Some(Hint::SignedOut), alice));
        assert!(worth_checking(Some(Hint::SignedIn("bob")), alice));
        assert!(
            !worth_checking(Some(Hint::SignedIn(alice)), alice),
            "alice's page in another tab is no news"
        );
        assert!(!worth_checking(None, alice));
    }

    #[test]
    fn the_servers_answer_decides() {
        let alice = "alice";
        // The email is the provider's: two users may share one, or have none.
        let viewer = |id: &str, name: &str| Viewer { id: id.into(), email: String::new(), name: name.into() };
        assert_eq!(outcome(alice, Ok(viewer("bob", "Bob"))), Outcome::OtherUser("Bob".into()));
        assert_eq!(
            outcome(alice, Ok(viewer(alice, "Alice"))),
            Outcome::Unchanged,
            "a wrong hint, or alice again"
        );
        assert_eq!(outcome(alice, Err(AppError::Unauthenticated)), Outcome::Ended);
        for unknown in [
            AppError::Internal,
            AppError::Unavailable { message: "down".into(), retry_after: None },
            AppError::Transport(leptos::server_fn::error::ServerFnErrorErr::Request("offline".into())),
        ] {
            assert_eq!(
                outcome(alice, Err(unknown.clone())),
                Outcome::Unchanged,
                "{unknown:?} says nothing of the session"
            );
        }
    }

    #[test]
    fn one_check_at_a_time_and_one_more_after_hints_during_it() {
        let mut checks = Checks::default();
        assert!(checks.wanted(), "the first hint starts a check");
        assert!(!checks.wanted(), "a check is running");
        assert!(!checks.wanted(), "however many hints come");
        assert!(checks.done(), "one more check after it: its answer may predate the hints");
        assert!(!checks.done(), "no hint during the second: done");
        assert!(checks.wanted(), "the next hint starts a check again");
        assert!(!checks.done());
    }

    #[test]
    fn the_other_users_notice_names_both() {
        assert_eq!(
            other_user_words("Bob", "Alice"),
            (
                "You are now signed in as Bob in another tab.".to_owned(),
                "This page still shows Alice's view: its live updates and plugin pages stopped.".to_owned()
            )
        );
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
