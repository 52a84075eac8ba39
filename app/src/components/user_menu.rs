//! The user menu: who is signed in, theme, sign-out.

use leptos::prelude::*;

use crate::{api::session::Viewer, components::theme_toggle::FollowSystemTheme};

/// Avatar button with the user's menu.
#[component]
pub fn UserMenu(viewer: Viewer) -> impl IntoView {
    let initial = viewer.name.chars().next().unwrap_or('?').to_string();
    view! {
        <details class="menu relative">
            // Named by its text ("User menu: Alice"), so what is read is what is seen.
            <summary class="menu-button">
                <span class="grid size-7 place-items-center rounded-full bg-accent text-sm font-semibold text-on-accent" aria-hidden="true">
                    {initial}
                </span>
                <span class="sr-only">"User menu: "</span>
                <span class="sr-only sm:not-sr-only">{viewer.name.clone()}</span>
                <span class="chevron" aria-hidden="true"></span>
            </summary>
            <div class="menu-panel right-0 w-64">
                <p class="px-3 py-2 text-sm">
                    <span class="block font-medium">{viewer.name}</span>
                    <span class="block text-muted">{viewer.email}</span>
                </p>
                <hr class="my-1 border-line" />
                <FollowSystemTheme />
                // A plain form: signing out reloads the page, dropping all client state. The
                // console's other tabs are told by the page it lands on, once the server signed
                // out, not as it is posted: a post that fails ends nothing (`crate::session_end`).
                <form method="post" action="/api/sign-out">
                    <button type="submit" class="menu-item w-full">"Sign out"</button>
                </form>
            </div>
        </details>
    }
}
