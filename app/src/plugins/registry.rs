//! The plugins of the cluster in view, shared by the sidebar and the plugin
//! pages. The first answer is rendered on the server; after hydration the
//! browser watches the cluster's PluginInstallations and asks again when they
//! change, so an installed or removed plugin shows up without a reload.
//! Unchanged answers change nothing on the page.

use leptos::prelude::*;
use leptos_router::hooks::use_location;

use super::api::discover_plugins;
use super::model::Registry;
use crate::{api::session::Session, components::project_of_path, error::AppError};

/// How often the browser asks again when it may not watch installations.
pub const POLL_INTERVAL_MS: u64 = 5_000;

/// Where code outside the signed-in layout finds its registry: the router calls a lazy
/// route's `data()` in an owner of its own, above the layout (provided by the app, filled
/// by [`PluginRegistry::provide`]).
#[derive(Debug, Clone, Copy)]
pub struct RegistrySlot(StoredValue<Option<PluginRegistry>>);

impl RegistrySlot {
    pub fn empty() -> Self {
        Self(StoredValue::new(None))
    }

    pub fn get(self) -> Option<PluginRegistry> {
        self.0.get_value()
    }
}

/// The registry context (provided by the signed-in layout).
#[derive(Debug, Clone, Copy)]
pub struct PluginRegistry {
    /// The project the page is in, if any.
    pub project: Memo<Option<String>>,
    /// The cluster the page shows: the project's, else the selected one.
    pub cluster_id: Memo<String>,
    /// The registry as the page was rendered (reloaded when the cluster changes).
    pub initial: Resource<Result<Registry, AppError>>,
    /// Newer answers of the poll.
    live: RwSignal<Option<Registry>>,
}

impl PluginRegistry {
    /// Creates the registry for the signed-in session and provides it.
    pub fn provide(session: &Session) -> Self {
        let location = use_location();
        let project = Memo::new(move |_| project_of_path(&location.pathname.get()).map(str::to_owned));
        let s = session.clone();
        let cluster_id = Memo::new(move |_| s.cluster_of(project.get().as_deref()));
        let initial = Resource::new(move || cluster_id.get(), |cluster| discover_plugins(cluster, None));
        // A hydrated resource is asked again explicitly when its source changes
        // (moving into a project on another cluster).
        Effect::watch(move || cluster_id.get(), move |_, _, _| initial.refetch(), false);
        let registry = Self { project, cluster_id, initial, live: RwSignal::new(None) };
        registry.keep_current();
        provide_context(registry);
        if let Some(slot) = use_context::<RegistrySlot>() {
            slot.0.set_value(Some(registry));
        }
        registry
    }

    /// The newest registry of the cluster `initial` belongs to.
    pub fn latest(&self, initial: &Registry) -> Registry {
        Self::newest(self.live.get(), initial)
    }

    /// [`Self::latest`], outside the reactive graph (a navigation's early start).
    pub fn latest_untracked(&self, initial: &Registry) -> Registry {
        Self::newest(self.live.get_untracked(), initial)
    }

    fn newest(live: Option<Registry>, initial: &Registry) -> Registry {
        match live {
            Some(live) if live.cluster_id == initial.cluster_id => live,
            _ => initial.clone(),
        }
    }

    /// Keeps `live` current: the tab's shared watch of the cluster's PluginInstallations
    /// (through the console's own cluster route) asks for the registry again after each
    /// burst of events, as new as the watch has seen; if the watch is refused, a poll takes over.
    fn keep_current(self) {
        #[cfg(feature = "hydrate")]
        {
            use std::{cell::Cell, rc::Rc, time::Duration};

            use crate::resource_views::watch::{Collection, Interest, Note, debounced, subscribe};

            Effect::new(move |_| {
                let cluster = self.cluster_id.get();
                let installations = Collection::installations(&cluster);
                let refresh = move || self.refresh();
                let rv = self.initial.with_untracked(|r| match r {
                    Some(Ok(registry)) if registry.cluster_id == cluster => {
                        Some(registry.resource_version.clone())
                    }
                    _ => None,
                });
                let soon = debounced(Duration::from_millis(100), refresh);
                let poll = Rc::new(Cell::new(None::<IntervalHandle>));
                let polling = poll.clone();
                let subscription =
                    subscribe(installations, Interest::default(), rv, move |note| match note {
                        Note::Changed | Note::Resync | Note::Restored => soon(),
                        Note::Lost => {}
                        Note::Refused => {
                            if let Some(old) = polling.replace(
                                set_interval_with_handle(refresh, Duration::from_millis(POLL_INTERVAL_MS))
                                    .ok(),
                            ) {
                                old.clear();
                            }
                        }
                    });
                let held = send_wrapper::SendWrapper::new((subscription, poll));
                on_cleanup(move || {
                    let (subscription, poll) = held.take();
                    drop(subscription);
                    if let Some(p) = poll.take() {
                        p.clear();
                    }
                });
            });

            // While the cluster or organization-api cannot be reached, nothing on the watch says
            // when they are back: ask again every few seconds until they answer.
            Effect::new(move |_| {
                let failing = match self.initial.get() {
                    Some(Err(error)) => error.is_passing().then_some(true),
                    Some(Ok(initial)) => self.latest(&initial).organization_api_unreachable.then_some(false),
                    None => None,
                };
                let Some(initial_failed) = failing else { return };
                let again = move || {
                    if crate::session_end::has_ended() {
                        return;
                    }
                    if initial_failed {
                        self.initial.refetch();
                    } else {
                        self.refresh();
                    }
                };
                let every = Duration::from_secs(u64::from(crate::components::status::RETRY_SECONDS));
                if let Ok(interval) = set_interval_with_handle(again, every) {
                    on_cleanup(move || interval.clear());
                }
            });
        }
    }

    /// Asks for the registry again, as new as the tab's watch of the installations has seen
    /// (the console keeps the list a few seconds), and shows it if anything changed.
    #[cfg(feature = "hydrate")]
    fn refresh(self) {
        use crate::resource_views::watch::{Collection, last_version};
        // The poll that stands in for a refused watch stops with the session too.
        if crate::session_end::has_ended() {
            return;
        }
        let cluster = self.cluster_id.get_untracked();
        let after = last_version(&Collection::installations(&cluster));
        leptos::task::spawn_local(async move {
            if let Ok(fresh) = discover_plugins(cluster.clone(), after).await
                && cluster == self.cluster_id.get_untracked()
                && self.live.get_untracked().as_ref() != Some(&fresh)
            {
                self.live.set(Some(fresh));
            }
        });
    }
}
