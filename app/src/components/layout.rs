//! The signed-in frame around every page: header, sidebar, main. Signed out,
//! the same URL shows the sign-in panel, so a bookmarked page comes back after
//! signing in.

use leptos::prelude::*;
use leptos_router::{components::Outlet, hooks::use_location};

use crate::{
    api::session::{CurrentSession, Session},
    components::{header::Header, sidebar::Sidebar},
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
            let next = format!("{}{}", location.pathname.get_untracked(), location.search.get_untracked());
            view! {
                <main id="main" class="grid min-h-screen place-items-center p-6">
                    <SignInPanel next />
                </main>
            }
            .into_any()
        }
    }
}

#[component]
fn SignedIn(session: Session) -> impl IntoView {
    crate::components::dismiss_menus_on_escape_or_outside_click();
    crate::plugins::registry::PluginRegistry::provide(&session);
    view! {
        <a href="#main" class="skip-link">"Skip to main content"</a>
        <Header session />
        <div class="flex min-h-[calc(100vh-3.5rem)] flex-col md:flex-row">
            <Sidebar />
            <main id="main" tabindex="-1" class="min-w-0 flex-1 p-4 outline-none md:p-6">
                <Outlet />
            </main>
        </div>
    }
}
