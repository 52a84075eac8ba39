//! Anything that matches no route, and every page for a thing that does not exist.

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

/// Where a missing thing could be found: a link's target and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackLink {
    pub href: String,
    pub label: String,
}

impl Default for BackLink {
    fn default() -> Self {
        BackLink { href: "/".to_owned(), label: "Go to the overview".to_owned() }
    }
}

/// The 404 message, also used inside the shell for unknown objects: `what` was looked for,
/// and `back` leads to where it could be (the overview without one). No "Try again": asking
/// again gets the same answer.
#[component]
pub fn NotFoundContent(what: String, #[prop(optional)] back: Option<BackLink>) -> impl IntoView {
    set_page_status(404);
    let BackLink { href, label } = back.unwrap_or_default();
    view! {
        <Title text="Not found" />
        <div class="card max-w-md text-center" data-not-found="">
            <p class="text-sm font-semibold text-accent">"404"</p>
            <h1 class="mt-1 text-2xl font-semibold">"Not found"</h1>
            <p class="mt-2 text-muted">{format!("{what} does not exist, or you cannot see it.")}</p>
            <a href=href class="button mt-4 inline-flex">{label}</a>
        </div>
    }
}

/// Answers the request being rendered with `status` (a no-op in the browser). Every route
/// renders in `SsrMode::Async` (lib.rs), so the status is set while the page renders, before
/// the response's head is sent.
pub(crate) fn set_page_status(status: u16) {
    #[cfg(feature = "ssr")]
    if let (Some(response), Ok(status)) =
        (use_context::<leptos_axum::ResponseOptions>(), http::StatusCode::from_u16(status))
    {
        response.set_status(status);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::components::status::tests::render_status;

    #[test]
    fn a_missing_thing_answers_404_with_its_name_and_the_way_back() {
        let back = BackLink { href: "/plugin-resources/i/k.g".into(), label: "Back to the Kind list".into() };
        let (html, status) = render_status(|| {
            view! { <NotFoundContent what="Kind default/web".to_owned() back /> }.into_any()
        });
        assert_eq!(status, Some(http::StatusCode::NOT_FOUND));
        assert!(html.contains("Kind default/web does not exist, or you cannot see it."), "{html}");
        assert!(html.contains(r#"href="/plugin-resources/i/k.g""#), "{html}");
        assert!(html.contains("Back to the Kind list"), "{html}");
        assert!(!html.contains("Try again"), "{html}");
    }
}
