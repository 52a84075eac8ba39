//! `/clusters`: the clusters the user can view.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{LazyRoute, lazy_route};

use crate::{
    api::directory::{ClusterRow, Reachability, list_clusters},
    components::status::{ErrorView, Loading},
    routes::PageHeader,
};

/// `/clusters`, loaded with its own chunk.
pub struct ClustersRoute;

#[lazy_route]
impl LazyRoute for ClustersRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <ClustersPage /> }.into_any()
    }
}

/// Cluster list.
#[component]
pub fn ClustersPage() -> impl IntoView {
    let clusters = Resource::new_blocking(|| (), |_| list_clusters());
    view! {
        <Title text="Clusters" />
        <PageHeader title="Clusters" subtitle="Clusters of this organization that you can view." />
        // The error is matched inside the Suspend, not caught by an ErrorBoundary:
        // leptos 0.8.23 can leave a server render hanging when an ErrorBoundary sits
        // inside a Suspense under concurrent requests (server/tests/integration/console_http.rs
        // `concurrent_renders_all_complete` caught it).
        <Suspense fallback=|| view! { <Loading label="Loading clusters…" /> }>
            {move || Suspend::new(async move {
                match clusters.await {
                    Ok(rows) => view! { <ClusterTable rows /> }.into_any(),
                    Err(error) => view! { <ErrorView error retry=Callback::new(move |()| clusters.refetch()) /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ClusterTable(rows: Vec<ClusterRow>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="card text-muted">"You cannot view any cluster of this organization yet."</p> }.into_any();
    }
    view! {
        // Focusable, so a keyboard can scroll what does not fit (axe: scrollable-region-focusable).
        <div class="card overflow-x-auto p-0" tabindex="0" role="region" aria-label="Clusters you can view">
            <table class="table">
                <caption class="sr-only">"Clusters you can view"</caption>
                <thead>
                    <tr><th scope="col">"Name"</th><th scope="col">"ID"</th><th scope="col">"Projects"</th><th scope="col">"Reachability"</th><th scope="col">"Status"</th></tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|c| view! {
                            <tr>
                                <td class="font-medium whitespace-nowrap">{c.name}</td>
                                <td class="font-mono text-sm text-muted">{c.id}</td>
                                <td>{c.projects.join(", ")}</td>
                                <td><ReachabilityCell reachability=c.reachability /></td>
                                <td>
                                    {c.selected.then(|| view! { <span class="badge">"Selected"</span> })}
                                    {c.shoot.map(|shoot| view! {
                                        <span class="ml-2 text-sm">
                                            {format!("Shoot {}/{}: {}", shoot.namespace, shoot.name, shoot.describe())}
                                        </span>
                                    })}
                                </td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// Reachable with its version, or unreachable with the reason: never an endless spinner.
#[component]
fn ReachabilityCell(reachability: Reachability) -> impl IntoView {
    match reachability {
        Reachability::Reachable { version } => view! {
            <span class="badge">"Reachable"</span>
            <span class="ml-2 font-mono text-sm text-muted">{version}</span>
        }
        .into_any(),
        Reachability::Unreachable { reason } => view! {
            <span class="badge text-danger">"Unreachable"</span>
            <span class="ml-2 text-sm text-muted">{reason}</span>
        }
        .into_any(),
    }
}
