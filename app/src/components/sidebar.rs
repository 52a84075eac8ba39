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
        // A column beside the page from md up; a row of tabs above it on phones.
        <nav aria-label="Sidebar" class="shrink-0 border-b border-line bg-surface p-2 md:w-56 md:border-r md:border-b-0 md:p-3">
            <ul class="flex gap-1 overflow-x-auto md:block md:space-y-1">
                <li>
                    <A href=move || overview.get() exact=true attr:class="nav-item">"Overview"</A>
                </li>
                <li><A href="/clusters" attr:class="nav-item">"Clusters"</A></li>
                <li><A href="/plugins" attr:class="nav-item">"Plugins"</A></li>
            </ul>
        </nav>
    }
}
