//! The browser side of a plugin frame: opens the page with a single-use frame
//! ticket, takes the page's messages (only from that frame's window and its
//! installation's origin), answers `plugin:ready` with `fundament:init`, keeps
//! the page's PluginToken fresh, follows the console's theme, and moves the
//! console when the page asks. Tokens live in memory only: never in a URL, a
//! log or storage (the ticket rides the first URL once and is spent there).
//!
//! A page cannot make the console work for it: messages are read field by
//! field (never serialized whole; the browser's clone of what was posted is paid
//! for each message, so a frame sending more than a page needs is unloaded,
//! `super::message_budget`), token
//! requests within seconds of a fresh token are ignored, an unchanged height
//! changes nothing, and moves it asks for without the user's click replace the
//! history entry and are few (`super::navigation`).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use leptos::prelude::*;
use leptos_router::NavigateOptions;
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use web_sys::{HtmlIFrameElement, MediaQueryList, MessageEvent, MutationObserver, MutationObserverInit};

use super::api::{MintReply, TicketReply, frame_ticket, mint_plugin_token};
use super::frame::{FrameSignals, FrameSpec, FrameStatus, READY_TIMEOUT_MS};
use super::message_budget::MessageBudget;
use super::model::ResourceView;
use super::navigation::{Follow, NavigationGate};
use super::protocol::{self, HostMessage, Init, PluginMessage, Refusal};
use super::token::{AfterFailure, AuthFailure, Minted, RefreshRequest, TokenKeeper};

type Navigate = Rc<dyn Fn(&str, NavigateOptions)>;

thread_local! {
    /// The moves plugin pages asked for in this tab: one gate for every frame, since a page
    /// that moves the console unmounts its own host.
    static NAVIGATION_GATE: RefCell<NavigationGate> = RefCell::new(NavigationGate::default());
}

/// Whether the user has just interacted with the console's window, or with a frame in it
/// (`navigator.userActivation.isActive`; a browser without it: never).
fn user_activated() -> bool {
    let get = |object: &JsValue, key: &str| js_sys::Reflect::get(object, &JsValue::from_str(key)).ok();
    get(&window(), "navigator")
        .and_then(|navigator| get(&navigator, "userActivation"))
        .filter(|activation| activation.is_object())
        .and_then(|activation| get(&activation, "isActive"))
        .and_then(|active| active.as_bool())
        .unwrap_or(false)
}
type Callback = Closure<dyn FnMut()>;

struct Host {
    iframe: HtmlIFrameElement,
    spec: FrameSpec,
    signals: FrameSignals,
    navigate: Navigate,
    keeper: RefCell<TokenKeeper>,
    /// `fundament:init` went out since the page's last `plugin:ready`.
    init_sent: Cell<bool>,
    /// The page is ready and waits for the running mint before its init.
    init_waiting: Cell<bool>,
    last_theme: Cell<&'static str>,
    mint_timer: RefCell<Option<TimeoutHandle>>,
    ready_timer: RefCell<Option<TimeoutHandle>>,
    /// The messages the frame sent lately.
    budget: RefCell<MessageBudget>,
    /// An invalid message was logged.
    warned_invalid: Cell<bool>,
    alive: Cell<bool>,
}

/// Stops the host when the frame goes away.
pub struct HostHandle {
    host: Rc<Host>,
    listener: Option<WindowListenerHandle>,
    observer: Option<MutationObserver>,
    media: Option<MediaQueryList>,
    _on_mutation: Option<Callback>,
    on_media: Option<Callback>,
    _on_session_end: crate::session_end::Listening,
}

impl HostHandle {
    pub fn stop(mut self) {
        self.host.alive.set(false);
        self.host.clear_timers();
        if let Some(listener) = self.listener.take() {
            listener.remove();
        }
        if let Some(observer) = self.observer.take() {
            observer.disconnect();
        }
        if let (Some(media), Some(cb)) = (self.media.take(), self.on_media.take()) {
            let _ = media.remove_event_listener_with_callback("change", cb.as_ref().unchecked_ref());
        }
    }
}

/// Starts hosting the page: listens, mints, then loads the frame.
pub fn mount(
    iframe: HtmlIFrameElement,
    spec: FrameSpec,
    signals: FrameSignals,
    navigate: impl Fn(&str, NavigateOptions) + Clone + 'static,
) -> HostHandle {
    let navigate: Navigate = Rc::new(move |to: &str, options| navigate(to, options));
    let host = Rc::new(Host {
        iframe,
        spec,
        signals,
        navigate,
        keeper: RefCell::new(TokenKeeper::default()),
        init_sent: Cell::new(false),
        init_waiting: Cell::new(false),
        last_theme: Cell::new(effective_theme()),
        mint_timer: RefCell::new(None),
        ready_timer: RefCell::new(None),
        budget: RefCell::new(MessageBudget::default()),
        warned_invalid: Cell::new(false),
        alive: Cell::new(true),
    });

    let weak = Rc::downgrade(&host);
    let listener = window_event_listener(leptos::ev::message, move |event: MessageEvent| {
        if let Some(host) = weak.upgrade() {
            host.receive(&event);
        }
    });

    let weak = Rc::downgrade(&host);
    let on_theme = move || {
        if let Some(host) = weak.upgrade() {
            host.theme_maybe_changed();
        }
    };
    let (observer, on_mutation) = observe_theme_attribute(on_theme.clone());
    let on_media: Callback = Closure::new(on_theme);
    let media = window().match_media("(prefers-color-scheme: dark)").ok().flatten();
    if let Some(media) = &media {
        let _ = media.add_event_listener_with_callback("change", on_media.as_ref().unchecked_ref());
    }

    let weak = Rc::downgrade(&host);
    Effect::watch(
        move || signals.retry.get(),
        move |_, _, _| {
            if let Some(host) = weak.upgrade() {
                host.mint_now();
            }
        },
        false,
    );

    let weak = Rc::downgrade(&host);
    Effect::watch(
        move || signals.reopen.get(),
        move |_, _, _| {
            if let Some(host) = weak.upgrade() {
                host.reopen();
            }
        },
        false,
    );

    host.mint_now();
    host.start_ready_timer();
    // Last: the listener is in place before the page can say it is ready.
    host.open();
    // After `open`: a frame mounted after the session ended is told at once, and blanked.
    let weak = Rc::downgrade(&host);
    let on_session_end = crate::session_end::on_end(move || {
        if let Some(host) = weak.upgrade() {
            host.signed_out();
        }
    });

    HostHandle {
        host,
        listener: Some(listener),
        observer,
        media,
        _on_mutation: on_mutation,
        on_media: Some(on_media),
        _on_session_end: on_session_end,
    }
}

impl Host {
    /// Cancels the token refresh and the ready timeout.
    fn clear_timers(&self) {
        for timer in [&self.mint_timer, &self.ready_timer] {
            if let Some(t) = timer.borrow_mut().take() {
                t.clear();
            }
        }
    }

    /// The page is `TimedOut` unless it says `plugin:ready` within [`READY_TIMEOUT_MS`].
    fn start_ready_timer(self: &Rc<Self>) {
        let weak = Rc::downgrade(self);
        let timer = set_timeout_with_handle(
            move || {
                if let Some(host) = weak.upgrade()
                    && host.signals.status.get_untracked() == FrameStatus::Loading
                {
                    host.signals.status.set(FrameStatus::TimedOut);
                }
            },
            Duration::from_millis(READY_TIMEOUT_MS),
        )
        .ok();
        if let Some(old) = std::mem::replace(&mut *self.ready_timer.borrow_mut(), timer) {
            old.clear();
        }
    }

    /// The session ended (`crate::session_end`): the page is unloaded, which ends its scripts,
    /// its token is forgotten, and nothing is asked or answered for it any more. A page that
    /// reloads itself or says `plugin:ready` again gets no init (and no cached token); "Sign in
    /// again" on the console's notice is the way back.
    fn signed_out(&self) {
        self.alive.set(false);
        self.clear_timers();
        *self.keeper.borrow_mut() = TokenKeeper::default();
        self.init_waiting.set(false);
        self.init_sent.set(false);
        self.iframe.set_src("about:blank");
        self.signals.auth.set(None);
        self.signals.opened.set(None);
        self.signals.status.set(FrameStatus::SignedOut);
    }

    /// The frame sent more messages than a page needs: its page is unloaded (which ends its
    /// scripts and its flood) and its messages are no longer read, until the user opens it
    /// again.
    fn flooded(&self) {
        leptos::logging::warn!("{}: the page sent too many messages; it was stopped", self.spec.plugin_label);
        // No token is kept fresh for a page that is gone.
        self.clear_timers();
        self.signals.status.set(FrameStatus::Flooded);
        self.iframe.set_src("about:blank");
    }

    /// Opens a page that was not opened, did not load or was stopped once more, with a fresh
    /// ticket (and a fresh token if it had none): the dependency that failed may be back.
    fn reopen(self: &Rc<Self>) {
        if !self.alive.get() || self.signals.status.get_untracked() == FrameStatus::Ready {
            return;
        }
        let was_flooded = self.signals.status.get_untracked() == FrameStatus::Flooded;
        self.budget.borrow_mut().reset();
        self.signals.opened.set(None);
        self.signals.status.set(FrameStatus::Loading);
        let no_token = self.keeper.borrow().token(js_sys::Date::now()).is_none();
        // A stopped page's refresh was cancelled: its token is fresh again from here.
        if no_token || was_flooded || self.signals.auth.get_untracked().is_some() {
            self.mint_now();
        }
        self.start_ready_timer();
        self.open();
    }

    /// Loads the page: a frame ticket first (plugin-proxy exchanges it for a cookie of the
    /// installation's origin and redirects to the clean URL), so no console credential ever
    /// reaches the plugin's origin.
    fn open(self: &Rc<Self>) {
        if crate::session_end::has_ended() {
            return;
        }
        self.ask(frame_ticket, |host, reply| match reply {
            Ok(TicketReply::Ticket(ticket)) => {
                let separator = if host.spec.src.contains('?') { '&' } else { '?' };
                let ticket = super::model::encode_segment(&ticket);
                host.iframe.set_src(&format!(
                    "{}{separator}{}={ticket}",
                    host.spec.src,
                    fundament_plugin_origin::FRAME_TICKET_PARAM
                ));
            }
            // The server no longer takes the session as the page's: it ended, or is another user's.
            Ok(TicketReply::Failed(AuthFailure::Unauthorized)) => crate::session_end::refused(),
            Ok(TicketReply::Failed(failure)) => host.not_opened(failure),
            Err(_) => host.not_opened(AuthFailure::MintFailed),
        });
    }

    /// Asks the console's server for this installation's `request` (a ticket or
    /// a token) and hands the reply to `then`, unless the frame is gone by then.
    fn ask<Reply: Future + 'static>(
        self: &Rc<Self>,
        request: impl FnOnce(String, String, super::api::DrawnFor) -> Reply + 'static,
        then: impl FnOnce(&Rc<Self>, Reply::Output) + 'static,
    ) {
        let host = Rc::clone(self);
        let (cluster, installation) = (self.spec.cluster_id.clone(), self.spec.installation_uid.clone());
        let drawn_for = self.spec.drawn_for.clone();
        leptos::task::spawn_local(async move {
            let reply = request(cluster, installation, drawn_for).await;
            if host.alive.get() {
                then(&host, reply);
            }
        });
    }

    fn not_opened(&self, failure: AuthFailure) {
        if let Some(t) = self.ready_timer.borrow_mut().take() {
            t.clear();
        }
        self.signals.opened.set(Some(failure));
        self.signals.status.set(FrameStatus::NotOpened);
    }

    fn receive(self: &Rc<Self>, event: &MessageEvent) {
        if !self.alive.get()
            || event.origin() != self.spec.origin
            || self.signals.status.get_untracked() == FrameStatus::Flooded
        {
            return;
        }
        // Counted before the sender is looked at: a frame the page nests (same origin) costs
        // the console's window the same clone per message as the page itself.
        if !self.budget.borrow_mut().take(js_sys::Date::now()) {
            self.flooded();
            return;
        }
        let Some(frame_window) = self.iframe.content_window() else { return };
        let from_frame =
            event.source().is_some_and(|source| js_sys::Object::is(frame_window.as_ref(), source.as_ref()));
        if !from_frame {
            return;
        }
        // What the page posted is decoded here, on the console's thread, when first read: timed,
        // since its size cannot be known before.
        let started = now_ms();
        let posted = event.data();
        let finished = now_ms();
        if !self.budget.borrow_mut().spend(finished - started, finished) {
            self.flooded();
            return;
        }
        let Some(data) = protocol_fields(&posted) else { return };
        match protocol::parse(&data) {
            Ok(message) => self.handle(message),
            // Once per frame: a page may send nothing else.
            Err(Refusal::Invalid(why)) if !self.warned_invalid.replace(true) => {
                leptos::logging::warn!(
                    "{}: message ignored: {why} (further ones are not logged)",
                    self.spec.plugin_label
                )
            }
            Err(_) => {}
        }
    }

    fn handle(self: &Rc<Self>, message: PluginMessage) {
        let spec = &self.spec;
        match message {
            PluginMessage::Ready => {
                if let Some(t) = self.ready_timer.borrow_mut().take() {
                    t.clear();
                }
                self.signals.status.set(FrameStatus::Ready);
                // Every ready gets an init: the page may have reloaded itself.
                self.init_sent.set(false);
                if self.keeper.borrow().in_flight() {
                    self.init_waiting.set(true);
                } else {
                    self.send_init();
                }
            }
            PluginMessage::Resize(height) => {
                if self.signals.height.get_untracked() != height {
                    self.signals.height.set(height);
                }
            }
            PluginMessage::RequestTokenRefresh => {
                let asked = self.keeper.borrow_mut().refresh_requested(js_sys::Date::now());
                match asked {
                    RefreshRequest::Mint => self.mint_now(),
                    RefreshRequest::Wait => {}
                    RefreshRequest::Ignore { first } => {
                        if first {
                            leptos::logging::warn!(
                                "{}: token refresh requests right after a fresh token are ignored",
                                spec.plugin_label
                            );
                        }
                    }
                }
            }
            PluginMessage::Navigate { name, namespace } => {
                self.follow(&spec.detail_href(&name, namespace.as_deref()));
            }
            PluginMessage::Create => {
                if spec.can_create && spec.view != ResourceView::Create {
                    self.follow(&spec.create_href());
                }
            }
            PluginMessage::NavigateBack => {
                if spec.view != ResourceView::List {
                    self.follow(&spec.list_href());
                }
            }
        }
    }

    /// Moves the console to `href` as the page asked, if the gate lets it.
    fn follow(&self, href: &str) {
        let decision =
            NAVIGATION_GATE.with(|gate| gate.borrow_mut().decide(user_activated(), js_sys::Date::now()));
        match decision {
            Follow::Push => (self.navigate)(href, NavigateOptions::default()),
            Follow::Replace => (self.navigate)(href, NavigateOptions { replace: true, ..Default::default() }),
            Follow::Refuse { first } => {
                if first {
                    leptos::logging::warn!(
                        "{}: the page asked to move the console too often without a click; ignored",
                        self.spec.plugin_label
                    );
                }
            }
        }
    }

    fn post(&self, message: &HostMessage) {
        let Some(target) = self.iframe.content_window() else { return };
        if let Some(value) = to_js(message) {
            let _ = target.post_message(&value, &self.spec.origin);
        }
    }

    /// Sends `fundament:init` with the token if there is one (else `null`,
    /// followed by the token or the failure when they come).
    fn send_init(&self) {
        self.init_waiting.set(false);
        let theme = effective_theme();
        self.last_theme.set(theme);
        let token = self.keeper.borrow().token(js_sys::Date::now()).cloned();
        let spec = &self.spec;
        self.post(&HostMessage::Init(Box::new(Init {
            protocol_version: 1,
            theme,
            plugin_name: spec.installation_name.clone(),
            crd_kind: spec.crd_kind.clone(),
            view: spec.view.as_str(),
            resource: spec.resource.clone(),
            namespaces: spec.namespaces.clone(),
            kube_api_proxy_url: spec.kube_api_proxy_url.clone(),
            cluster_id: spec.cluster_id.clone(),
            token: token.as_ref().map(|t| t.token.clone()),
            token_expires_at: token.as_ref().map(|t| t.expires_at),
        })));
        self.init_sent.set(true);
        if token.is_none()
            && let Some(failure) = self.keeper.borrow().failure()
        {
            self.post(&HostMessage::AuthFailed { reason: failure.as_str() });
        }
    }

    fn theme_maybe_changed(&self) {
        let theme = effective_theme();
        if self.init_sent.get() && theme != self.last_theme.get() {
            self.last_theme.set(theme);
            self.post(&HostMessage::ThemeChanged { theme });
        }
    }

    /// Mints now (joining a mint that is already running).
    fn mint_now(self: &Rc<Self>) {
        if crate::session_end::has_ended() || !self.keeper.borrow_mut().begin() {
            return;
        }
        if let Some(t) = self.mint_timer.borrow_mut().take() {
            t.clear();
        }
        self.ask(mint_plugin_token, |host, reply| match reply {
            Ok(MintReply::Minted(minted)) => host.minted(minted),
            Ok(MintReply::Failed(failure)) => host.mint_failed(failure),
            Err(_) => host.mint_failed(AuthFailure::MintFailed),
        });
    }

    fn minted(self: &Rc<Self>, minted: Minted) {
        let delay = self.keeper.borrow_mut().minted(minted.clone(), js_sys::Date::now());
        self.signals.auth.set(None);
        if self.init_waiting.get() {
            self.send_init();
        } else if self.init_sent.get() {
            self.post(&HostMessage::TokenRefreshed {
                token: minted.token,
                token_expires_at: minted.expires_at,
            });
        }
        self.schedule_mint(delay);
    }

    fn mint_failed(self: &Rc<Self>, failure: AuthFailure) {
        if failure == AuthFailure::Unauthorized {
            // The session ended (signed out elsewhere, revoked, expired, or the browser's session
            // is someone else's now): the whole tab learns which, and this frame is unloaded.
            crate::session_end::refused();
            return;
        }
        let next = self.keeper.borrow_mut().failed(failure);
        match next {
            AfterFailure::Retry(delay) => {
                // The page should not wait for the retries to start drawing.
                if self.init_waiting.get() {
                    self.send_init();
                }
                self.schedule_mint(delay);
            }
            AfterFailure::GiveUp { reason, announce, retry_in } => {
                self.signals.auth.set(Some(reason));
                if self.init_waiting.get() {
                    self.send_init(); // carries the failure
                } else if announce && self.init_sent.get() {
                    self.post(&HostMessage::AuthFailed { reason: reason.as_str() });
                }
                self.schedule_mint(retry_in);
            }
        }
    }

    fn schedule_mint(self: &Rc<Self>, delay_ms: u32) {
        let weak: Weak<Host> = Rc::downgrade(self);
        let handle = set_timeout_with_handle(
            move || {
                if let Some(host) = weak.upgrade()
                    && host.alive.get()
                {
                    host.mint_now();
                }
            },
            Duration::from_millis(u64::from(delay_ms)),
        )
        .ok();
        if let Some(old) = self.mint_timer.replace(handle) {
            old.clear();
        }
    }
}

/// The page's high-resolution clock, in milliseconds (`Date.now()` where there is none).
fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or_else(js_sys::Date::now, |p| p.now())
}

/// The fields of a message the protocol reads, taken one by one: the type, a height, a name
/// and a namespace (strings longer than a Kubernetes name can be are not copied). Anything
/// else a page puts into a message is never looked at.
fn protocol_fields(data: &JsValue) -> Option<serde_json::Value> {
    const MAX_TEXT: u32 = 253;
    if !data.is_object() {
        return None;
    }
    let field = |name: &str| js_sys::Reflect::get(data, &JsValue::from_str(name)).ok();
    let text = |value: JsValue| -> Option<serde_json::Value> {
        let s = value.dyn_ref::<js_sys::JsString>()?;
        (s.length() <= MAX_TEXT).then(|| serde_json::Value::String(String::from(s)))
    };
    let mut fields = serde_json::Map::new();
    fields.insert("type".to_owned(), text(field("type")?)?);
    if let Some(height) = field("height").and_then(|h| h.as_f64()) {
        fields.insert("height".to_owned(), serde_json::json!(height));
    }
    for name in ["name", "namespace"] {
        match field(name) {
            Some(v) if v.is_null() || v.is_undefined() => {}
            Some(v) => {
                // Present but not a short string: kept as an invalid marker so the parser says why.
                fields.insert(name.to_owned(), text(v).unwrap_or(serde_json::Value::Bool(false)));
            }
            None => {}
        }
    }
    Some(serde_json::Value::Object(fields))
}

fn to_js(message: &impl Serialize) -> Option<JsValue> {
    let text = serde_json::to_string(message).ok()?;
    js_sys::JSON::parse(&text).ok()
}

/// `dark` or `light`: the console's explicit choice, else the OS preference.
fn effective_theme() -> &'static str {
    let chosen = document().document_element().and_then(|root| root.get_attribute("data-theme"));
    match chosen.as_deref() {
        Some("dark") => "dark",
        Some("light") => "light",
        _ => {
            let dark = window()
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten()
                .is_some_and(|m| m.matches());
            if dark { "dark" } else { "light" }
        }
    }
}

/// Calls `changed` whenever `<html data-theme>` changes.
fn observe_theme_attribute(changed: impl Fn() + 'static) -> (Option<MutationObserver>, Option<Callback>) {
    let Some(root) = document().document_element() else { return (None, None) };
    let callback: Callback = Closure::new(changed);
    let Ok(observer) = MutationObserver::new(callback.as_ref().unchecked_ref()) else { return (None, None) };
    let options = MutationObserverInit::new();
    options.set_attributes(true);
    let filter = js_sys::Array::of1(&JsValue::from_str("data-theme"));
    options.set_attribute_filter(&filter);
    if observer.observe_with_options(&root, &options).is_err() {
        return (None, None);
    }
    (Some(observer), Some(callback))
}
