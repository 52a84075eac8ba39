//! Organization and project switcher. A `<details>` menu, so it opens without
//! JavaScript too.

use leptos::prelude::*;
use leptos_router::{components::A, hooks::use_location};

use crate::{
    api::session::ProjectSummary,
    components::{close_menu, project_of_path},
};

/// Shows where the user is and lets them move to the organization or a project.
#[component]
pub fn ContextSwitcher(organization: String, projects: Vec<ProjectSummary>) -> impl IntoView {
    let location = use_location();
    let menu = NodeRef::<leptos::html::Details>::new();
    let names: Vec<(String, String)> =
        projects.iter().map(|p| (p.id.clone(), p.display_name.clone())).collect();
    let current = Memo::new(move |_| {
        let path = location.pathname.get();
        project_of_path(&path).and_then(|id| names.iter().find(|(pid, _)| pid == id).map(|(_, n)| n.clone()))
    });
    let org = organization.clone();

    view! {
        <details node_ref=menu class="menu relative">
            <summary class="menu-button">
                <span class="sr-only">"Organization and project: "</span>
                <span class="font-medium">{org}</span>
                {move || current.get().map(|name| view! {
                    <span class="text-muted" aria-hidden="true">"/"</span>
                    <span class="font-medium">{name}</span>
                })}
                <span class="chevron" aria-hidden="true"></span>
            </summary>
            <div class="menu-panel left-0 w-64" on:click=move |_| close_menu(menu)>
                <p class="menu-heading">"Organization"</p>
                <A href="/" exact=true attr:class="menu-item">{organization}</A>
                <p class="menu-heading">"Projects"</p>
                <ul>
                    {projects
                        .into_iter()
                        .map(|p| view! {
                            <li>
                                <A href=format!("/projects/{}", p.id) attr:class="menu-item">
                                    <span>{p.display_name}</span>
                                    <span class="text-xs text-muted">{p.cluster_name}</span>
                                </A>
                            </li>
                        })
                        .collect_view()}
                </ul>
            </div>
        </details>
    }
}
