//! Pieces of the console shell shared by every page.

pub mod context_switcher;
pub mod header;
pub mod layout;
pub mod route_announcer;
pub mod sidebar;
pub mod status;
pub mod theme_toggle;
pub mod updating;
pub mod user_menu;

/// The project a console path is inside (`/projects/<id>/…`), if any.
pub fn project_of_path(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/projects/")?;
    let id = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!id.is_empty()).then_some(id)
}

/// For a GET `<Form>`'s `on_form_data`: drops the nameless entry the router adds for the button
/// that submitted the form. Leptos 0.8's `form_data_from_event` appends the submitter's name and
/// value even when the button has none, so a hydrated filter form navigated to `…&=`. A browser
/// submitting the form itself (no JavaScript) leaves a nameless button out; so does this.
/// Inputs without a name are never in the form's data, so the only nameless entry is that one.
pub fn without_nameless_submitter() -> std::sync::Arc<dyn Fn(&leptos::web_sys::FormData)> {
    std::sync::Arc::new(|data| data.delete(""))
}

/// Moves the keyboard's focus to the element with `id` (browser only), where the browser's own
/// move does not happen: a same-page link the router takes, a button that hides as it is pressed.
pub fn focus_by_id(id: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(element) = leptos::prelude::document().get_element_by_id(id) {
        use wasm_bindgen::JsCast;
        if let Ok(element) = element.dyn_into::<web_sys::HtmlElement>() {
            let _ = element.focus();
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = id;
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

/// Closes open menus on Escape (returning focus to the menu's button), on a
/// click outside them, or when the focus leaves them, as menus do everywhere else. Browser only; without
/// JavaScript the `<details>` menus close by their own button.
pub fn dismiss_menus_when_left() {
    #[cfg(feature = "hydrate")]
    {
        use leptos::{ev, prelude::*};
        use wasm_bindgen::JsCast;

        let keys = window_event_listener(ev::keydown, |event| {
            if event.key() == "Escape" {
                close_open_menus(None, true);
            }
        });
        // One handler for both (one copy of the code in the main wasm).
        fn left_menus(event: web_sys::Event) {
            let target = event.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
            close_open_menus(target.and_then(|t| t.closest("details.menu").ok().flatten()), false);
        }
        let clicks = window_event_listener_untyped("click", left_menus);
        // Tabbing out of an open menu closes it, as a click elsewhere does: left open, it stayed
        // over the page the keyboard had moved on to.
        let focus = window_event_listener_untyped("focusin", left_menus);
        on_cleanup(move || {
            keys.remove();
            clicks.remove();
            focus.remove();
        });
    }
}

#[cfg(feature = "hydrate")]
fn close_open_menus(except: Option<web_sys::Element>, refocus: bool) {
    use wasm_bindgen::JsCast;

    let Ok(open) = leptos::prelude::document().query_selector_all("details.menu[open]") else { return };
    for index in 0..open.length() {
        let Some(details) = open.item(index).and_then(|n| n.dyn_into::<web_sys::HtmlDetailsElement>().ok())
        else {
            continue;
        };
        let element: &web_sys::Element = details.as_ref();
        if except.as_ref() == Some(element) {
            continue;
        }
        details.set_open(false);
        if refocus
            && let Ok(Some(summary)) = details.query_selector("summary")
            && let Ok(summary) = summary.dyn_into::<web_sys::HtmlElement>()
        {
            let _ = summary.focus();
        }
    }
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
