//! The colour theme: follows the OS until the user picks one, then a cookie
//! keeps the choice. The server writes it into `<html data-theme>`, and the
//! stylesheet resolves `system` with `prefers-color-scheme`, so the first paint
//! is already right: no script runs before it.

use serde::{Deserialize, Serialize};

/// Cookie holding the user's choice. `__Host-`, like the session's: where the plugin origins
/// share the console's parent domain, a plugin page could otherwise set `fundament_theme` for
/// that domain (or under a longer path, which the browser sends first) and choose the console's
/// theme for the user.
pub const THEME_COOKIE: &str = "__Host-fundament_theme";

/// The user's theme choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Theme {
    /// Follow the operating system.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// The value of `data-theme` and of the cookie.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// Parses a stored or submitted value.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "system" => Some(Theme::System),
            "light" => Some(Theme::Light),
            "dark" => Some(Theme::Dark),
            _ => None,
        }
    }
}

/// The theme of the request being rendered (the cookie), `System` without one.
pub fn request_theme() -> Theme {
    #[cfg(feature = "ssr")]
    return crate::state::request_cookie(THEME_COOKIE).and_then(|v| Theme::parse(&v)).unwrap_or_default();
    #[cfg(not(feature = "ssr"))]
    Theme::System
}

/// Applies a theme to the open page at once (browser only).
pub fn apply_in_browser(theme: Theme) {
    #[cfg(feature = "hydrate")]
    if let Some(root) = leptos::prelude::document().document_element() {
        let _ = root.set_attribute("data-theme", theme.as_str());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = theme;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_unknown() {
        for t in [Theme::System, Theme::Light, Theme::Dark] {
            assert_eq!(Theme::parse(t.as_str()), Some(t));
        }
        assert_eq!(Theme::parse("\"><script>"), None);
    }
}
