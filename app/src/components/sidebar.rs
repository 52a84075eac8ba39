//! The sidebar navigation. Plugin groups join it with the plugin integration.

use leptos::prelude::*;
use leptos_router::{components::A, hooks::use_location};

use crate::components::project_of_path;

/// `<nav aria-label="Sidebar">` with the console's sections.
#[component]
pub fn Sidebar() -> impl IntoView {
    let location = use_location();
    let overview = Memo::new(move |_| {
        project_of_path(&location.pathname.get()).map_or_else(|| "/".to_owned(), |p| format!("/projects/{p}"))
    });
    view! {
        <nav aria-label="Sidebar" class="w-56 shrink-0 border-r border-line bg-surface p-3">
            <ul class="space-y-1">
                <li>
                    <A href=move || overview.get() exact=true attr:class="nav-item">"Overview"</A>
                </li>
                <li><A href="/clusters" attr:class="nav-item">"Clusters"</A></li>
                <li><A href="/plugins" attr:class="nav-item">"Plugins"</A></li>
            </ul>
        </nav>
    }
}
