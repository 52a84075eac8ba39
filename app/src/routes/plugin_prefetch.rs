//! What a plugin route starts while its chunk downloads. The router calls a lazy route's
//! `data()` before it fetches the route's code, so the chunk of the view the page will most
//! likely show (the plugin host, or the generated views) is asked for then, side by side with
//! the route's chunk. Without this a navigation into a plugin page waited for three things one
//! after the other: the route's chunk, then the kind (a server function), then the view's
//! chunk; now the kind lookup overlaps the view chunk's download. (Starting the kind lookup
//! here too would put its client code and its answer's decoder into the main chunk: +3 KB
//! brotli on every first load, measured, for a lookup that is short beside the chunks.)

use crate::{
    chunks::Chunk,
    plugins::model::{PluginEntry, ResourceView},
};

/// Called by the plugin routes' `data()`: in the browser, after hydration, starts loading the
/// likely view chunk of the page being navigated to. Nothing on the server, and nothing while
/// hydrating (the chunks the server's HTML needs are loaded before hydration).
pub fn start(view: ResourceView) {
    #[cfg(feature = "hydrate")]
    browser::start(view);
    #[cfg(not(feature = "hydrate"))]
    let _ = view;
}

/// The view chunk a page will most likely need: the generated views when asked for
/// (`?generated=1`, `?edit=1`); the plugin host when the plugin ships a page for this view (of
/// some kind: which kind the CRD is, only the lookup tells); else the generated views. `None`
/// while the plugin is not known. A wrong guess costs a download, never a wrong page: the
/// page loads the chunk it needs itself.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn likely_chunk(view: ResourceView, generated_asked: bool, entry: Option<&PluginEntry>) -> Option<Chunk> {
    if generated_asked {
        return Some(Chunk::Generated);
    }
    let ships_page = entry?.custom_components.values().any(|pages| pages.file(view).is_some());
    Some(if ships_page { Chunk::PluginHost } else { Chunk::Generated })
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::prelude::*;
    use leptos_router::{hooks::use_location, params::ParamsMap};

    use crate::{
        chunks::Chunk,
        plugins::{model::ResourceView, registry::RegistrySlot},
    };

    fn hydrated() -> bool {
        document().body().is_some_and(|body| body.has_attribute("data-hydrated"))
    }

    pub(super) fn start(view: ResourceView) {
        if !hydrated() {
            return;
        }
        // The matched route's params: the router provides them to `data()`.
        let Some(params) = use_context::<ArcMemo<ParamsMap>>().map(|p| p.get_untracked()) else { return };
        let installation = params.get("plugin").unwrap_or_default();
        if let Some(chunk) = likely_chunk(view, &installation) {
            leptos::task::spawn_local(crate::routes::plugin_resource::preload(chunk));
        }
    }

    fn likely_chunk(view: ResourceView, installation: &str) -> Option<Chunk> {
        let query = use_location().query.get_untracked();
        let flag = |name: &str| query.get(name).as_deref() == Some("1");
        let registry = use_context::<RegistrySlot>().and_then(RegistrySlot::get);
        let known = registry.and_then(|r| Some(r.latest_untracked(&r.initial.get_untracked()?.ok()?)));
        super::likely_chunk(
            view,
            flag("generated") || flag("edit"),
            known.as_ref().and_then(|r| r.find(installation)),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::plugins::model::{CustomComponents, PluginState};

    fn entry(pages: &[(&str, CustomComponents)]) -> PluginEntry {
        PluginEntry {
            installation_name: "acme--cm".into(),
            installation_uid: "uid".into(),
            plugin_name: "cm".into(),
            version: "1.0.0".into(),
            display_name: "cert-manager".into(),
            description: String::new(),
            state: PluginState::Ready,
            menu_organization: Vec::new(),
            menu_project: Vec::new(),
            crds: vec!["certificates.cert-manager.io".into(), "issuers.cert-manager.io".into()],
            custom_components: pages
                .iter()
                .map(|(k, c)| ((*k).to_owned(), c.clone()))
                .collect::<BTreeMap<_, _>>(),
            guides: BTreeMap::new(),
        }
    }

    #[test]
    fn a_plugin_with_its_own_page_for_the_view_gets_the_host_chunk() {
        let list_only = CustomComponents { list: Some("certificates.html".into()), ..Default::default() };
        let plugin = entry(&[("Certificate", list_only)]);
        assert_eq!(likely_chunk(ResourceView::List, false, Some(&plugin)), Some(Chunk::PluginHost));
        // No page of its own for details: the generated detail.
        assert_eq!(likely_chunk(ResourceView::Detail, false, Some(&plugin)), Some(Chunk::Generated));
        // Asked for the generated view, or its edit form.
        assert_eq!(likely_chunk(ResourceView::List, true, Some(&plugin)), Some(Chunk::Generated));
    }

    #[test]
    fn no_guess_while_the_plugin_is_unknown_unless_the_generated_view_is_asked_for() {
        assert_eq!(likely_chunk(ResourceView::List, false, None), None);
        assert_eq!(likely_chunk(ResourceView::Create, true, None), Some(Chunk::Generated));
        assert_eq!(likely_chunk(ResourceView::Create, false, Some(&entry(&[]))), Some(Chunk::Generated));
    }
}
