//! The browser entry of the console: hydrates the page the server rendered.
#![forbid(unsafe_code)]

use wasm_bindgen::prelude::wasm_bindgen;

/// Called by the hydration script Leptos renders into every page.
#[wasm_bindgen]
pub fn hydrate() {
    // No panic hook: the bundle is built with panics that abort at once (.cargo/config.toml),
    // so a hook would never run.
    // The chunks of the views the server rendered load first; then the page hydrates,
    // asynchronously, because a lazy route's chunk loads as hydration reaches it.
    wasm_bindgen_futures::spawn_local(async {
        app::chunks::preload_rendered().await;
        let Some(body) = leptos::prelude::document().body() else { return };
        let mounted = leptos::mount::hydrate_from_async(body, app::App).await;
        mounted.forget();
        app::mark_hydrated();
    });
}
