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
        let initial = Resource::new(move || cluster_id.get(), discover_plugins);
        // A hydrated resource is asked again explicitly when its source changes
        // (moving into a project on another cluster).
        Effect::watch(move || cluster_id.get(), move |_, _, _| initial.refetch(), false);
        let registry = Self { project, cluster_id, initial, live: RwSignal::new(None) };
        registry.keep_current();
        provide_context(registry);
        registry
    }

    /// The newest registry of the cluster `initial` belongs to.
    pub fn latest(&self, initial: &Registry) -> Registry {
        match self.live.get() {
            Some(live) if live.cluster_id == initial.cluster_id => live,
            _ => initial.clone(),
        }
    }

    /// Keeps `live` current: a watch on the cluster's PluginInstallations
    /// (through the console's own cluster route) asks for the registry again
    /// after each burst of events; if the watch is refused, a poll takes over.
    fn keep_current(self) {
        #[cfg(feature = "hydrate")]
        {
            use std::{cell::Cell, rc::Rc, time::Duration};

            use crate::resource_views::watch::{WatchEnd, watch};

            let refresh = move || {
                let cluster = self.cluster_id.get_untracked();
                leptos::task::spawn_local(async move {
                    if let Ok(fresh) = discover_plugins(cluster.clone()).await
                        && cluster == self.cluster_id.get_untracked()
                        && self.live.get_untracked().as_ref() != Some(&fresh)
                    {
                        self.live.set(Some(fresh));
                    }
                });
            };
            let restarts = RwSignal::new(0u32);
            Effect::new(move |_| {
                restarts.track();
                let cluster = self.cluster_id.get();
                let url = format!(
                    "{}/clusters/{cluster}/apis/plugins.fundament.io/v1/plugininstallations?watch=1&allowWatchBookmarks=true",
                    crate::api::CLUSTER_ROUTE
                );
                let pending = Rc::new(Cell::new(false));
                let changed = move || {
                    if !pending.replace(true) {
                        let pending = pending.clone();
                        set_timeout(
                            move || {
                                pending.set(false);
                                refresh();
                            },
                            Duration::from_millis(100),
                        );
                    }
                };
                let poll = StoredValue::new_local(None::<IntervalHandle>);
                let ended = move |end: WatchEnd| match end {
                    WatchEnd::Closed | WatchEnd::Gone => {
                        set_timeout(move || restarts.update(|n| *n += 1), Duration::from_secs(1));
                    }
                    WatchEnd::Refused => {
                        let handle =
                            set_interval_with_handle(refresh, Duration::from_millis(POLL_INTERVAL_MS)).ok();
                        poll.set_value(handle);
                    }
                };
                let handle = send_wrapper::SendWrapper::new(watch(&url, changed, ended));
                on_cleanup(move || {
                    drop(handle.take());
                    if let Some(Some(p)) = poll.try_update_value(Option::take) {
                        p.clear();
                    }
                });
            });
        }
    }
}
