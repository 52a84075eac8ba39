//! The signed-in frame around every page: header, sidebar, main. Signed out,
//! the same URL shows the sign-in panel, so a bookmarked page comes back after
//! signing in.

use leptos::prelude::*;
use leptos_router::{components::Outlet, hooks::use_location};

use crate::{
    api::session::{CurrentSession, Session},
    components::{header::Header, route_announcer::REGION_ID, sidebar::Sidebar, updating::NOTICE_ID},
    routes::sign_in::SignInPanel,
};

/// Parent route of every console page.
#[component]
pub fn ConsoleLayout() -> impl IntoView {
    let CurrentSession(session) = expect_context();
    match session {
        Some(session) => view! { <SignedIn session /> }.into_any(),
        None => {
            let location = use_location();
            let next = path_and_query(&location.pathname.get_untracked(), &location.search.get_untracked());
            view! {
                <main id="main" class="grid min-h-screen place-items-center p-6">
                    <SignInPanel next=Some(next) />
                </main>
            }
            .into_any()
        }
    }
}

/// The page's path with its query, to come back to after signing in. The router's `search`
/// has no leading `?` on the server (and may have one in the browser): without it a
/// bookmarked `/x?a=1&b=2` came back as `/xa=1&b=2`.
pub(crate) fn path_and_query(path: &str, search: &str) -> String {
    match search.trim_start_matches('?') {
        "" => path.to_owned(),
        query => format!("{path}?{query}"),
    }
}

#[component]
fn SignedIn(session: Session) -> impl IntoView {
    crate::components::dismiss_menus_when_left();
    crate::plugins::registry::PluginRegistry::provide(&session);
    // The other tabs learn whose the browser's session is now; a sign-out or another user's
    // sign-in in one of them, or a 401, is shown on this page (`crate::session_end`).
    #[cfg(feature = "hydrate")]
    {
        let viewer = session.viewer.clone();
        Effect::new(move |_| crate::session_end::follow_other_tabs(&viewer));
    }
    view! {
        <a href="#main" class="skip-link" on:click=skip_to_main>"Skip to main content"</a>
        <Header session />
        <div class="flex min-h-[calc(100vh-3.5rem)] flex-col md:flex-row">
            <Sidebar />
            <main id="main" tabindex="-1" class="min-w-0 flex-1 p-4 outline-none md:p-6">
                <Outlet />
            </main>
        </div>
        <p id=REGION_ID class="sr-only" aria-live="polite" aria-atomic="true" data-route-announcer=""></p>
        <p id=NOTICE_ID role="status" hidden data-updating="" class="after-a-moment pointer-events-none fixed top-3 right-4 z-40 rounded-full border border-line bg-raised px-3 py-1 text-sm shadow-sm">
            "Updating…"
        </p>
    }
}

/// The skip link's own move: the client-side router takes every same-page link, so the
/// browser's own move to `#main` (focus included) never happens once the page is hydrated.
/// Without JavaScript the browser does it.
fn skip_to_main(ev: leptos::ev::MouseEvent) {
    ev.prevent_default();
    crate::components::focus_by_id("main");
}

#[cfg(test)]
mod tests {
    use super::path_and_query;

    #[test]
    fn the_way_back_keeps_the_whole_query() {
        assert_eq!(
            path_and_query("/audit", "user=alice&decision=denied"),
            "/audit?user=alice&decision=denied"
        );
        assert_eq!(path_and_query("/audit", "?user=alice"), "/audit?user=alice");
        assert_eq!(path_and_query("/clusters", ""), "/clusters");
        assert_eq!(path_and_query("/clusters", "?"), "/clusters");
    }
}
