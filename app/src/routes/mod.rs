//! One module per route.

pub mod clusters;
pub mod not_found;
pub mod overview;
pub mod plugin_prefetch;
pub mod plugin_resource;
pub mod plugins;
pub mod project;
pub mod sign_in;

use leptos::prelude::*;

use crate::{
    api::session::{CurrentSession, Session},
    components::status::ErrorView,
    error::AppError,
};

/// Loads a lazy route's chunk without navigating to it.
#[cfg(feature = "hydrate")]
pub(crate) async fn preload_route(route: crate::chunks::RouteChunk) {
    use crate::chunks::RouteChunk;
    use leptos_router::LazyRoute;
    match route {
        RouteChunk::Clusters => clusters::ClustersRoute::preload().await,
        RouteChunk::Plugins => plugins::PluginsRoute::preload().await,
        RouteChunk::Audit => crate::audit::AuditRoute::preload().await,
        RouteChunk::Project => project::ProjectRoute::preload().await,
        RouteChunk::PluginList => plugin_resource::PluginListRoute::preload().await,
        RouteChunk::PluginCreate => plugin_resource::PluginCreateRoute::preload().await,
        RouteChunk::PluginDetail => plugin_resource::PluginDetailRoute::preload().await,
    }
}

/// Renders `page` with the signed-in session (the layout only renders pages
/// for signed-in users; the fallback is for a page used outside it).
pub fn with_session<V: IntoView + 'static>(page: impl FnOnce(Session) -> V) -> AnyView {
    match expect_context::<CurrentSession>().0 {
        Some(session) => page(session).into_any(),
        None => view! { <ErrorView error=AppError::Unauthenticated /> }.into_any(),
    }
}

/// The heading block every page starts with.
#[component]
pub fn PageHeader(
    #[prop(into)] title: String,
    #[prop(into, optional)] subtitle: Option<String>,
) -> impl IntoView {
    view! {
        <div class="mb-6">
            <h1 class="text-2xl font-semibold tracking-tight">{title}</h1>
            {subtitle.map(|s| view! { <p class="mt-1 text-muted">{s}</p> })}
        </div>
    }
}
