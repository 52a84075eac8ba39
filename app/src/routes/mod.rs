//! One module per route.

pub mod clusters;
pub mod not_found;
pub mod overview;
pub mod plugins;
pub mod project;
pub mod sign_in;

use leptos::prelude::*;

use crate::{
    api::session::{Session, SessionResource},
    components::status::{ErrorView, Loading},
};

/// Renders `page` with the signed-in session (already loaded by the layout).
pub fn with_session<V: IntoView + 'static>(
    page: impl Fn(Session) -> V + Send + Sync + Clone + 'static,
) -> impl IntoView {
    let SessionResource(session) = expect_context();
    view! {
        <Suspense fallback=|| view! { <Loading label="Loading…" /> }>
            {move || {
                let page = page.clone();
                Suspend::new(async move {
                match session.await {
                    Ok(Some(s)) => page(s).into_any(),
                    Ok(None) => view! { <ErrorView error=crate::error::AppError::Unauthenticated /> }.into_any(),
                    Err(error) => view! { <ErrorView error /> }.into_any(),
                }
            })}}
        </Suspense>
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
