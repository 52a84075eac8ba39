//! The plugins of the cluster in view, shared by the sidebar and the plugin
//! pages. The first answer is rendered on the server; after hydration the
//! browser asks again every few seconds, so an installed or removed plugin
//! shows up without a reload. Unchanged answers change nothing on the page.

use leptos::prelude::*;
use leptos_router::hooks::use_location;

use super::api::discover_plugins;
use super::model::Registry;
use crate::{api::session::Session, components::project_of_path, error::AppError};

/// How often the browser refreshes the registry (while the page is visible).
pub const POLL_INTERVAL_MS: u64 = 3_000;

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
        let registry = Self { project, cluster_id, initial, live: RwSignal::new(None) };
        registry.poll();
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

    fn poll(self) {
        #[cfg(feature = "hydrate")]
        {
            use std::{cell::Cell, rc::Rc, time::Duration};

            let busy = Rc::new(Cell::new(false));
            let tick = move || {
                if busy.get() || document().hidden() {
                    return;
                }
                busy.set(true);
                let busy = busy.clone();
                let cluster = self.cluster_id.get_untracked();
                leptos::task::spawn_local(async move {
                    if let Ok(fresh) = discover_plugins(cluster.clone()).await
                        && cluster == self.cluster_id.get_untracked()
                        && self.live.get_untracked().as_ref() != Some(&fresh)
                    {
                        self.live.set(Some(fresh));
                    }
                    busy.set(false);
                });
            };
            if let Ok(handle) = set_interval_with_handle(tick, Duration::from_millis(POLL_INTERVAL_MS)) {
                on_cleanup(move || handle.clear());
            }
        }
    }
}
