//! Light/dark toggle. Without JavaScript it is a form the server answers by
//! setting the theme cookie; with it, the page switches at once and the choice
//! is stored in the background. CSS shows the one button that applies, so the
//! server needs no idea of the OS preference.

use leptos::{prelude::*, task::spawn_local};

use crate::{
    api::session::set_theme,
    theme::{Theme, apply_in_browser},
};

/// Applies `theme`; `then_focus`: the button to focus after it (the pressed one hides as the
/// header's switch shows the one that applies, and the focus would fall to the page's body).
fn choose(theme: Theme, then_focus: Option<&'static str>) -> impl Fn(leptos::ev::MouseEvent) + Copy {
    move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        apply_in_browser(theme);
        if let Some(id) = then_focus {
            crate::components::focus_by_id(id);
        }
        spawn_local(async move {
            if let Err(error) = set_theme(theme.as_str().to_owned()).await {
                leptos::logging::warn!("theme not saved: {error}");
            }
        });
    }
}

/// The header switch's buttons.
const TO_DARK: &str = "theme-to-dark";
const TO_LIGHT: &str = "theme-to-light";

/// The theme switch in the header.
#[component]
pub fn ThemeToggle() -> impl IntoView {
    view! {
        <form method="post" action="/api/theme" class="contents">
            <button type="submit" name="theme" value="dark" on:click=choose(Theme::Dark, Some(TO_LIGHT)) id=TO_DARK
                class="icon-button dark:hidden" aria-label="Switch to dark theme" title="Switch to dark theme">
                <svg viewBox="0 0 24 24" class="size-5" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2">
                    <path d="M21 12.8A9 9 0 1 1 11.2 3a7 7 0 0 0 9.8 9.8z" />
                </svg>
            </button>
            <button type="submit" name="theme" value="light" on:click=choose(Theme::Light, Some(TO_DARK)) id=TO_LIGHT
                class="icon-button hidden dark:inline-flex" aria-label="Switch to light theme" title="Switch to light theme">
                <svg viewBox="0 0 24 24" class="size-5" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2">
                    <circle cx="12" cy="12" r="4" />
                    <path d="M12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4" />
                </svg>
            </button>
        </form>
    }
}

/// "Follow the system theme", for the user menu.
#[component]
pub fn FollowSystemTheme() -> impl IntoView {
    view! {
        <form method="post" action="/api/theme">
            <button type="submit" name="theme" value="system" on:click=choose(Theme::System, None) class="menu-item w-full">
                "Use system theme"
            </button>
        </form>
    }
}
