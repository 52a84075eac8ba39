//! The tab's Kubernetes watches, shared: one watch connection per collection
//! (a kind, in every namespace) per browser tab, whoever looks at it — every
//! generated list and detail view and the plugin registry subscribe to the hub,
//! which counts them, filters the events for each (namespace, name) and tells
//! them that something they look at changed; they ask the server for the new
//! state themselves.
//!
//! A dropped connection (the gateway's 30-minute cap, a network blip) is
//! resumed from the last resourceVersion seen, so nothing is listed again; so
//! is one silent for [`crate::api::WATCH_SILENCE`]: the console's route sends a
//! blank line on each quiet heartbeat, so silence means a connection the network
//! lost without a word (a laptop's sleep, a NAT forgetting it), which a browser
//! would not notice by itself for many minutes. Only
//! a 410 Gone (the version is too old to resume from) costs one list of the
//! collection, after which every subscriber is told to read again. A watch the
//! cluster refuses for the whole kind moves its single-namespace subscribers to
//! a watch of their namespace (a user whose RBAC is per namespace). A stream
//! nobody looks at any more stays open a few seconds, so going from a list to
//! an object and back keeps the one connection.
//!
//! A tab hidden for [`HIDDEN_LINGER`] lets its watches go and takes them up again, each from
//! its last version, when it is shown: a browser holds at most six connections to one host
//! over HTTP/1.1 (`fundament dev`, or any console served without HTTP/2), and tabs in the
//! background each holding their watches left none for the tab in front, whose requests
//! then waited for ever.
//!
//! Watches go through the console's own cluster route (same origin: the
//! session cookie goes to the console only, which calls kube-api-proxy with the
//! user's token). Browser only.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use leptos::prelude::{TimeoutHandle, set_timeout, set_timeout_with_handle};
use serde::Deserialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, ReadableStreamDefaultReader, RequestInit, Response};

use super::watch_event::{End, Meta, WatchEvent, end_of, end_of_error, parse_event_line};
use crate::plugins::model::encode_segment;

/// A function that runs `action` once, `delay` after the first of a burst of calls: a view
/// that reads again on each change reads once per burst.
pub fn debounced(delay: Duration, action: impl Fn() + 'static) -> Rc<dyn Fn()> {
    let action = Rc::new(action);
    let pending = Rc::new(Cell::new(false));
    Rc::new(move || {
        if pending.replace(true) {
            return;
        }
        let (pending, action) = (pending.clone(), action.clone());
        set_timeout(
            move || {
                pending.set(false);
                action();
            },
            delay,
        );
    })
}

/// [`debounced`] bumping `changes` (a view's "read again" counter).
pub fn debounced_bump(changes: leptos::prelude::RwSignal<u32>, delay: Duration) -> Rc<dyn Fn()> {
    use leptos::prelude::Update;
    // The view may be gone by the time it runs.
    debounced(delay, move || {
        let _ = changes.try_update(|n| *n += 1);
    })
}

/// A stream nobody subscribes to any more is closed after this.
const LINGER: Duration = Duration::from_secs(10);
/// The wait before reconnecting after a drop; doubled for each failure in a row, up to [`MAX_RETRY`].
const RETRY: Duration = Duration::from_secs(1);
/// Short enough that a page is live again within seconds of an outage's end; every wait is
/// spread by up to a fifth, so tabs that lost their watches together do not all come back in
/// the same instant.
const MAX_RETRY: Duration = Duration::from_secs(10);

/// How long a hidden tab keeps its watches: a glance at another tab costs nothing.
const HIDDEN_LINGER: Duration = Duration::from_secs(10);

/// What a subscriber is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// An object it looks at was added, changed or deleted.
    Changed,
    /// The watch could not resume (410 Gone, or the subscriber's version was unknown):
    /// changes may have been missed, read everything again.
    Resync,
    /// The cluster refuses the watch (401, 403, 404…): no live updates, nothing is retried.
    Refused,
    /// The watch cannot be (re)connected for now (the cluster, the gateway or the console is
    /// down, restarting or busy): nothing is delivered until [`Note::Restored`]; the hub keeps
    /// trying with back-off.
    Lost,
    /// The watch is connected again after [`Note::Lost`]: what changed meanwhile follows as
    /// usual (or as a [`Note::Resync`]); a subscriber may read again to be sure.
    Restored,
}

/// What a view showing objects does with a note: reads again after a change (`again`,
/// debounced by the caller), and shows `paused` while the watch is lost.
pub fn follow(note: Note, paused: leptos::prelude::RwSignal<bool>, again: &Rc<dyn Fn()>) {
    use leptos::prelude::Set;
    match note {
        Note::Changed | Note::Resync => again(),
        Note::Refused => {}
        Note::Lost => {
            let _ = paused.try_set(true);
        }
        Note::Restored => {
            // The view may be gone by now.
            let _ = paused.try_set(false);
            again();
        }
    }
}

/// The objects of one kind a watch follows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Collection {
    pub cluster_id: String,
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub plural: String,
    /// `None`: every namespace (or a cluster-scoped kind).
    pub namespace: Option<String>,
}

impl Collection {
    /// The PluginInstallations of a cluster (cluster-scoped).
    pub fn installations(cluster_id: &str) -> Self {
        Collection {
            cluster_id: cluster_id.to_owned(),
            group: "plugins.fundament.io".into(),
            version: "v1".into(),
            plural: "plugininstallations".into(),
            namespace: None,
        }
    }

    /// The collection's URL on the console's cluster route.
    fn url(&self) -> String {
        let api = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        let ns =
            self.namespace.as_ref().map(|n| format!("/namespaces/{}", encode_segment(n))).unwrap_or_default();
        format!("{}/clusters/{}{api}{ns}/{}", crate::api::CLUSTER_ROUTE, self.cluster_id, self.plural)
    }
}

/// Which objects of the collection a subscriber looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interest {
    /// Only objects in these namespaces (`None`: all).
    pub namespaces: Option<Vec<String>>,
    /// Only the object of this name.
    pub name: Option<String>,
}

impl Interest {
    fn wants(&self, meta: &Meta) -> bool {
        self.name.as_ref().is_none_or(|n| meta.name.as_ref() == Some(n))
            && self
                .namespaces
                .as_ref()
                .is_none_or(|ns| meta.namespace.as_ref().is_some_and(|m| ns.contains(m)))
    }

    /// The one namespace it needs, if just one: where it may still watch when the kind is refused.
    fn single_namespace(&self) -> Option<&str> {
        match self.namespaces.as_deref() {
            Some([one]) => Some(one),
            _ => None,
        }
    }
}

struct Subscriber {
    interest: Interest,
    /// The collection it is on (moves once, to its namespace, when the kind is refused).
    on: RefCell<Collection>,
    /// The resourceVersion of what it showed when it subscribed.
    resource_version: Option<String>,
    notify: Box<dyn Fn(Note)>,
    alive: Cell<bool>,
}

impl Subscriber {
    fn tell(&self, note: Note) {
        if self.alive.get() {
            (self.notify)(note);
        }
    }

    /// Tells it after the current task: never from inside the call that subscribes it.
    fn tell_later(self: &Rc<Self>, note: Note) {
        let me = Rc::clone(self);
        set_timeout(move || me.tell(note), Duration::ZERO);
    }
}

/// A subscription to the hub; dropping it unsubscribes.
pub struct Subscription(Rc<Subscriber>);

/// The last resourceVersion the watch of `collection` has seen, if it is open.
pub fn last_version(collection: &Collection) -> Option<String> {
    stream_of(collection).and_then(|s| s.borrow().resource_version.clone())
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.0.alive.set(false);
        let on = self.0.on.borrow().clone();
        if let Some(stream) = stream_of(&on) {
            stream.borrow_mut().subscribers.retain(|s| !Rc::ptr_eq(s, &self.0));
            linger(&stream);
        }
    }
}

struct Stream {
    collection: Collection,
    subscribers: Vec<Rc<Subscriber>>,
    /// Where the watch resumes; `None` until known (then it lists first).
    resource_version: Option<String>,
    connection: Option<AbortController>,
    /// When (`Date.now()`, ms) the connection (or the list) last got a byte, or began.
    heard: f64,
    /// Since when (a resourceVersion) `changes` holds every object's last change.
    changes_since: Option<u64>,
    /// The resourceVersion of each object's last change seen, by (namespace, name): an
    /// object's page that joins knows whether its object changed since it read it.
    changes: HashMap<(Option<String>, String), u64>,
    /// Bumped at every (re)connect, list and close: a task of an older one stops.
    generation: u64,
    failures: u32,
    refused: bool,
    /// Connection attempts in a row that got no answer or a passing failure (5xx, 429).
    unanswered: u32,
    /// Subscribers were told [`Note::Lost`] and not yet [`Note::Restored`].
    lost: bool,
    /// A line it could not read was logged (once per stream: every line may be like it).
    unreadable_logged: bool,
    linger: Option<TimeoutHandle>,
}

/// How many objects' last changes a stream remembers; past that it forgets them all.
const REMEMBERED: usize = 10_000;

impl Stream {
    /// Whether `subscriber` has missed changes this stream has already seen.
    fn missed(&self, subscriber: &Subscriber) -> bool {
        let mine = subscriber.resource_version.as_deref();
        // One object's page: exact, when the stream has seen every change since it was read.
        if let (Some(name), Some(mine), Some(since)) =
            (&subscriber.interest.name, mine.and_then(|v| v.parse::<u64>().ok()), self.changes_since)
            && since <= mine
        {
            let ns = subscriber.interest.namespaces.as_ref().and_then(|n| n.first().cloned());
            return self.changes.get(&(ns, name.clone())).is_some_and(|last| *last > mine);
        }
        older(mine, self.resource_version.as_deref())
    }

    fn remember(&mut self, meta: &Meta) {
        let (Some(name), Some(rv)) =
            (&meta.name, meta.resource_version.as_deref().and_then(|v| v.parse().ok()))
        else {
            return;
        };
        if self.changes.len() >= REMEMBERED {
            self.changes.clear();
            self.changes_since = Some(rv);
        }
        self.changes.insert((meta.namespace.clone(), name.clone()), rv);
    }

    /// After a relist nothing is known about what happened before it.
    fn forget_changes(&mut self) {
        self.changes.clear();
        self.changes_since = self.resource_version.as_deref().and_then(|v| v.parse().ok());
    }
}

type Shared = Rc<RefCell<Stream>>;

thread_local! {
    static STREAMS: RefCell<HashMap<Collection, Shared>> = RefCell::default();
    /// Whether the tab's watches are let go while it is hidden ([`HIDDEN_LINGER`]).
    static ASLEEP: Cell<bool> = const { Cell::new(false) };
    /// Bumped at each change of the tab's visibility: the timer that lets the watches go acts
    /// only if none came after it was set. (Not a cleared timeout: a handle is an `i32`, and a
    /// timer id need not fit in one.)
    static VISIBILITY_CHANGES: Cell<u64> = const { Cell::new(0) };
    static FOLLOWS_VISIBILITY: Cell<bool> = const { Cell::new(false) };
}

/// From the first subscription on: the tab's watches go [`HIDDEN_LINGER`] after it is hidden
/// and come back when it is shown; they are taken for lost as soon as the browser says it is
/// offline, and tried at once, without waiting out a back-off, when it says it is online again.
fn follow_visibility() {
    use leptos::prelude::window_event_listener_untyped as listen;
    if FOLLOWS_VISIBILITY.replace(true) {
        return;
    }
    // The handles are dropped, not removed: the tab follows these for its whole life.
    let _ = listen("visibilitychange", |_| visibility_changed());
    let _ = listen("offline", |_| offline());
    let _ = listen("online", |_| online());
    visibility_changed();
}

/// Ends every open connection as a drop does: the tab tries again at once, which an offline
/// browser refuses, so its views say they are paused now rather than after a silence.
fn offline() {
    let connections: Vec<AbortController> =
        STREAMS.with_borrow(|s| s.values().filter_map(|stream| stream.borrow().connection.clone()).collect());
    for connection in connections {
        connection.abort();
    }
}

/// Every watch that is lost or backing off tries again now.
fn online() {
    resume_each(|s| s.lost || s.failures > 0);
}

/// Each watch of the tab that `which` picks (and the cluster does not refuse) connects again
/// now, from its version (or lists first, without one; a 410 then costs one list, as after any
/// drop).
fn resume_each(which: impl Fn(&Stream) -> bool) {
    let streams: Vec<Shared> = STREAMS.with_borrow(|s| s.values().cloned().collect());
    for stream in streams {
        let (picked, known) = {
            let s = stream.borrow();
            (!s.refused && which(&s), s.resource_version.is_some())
        };
        match (picked, known) {
            (false, _) => {}
            (true, true) => connect(&stream),
            (true, false) => relist(&stream),
        }
    }
}

fn hidden() -> bool {
    web_sys::window().and_then(|w| w.document()).is_some_and(|d| d.hidden())
}

fn visibility_changed() {
    let change = VISIBILITY_CHANGES.get() + 1;
    VISIBILITY_CHANGES.set(change);
    if hidden() {
        if !ASLEEP.get() {
            set_timeout(
                move || {
                    if VISIBILITY_CHANGES.get() == change {
                        fall_asleep();
                    }
                },
                HIDDEN_LINGER,
            );
        }
        return;
    }
    if ASLEEP.replace(false) {
        wake();
    }
}

/// Lets every watch of the tab go, each keeping the version to resume from. Subscribers are
/// told nothing: nobody looks at the tab.
fn fall_asleep() {
    if !hidden() {
        return;
    }
    ASLEEP.set(true);
    stop_all();
}

/// Takes every watch up again.
fn wake() {
    resume_each(|_| true);
}

fn stream_of(collection: &Collection) -> Option<Shared> {
    STREAMS.with_borrow(|s| s.get(collection).cloned())
}

/// Subscribes to `collection`: `notify` runs for each change `interest` covers, from
/// `resource_version` (the version of what the subscriber shows) on.
pub fn subscribe(
    collection: Collection,
    interest: Interest,
    resource_version: Option<String>,
    notify: impl Fn(Note) + 'static,
) -> Subscription {
    let subscriber = Rc::new(Subscriber {
        interest,
        on: RefCell::new(collection.clone()),
        resource_version: resource_version.filter(|v| !v.is_empty()),
        notify: Box::new(notify),
        alive: Cell::new(true),
    });
    follow_visibility();
    join(&collection, &subscriber);
    Subscription(subscriber)
}

fn join(collection: &Collection, subscriber: &Rc<Subscriber>) {
    if let Some(stream) = stream_of(collection) {
        let (refused, behind) = {
            let mut s = stream.borrow_mut();
            if let Some(linger) = s.linger.take() {
                linger.clear();
            }
            s.subscribers.push(Rc::clone(subscriber));
            (s.refused, s.missed(subscriber))
        };
        if stream.borrow().lost {
            subscriber.tell_later(Note::Lost);
        }
        if refused {
            refuse_one(&stream, subscriber);
        } else if behind {
            // The stream is past what the subscriber shows: it has missed what came between.
            subscriber.tell_later(Note::Changed);
        }
        return;
    }
    let stream = Rc::new(RefCell::new(Stream {
        collection: collection.clone(),
        subscribers: vec![Rc::clone(subscriber)],
        resource_version: subscriber.resource_version.clone(),
        connection: None,
        heard: 0.0,
        changes_since: subscriber.resource_version.as_deref().and_then(|v| v.parse().ok()),
        changes: HashMap::new(),
        generation: 0,
        failures: 0,
        refused: false,
        unanswered: 0,
        lost: false,
        unreadable_logged: false,
        linger: None,
    }));
    STREAMS.with_borrow_mut(|s| s.insert(collection.clone(), Rc::clone(&stream)));
    if stream.borrow().resource_version.is_some() {
        connect(&stream);
    } else {
        relist(&stream);
    }
}

/// Whether a subscriber at `mine` has missed changes a stream at `stream` has seen.
fn older(mine: Option<&str>, stream: Option<&str>) -> bool {
    match (mine, stream) {
        (_, None) => false, // the stream lists first and tells everyone to read again
        (None, Some(_)) => true,
        (Some(m), Some(s)) => match (m.parse::<u64>(), s.parse::<u64>()) {
            (Ok(m), Ok(s)) => m < s,
            _ => m != s,
        },
    }
}

fn current(stream: &Shared, generation: u64) -> bool {
    stream.borrow().generation == generation
}

/// Opens the watch from the stream's resourceVersion.
fn connect(stream: &Shared) {
    // After the session's end nothing is asked again: a retry or a view that subscribes then
    // would only be answered 401. Asleep, the tab connects when it wakes.
    if crate::session_end::has_ended() || ASLEEP.get() {
        return;
    }
    let Ok(controller) = AbortController::new() else { return };
    let (url, generation) = {
        let mut s = stream.borrow_mut();
        s.generation += 1;
        let mut url = format!("{}?watch=1&allowWatchBookmarks=true", s.collection.url());
        if let Some(rv) = &s.resource_version {
            url.push_str("&resourceVersion=");
            url.push_str(&encode_segment(rv));
        }
        if let Some(old) = s.connection.replace(controller.clone()) {
            old.abort();
        }
        s.heard = js_sys::Date::now();
        (url, s.generation)
    };
    guard_silence(stream, generation, crate::api::WATCH_SILENCE);
    let Some(window) = web_sys::window() else { return };
    let init = RequestInit::new();
    init.set_signal(Some(&controller.signal()));
    let response = window.fetch_with_str_and_init(&url, &init);
    let stream = Rc::clone(stream);
    leptos::task::spawn_local(async move {
        let end = read(response, &stream, generation).await;
        if current(&stream, generation) {
            ended(&stream, end);
        }
    });
}

async fn read(response: js_sys::Promise, stream: &Shared, generation: u64) -> End {
    let Ok(response) = JsFuture::from(response).await.and_then(|r| r.dyn_into::<Response>()) else {
        unanswered(stream, generation);
        return End::Dropped;
    };
    if let Some(end) = end_of(response.status()) {
        if matches!(end, End::Dropped) {
            unanswered(stream, generation);
        }
        return end;
    }
    if current(stream, generation) {
        restored(stream);
    }
    let Some(reader) =
        response.body().and_then(|b| b.get_reader().dyn_into::<ReadableStreamDefaultReader>().ok())
    else {
        return End::Dropped;
    };
    let Ok(decoder) = web_sys::TextDecoder::new() else { return End::Dropped };
    let options = web_sys::TextDecodeOptions::new();
    options.set_stream(true);
    let mut buffer = String::new();
    loop {
        let Ok(chunk) = JsFuture::from(reader.read()).await else { return End::Dropped };
        if !current(stream, generation) {
            return End::Dropped;
        }
        stream.borrow_mut().heard = js_sys::Date::now();
        let done = js_sys::Reflect::get(&chunk, &JsValue::from_str("done")).ok().and_then(|d| d.as_bool());
        if done != Some(false) {
            return End::Dropped;
        }
        let Ok(value) = js_sys::Reflect::get(&chunk, &JsValue::from_str("value")) else {
            return End::Dropped;
        };
        let Ok(bytes) = value.dyn_into::<js_sys::Uint8Array>() else { return End::Dropped };
        let Ok(text) = decoder.decode_with_js_u8_array_and_options(&bytes, &options) else {
            return End::Dropped;
        };
        buffer.push_str(&text);
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let event = match parse_event_line(line) {
                Ok(event) => event,
                // Skipped, not the end of the stream: a reconnect would replay the same line and
                // end there again, and live updates of the kind would stop for good.
                // What it announced is unknown, so every view of the kind reads again (each
                // debounces its reads).
                Err(error) => {
                    {
                        let mut s = stream.borrow_mut();
                        if !std::mem::replace(&mut s.unreadable_logged, true) {
                            leptos::logging::warn!(
                                "watch of {}: a line skipped: {error}",
                                s.collection.plural
                            );
                        }
                    }
                    tell_all(stream, Note::Resync);
                    continue;
                }
            };
            let (object, changed) = match event {
                WatchEvent::Error(status) => return end_of_error(status.code()),
                WatchEvent::Bookmark(object) => (object, false),
                WatchEvent::Added(object) | WatchEvent::Modified(object) | WatchEvent::Deleted(object) => {
                    (object, true)
                }
            };
            {
                let mut s = stream.borrow_mut();
                // A watch that delivers is healthy: when it ends, it is resumed at once.
                s.failures = 0;
                if let Some(rv) = object.metadata.resource_version.clone() {
                    s.resource_version = Some(rv);
                }
                if changed {
                    s.remember(&object.metadata);
                }
            }
            if changed {
                dispatch(stream, &object.metadata);
            }
        }
    }
}

/// Aborts the stream's connection of `generation` (a watch or the list before it) once it has
/// heard nothing for `silence`: the fetch or the read then fails as a dropped connection does,
/// and is retried; its subscribers are told [`Note::Lost`] until an attempt is answered.
/// Checks again when the time since the last byte could reach `silence`; ends with the
/// generation.
fn guard_silence(stream: &Shared, generation: u64, silence: Duration) {
    let stream = Rc::clone(stream);
    let limit = silence.as_secs_f64() * 1000.0;
    let wait = {
        let s = stream.borrow();
        Duration::from_secs_f64(((s.heard + limit - js_sys::Date::now()) / 1000.0).max(0.0))
    };
    set_timeout(
        move || {
            let quiet_for = {
                let s = stream.borrow();
                if s.generation != generation {
                    return;
                }
                js_sys::Date::now() - s.heard
            };
            if quiet_for < limit {
                return guard_silence(&stream, generation, silence);
            }
            let connection = {
                let mut s = stream.borrow_mut();
                // An attempt that got nothing: its subscribers are told the watch is lost.
                s.unanswered += 1;
                leptos::logging::warn!(
                    "watch of {}: nothing heard for {:.0} s, taken for lost",
                    s.collection.plural,
                    quiet_for / 1000.0
                );
                s.connection.clone()
            };
            if let Some(connection) = connection {
                connection.abort();
            }
        },
        wait,
    );
}

/// Tells every subscriber of `stream` `note` (a copy of the list: a subscriber may leave while
/// it is told).
fn tell_all(stream: &Shared, note: Note) {
    let subscribers = stream.borrow().subscribers.clone();
    for subscriber in subscribers {
        subscriber.tell(note);
    }
}

fn dispatch(stream: &Shared, meta: &Meta) {
    let interested: Vec<Rc<Subscriber>> =
        stream.borrow().subscribers.iter().filter(|s| s.interest.wants(meta)).cloned().collect();
    for subscriber in interested {
        subscriber.tell(Note::Changed);
    }
}

fn ended(stream: &Shared, end: End) {
    match end {
        End::Dropped => retry(stream, connect),
        End::Gone => relist(stream),
        End::Refused => refuse(stream),
        End::SignedOut => crate::session_end::refused(),
    }
}

/// Counts an attempt of the current connection that got no answer.
fn unanswered(stream: &Shared, generation: u64) {
    if current(stream, generation) {
        stream.borrow_mut().unanswered += 1;
    }
}

/// The cluster answered: tells every subscriber that the watch is back, if they were told it
/// was lost.
fn restored(stream: &Shared) {
    let subscribers = {
        let mut s = stream.borrow_mut();
        s.unanswered = 0;
        if !std::mem::replace(&mut s.lost, false) {
            return;
        }
        s.subscribers.clone()
    };
    for subscriber in subscribers {
        subscriber.tell(Note::Restored);
    }
}

/// Runs `again` on the stream after the back-off, unless something else happened to it since.
fn retry(stream: &Shared, again: fn(&Shared)) {
    let (delay, generation, lost_now) = {
        let mut s = stream.borrow_mut();
        // The first retry after a healthy watch is immediate (a server closing a watch at its
        // timeout); a watch that ends again before delivering anything backs off. Subscribers
        // are told it is lost once an attempt got no answer (or a 5xx, a 429).
        let delay = match s.failures {
            0 => Duration::ZERO,
            n => RETRY
                .saturating_mul(1 << (n - 1).min(5))
                .min(MAX_RETRY)
                .mul_f64(1.0 + js_sys::Math::random() / 5.0),
        };
        let lost_now = s.unanswered > 0 && !std::mem::replace(&mut s.lost, true);
        s.failures += 1;
        (delay, s.generation, lost_now)
    };
    if lost_now {
        tell_all(stream, Note::Lost);
    }
    let stream = Rc::clone(stream);
    set_timeout(
        move || {
            if current(&stream, generation) {
                again(&stream);
            }
        },
        delay,
    );
}

/// Lists the collection once for a version to watch from, tells every subscriber to read
/// again, and watches from there.
fn relist(stream: &Shared) {
    if crate::session_end::has_ended() || ASLEEP.get() {
        return;
    }
    let Ok(controller) = AbortController::new() else { return };
    let (url, generation) = {
        let mut s = stream.borrow_mut();
        s.generation += 1;
        if let Some(old) = s.connection.replace(controller.clone()) {
            old.abort();
        }
        s.heard = js_sys::Date::now();
        // One object is enough: the list's resourceVersion is what is needed.
        (format!("{}?limit=1", s.collection.url()), s.generation)
    };
    guard_silence(stream, generation, crate::api::WATCH_SILENCE);
    let stream = Rc::clone(stream);
    leptos::task::spawn_local(async move {
        let outcome = list_version(&url, &controller).await;
        if !current(&stream, generation) {
            return;
        }
        if matches!(outcome, Err(End::Dropped)) {
            unanswered(&stream, generation);
        }
        match outcome {
            Ok(rv) => {
                restored(&stream);
                {
                    let mut s = stream.borrow_mut();
                    s.resource_version = Some(rv);
                    s.forget_changes();
                }
                tell_all(&stream, Note::Resync);
                connect(&stream);
            }
            Err(End::Refused) => refuse(&stream),
            Err(End::SignedOut) => crate::session_end::refused(),
            Err(_) => retry(&stream, relist),
        }
    });
}

/// The resourceVersion of a list at `url`.
async fn list_version(url: &str, controller: &AbortController) -> Result<String, End> {
    #[derive(Deserialize)]
    struct List {
        metadata: Meta,
    }
    let window = web_sys::window().ok_or(End::Dropped)?;
    let init = RequestInit::new();
    init.set_signal(Some(&controller.signal()));
    let response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .ok()
        .and_then(|r| r.dyn_into::<Response>().ok())
        .ok_or(End::Dropped)?;
    if let Some(end) = end_of(response.status()) {
        return Err(match end {
            End::Gone => End::Dropped,
            other => other,
        });
    }
    let text = JsFuture::from(response.text().map_err(|_| End::Dropped)?).await.map_err(|_| End::Dropped)?;
    let list: List = serde_json::from_str(&text.as_string().unwrap_or_default()).map_err(|_| End::Dropped)?;
    list.metadata.resource_version.filter(|v| !v.is_empty()).ok_or(End::Dropped)
}

/// The kind is refused: single-namespace subscribers move to a watch of their namespace,
/// the others are told.
fn refuse(stream: &Shared) {
    let subscribers = {
        let mut s = stream.borrow_mut();
        s.refused = true;
        s.generation += 1;
        if let Some(old) = s.connection.take() {
            old.abort();
        }
        s.subscribers.clone()
    };
    for subscriber in subscribers {
        refuse_one(stream, &subscriber);
    }
}

fn refuse_one(stream: &Shared, subscriber: &Rc<Subscriber>) {
    let from = stream.borrow().collection.clone();
    match subscriber.interest.single_namespace() {
        Some(ns) if from.namespace.is_none() => {
            stream.borrow_mut().subscribers.retain(|s| !Rc::ptr_eq(s, subscriber));
            let to = Collection { namespace: Some(ns.to_owned()), ..from };
            *subscriber.on.borrow_mut() = to.clone();
            join(&to, subscriber);
            linger(stream);
        }
        _ => subscriber.tell_later(Note::Refused),
    }
}

/// Closes the stream after [`LINGER`] if nobody subscribes to it by then.
fn linger(stream: &Shared) {
    let mut s = stream.borrow_mut();
    if !s.subscribers.is_empty() || s.linger.is_some() {
        return;
    }
    let target = Rc::clone(stream);
    s.linger = set_timeout_with_handle(move || close(&target), LINGER).ok();
}

/// Every watch of the tab is closed where it is (keeping its version) and its pending retries
/// come to nothing; subscribers are told nothing. When the session ended (the tab's notice says
/// why nothing is live), and while the tab is hidden.
pub fn stop_all() {
    let streams: Vec<Shared> = STREAMS.with_borrow(|s| s.values().cloned().collect());
    for stream in streams {
        let mut s = stream.borrow_mut();
        s.generation += 1;
        if let Some(old) = s.connection.take() {
            old.abort();
        }
    }
}

fn close(stream: &Shared) {
    let collection = {
        let mut s = stream.borrow_mut();
        s.linger = None;
        if !s.subscribers.is_empty() {
            return;
        }
        s.generation += 1;
        if let Some(old) = s.connection.take() {
            old.abort();
        }
        s.collection.clone()
    };
    STREAMS.with_borrow_mut(|streams| {
        if streams.get(&collection).is_some_and(|s| Rc::ptr_eq(s, stream)) {
            streams.remove(&collection);
        }
    });
}
