//! Loading and error states, the same everywhere.

use leptos::prelude::*;

use crate::error::AppError;
use crate::routes::not_found::{BackLink, NotFoundContent, set_page_status};

/// Shown while a page's data loads. The ring turns only where motion is welcome
/// (`prefers-reduced-motion: no-preference`); the label says the same without it.
#[component]
pub fn Loading(#[prop(into)] label: String) -> impl IntoView {
    view! {
        <div role="status" aria-live="polite" data-loading="" class="flex items-center gap-3 p-6 text-muted">
            <span class="size-4 motion-safe:animate-spin rounded-full border-2 border-line border-t-accent" aria-hidden="true"></span>
            <span>{label}</span>
        </div>
    }
}

/// How long a page waits before asking again after a passing failure, when the service
/// named no time of its own (`Retry-After`).
pub const RETRY_SECONDS: u32 = 5;

/// Shown when a page's data could not be loaded. With `retry`, "Try again" asks again
/// without reloading the page, and a passing failure (a service down, restarting, busy or
/// slow) is asked again by itself after [`RETRY_SECONDS`], or the time the service asked
/// for. Without JavaScript "Try again" is a link to the same page.
/// What asking again cannot change has no "Try again", and its status on the server:
/// something that does not exist is the not-found page (404); a request the console cannot
/// serve as asked (a label selector that does not parse, a namespace outside the project) says
/// why (400), and so does a refusal (403: "You may not read …", until someone grants it).
/// A failure on the server or a passing one keeps the page's 200: some ingresses put their own
/// page in place of a 5xx answer's, and with it the retry.
#[component]
pub fn ErrorView(error: AppError, #[prop(optional)] retry: Option<Callback<()>>) -> AnyView {
    let settled = match &error {
        AppError::NotFound(what) => return view! { <NotFoundContent what=what.clone() /> }.into_any(),
        AppError::Invalid(_) => Some(400),
        AppError::Forbidden(_) => Some(403),
        _ => None,
    };
    if let Some(status) = settled {
        set_page_status(status);
    }
    let signed_out = error == AppError::Unauthenticated;
    let passing = error.is_passing();
    let wait = error.retry_after().unwrap_or(RETRY_SECONDS);
    let heading = match &error {
        _ if passing => "Not available right now",
        AppError::Forbidden(_) => "Not allowed",
        _ => "This page could not be loaded",
    };
    view! {
        <div role="alert" class="m-6 rounded-lg border border-danger/40 bg-danger/10 p-4" data-passing=passing.to_string()>
            <h2 class="font-semibold text-danger">{heading}</h2>
            <p class="mt-1 text-sm">{error.to_string()}</p>
            <p class="mt-3 flex flex-wrap items-center gap-3 text-sm">
                {if signed_out {
                    Some(view! { <a class="link" href="/sign-in">"Sign in"</a> }.into_any())
                } else if settled.is_none() {
                    Some(view! { <TryAgain retry /> }.into_any())
                } else {
                    None
                }}
                {retry.filter(|_| passing).map(|retry| view! { <RetryIn seconds=wait retry /> })}
            </p>
        </div>
    }
    .into_any()
}

/// "Try again": runs `retry` in place; without JavaScript (or without `retry`) it is a link
/// to the same page, which loads it again.
#[component]
pub fn TryAgain(#[prop(optional_no_strip)] retry: Option<Callback<()>>) -> impl IntoView {
    view! {
        <a class="link" href="" on:click=move |ev| {
            if let Some(retry) = retry {
                ev.prevent_default();
                retry.run(());
            }
        }>"Try again"</a>
    }
}

/// "Trying again in N s…": counts down once the page is hydrated (the server renders
/// nothing, so the first hydrated render equals it), then runs `retry`. `seconds` is
/// clamped to 1–300. Stops when the view goes away.
#[component]
pub fn RetryIn(seconds: u32, retry: Callback<()>) -> impl IntoView {
    let left = RwSignal::new(None::<u32>);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| count_down(left, seconds.clamp(1, 300), retry));
    #[cfg(not(feature = "hydrate"))]
    let _ = (seconds, retry);
    move || {
        left.get().map(|s| {
            // Not a live region, and out of the alert's: the alert is announced once, not again
            // at every tick of the count (`aria-live="off"` stops the alert's announcement here).
            view! { <span class="text-muted" aria-live="off" data-retry-in=s>{format!("Trying again in {s} s…")}</span> }
        })
    }
}

/// Counts `left` down from `seconds` once a second, then runs `retry` once.
#[cfg(feature = "hydrate")]
fn count_down(left: RwSignal<Option<u32>>, seconds: u32, retry: Callback<()>) {
    use std::time::Duration;
    left.set(Some(seconds));
    let tick = set_interval_with_handle(
        move || match left.try_get_untracked().flatten() {
            Some(0 | 1) => {
                left.set(None);
                retry.run(());
            }
            Some(n) => left.set(Some(n - 1)),
            None => {}
        },
        Duration::from_secs(1),
    );
    if let Ok(tick) = tick {
        on_cleanup(move || tick.clear());
    }
}

/// A resource's answer, shown by `show` once it is there: `Loading` with
/// `label` until then, the error view (asking again on "Try again", and by
/// itself for a passing failure) when it failed. In a `Transition`, so an
/// answer stays on screen while the next one loads.
pub fn when_loaded<T>(
    label: &'static str,
    resource: Resource<Result<T, AppError>>,
    show: impl Fn(T) -> AnyView + Send + Sync + 'static,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    when_found(label, resource, None, show)
}

/// What a page that shows one thing says when the thing does not exist: its name as the user
/// knows it (kind, namespace and name) rather than the server's words, and where to find the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub what: String,
    pub back: BackLink,
}

/// [`when_loaded`] for a page about one thing: when the answer is that it does not exist,
/// the not-found page names it as `missing` says and links back (without `missing`, in the
/// server's words).
pub fn when_found<T>(
    label: &'static str,
    resource: Resource<Result<T, AppError>>,
    missing: Option<Missing>,
    show: impl Fn(T) -> AnyView + Send + Sync + 'static,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    let retry = Callback::new(move |()| resource.refetch());
    let pending = RwSignal::new(false);
    super::updating::follow(pending);
    view! {
        <Transition fallback=move || view! { <Loading label /> } set_pending=pending.write_only()>
            {move || resource.get().map(|answer| match (answer, missing.clone()) {
                (Ok(value), _) => show(value),
                (Err(AppError::NotFound(_)), Some(Missing { what, back })) => {
                    view! { <NotFoundContent what back /> }.into_any()
                }
                (Err(error), _) => view! { <ErrorView error retry /> }.into_any(),
            })}
        </Transition>
    }
}

/// Shown above a live view while its watch is lost (the cluster, the gateway or the console
/// does not answer, or this browser's connection went silent): what is on screen may be out
/// of date, and the console reconnects by itself.
#[component]
pub fn LivePaused(paused: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || paused.get()>
            <p role="status" data-live="paused" class="mb-3 rounded-lg border border-line bg-raised p-3 text-sm">
                "Live updates are paused: the cluster cannot be reached right now (or this browser's network is down). What is shown may be out of date; the console reconnects by itself."
            </p>
        </Show>
    }
}

#[cfg(all(test, feature = "ssr"))]
pub(crate) mod tests {
    use super::*;

    /// Renders `view` on the server as a request's render does, and returns its HTML and the
    /// status the render set.
    pub(crate) fn render_status(view: impl FnOnce() -> AnyView) -> (String, Option<http::StatusCode>) {
        let owner = Owner::new();
        owner.with(|| {
            let response = leptos_axum::ResponseOptions::default();
            provide_context(response.clone());
            leptos_meta::provide_meta_context();
            let html = view().to_html();
            let status = response.0.read().ok().and_then(|parts| parts.status);
            (html, status)
        })
    }

    #[test]
    fn a_missing_thing_is_a_404_without_try_again() {
        let error = AppError::NotFound("Certificate web".into());
        let (html, status) = render_status(|| view! { <ErrorView error /> }.into_any());
        assert_eq!(status, Some(http::StatusCode::NOT_FOUND));
        assert!(html.contains("Certificate web does not exist, or you cannot see it."), "{html}");
        assert!(html.contains("Not found"), "{html}");
        assert!(!html.contains("Try again"), "{html}");
    }

    #[test]
    fn a_passing_failure_keeps_try_again_and_leaves_the_status_alone() {
        let error =
            AppError::Unavailable { message: "The cluster does not answer.".into(), retry_after: None };
        let (html, status) = render_status(|| view! { <ErrorView error /> }.into_any());
        assert_eq!(status, None);
        assert!(html.contains("Try again"), "{html}");
        let (html, status) = render_status(|| view! { <ErrorView error=AppError::Internal /> }.into_any());
        assert_eq!(status, None);
        assert!(html.contains("Try again"), "{html}");
    }

    #[test]
    fn what_asking_again_cannot_change_has_its_status_and_no_try_again() {
        let cases = [
            (
                AppError::Invalid("The label selector \"a=\" is not valid.".into()),
                400,
                "This page could not be loaded",
            ),
            (AppError::Forbidden("You may not read Certificates: forbidden".into()), 403, "Not allowed"),
        ];
        for (error, code, heading) in cases {
            let message = error.to_string();
            let (html, status) = render_status(|| view! { <ErrorView error /> }.into_any());
            assert_eq!(status, Some(http::StatusCode::from_u16(code).unwrap()), "{html}");
            assert!(html.contains(heading), "{html}");
            assert!(html.contains(&message), "{html}");
            assert!(!html.contains("Try again"), "{html}");
        }
    }
}
