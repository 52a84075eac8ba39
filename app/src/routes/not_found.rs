//! Anything that matches no route.

use leptos::prelude::*;
use leptos_meta::Title;

/// The 404 page (status 404 on the server).
#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <main id="main" class="grid min-h-screen place-items-center p-6">
            <NotFoundContent what="This page".to_owned() />
        </main>
    }
}

/// The 404 message, also used inside the shell for unknown objects.
#[component]
pub fn NotFoundContent(what: String) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found" />
        <div class="card max-w-md text-center">
            <p class="text-sm font-semibold text-accent">"404"</p>
            <h1 class="mt-1 text-2xl font-semibold">"Not found"</h1>
            <p class="mt-2 text-muted">{format!("{what} does not exist, or you cannot see it.")}</p>
            <a href="/" class="button mt-4 inline-flex">"Go to the overview"</a>
        </div>
    }
}
