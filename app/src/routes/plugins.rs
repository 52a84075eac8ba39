//! `/plugins`: the plugin installations of the selected cluster, with their
//! state: ready, unavailable (and why), or not running yet.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{LazyRoute, lazy_route};

use crate::{
    components::status::when_loaded,
    plugins::{
        model::{PluginEntry, PluginState, Registry, paths},
        registry::PluginRegistry,
    },
    routes::{PageHeader, with_session},
};

/// `/plugins`, loaded with its own chunk.
pub struct PluginsRoute;

#[lazy_route]
impl LazyRoute for PluginsRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <PluginsPage /> }.into_any()
    }
}

/// Plugin overview.
#[component]
pub fn PluginsPage() -> impl IntoView {
    let registry = expect_context::<PluginRegistry>();
    view! {
        <Title text="Plugins" />
        {with_session(|s| view! {
            <PageHeader title="Plugins" subtitle=format!("Plugin installations on {}.", s.selected_cluster) />
        })}
        {when_loaded(
            "Loading plugins…",
            registry.initial,
            |initial| view! { <PluginTable initial /> }.into_any(),
        )}
    }
}

#[component]
fn PluginTable(initial: Registry) -> impl IntoView {
    let registry = expect_context::<PluginRegistry>();
    let current = Memo::new(move |_| registry.latest(&initial));
    view! {
        <div class="card overflow-x-auto p-0">
            <table class="table">
                <thead>
                    <tr>
                        <th scope="col">"Plugin"</th>
                        <th scope="col">"Installation"</th>
                        <th scope="col">"Version"</th>
                        <th scope="col">"State"</th>
                        <th scope="col">"Audit"</th>
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        let plugins = current.get().plugins;
                        if plugins.is_empty() {
                            return view! { <tr><td colspan="5" class="text-muted">"No plugins are installed on this cluster."</td></tr> }.into_any();
                        }
                        plugins.into_iter().map(|p| view! { <PluginRow plugin=p /> }).collect_view().into_any()
                    }}
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn PluginRow(plugin: PluginEntry) -> impl IntoView {
    let first_page =
        plugin.menu_organization.first().map(|m| paths::list(None, &plugin.installation_name, &m.crd));
    let (badge, detail) = match &plugin.state {
        PluginState::Ready => ("Ready", None),
        PluginState::Unavailable(reason) => ("Unavailable", Some(reason.clone())),
        PluginState::NotRunning { phase, message } => ("Not running", Some(format!("{phase}: {message}"))),
    };
    let name = match (first_page, plugin.is_ready()) {
        (Some(href), true) => {
            view! { <a href=href class="link font-medium">{plugin.display_name.clone()}</a> }.into_any()
        }
        _ => view! { <span class="font-medium">{plugin.display_name.clone()}</span> }.into_any(),
    };
    view! {
        <tr data-installation=plugin.installation_name.clone()>
            <td>
                {name}
                <p class="mt-0.5 max-w-prose text-xs text-muted">{plugin.description.clone()}</p>
            </td>
            <td class="font-mono text-xs">{plugin.installation_name.clone()}</td>
            <td>{plugin.version.clone()}</td>
            <td>
                <span class="badge">{badge}</span>
                {detail.map(|d| view! { <p class="mt-1 max-w-md text-xs text-muted">{d}</p> })}
            </td>
            <td>
                <a href=format!("/audit?installation={}", plugin.installation_name) class="link text-sm">
                    "Calls"
                </a>
            </td>
        </tr>
    }
}
