//! Loading and error states, the same everywhere.

use leptos::prelude::*;

use crate::error::AppError;

/// Shown while a page's data loads.
#[component]
pub fn Loading(#[prop(into)] label: String) -> impl IntoView {
    view! {
        <div role="status" aria-live="polite" class="flex items-center gap-3 p-6 text-muted">
            <span class="size-4 animate-spin rounded-full border-2 border-line border-t-accent" aria-hidden="true"></span>
            <span>{label}</span>
        </div>
    }
}

/// Shown when a page's data could not be loaded.
#[component]
pub fn ErrorView(error: AppError) -> impl IntoView {
    let signed_out = error == AppError::Unauthenticated;
    view! {
        <div role="alert" class="m-6 rounded-lg border border-danger/40 bg-danger/10 p-4">
            <h2 class="font-semibold text-danger">"This page could not be loaded"</h2>
            <p class="mt-1 text-sm">{error.to_string()}</p>
            <p class="mt-3 text-sm">
                {if signed_out {
                    view! { <a class="link" href="/sign-in">"Sign in"</a> }.into_any()
                } else {
                    view! { <a class="link" href="">"Reload the page"</a> }.into_any()
                }}
            </p>
        </div>
    }
}

/// A resource's answer, shown by `show` once it is there: `Loading` with
/// `label` until then, the error view when it failed. In a `Transition`, so
/// an answer stays on screen while the next one loads.
pub fn when_loaded<T: 'static>(
    label: &'static str,
    answer: impl Fn() -> Option<Result<T, AppError>> + Send + Sync + 'static,
    show: impl Fn(T) -> AnyView + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Transition fallback=move || view! { <Loading label /> }>
            {move || answer().map(|answer| match answer {
                Ok(value) => show(value),
                Err(error) => view! { <ErrorView error /> }.into_any(),
            })}
        </Transition>
    }
}
