//! The browser bundle's wasm chunks (split by `scripts/site.mjs`): which route and which
//! view lives in which chunk, loading the ones the server rendered before hydrating,
//! and fetching a route's chunk when a link to it is pointed at or focused.
//!
//! The shell (layout, sidebar, sign-in, overview) is the main chunk. Every other page
//! is a lazy route; the plugin routes hold a plugin page's frame host too, and the views
//! generated from a CRD are a chunk of their own below them, loaded once the kind is known
//! to need them.

use leptos::prelude::*;

/// A view's chunk below a route, marked `data-chunk` on its wrapper so the browser
/// knows before hydrating which ones the server's HTML holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// The list, detail and form generated from a CRD.
    Generated,
    /// The sign-in panel, which any page shows when signed out.
    SignIn,
}

impl Chunk {
    pub const ALL: [Chunk; 2] = [Chunk::Generated, Chunk::SignIn];

    /// The `data-chunk` value.
    pub const fn name(self) -> &'static str {
        match self {
            Chunk::Generated => "generated",
            Chunk::SignIn => "sign-in",
        }
    }

    /// Loads the chunk.
    #[cfg(feature = "hydrate")]
    pub async fn preload(self) {
        match self {
            Chunk::Generated => crate::routes::plugin_resource::preload_generated().await,
            Chunk::SignIn => crate::routes::sign_in::preload().await,
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// A lazy route, by the paths that lead to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteChunk {
    Clusters,
    Plugins,
    Audit,
    Project,
    PluginList,
    PluginCreate,
    PluginDetail,
}

impl RouteChunk {
    /// The lazy route a console path leads to; `None` for the shell's own pages.
    /// Mirrors the routes in [`crate::App`].
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let rest = match segments.as_slice() {
            ["clusters"] => return Some(Self::Clusters),
            ["plugins"] => return Some(Self::Plugins),
            ["audit"] => return Some(Self::Audit),
            ["projects", _] => return Some(Self::Project),
            ["projects", _, rest @ ..] => rest,
            rest => rest,
        };
        match rest {
            ["plugin-resources", _, _] => Some(Self::PluginList),
            ["plugin-resources", _, _, "create"] => Some(Self::PluginCreate),
            ["plugin-resources", _, _, _] => Some(Self::PluginDetail),
            _ => None,
        }
    }
}

/// A view from a chunk, shown once the chunk is there. On the server the view is
/// ready at once; in the browser the chunk is loaded first (before hydrating when the
/// server rendered it, see [`preload_rendered`]).
#[cfg(not(feature = "hydrate"))]
pub fn lazy_view(view: impl std::future::Future<Output = AnyView> + Send + 'static) -> AnyView {
    Suspend::new(view).into_any()
}

/// A view from a chunk, shown once the chunk is there. The loader's future is not
/// `Send` (the browser has one thread): wrapped so `Suspend` takes it.
#[cfg(feature = "hydrate")]
pub fn lazy_view(view: impl std::future::Future<Output = AnyView> + 'static) -> AnyView {
    Suspend::new(send_wrapper::SendWrapper::new(view)).into_any()
}

/// Loads the chunks whose views the server rendered into this document, so that
/// hydration finds their code: a `Suspend` hydrates with what its future has on the
/// first poll, and an absent chunk would leave it pending and the server's HTML orphaned.
#[cfg(feature = "hydrate")]
pub async fn preload_rendered() {
    let Some(marked) = document().query_selector_all("[data-chunk]").ok() else { return };
    let mut chunks = Vec::new();
    for index in 0..marked.length() {
        let name = marked
            .item(index)
            .and_then(|node| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(node).ok())
            .and_then(|element| element.get_attribute("data-chunk"));
        if let Some(chunk) = name.as_deref().and_then(Chunk::from_name)
            && !chunks.contains(&chunk)
        {
            chunks.push(chunk);
        }
    }
    for chunk in chunks {
        chunk.preload().await;
    }
}

/// Fetches a route's chunk when a link to it is pointed at, touched or focused, so the
/// navigation that usually follows does not wait for it. Not on idle: a first visit
/// downloads the shell and its own page, nothing more.
#[cfg(feature = "hydrate")]
pub fn prefetch_on_intent() {
    use leptos::ev;
    use wasm_bindgen::JsCast;

    fn prefetch(target: Option<web_sys::EventTarget>) {
        let link = target
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|t| t.closest("a[href]").ok().flatten());
        let Some(href) = link.and_then(|a| a.get_attribute("href")) else { return };
        if !href.starts_with('/') || href.starts_with("//") {
            return;
        }
        if let Some(route) = RouteChunk::of_path(&href) {
            leptos::task::spawn_local(prefetching(href, crate::routes::preload_route(route)));
        }
    }
    let pointer = window_event_listener(ev::pointerover, |e| prefetch(e.target()));
    let touch = window_event_listener(ev::touchstart, |e| prefetch(e.target()));
    let focus = window_event_listener(ev::focusin, |e| prefetch(e.target()));
    on_cleanup(move || {
        pointer.remove();
        touch.remove();
        focus.remove();
    });
}

/// `leptos_router`'s `use_navigate`, telling the chunk loader first where each navigation goes:
/// when the route's chunk keeps failing to load (a newer console was deployed and its chunks
/// have other names), the loader then sends the browser there as a full page load, as it does
/// for a clicked link (scripts/site-files.mjs `resilientChunkLoads`). A navigation the console
/// starts itself (after a save, at a plugin page's request) would otherwise wait on a chunk
/// that is not coming, after the user's change was saved, with nothing on screen saying so.
pub fn use_navigate() -> impl Fn(&str, leptos_router::NavigateOptions) + Clone + 'static {
    let navigate = leptos_router::hooks::use_navigate();
    move |to: &str, options| {
        #[cfg(feature = "hydrate")]
        name_navigation(to);
        navigate(to, options)
    }
}

#[cfg(feature = "hydrate")]
fn name_navigation(to: &str) {
    use wasm_bindgen::{JsCast, JsValue};

    let named = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("__fundamentNavigating"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    if let Some(name) = named {
        let _ = name.call1(&JsValue::UNDEFINED, &JsValue::from_str(to));
    }
}

/// Runs a prefetch's load, telling the chunk loader which link it is for: a chunk that does not
/// load is tried again, and sends the browser to a link the user clicks only when the load is
/// the one that click waits for (scripts/site-files.mjs `resilientChunkLoads`). The loader
/// reads `__fundamentPrefetch` when a load starts, which happens within the first poll.
#[cfg(feature = "hydrate")]
async fn prefetching(href: String, load: impl std::future::Future<Output = ()>) {
    use std::task::Poll;
    use wasm_bindgen::JsValue;

    fn name(link: &JsValue) {
        let _ = js_sys::Reflect::set(&js_sys::global(), &JsValue::from_str("__fundamentPrefetch"), link);
    }
    let mut load = std::pin::pin!(load);
    let link = JsValue::from_str(&href);
    let first = std::future::poll_fn(|cx| {
        name(&link);
        let polled = load.as_mut().poll(cx);
        name(&JsValue::UNDEFINED);
        Poll::Ready(polled)
    })
    .await;
    if first.is_pending() {
        load.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_lead_to_their_lazy_routes() {
        assert_eq!(RouteChunk::of_path("/"), None);
        assert_eq!(RouteChunk::of_path("/sign-in?next=%2F"), None);
        assert_eq!(RouteChunk::of_path("/clusters"), Some(RouteChunk::Clusters));
        assert_eq!(RouteChunk::of_path("/plugins#top"), Some(RouteChunk::Plugins));
        assert_eq!(RouteChunk::of_path("/audit?user=bob"), Some(RouteChunk::Audit));
        assert_eq!(RouteChunk::of_path("/projects/webshop"), Some(RouteChunk::Project));
        assert_eq!(
            RouteChunk::of_path("/plugin-resources/acme--cm/certificates.cert-manager.io"),
            Some(RouteChunk::PluginList)
        );
        assert_eq!(
            RouteChunk::of_path(
                "/projects/webshop/plugin-resources/acme--cm/certificates.cert-manager.io/create"
            ),
            Some(RouteChunk::PluginCreate)
        );
        assert_eq!(
            RouteChunk::of_path(
                "/projects/webshop/plugin-resources/acme--cm/certificates.cert-manager.io/web?ns=a"
            ),
            Some(RouteChunk::PluginDetail)
        );
        assert_eq!(RouteChunk::of_path("/projects/webshop/elsewhere"), None);
        assert_eq!(RouteChunk::of_path("/plugin-resources/acme--cm"), None);
    }

    #[test]
    fn chunk_names_read_back() {
        for chunk in Chunk::ALL {
            assert_eq!(Chunk::from_name(chunk.name()), Some(chunk));
        }
        assert_eq!(Chunk::from_name("main"), None);
        assert_eq!(Chunk::from_name("plugin-host"), None);
    }
}
