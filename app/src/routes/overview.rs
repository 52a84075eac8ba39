//! `/`: the organization at a glance.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    api::session::Session,
    routes::{PageHeader, with_session},
};

/// Organization overview.
#[component]
pub fn OverviewPage() -> impl IntoView {
    view! {
        <Title text="Overview" />
        {with_session(|s| view! { <Overview session=s /> })}
    }
}

#[component]
fn Overview(session: Session) -> impl IntoView {
    let Session { viewer, organization, projects, selected_cluster, .. } = session;
    view! {
        <PageHeader title=organization subtitle=format!("Welcome, {}. This is your organization at a glance.", viewer.name) />
        <div class="grid gap-4 md:grid-cols-2">
            <section class="card" aria-labelledby="projects-heading">
                <h2 id="projects-heading" class="card-title">"Projects"</h2>
                <ul class="divide-y divide-line">
                    {projects
                        .into_iter()
                        .map(|p| view! {
                            <li class="flex items-center justify-between py-2">
                                <a href=format!("/projects/{}", p.id) class="link">{p.display_name}</a>
                                <span class="text-sm text-muted">{format!("on {}", p.cluster_name)}</span>
                            </li>
                        })
                        .collect_view()}
                </ul>
            </section>
            <section class="card" aria-labelledby="cluster-heading">
                <h2 id="cluster-heading" class="card-title">"Selected cluster"</h2>
                <p class="text-lg font-medium">{selected_cluster}</p>
                <p class="mt-1 text-sm text-muted">"Organization-level pages show this cluster."</p>
                <a href="/clusters" class="link mt-3 inline-block text-sm">"All clusters you can view"</a>
            </section>
        </div>
    }
}
