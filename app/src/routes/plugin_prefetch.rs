//! What a plugin route starts while its chunk downloads. The router calls a lazy route's
//! `data()` before it fetches the route's code, so two things start then, side by side with the
//! route's chunk: the generated views' chunk when the page will most likely show them, and the
//! lookup of the kind the URL names (a server function), which the
//! page takes over once its code runs ([`take_kind`]). Without this a navigation into a plugin
//! page waited for three things one after the other: the route's chunk, then the kind, then the
//! view's chunk. Starting the lookup here puts its client code into the main chunk (about 3 KB
//! brotli on every first load); the navigation it saves is a server round trip and a render.

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

/// The kind lookup `cluster_id`/`crd`, as the page shows it: the one the navigation started
/// in `data()` when there is one (recent, for this kind), else a new one.
pub async fn kind(
    cluster_id: String,
    crd: String,
) -> Result<crate::plugins::model::KindInfo, crate::error::AppError> {
    #[cfg(feature = "hydrate")]
    {
        // Wrapped: a resource's fetcher must be `Send`; the browser has one thread.
        let started = browser::take_kind(&cluster_id, &crd).map(send_wrapper::SendWrapper::new);
        if let Some(started) = started {
            return started.await;
        }
    }
    crate::plugins::api::resource_kind(cluster_id, crd).await
}

/// The view chunk a page will most likely need besides its route's: the generated views when
/// asked for (`?generated=1`, `?edit=1`) or when the plugin ships no page for this view (of any
/// kind: which kind the CRD is, only the lookup tells); none when it ships one (its frame host
/// is in the route's chunk) or while the plugin is not known. A wrong guess costs a download,
/// never a wrong page: the page loads the chunk it needs itself.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn likely_chunk(view: ResourceView, generated_asked: bool, entry: Option<&PluginEntry>) -> Option<Chunk> {
    if generated_asked {
        return Some(Chunk::Generated);
    }
    let ships_page = entry?.custom_components.values().any(|pages| pages.file(view).is_some());
    (!ships_page).then_some(Chunk::Generated)
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::RefCell;

    use futures::future::{FutureExt, LocalBoxFuture, Shared};
    use leptos::prelude::*;
    use leptos_router::{hooks::use_location, params::ParamsMap};

    use crate::{
        api::session::CurrentSession,
        chunks::Chunk,
        error::AppError,
        plugins::{
            api::resource_kind,
            model::{KindInfo, ResourceView},
            registry::RegistrySlot,
        },
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
            leptos::task::spawn_local(chunk.preload());
        }
        let session = use_context::<CurrentSession>().and_then(|s| s.0);
        if let (Some(session), Some(crd)) = (session, params.get("kind")) {
            let cluster_id = session.cluster_of(params.get("project").as_deref());
            start_kind(cluster_id, crd);
        }
    }

    /// A kind lookup older than this is not taken: the page asks again.
    const KIND_FRESH_FOR_MS: f64 = 10_000.0;

    type KindAnswer = Result<KindInfo, AppError>;
    type StartedKind = Shared<LocalBoxFuture<'static, KindAnswer>>;

    struct Started {
        cluster_id: String,
        crd: String,
        at_ms: f64,
        answer: StartedKind,
    }

    thread_local! {
        /// The lookup the last navigation started, until its page takes it.
        static STARTED: RefCell<Option<Started>> = const { RefCell::new(None) };
    }

    fn start_kind(cluster_id: String, crd: String) {
        let answer = resource_kind(cluster_id.clone(), crd.clone()).boxed_local().shared();
        // Polled now, so the request goes out while the route's chunk downloads.
        leptos::task::spawn_local({
            let answer = answer.clone();
            async move {
                let _ = answer.await;
            }
        });
        let started = Started { cluster_id, crd, at_ms: js_sys::Date::now(), answer };
        STARTED.with(|slot| *slot.borrow_mut() = Some(started));
    }

    /// The lookup of this kind the navigation started, if it is recent; taken once (a retry
    /// asks the server again).
    pub(super) fn take_kind(cluster_id: &str, crd: &str) -> Option<StartedKind> {
        let started = STARTED.with(|slot| slot.borrow_mut().take())?;
        let fresh = js_sys::Date::now() - started.at_ms < KIND_FRESH_FOR_MS;
        (fresh && started.cluster_id == cluster_id && started.crd == crd).then_some(started.answer)
    }

    fn likely_chunk(view: ResourceView, installation: &str) -> Option<Chunk> {
        let query = use_location().query.get_untracked();
        let flag = |name: &str| query.get(name).as_deref() == Some("1");
        let registry = use_context::<RegistrySlot>().and_then(RegistrySlot::get);
        let known = registry.and_then(|r| Some(r.latest_untracked(&r.initial.get_untracked()?.ok()?)));
        super::likely_chunk(
            view,
            flag("generated") || flag("edit") || flag("delete"),
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
            guides: Default::default(),
        }
    }

    #[test]
    fn a_plugin_with_its_own_page_for_the_view_needs_no_other_chunk() {
        let list_only = CustomComponents { list: Some("certificates.html".into()), ..Default::default() };
        let plugin = entry(&[("Certificate", list_only)]);
        // Its frame host is in the route's chunk.
        assert_eq!(likely_chunk(ResourceView::List, false, Some(&plugin)), None);
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
