//! The top bar: product, organization/project switcher, theme, user menu.

use leptos::prelude::*;

use crate::{
    api::session::Session,
    components::{context_switcher::ContextSwitcher, theme_toggle::ThemeToggle, user_menu::UserMenu},
};

/// The console's banner.
#[component]
pub fn Header(session: Session) -> impl IntoView {
    let Session { viewer, organization, projects, .. } = session;
    view! {
        <header class="sticky top-0 z-20 flex h-14 items-center gap-2 border-b border-line bg-surface px-2 sm:gap-4 sm:px-4">
            <a href="/" class="flex items-center gap-2 font-semibold tracking-tight rounded">
                <img src="/favicon.svg" alt="" class="size-6" />
                <span class="sr-only sm:not-sr-only">"Fundament"</span>
            </a>
            <ContextSwitcher organization projects />
            <div class="ml-auto flex items-center gap-2">
                <ThemeToggle />
                <UserMenu viewer />
            </div>
        </header>
    }
}
