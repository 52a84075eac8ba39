//! The browser entry of the console: hydrates the page the server rendered.
#![forbid(unsafe_code)]

use wasm_bindgen::prelude::wasm_bindgen;

/// Called by the hydration script cargo-leptos generates.
#[wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
