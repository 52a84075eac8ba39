//! `<PluginFrame>`: a plugin's page in a sandboxed iframe on its installation's
//! own origin. The server renders the frame without `src`; in the browser the
//! host first listens for the page's messages and then loads it (with a frame
//! ticket), so `plugin:ready` cannot be missed. Loading, "could not be opened",
//! "did not load" and "no plugin token" states are shown by the console,
//! outside the frame.

use leptos::prelude::*;

use super::model::{ResourceView, paths};
use super::protocol::{INITIAL_FRAME_HEIGHT, ResourceRef};
use super::token::AuthFailure;
use crate::components::status::{RETRY_SECONDS, RetryIn, TryAgain};

/// The sandbox of every plugin frame, exactly as the seed has it: no
/// top navigation, no popups.
pub const SANDBOX: &str = "allow-scripts allow-same-origin allow-forms";
/// How long a page may take to send `plugin:ready`.
pub const READY_TIMEOUT_MS: u64 = 5_000;
/// A page that did not load is opened again after this many seconds (a plugin runtime
/// that hung or answered garbage may be back by then); "Try again" does it at once.
pub const REOPEN_SECONDS: u32 = 10;

/// Everything the frame and its host need.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSpec {
    /// The page URL on its installation's origin (without the frame ticket).
    pub src: String,
    /// The installation's origin: the only origin messages are taken from and sent to.
    pub origin: String,
    /// The page's file name (for messages to the user).
    pub page: String,
    /// The plugin's display name.
    pub plugin_label: String,
    /// What the page shows, for the frame's title.
    pub subject: String,
    pub view: ResourceView,
    pub project: Option<String>,
    pub installation_name: String,
    pub installation_uid: String,
    pub cluster_id: String,
    pub crd: String,
    pub crd_kind: String,
    pub resource: Option<ResourceRef>,
    pub namespaces: Option<Vec<String>>,
    pub kube_api_proxy_url: String,
    /// Whether the kind has a create page to go to.
    pub can_create: bool,
    /// Whose page this is: its tokens and tickets are asked for this session's user only.
    pub drawn_for: super::api::DrawnFor,
}

impl FrameSpec {
    /// The kind's list page.
    pub fn list_href(&self) -> String {
        paths::list(self.project.as_deref(), &self.installation_name, &self.crd)
    }

    /// The kind's create page.
    pub fn create_href(&self) -> String {
        paths::create(self.project.as_deref(), &self.installation_name, &self.crd)
    }

    /// An object's detail page.
    pub fn detail_href(&self, name: &str, namespace: Option<&str>) -> String {
        paths::detail(self.project.as_deref(), &self.installation_name, &self.crd, name, namespace)
    }
}

/// Where the page is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStatus {
    Loading,
    Ready,
    /// No `plugin:ready` within [`READY_TIMEOUT_MS`] (a late one still turns it `Ready`).
    TimedOut,
    /// No frame ticket: the page was never loaded ([`FrameSignals::opened`] says why).
    NotOpened,
    /// The page sent more messages than a page needs and was unloaded
    /// (`super::message_budget`).
    Flooded,
    /// The session ended: the page was unloaded (`crate::session_end`).
    SignedOut,
}

/// The signals the host drives and the view shows.
#[derive(Debug, Clone, Copy)]
pub struct FrameSignals {
    pub status: RwSignal<FrameStatus>,
    pub auth: RwSignal<Option<AuthFailure>>,
    pub height: RwSignal<u32>,
    /// Bumped by "Try again": the host mints at once.
    pub retry: RwSignal<u32>,
    /// Why no frame ticket was given, when none was.
    pub opened: RwSignal<Option<AuthFailure>>,
    /// Bumped by "Try again" on a page that was not opened or did not load: the host opens
    /// it anew (a fresh ticket), without reloading the console.
    pub reopen: RwSignal<u32>,
}

/// A plugin page in its frame.
#[component]
pub fn PluginFrame(spec: FrameSpec) -> impl IntoView {
    let signals = FrameSignals {
        status: RwSignal::new(FrameStatus::Loading),
        auth: RwSignal::new(None),
        height: RwSignal::new(INITIAL_FRAME_HEIGHT),
        retry: RwSignal::new(0),
        opened: RwSignal::new(None),
        reopen: RwSignal::new(0),
    };
    let frame = NodeRef::<leptos::html::Iframe>::new();
    #[cfg(feature = "hydrate")]
    {
        let navigate = crate::chunks::use_navigate();
        let spec = spec.clone();
        Effect::new(move |_| {
            let Some(iframe) = frame.get() else { return };
            let handle = super::host::mount(iframe, spec.clone(), signals, navigate.clone());
            let handle = send_wrapper::SendWrapper::new(handle);
            on_cleanup(move || handle.take().stop());
        });
        // Through the CSSOM, not a `style` attribute: the console's CSP (`style-src 'self'`)
        // refuses inline style attributes in markup.
        Effect::new(move |_| {
            let height = signals.height.get();
            if let Some(iframe) = frame.get() {
                let _ = web_sys::HtmlElement::style(&iframe).set_property("height", &format!("{height}px"));
            }
        });
    }
    let FrameSignals { status, auth, .. } = signals;
    let state = move || match (status.get(), auth.get()) {
        (FrameStatus::NotOpened, _) => "not-opened",
        (FrameStatus::Flooded, _) => "flooded",
        (FrameStatus::SignedOut, _) => "signed-out",
        (_, Some(_)) => "auth-failed",
        (FrameStatus::Loading, None) => "loading",
        (FrameStatus::Ready, None) => "ready",
        (FrameStatus::TimedOut, None) => "error",
    };
    let title = format!("{}: {}", spec.plugin_label, spec.subject);
    view! {
        <div class="relative" data-plugin-frame="" data-state=state>
            <FrameNotices spec=spec.clone() signals />
            <iframe
                node_ref=frame
                title=title
                sandbox=SANDBOX
                // The initial height (INITIAL_FRAME_HEIGHT) as a class: the server renders no
                // inline style; the page's own height is set after hydration.
                class="block h-[480px] w-full rounded-xl border border-line bg-surface"
                class:invisible=move || status.get() != FrameStatus::Ready
            ></iframe>
            <noscript>
                <p class="card">"Plugin pages need JavaScript."</p>
            </noscript>
        </div>
    }
}

/// Why the page is not shown, above the place of its frame, and what the user can do about it
/// (`children`: links and buttons).
#[component]
fn FrameAlert(#[prop(into)] title: String, #[prop(into)] text: String, children: Children) -> impl IntoView {
    view! {
        <div role="alert" class="mb-3 rounded-lg border border-danger/40 bg-danger/10 p-4 text-sm">
            <p class="font-semibold text-danger">{title}</p>
            <p class="mt-1">{text}</p>
            <p class="mt-2 flex flex-wrap items-center gap-3">{children()}</p>
        </div>
    }
}

/// Loading, timeout and token notices above the frame.
#[component]
fn FrameNotices(spec: FrameSpec, signals: FrameSignals) -> impl IntoView {
    let FrameSignals { status, auth, retry, opened, reopen, .. } = signals;
    let open_again = Callback::new(move |()| reopen.update(|n| *n += 1));
    let not_opened_label = spec.plugin_label.clone();
    let label = spec.plugin_label.clone();
    let loading = format!("Loading the {} page…", spec.plugin_label);
    let closed_label = spec.plugin_label.clone();
    // Read when it is shown: the session has ended by then, and it says how.
    let closed = move || {
        let why = if crate::session_end::ended_for_other_user() {
            "Another user signed in"
        } else {
            "You were signed out"
        };
        format!("{why}: the {closed_label} page was closed.")
    };
    let timed_out = format!(
        "The {} page {} did not load: it sent no plugin:ready within {} seconds. \
         Check that the plugin is running and that the page includes the plugin SDK.",
        spec.plugin_label,
        spec.page,
        READY_TIMEOUT_MS / 1000
    );
    let flooded = format!(
        "The {} page {} sent more than {} messages at once or {} a second, or messages that took the console more than {} ms to read, \
         more than a page needs, so the console stopped it. Tell the plugin's authors.",
        spec.plugin_label,
        spec.page,
        super::message_budget::BURST,
        super::message_budget::PER_SECOND,
        super::message_budget::COST_BURST_MS
    );
    view! {
        <Show when=move || status.get() == FrameStatus::Loading>
            <div class="absolute inset-x-0 top-0">
                <crate::components::status::Loading label=loading.clone() />
            </div>
        </Show>
        {move || opened.get().map(|failure| view! {
            <FrameAlert title=format!("The {not_opened_label} page could not be opened") text=failure.explanation()>
                {if failure == AuthFailure::Unauthorized {
                    view! { <a class="link" href="/sign-in">"Sign in"</a> }.into_any()
                } else {
                    view! { <TryAgain retry=Some(open_again) /> }.into_any()
                }}
                {failure.is_transient().then(|| view! { <RetryIn seconds=RETRY_SECONDS retry=open_again /> })}
            </FrameAlert>
        })}
        // The console's notice is the alert; this only says why the place is empty.
        <Show when=move || status.get() == FrameStatus::SignedOut>
            <p class="mb-3 text-sm text-muted">{closed.clone()}</p>
        </Show>
        <Show when=move || status.get() == FrameStatus::Flooded>
            <FrameAlert title="The plugin page was stopped" text=flooded.clone()>
                <TryAgain retry=Some(open_again) />
            </FrameAlert>
        </Show>
        <Show when=move || status.get() == FrameStatus::TimedOut>
            <FrameAlert title="The plugin page did not load" text=timed_out.clone()>
                <TryAgain retry=Some(open_again) />
                <RetryIn seconds=REOPEN_SECONDS retry=open_again />
            </FrameAlert>
        </Show>
        {move || auth.get().map(|failure| {
            let label = label.clone();
            view! {
                <div role="alert" class="mb-3 flex flex-wrap items-center gap-3 rounded-lg border border-danger/40 bg-danger/10 p-4 text-sm">
                    <div class="min-w-0 flex-1">
                        <p class="font-semibold text-danger">{format!("{label} cannot reach the cluster")}</p>
                        <p class="mt-1">
                            {failure.explanation()}
                            " The console keeps trying and the page recovers by itself."
                        </p>
                    </div>
                    {if failure == AuthFailure::Unauthorized {
                        view! { <a class="button inline-flex" href="/sign-in">"Sign in"</a> }.into_any()
                    } else {
                        view! {
                            <button type="button" class="button inline-flex" on:click=move |_| retry.update(|n| *n += 1)>
                                "Try again"
                            </button>
                        }.into_any()
                    }}
                </div>
            }
        })}
    }
}
