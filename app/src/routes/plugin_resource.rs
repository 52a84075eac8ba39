//! `[/projects/:project]/plugin-resources/:plugin/:kind[/create|/:id]`: a
//! plugin's kind. Each view takes the plugin's own page for it
//! (`customComponents.<Kind>.list|detail|create`) when there is one, framed
//! from plugin-proxy; without one, the generated view from the CRD.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{
    LazyRoute,
    hooks::{use_params_map, use_query_map},
    lazy_route,
    params::ParamsMap,
};

use crate::{
    api::session::Session,
    components::status::{ErrorView, Loading, when_found, when_loaded},
    error::AppError,
    plugins::{
        api::{DrawnFor, namespaces},
        frame::{FrameSpec, PluginFrame},
        model::{
            KindGuides, KindInfo, PageUrl, PluginEntry, PluginState, Registry, ResourceView, custom_page,
            is_dns1123_label, is_dns1123_subdomain, paths,
        },
        protocol::ResourceRef,
        registry::PluginRegistry,
    },
    resource_views::{
        api::object_exists,
        detail::{DetailContext, GeneratedDetail},
        form::{FormContext, GeneratedForm},
        list::{GeneratedList, ListContext},
        scope::ResourceScope,
    },
    routes::{not_found::NotFoundContent, with_session},
};

/// What the plugin's own page needs (its chunk holds the frame and the host).
struct CustomArgs {
    session: Session,
    target: Target,
    entry: PluginEntry,
    kind: KindInfo,
    file: String,
    can_create: bool,
}

/// The plugin's page in its frame. Part of the plugin routes' chunk rather than a chunk of its
/// own: a chunk of its own cost a navigation into a plugin page six more wasm files (the code
/// the host shares with each other chunk comes in files of its own), each a request and an
/// instantiation, for the 29 KB brotli a kind without a page of its own then does not load.
fn plugin_host(args: CustomArgs) -> AnyView {
    let CustomArgs { session, target, entry, kind, file, can_create } = args;
    view! { <CustomPage session target entry kind file can_create /> }.into_any()
}

/// Loads the generated views' chunk (before hydrating a page the server rendered with it).
#[cfg(feature = "hydrate")]
pub(crate) async fn preload_generated() {
    __preload_generated_view().await
}

/// A generated view and what it shows.
enum Generated {
    List(ListContext),
    Form(FormContext),
    Detail(DetailContext),
}

/// A generated view, with its plugin's guides, which the view's chunk reads for its kind.
struct GeneratedPage {
    view: Generated,
    guides: KindGuides,
}

/// The views generated from the CRD: their own chunk, loaded only for kinds shown that way.
#[lazy]
fn generated_view(page: GeneratedPage) -> AnyView {
    let GeneratedPage { mut view, guides } = page;
    let (kind, guide) = match &mut view {
        Generated::List(c) => (&c.scope.kind.kind, &mut c.guide),
        Generated::Form(c) => (&c.scope.kind.kind, &mut c.guide),
        Generated::Detail(c) => (&c.scope.kind.kind, &mut c.guide),
    };
    *guide = guides.of(kind);
    let view = match view {
        Generated::List(context) => view! { <GeneratedList context /> }.into_any(),
        Generated::Form(context) => view! { <GeneratedForm context /> }.into_any(),
        Generated::Detail(context) => view! { <GeneratedDetail context /> }.into_any(),
    };
    view! { <div class="contents" data-chunk={crate::chunks::Chunk::Generated.name()}>{view}</div> }
        .into_any()
}

/// A kind's list. The plugin routes load with their own wasm chunk, so the shell
/// and the other pages do not carry them.
pub struct PluginListRoute;

#[lazy_route]
impl LazyRoute for PluginListRoute {
    fn data() -> Self {
        crate::routes::plugin_prefetch::start(ResourceView::List);
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <PluginResourcePage view=ResourceView::List /> }.into_any()
    }
}

/// A kind's create page.
pub struct PluginCreateRoute;

#[lazy_route]
impl LazyRoute for PluginCreateRoute {
    fn data() -> Self {
        crate::routes::plugin_prefetch::start(ResourceView::Create);
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <PluginResourcePage view=ResourceView::Create /> }.into_any()
    }
}

/// One object.
pub struct PluginDetailRoute;

#[lazy_route]
impl LazyRoute for PluginDetailRoute {
    fn data() -> Self {
        crate::routes::plugin_prefetch::start(ResourceView::Detail);
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <PluginResourcePage view=ResourceView::Detail /> }.into_any()
    }
}

/// What the URL names.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    view: ResourceView,
    project: Option<String>,
    installation: String,
    crd: String,
    /// Detail: name and `?ns=`.
    object: Option<ResourceRef>,
    /// `?generated=1`: the generated view even where the plugin has its own page.
    generated: bool,
    /// Detail with `?edit=1`: the generated edit form.
    edit: bool,
    /// Detail with `?delete=1`: the generated delete confirmation (without JavaScript).
    delete: bool,
}

impl Target {
    /// What the route's parameters and query name. `<list>/create?object=1` is the detail
    /// page of an object named `create` ([`paths::detail`]), not the create page.
    fn of(view: ResourceView, params: &ParamsMap, query: &ParamsMap) -> Self {
        let flag = |key: &str| query.get(key).as_deref() == Some("1");
        let (view, name) = match view {
            ResourceView::Create if flag(paths::OBJECT_FLAG) => {
                (ResourceView::Detail, Some(paths::CREATE_SEGMENT.to_owned()))
            }
            ResourceView::Create => (view, None),
            _ => (view, params.get("id")),
        };
        Target {
            view,
            project: params.get("project"),
            installation: params.get("plugin").unwrap_or_default(),
            crd: params.get("kind").unwrap_or_default(),
            object: name
                .map(|name| ResourceRef { name, namespace: query.get("ns").filter(|ns| !ns.is_empty()) }),
            generated: flag("generated"),
            edit: flag("edit"),
            delete: flag("delete"),
        }
    }
}

#[component]
fn PluginResourcePage(view: ResourceView) -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let target = Memo::new(move |_| Target::of(view, &params.read(), &query.read()));
    move || {
        let target = target.get();
        with_session(move |session| view! { <Resolved session target /> })
    }
}

/// Loads the registry and the kind, then shows the page.
#[component]
fn Resolved(session: Session, target: Target) -> impl IntoView {
    let registry = expect_context::<PluginRegistry>();
    if let Some(object) = &target.object {
        let bad_ns = object.namespace.as_deref().is_some_and(|ns| !is_dns1123_label(ns));
        if !is_dns1123_subdomain(&object.name) || bad_ns {
            return view! { <NotFoundContent what=format!("The object {:?}", object.name) /> }.into_any();
        }
    }
    let cluster_id = session.cluster_of(target.project.as_deref());
    let crd = target.crd.clone();
    let kind = Resource::new(
        move || (cluster_id.clone(), crd.clone()),
        |(c, k)| crate::routes::plugin_prefetch::kind(c, k),
    );
    // Asks again for whichever failed (both, when the cluster was down for both).
    let retry = Callback::new(move |()| {
        if matches!(registry.initial.get_untracked(), Some(Err(_))) {
            registry.initial.refetch();
        }
        if matches!(kind.get_untracked(), Some(Err(_))) {
            kind.refetch();
        }
    });
    view! {
        <Transition fallback=|| view! { <Loading label="Loading the plugin…" /> }>
            {move || {
                let session = session.clone();
                let target = target.clone();
                let initial = registry.initial.get()?;
                let kind = kind.get()?;
                Some(match (initial, kind) {
                    (Ok(initial), Ok(kind)) => view! { <WithEntry session target initial kind /> }.into_any(),
                    (Err(error), _) | (_, Err(error)) => error_view(error, &target, retry),
                })
            }}
        </Transition>
    }
    .into_any()
}

fn error_view(error: AppError, target: &Target, retry: Callback<()>) -> AnyView {
    match error {
        AppError::NotFound(_) => {
            view! { <NotFoundContent what=format!("The resource {}", target.crd) /> }.into_any()
        }
        // The page's title and heading: the kind could not be read, so its name stands for it.
        error => view! {
            <Title text=target.crd.clone() />
            <h1 class="sr-only">{target.crd.clone()}</h1>
            <ErrorView error retry />
        }
        .into_any(),
    }
}

/// Follows the installation in the live registry: the page changes only when
/// the installation does.
#[component]
fn WithEntry(session: Session, target: Target, initial: Registry, kind: KindInfo) -> impl IntoView {
    let registry = expect_context::<PluginRegistry>();
    let name = target.installation.clone();
    let entry = Memo::new(move |_| registry.latest(&initial).find(&name).cloned());
    move || {
        let (session, target, kind) = (session.clone(), target.clone(), kind.clone());
        match entry.get() {
            None => view! { <NotFoundContent what=format!("The plugin {}", target.installation) /> }.into_any(),
            Some(entry) if !entry.offers(&target.crd) => {
                view! { <NotFoundContent what=format!("The resource {} of {}", target.crd, entry.display_name) /> }
                    .into_any()
            }
            Some(entry) => match entry.state.clone() {
                PluginState::Ready => view! { <KindPage session target entry kind /> }.into_any(),
                PluginState::Unavailable(reason) => unavailable(&entry, &reason),
                PluginState::NotRunning { phase, message } => {
                    unavailable(&entry, &format!("The installation is {phase}: {message}"))
                }
            },
        }
    }
}

fn unavailable(entry: &PluginEntry, reason: &str) -> AnyView {
    view! {
        <Title text=entry.display_name.clone() />
        <div role="alert" class="card max-w-2xl">
            <h1 class="text-xl font-semibold">{format!("{} is unavailable", entry.display_name)}</h1>
            <p class="mt-2">{reason.to_owned()}</p>
            <p class="mt-3 text-sm text-muted">
                {format!("Installation {} (version {}).", entry.installation_name, entry.version)}
            </p>
        </div>
    }
    .into_any()
}

/// Breadcrumbs, heading and the page itself.
#[component]
fn KindPage(session: Session, target: Target, entry: PluginEntry, kind: KindInfo) -> impl IntoView {
    let label = entry.label_of(&target.crd);
    let project = target.project.as_deref();
    let list_href = paths::list(project, &entry.installation_name, &target.crd);
    let has_custom = entry.custom_page(&kind.kind, target.view).is_some();
    // The edit form and the delete confirmation are generated views only: they are asked for
    // from the generated detail view, whatever page the plugin has for the object.
    let generated = target.generated || target.edit || target.delete;
    let custom = entry.custom_page(&kind.kind, target.view).filter(|_| !generated).map(str::to_owned);
    let switch = has_custom.then(|| {
        let base = match (&target.view, &target.object) {
            (ResourceView::Detail, Some(o)) => {
                paths::detail(project, &entry.installation_name, &target.crd, &o.name, o.namespace.as_deref())
            }
            (ResourceView::Create, _) => paths::create(project, &entry.installation_name, &target.crd),
            _ => list_href.clone(),
        };
        let joiner = if base.contains('?') { '&' } else { '?' };
        if generated {
            (base, "Show the plugin's page")
        } else {
            (format!("{base}{joiner}generated=1"), "Show the generated view")
        }
    });
    // Every kind can be created: with the plugin's page, else the generated form.
    let can_create = true;
    let heading = match (&target.view, &target.object) {
        (ResourceView::Detail, Some(object)) => object.name.clone(),
        (ResourceView::Create, _) => format!("Create {}", kind.kind),
        _ => label.clone(),
    };
    let project_name = project
        .and_then(|id| session.projects.iter().find(|p| p.id == id))
        .map(|p| (p.id.clone(), p.display_name.clone()));
    if project.is_some() && project_name.is_none() {
        return view! { <NotFoundContent what=format!("Project {}", project.unwrap_or_default()) /> }
            .into_any();
    }
    let crumbs = Breadcrumbs {
        project: project_name,
        plugin: entry.display_name.clone(),
        kind: (label.clone(), list_href.clone()),
        last: (target.view != ResourceView::List).then(|| heading.clone()),
    };
    // The list's namespace filter goes along: the form starts in that namespace when the user
    // may create there. Read from the URL as it changes, so a new filter does not redraw the page.
    let create_base = paths::create(project, &entry.installation_name, &target.crd);
    let query = use_query_map();
    let create_href = move || match query.read().get("namespace").filter(|n| !n.is_empty()) {
        Some(ns) => format!("{create_base}?namespace={}", crate::plugins::model::encode_segment(&ns)),
        None => create_base.clone(),
    };
    let show_create = target.view == ResourceView::List && can_create;
    let title = format!("{heading} · {}", entry.display_name);
    let create_label = format!("Create {}", kind.kind);
    // What the generated views share: the kind, where it is, and what its plugin says about it.
    let scope = ResourceScope {
        cluster_id: session.cluster_of(target.project.as_deref()),
        project: target.project.clone(),
        installation: entry.installation_name.clone(),
        crd: target.crd.clone(),
        kind: kind.clone(),
        generated: target.generated,
    };
    // The guide is read by the generated views' chunk ([`generated_view`]), which alone carries
    // its deserializer; a plugin's own page does not load it.
    let guide = fundament_plugin_types::KindGuide::default();
    let guides = entry.guides.clone();
    // The detail route always has a name (`:id`); an empty one reads as not found.
    // A cluster-scoped object's `?ns=` is ignored.
    let object = || {
        let object =
            target.object.clone().unwrap_or_else(|| ResourceRef { name: String::new(), namespace: None });
        (object.name, object.namespace.filter(|_| kind.namespaced))
    };
    let body = match (custom, target.view) {
        (Some(file), _) => {
            let args = CustomArgs { session, target, entry, kind, file, can_create };
            plugin_host(args)
        }
        (None, ResourceView::List) => {
            let view = Generated::List(ListContext { scope, guide });
            crate::chunks::lazy_view(generated_view(GeneratedPage { view, guides }))
        }
        (_, ResourceView::Detail) if target.edit && target.object.is_some() => {
            let view = Generated::Form(FormContext { scope, existing: Some(object()), guide });
            crate::chunks::lazy_view(generated_view(GeneratedPage { view, guides }))
        }
        (None, ResourceView::Create) => {
            let view = Generated::Form(FormContext { scope, existing: None, guide });
            crate::chunks::lazy_view(generated_view(GeneratedPage { view, guides }))
        }
        (None, ResourceView::Detail) => {
            let (name, namespace) = object();
            let view = Generated::Detail(DetailContext {
                scope,
                name,
                namespace,
                guide,
                confirm_delete: target.delete,
            });
            crate::chunks::lazy_view(generated_view(GeneratedPage { view, guides }))
        }
    };
    view! {
        <Title text=title />
        {crumbs.render()}
        <div class="mb-4 flex flex-wrap items-center justify-between gap-3">
            // A name may be 253 characters without a break: it wraps anywhere, not past the page.
            <h1 class="min-w-0 text-2xl font-semibold tracking-tight wrap-anywhere">{heading}</h1>
            <div class="flex flex-wrap items-center gap-2">
                {switch.map(|(href, label)| view! { <a href=href class="button-secondary">{label}</a> })}
                {show_create.then(|| view! { <a href=create_href class="button inline-flex">{create_label}</a> })}
            </div>
        </div>
        {body}
    }
    .into_any()
}

struct Breadcrumbs {
    /// Id and display name.
    project: Option<(String, String)>,
    plugin: String,
    /// Label and list link.
    kind: (String, String),
    /// The object or "Create {Kind}".
    last: Option<String>,
}

impl Breadcrumbs {
    fn render(self) -> impl IntoView {
        let sep = || view! { <li aria-hidden="true" class="text-muted">"›"</li> };
        let (kind_label, kind_href) = self.kind;
        let kind = match self.last {
            Some(_) => view! { <li><a href=kind_href class="link">{kind_label}</a></li> }.into_any(),
            None => view! { <li aria-current="page">{kind_label}</li> }.into_any(),
        };
        view! {
            <nav aria-label="Breadcrumb" class="mb-2 text-sm text-muted">
                <ol class="flex flex-wrap items-center gap-2">
                    {self.project.map(|(id, name)| view! {
                        <li><a href=format!("/projects/{id}") class="link">{name}</a></li>
                        {sep()}
                    })}
                    <li>{self.plugin}</li>
                    {sep()}
                    {kind}
                    {self.last.map(|last| view! { {sep()} <li aria-current="page" class="min-w-0 text-ink wrap-anywhere">{last}</li> })}
                </ol>
            </nav>
        }
    }
}

/// The plugin's page in its frame. Create pages in a project get the
/// project's namespaces; at organization level, none.
#[component]
fn CustomPage(
    session: Session,
    target: Target,
    entry: PluginEntry,
    kind: KindInfo,
    file: String,
    can_create: bool,
) -> impl IntoView {
    let cluster_id = session.cluster_of(target.project.as_deref());
    let endpoints = session.endpoints.clone();
    if !crate::plugins::model::safe_page_path(&file) {
        return unavailable(&entry, &format!("Its page {file:?} is not a plain path under console/."));
    }
    let Some(PageUrl { src, origin }) =
        custom_page(&endpoints.plugin_proxy, &cluster_id, &entry.installation_name, &entry.version, &file)
    else {
        return unavailable(
            &entry,
            &format!(
                "Its installation name {:?} is not a DNS label, so its pages cannot get an origin of their own.",
                entry.installation_name
            ),
        );
    };
    let subject = match (&target.view, &target.object) {
        (ResourceView::Detail, Some(o)) => format!("{} {}", kind.kind, o.name),
        (ResourceView::Create, _) => format!("create {}", kind.kind),
        _ => entry.label_of(&target.crd),
    };
    let spec = FrameSpec {
        src,
        origin,
        page: file,
        plugin_label: entry.display_name.clone(),
        subject,
        view: target.view,
        project: target.project.clone(),
        installation_name: entry.installation_name.clone(),
        installation_uid: entry.installation_uid.clone(),
        cluster_id: cluster_id.clone(),
        crd: target.crd.clone(),
        crd_kind: kind.kind.clone(),
        resource: target.object.clone(),
        namespaces: None,
        kube_api_proxy_url: endpoints.kube_api_proxy.trim_end_matches('/').to_owned(),
        can_create,
        drawn_for: DrawnFor::of(&session),
    };
    // An object's page is framed only for an object the user can read, as the generated detail
    // view is shown: one that does not exist (or that the user cannot see) is the not-found page
    // with its 404, and inside a project `?ns=` of another project's namespace is refused (400),
    // before the plugin's page is loaded for it.
    if let (ResourceView::Detail, Some(object)) = (target.view, target.object.clone()) {
        let scope = ResourceScope {
            cluster_id: cluster_id.clone(),
            project: target.project.clone(),
            installation: entry.installation_name.clone(),
            crd: target.crd.clone(),
            kind: kind.clone(),
            generated: false,
        };
        let missing = scope.missing(&object.name, object.namespace.as_deref());
        let found = Resource::new(
            move || (scope.cluster_id.clone(), scope.crd.clone(), scope.project.clone(), object.clone()),
            |(cluster_id, crd, project, object)| {
                object_exists(cluster_id, crd, project, object.name, object.namespace)
            },
        );
        return when_found("Loading…", found, Some(missing), move |()| {
            view! { <PluginFrame spec=spec.clone() /> }.into_any()
        })
        .into_any();
    }
    // A create page in a project gets the project's namespaces (seed: "Create views in a
    // project"). At organization level it gets none: the user's list of every namespace of the
    // cluster is more than the plugin's own rights would show it.
    let Some(project) = target.project.clone().filter(|_| target.view == ResourceView::Create) else {
        return view! { <PluginFrame spec /> }.into_any();
    };
    let list = Resource::new(move || (cluster_id.clone(), project.clone()), |(c, p)| namespaces(c, Some(p)));
    when_loaded("Loading namespaces…", list, move |names| {
        let spec = FrameSpec { namespaces: Some(names), ..spec.clone() };
        view! { <PluginFrame spec /> }.into_any()
    })
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &str)]) -> ParamsMap {
        let mut map = ParamsMap::new();
        for (key, value) in pairs {
            map.insert(*key, (*value).to_owned());
        }
        map
    }

    #[test]
    fn an_object_named_create_opens_by_its_flag_and_the_create_page_stays_the_create_page() {
        let params = map(&[("plugin", "i"), ("kind", "k.g")]);
        let create = Target::of(ResourceView::Create, &params, &map(&[]));
        assert_eq!((create.view, create.object), (ResourceView::Create, None));

        let named_create = Target::of(ResourceView::Create, &params, &map(&[("object", "1"), ("ns", "web")]));
        assert_eq!(named_create.view, ResourceView::Detail);
        assert_eq!(
            named_create.object,
            Some(ResourceRef { name: "create".into(), namespace: Some("web".into()) })
        );

        let params = map(&[("plugin", "i"), ("kind", "k.g"), ("id", "web-1")]);
        let detail = Target::of(ResourceView::Detail, &params, &map(&[("edit", "1")]));
        assert_eq!(detail.object.map(|o| o.name).as_deref(), Some("web-1"));
        assert!(detail.edit);
    }

    #[test]
    fn every_detail_path_names_the_object_it_was_built_for() {
        for name in ["create", "created", "a.b-c"] {
            let path = paths::detail(None, "i", "k.g", name, Some("web"));
            let (path, query) = path.split_once('?').unwrap();
            let last = path.rsplit('/').next().unwrap();
            let view =
                if last == paths::CREATE_SEGMENT { ResourceView::Create } else { ResourceView::Detail };
            let mut params = map(&[("plugin", "i"), ("kind", "k.g")]);
            if view == ResourceView::Detail {
                params.insert("id", last.to_owned());
            }
            let mut query_map = ParamsMap::new();
            for (key, value) in query.split('&').map(|kv| kv.split_once('=').unwrap()) {
                query_map.insert(key.to_owned(), value.to_owned());
            }
            let target = Target::of(view, &params, &query_map);
            assert_eq!(target.view, ResourceView::Detail, "{name}");
            assert_eq!(target.object.map(|o| o.name).as_deref(), Some(name));
        }
    }
}
