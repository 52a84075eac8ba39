//! Pieces of the console shell shared by every page.

pub mod context_switcher;
pub mod header;
pub mod layout;
pub mod sidebar;
pub mod status;
pub mod theme_toggle;
pub mod user_menu;

/// The project a console path is inside (`/projects/<id>/…`), if any.
pub fn project_of_path(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/projects/")?;
    let id = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!id.is_empty()).then_some(id)
}

/// Closes the `<details>` menu a click came from (browser only), so a menu
/// does not stay open over the page it just navigated to.
pub fn close_menu(menu: leptos::prelude::NodeRef<leptos::html::Details>) {
    #[cfg(feature = "hydrate")]
    if let Some(details) = leptos::prelude::GetUntracked::get_untracked(&menu) {
        details.set_open(false);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = menu;
}

#[cfg(test)]
mod tests {
    use super::project_of_path;

    #[test]
    fn finds_the_project_segment() {
        assert_eq!(project_of_path("/projects/webshop"), Some("webshop"));
        assert_eq!(project_of_path("/projects/webshop/plugin-resources/x/y"), Some("webshop"));
        assert_eq!(project_of_path("/projects/"), None);
        assert_eq!(project_of_path("/clusters"), None);
    }
}
