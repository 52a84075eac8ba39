//! The sidebar navigation: the console's sections, then a group per running
//! plugin with its menu entries (organization-level entries outside projects,
//! project entries inside one).

use leptos::prelude::*;
use leptos_router::{components::A, hooks::use_location};

use crate::components::project_of_path;
use crate::plugins::{
    model::{MenuEntry, ORGANIZATION_API_UNREACHABLE, PluginEntry, Registry, paths},
    registry::PluginRegistry,
};

/// `<nav aria-label="Sidebar">` with the console's sections.
#[component]
pub fn Sidebar() -> impl IntoView {
    let location = use_location();
    let overview = Memo::new(move |_| {
        project_of_path(&location.pathname.get()).map_or_else(|| "/".to_owned(), |p| format!("/projects/{p}"))
    });
    let registry = expect_context::<PluginRegistry>();
    view! {
        // A column beside the page from md up; a row of tabs above it on phones.
        <nav aria-label="Sidebar" class="shrink-0 border-b border-line bg-surface p-2 md:w-60 md:border-r md:border-b-0 md:p-3">
            <ul class="flex gap-1 overflow-x-auto md:block md:space-y-1">
                <li>
                    <A href=move || overview.get() exact=true attr:class="nav-item">"Overview"</A>
                </li>
                <li><A href="/clusters" attr:class="nav-item">"Clusters"</A></li>
                <li><A href="/plugins" attr:class="nav-item">"Plugins"</A></li>
                <li><A href="/audit" attr:class="nav-item">"Audit"</A></li>
                <Transition fallback=|| ()>
                    {move || registry.initial.get().map(|answer| match answer {
                        Ok(initial) => view! { <PluginGroups initial /> }.into_any(),
                        Err(error) => view! {
                            // The status is inside the item: a list holds only items.
                            <li class="px-3 py-2 text-xs text-muted" title=error.to_string()>
                                <span role="status">
                                    {if error.is_passing() {
                                        "Plugins cannot be loaded right now; the console tries again by itself."
                                    } else {
                                        "Plugins could not be loaded."
                                    }}
                                </span>
                            </li>
                        }.into_any(),
                    })}
                </Transition>
            </ul>
        </nav>
    }
}

/// The groups of the running plugins, kept in step with the registry.
#[component]
fn PluginGroups(initial: Registry) -> impl IntoView {
    let registry = expect_context::<PluginRegistry>();
    let current = Memo::new(move |_| registry.latest(&initial));
    let groups = move || {
        let project = registry.project.get();
        current
            .get()
            .plugins
            .into_iter()
            .filter(PluginEntry::is_ready)
            .filter_map(|entry| {
                let items = if project.is_some() {
                    entry.menu_project.clone()
                } else {
                    entry.menu_organization.clone()
                };
                (!items.is_empty()).then(|| (entry, items, project.clone()))
            })
            .collect::<Vec<_>>()
    };
    let unreachable = move || current.get().organization_api_unreachable;
    view! {
        <For
            each=groups
            key=|group| group.clone()
            children=|(entry, items, project)| view! { <PluginGroup entry items project /> }
        />
        <Show when=unreachable>
            <li class="px-3 py-2 text-xs text-muted" data-notice="organization-api">
                <span role="status">{ORGANIZATION_API_UNREACHABLE}</span>
            </li>
        </Show>
    }
}

/// One plugin: its name, and its entries under it. Collapsible.
#[component]
fn PluginGroup(entry: PluginEntry, items: Vec<MenuEntry>, project: Option<String>) -> impl IntoView {
    let group_id = format!("plugin-{}", entry.installation_name);
    view! {
        <li class="md:pt-2" data-plugin=entry.installation_name.clone()>
            <details open class="nav-group">
                <summary id=group_id.clone() class="nav-group-title">
                    <span class="truncate">{entry.display_name.clone()}</span>
                    <span class="chevron" aria-hidden="true"></span>
                </summary>
                <ul aria-labelledby=group_id class="flex gap-1 md:mt-1 md:block md:space-y-1">
                    {items
                        .into_iter()
                        .map(|item| {
                            let href = paths::list(project.as_deref(), &entry.installation_name, &item.crd);
                            view! { <li><A href=href attr:class="nav-item md:pl-5">{item.label}</A></li> }
                        })
                        .collect_view()}
                </ul>
            </details>
        </li>
    }
}
