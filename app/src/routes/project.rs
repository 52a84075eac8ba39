//! `/projects/:project`: one project.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{LazyRoute, hooks::use_params_map, lazy_route};

use crate::{
    api::session::Session,
    routes::{PageHeader, not_found::NotFoundContent, with_session},
};

/// `/projects/:project`, loaded with its own chunk.
pub struct ProjectRoute;

#[lazy_route]
impl LazyRoute for ProjectRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <ProjectPage /> }.into_any()
    }
}

/// Project overview.
#[component]
pub fn ProjectPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("project").unwrap_or_default();
    move || {
        let id = id();
        with_session(move |s| view! { <Project session=s id /> })
    }
}

#[component]
fn Project(session: Session, id: String) -> impl IntoView {
    let Some(project) = session.projects.into_iter().find(|p| p.id == id) else {
        return view! { <NotFoundContent what=format!("Project {id}") /> }.into_any();
    };
    view! {
        <Title text=project.display_name.clone() />
        <PageHeader title=project.display_name.clone() subtitle=format!("Project of {}", session.organization) />
        <section class="card max-w-xl" aria-labelledby="project-cluster">
            <h2 id="project-cluster" class="card-title">"Cluster"</h2>
            <p class="text-lg font-medium">{project.cluster_name}</p>
            <p class="mt-1 text-sm text-muted">"The project's workloads and plugin resources live on this cluster."</p>
        </section>
    }
    .into_any()
}
