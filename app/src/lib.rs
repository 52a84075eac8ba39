//! The Fundament console UI, rendered on the server and hydrated in the browser.
//!
//! `shell` is the HTML document, `App` the router. Pages live in `routes/`, one
//! file per route; shared pieces in `components/`; server functions in `api/`.
#![forbid(unsafe_code)]
#![recursion_limit = "256"]

pub mod api;
#[cfg(feature = "ssr")]
pub mod assets;
pub mod audit;
pub mod chunks;
#[cfg(feature = "ssr")]
pub mod cluster_route;
pub mod components;
pub mod error;
pub mod kept_draft;
#[cfg(feature = "hydrate")]
pub(crate) mod leave_guard;
pub mod markup;
#[cfg(feature = "ssr")]
pub mod oidc_route;
pub mod plugins;
#[cfg(feature = "ssr")]
pub mod request_owner;
pub mod resource_views;
pub mod routes;
#[cfg(feature = "hydrate")]
pub(crate) mod scroll_memory;
pub mod session_end;
#[cfg(feature = "ssr")]
pub mod state;
#[cfg(all(test, feature = "ssr"))]
mod test_sessions;
pub mod theme;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::{
    Lazy, SsrMode,
    components::{ParentRoute, Route, Router, Routes},
    path,
};

use crate::{
    api::session::CurrentSession,
    audit::AuditRoute,
    components::layout::ConsoleLayout,
    routes::{
        clusters::ClustersRoute,
        not_found::NotFound,
        overview::OverviewPage,
        plugin_resource::{PluginCreateRoute, PluginDetailRoute, PluginListRoute},
        plugins::PluginsRoute,
        project::ProjectRoute,
        sign_in::SignInPage,
    },
};

/// The HTML document. Runs on the server only; the browser hydrates `<body>`.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let theme = theme::request_theme();
    #[cfg(feature = "ssr")]
    state::set_security_headers();
    // In the head, which the browser does not hydrate: the server alone knows the
    // stylesheet's hashed name.
    #[cfg(feature = "ssr")]
    let stylesheet = assets::stylesheet_href(&options.site_root, &options.site_pkg_dir, &options.output_name);
    #[cfg(not(feature = "ssr"))]
    let stylesheet = "";
    view! {
        <!DOCTYPE html>
        <html lang="en" data-theme=theme.as_str()>
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light dark" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                <link rel="stylesheet" id="leptos" href=stylesheet />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body class="min-h-screen bg-canvas text-ink antialiased">
                <App />
            </body>
        </html>
    }
}

/// The console: routes and the context every page shares.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_context(CurrentSession::load());
    provide_context(plugins::registry::RegistrySlot::empty());
    #[cfg(feature = "hydrate")]
    chunks::prefetch_on_intent();
    // Before the router mounts, and in this order: their listeners are to hear first.
    #[cfg(feature = "hydrate")]
    leave_guard::install();
    #[cfg(feature = "hydrate")]
    scroll_memory::remember_scroll_across_history();

    view! {
        <Title formatter=|title: String| {
            let title = markup::page_title(&title);
            components::route_announcer::title_shown(&title);
            title
        } />
        <Router>
            <Routes fallback=NotFound>
                <Route path=path!("/sign-in") view=SignInPage ssr=SsrMode::Async />
                <ParentRoute path=path!("") view=ConsoleLayout ssr=SsrMode::Async>
                    <Route path=path!("") view=OverviewPage ssr=SsrMode::Async />
                    // Lazy: each with its own wasm chunk (`chunks::RouteChunk` mirrors these paths).
                    <Route path=path!("clusters") view={Lazy::<ClustersRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("plugins") view={Lazy::<PluginsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("audit") view={Lazy::<AuditRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("projects/:project") view={Lazy::<ProjectRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("plugin-resources/:plugin/:kind") view={Lazy::<PluginListRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("plugin-resources/:plugin/:kind/create") view={Lazy::<PluginCreateRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("plugin-resources/:plugin/:kind/:id") view={Lazy::<PluginDetailRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("projects/:project/plugin-resources/:plugin/:kind") view={Lazy::<PluginListRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("projects/:project/plugin-resources/:plugin/:kind/create") view={Lazy::<PluginCreateRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("projects/:project/plugin-resources/:plugin/:kind/:id") view={Lazy::<PluginDetailRoute>::new()} ssr=SsrMode::Async />
                </ParentRoute>
            </Routes>
        </Router>
    }
}

/// Marks `<body data-hydrated>` once the app is interactive, so tests and
/// scripts can wait for it instead of guessing. Called by the browser entry once
/// hydration, lazy routes and their chunks included, has finished.
#[cfg(feature = "hydrate")]
pub fn mark_hydrated() {
    if let Some(body) = document().body() {
        let _ = body.set_attribute("data-hydrated", "true");
    }
}
