//! The plugins of one cluster as the console shows them: installations joined
//! with their definitions, checked against the definition hash each one pins.
//! Pure functions over the JSON the services answer, so the rules are tested
//! without any service running.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Names as the API server checks them: a namespace is a label, most object names subdomains.
pub use fundament_kube_core::validation::{is_dns1123_label, is_dns1123_subdomain};

/// One sidebar entry a definition's `menu` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MenuEntry {
    /// The CRD it lists, `<plural>.<group>`.
    pub crd: String,
    /// What the sidebar says.
    pub label: String,
}

/// The pages a plugin ships for one kind (`customComponents.<Kind>`), as
/// file names under its `console/` folder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CustomComponents {
    pub list: Option<String>,
    pub detail: Option<String>,
    pub create: Option<String>,
}

/// Which of a kind's views a route shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResourceView {
    List,
    Detail,
    Create,
}

impl ResourceView {
    /// The name the protocol uses (`view` in `fundament:init`).
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceView::List => "list",
            ResourceView::Detail => "detail",
            ResourceView::Create => "create",
        }
    }
}

impl CustomComponents {
    /// The file for one view, if the plugin ships one.
    pub fn file(&self, view: ResourceView) -> Option<&str> {
        match view {
            ResourceView::List => self.list.as_deref(),
            ResourceView::Detail => self.detail.as_deref(),
            ResourceView::Create => self.create.as_deref(),
        }
    }
}

/// Whether an installation can be used.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PluginState {
    /// Running, ready, and its definition is the one it pins.
    Ready,
    /// Running, but the console cannot use it; the reason is for users.
    Unavailable(String),
    /// Not running (yet): its phase and the controller's message.
    NotRunning { phase: String, message: String },
}

/// A plugin installation of the cluster with what its definition says.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PluginEntry {
    /// The PluginInstallation's name (`<organization>--<plugin>`): the route's `:pluginName`.
    pub installation_name: String,
    /// Its uid: the installation id a PluginToken is minted for.
    pub installation_uid: String,
    /// The definition's name.
    pub plugin_name: String,
    /// The installed version: part of every page URL.
    pub version: String,
    /// The definition's display name (the plugin name until it is known).
    pub display_name: String,
    /// The definition's description.
    pub description: String,
    pub state: PluginState,
    /// Sidebar entries at organization level.
    pub menu_organization: Vec<MenuEntry>,
    /// Sidebar entries inside a project.
    pub menu_project: Vec<MenuEntry>,
    /// The CRDs the plugin manages, `<plural>.<group>`.
    pub crds: Vec<String>,
    /// Kind → pages.
    pub custom_components: BTreeMap<String, CustomComponents>,
}

impl PluginEntry {
    /// Whether the sidebar shows it and its pages open.
    pub fn is_ready(&self) -> bool {
        self.state == PluginState::Ready
    }

    /// Whether `crd` is one of the plugin's kinds (its `crds` or a menu entry).
    pub fn offers(&self, crd: &str) -> bool {
        self.crds.iter().any(|c| c == crd)
            || self.menu_organization.iter().chain(&self.menu_project).any(|m| m.crd == crd)
    }

    /// The sidebar label of `crd`, else one made from its plural.
    pub fn label_of(&self, crd: &str) -> String {
        self.menu_organization
            .iter()
            .chain(&self.menu_project)
            .find(|m| m.crd == crd)
            .map_or_else(|| crd_label(crd), |m| m.label.clone())
    }

    /// The page a kind's view is rendered with, if the plugin ships one.
    pub fn custom_page(&self, kind: &str, view: ResourceView) -> Option<&str> {
        self.custom_components.get(kind).and_then(|c| c.file(view))
    }
}

/// The plugins of one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    pub cluster_id: String,
    /// Sorted by display name.
    pub plugins: Vec<PluginEntry>,
}

impl Registry {
    /// The installation with this name.
    pub fn find(&self, installation_name: &str) -> Option<&PluginEntry> {
        self.plugins.iter().find(|p| p.installation_name == installation_name)
    }
}

/// The parts of a PluginInstallation the console uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    pub name: String,
    pub uid: String,
    pub plugin_name: String,
    pub version: String,
    pub pinned_hash: String,
    pub phase: String,
    pub ready: bool,
    pub message: String,
}

impl Installation {
    /// Running and ready: the only ones whose definitions are worth fetching.
    pub fn is_running(&self) -> bool {
        self.phase == "Running" && self.ready
    }
}

/// The installations of a `PluginInstallationList`; items without a name,
/// uid or definition reference are skipped (they cannot be addressed).
pub fn installations(list: &Value) -> Vec<Installation> {
    let text = |v: &Value, path: &[&str]| {
        path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).unwrap_or_default().to_owned()
    };
    list.get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let i = Installation {
                name: text(item, &["metadata", "name"]),
                uid: text(item, &["metadata", "uid"]),
                plugin_name: text(item, &["spec", "definitionRef", "pluginName"]),
                version: text(item, &["spec", "definitionRef", "pluginVersion"]),
                pinned_hash: text(item, &["spec", "definitionRef", "definitionHash"]),
                phase: text(item, &["status", "phase"]),
                ready: item.pointer("/status/ready").and_then(Value::as_bool).unwrap_or(false),
                message: text(item, &["status", "message"]),
            };
            let addressable = !i.name.is_empty() && !i.uid.is_empty() && !i.plugin_name.is_empty();
            addressable.then_some(i)
        })
        .collect()
}

/// What organization-api said about an installation's definition.
#[derive(Debug, Clone, PartialEq)]
pub enum DefinitionAnswer {
    /// `{hash, definition}` of `GetPluginDefinition`.
    Found { hash: String, definition: Value },
    /// No such definition (the reason is for users).
    Missing(String),
    /// organization-api could not be asked (details are in the server log).
    Unreachable,
}

/// One registry entry: the installation, and its definition when it runs.
/// `answer` is `None` for installations that are not running.
pub fn entry(installation: &Installation, answer: Option<&DefinitionAnswer>) -> PluginEntry {
    let mut entry = PluginEntry {
        installation_name: installation.name.clone(),
        installation_uid: installation.uid.clone(),
        plugin_name: installation.plugin_name.clone(),
        version: installation.version.clone(),
        display_name: installation.plugin_name.clone(),
        description: String::new(),
        state: PluginState::Ready,
        menu_organization: Vec::new(),
        menu_project: Vec::new(),
        crds: Vec::new(),
        custom_components: BTreeMap::new(),
    };
    if !installation.is_running() {
        let phase =
            if installation.phase.is_empty() { "Unknown".to_owned() } else { installation.phase.clone() };
        entry.state = PluginState::NotRunning { phase, message: installation.message.clone() };
        return entry;
    }
    let (hash, definition) = match answer {
        Some(DefinitionAnswer::Found { hash, definition }) => (hash, definition),
        Some(DefinitionAnswer::Missing(reason)) => {
            entry.state = PluginState::Unavailable(reason.clone());
            return entry;
        }
        Some(DefinitionAnswer::Unreachable) | None => {
            entry.state = PluginState::Unavailable(
                "Its definition could not be loaded from organization-api. Try again in a moment.".to_owned(),
            );
            return entry;
        }
    };
    apply_definition(&mut entry, definition);
    if installation.pinned_hash.is_empty() {
        entry.state = PluginState::Unavailable(
            "The installation pins no definition hash, so its definition cannot be verified.".to_owned(),
        );
    } else if &installation.pinned_hash != hash {
        entry.state = PluginState::Unavailable(format!(
            "Definition mismatch: the installation pins {} but organization-api serves {} for {}@{}.",
            installation.pinned_hash, hash, installation.plugin_name, installation.version
        ));
    } else if let Some(bad) =
        entry.custom_components.values().flat_map(all_files).find(|f| !safe_page_path(f))
    {
        entry.state = PluginState::Unavailable(format!(
            "Its definition names the page {bad:?}, which is not a plain path under console/."
        ));
    }
    entry
}

fn all_files(c: &CustomComponents) -> impl Iterator<Item = &str> {
    [&c.list, &c.detail, &c.create].into_iter().flatten().map(String::as_str)
}

/// Reads the fields the console uses from a definition (the definition.yaml
/// document as JSON; `menu` and friends under `spec`, or at the top level).
fn apply_definition(entry: &mut PluginEntry, definition: &Value) {
    let meta = definition.get("metadata").unwrap_or(&Value::Null);
    let spec = definition.get("spec").filter(|s| s.is_object()).unwrap_or(definition);
    let text = |v: &Value, key: &str| {
        v.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned()
    };
    let display = text(meta, "displayName");
    if !display.is_empty() {
        entry.display_name = display;
    }
    entry.description = text(meta, "description");
    let menu = spec.get("menu").unwrap_or(&Value::Null);
    entry.menu_organization = menu_entries(menu.get("organization"));
    entry.menu_project = menu_entries(menu.get("project"));
    entry.crds = spec
        .get("crds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let non_empty =
        |v: Option<&Value>| v.and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_owned);
    entry.custom_components = spec
        .get("customComponents")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(kind, pages)| {
            let pages = CustomComponents {
                list: non_empty(pages.get("list")),
                detail: non_empty(pages.get("detail")),
                create: non_empty(pages.get("create")),
            };
            (kind.clone(), pages)
        })
        .collect();
}

fn menu_entries(list: Option<&Value>) -> Vec<MenuEntry> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let crd = item.get("crd").and_then(Value::as_str).filter(|c| is_crd_name(c))?;
            let label = item
                .get("label")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map_or_else(|| crd_label(crd), str::to_owned);
            Some(MenuEntry { crd: crd.to_owned(), label })
        })
        .collect()
}

/// `certificaterequests.cert-manager.io` → `Certificaterequests`: the plural,
/// capitalised, for menu entries without a label.
pub fn crd_label(crd: &str) -> String {
    let plural = crd.split('.').next().unwrap_or(crd);
    let mut chars = plural.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Builds the registry from the installations and the definition answers
/// (keyed by installation name). Sorted by display name, then name.
pub fn registry(
    cluster_id: &str,
    installations: &[Installation],
    answers: &BTreeMap<String, DefinitionAnswer>,
) -> Registry {
    let mut plugins: Vec<PluginEntry> =
        installations.iter().map(|i| entry(i, answers.get(&i.name))).collect();
    plugins.sort_by(|a, b| {
        a.display_name
            .to_lowercase()
            .cmp(&b.display_name.to_lowercase())
            .then(a.installation_name.cmp(&b.installation_name))
    });
    Registry { cluster_id: cluster_id.to_owned(), plugins }
}

/// A page file a definition may name: a relative path of plain segments.
/// `..`, `.`, empty segments, backslashes, `%`, queries and fragments are
/// refused, so a definition can never point its iframe at another plugin's
/// pages or anywhere else on plugin-proxy.
pub fn safe_page_path(file: &str) -> bool {
    let file = file.strip_prefix('/').unwrap_or(file);
    !file.is_empty()
        && file.len() <= 512
        && file.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~@+".contains(&b))
        })
}

/// Where a custom page is framed from: its installation's own origin, and the URL there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageUrl {
    /// `<scheme>://<installation>.<plugins host>`: the only origin the frame's messages are
    /// taken from and sent to.
    pub origin: String,
    /// `<origin>/clusters/<cluster-id>/plugins/<installation-name>/<version>/console/<file>`: the
    /// seed's path, on the installation's own origin.
    pub src: String,
}

/// The iframe URL of a custom page. `None` for a file that is not a [`safe_page_path`], or an
/// installation whose name is not a DNS label (it cannot get an origin of its own).
pub fn custom_page(
    plugin_proxy_url: &str,
    cluster_id: &str,
    installation_name: &str,
    version: &str,
    file: &str,
) -> Option<PageUrl> {
    if !safe_page_path(file) || cluster_id.is_empty() || version.is_empty() {
        return None;
    }
    let origin =
        fundament_plugin_origin::PluginOrigins::from_base(plugin_proxy_url)?.of(installation_name)?;
    let src = format!(
        "{origin}/clusters/{}/plugins/{}/{}/console/{}",
        encode_segment(cluster_id),
        encode_segment(installation_name),
        encode_segment(version),
        file.strip_prefix('/').unwrap_or(file)
    );
    Some(PageUrl { origin, src })
}

/// Percent-encodes one path segment as `encodeURIComponent` does.
pub fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `<plural>.<group>`: a CRD's name.
pub fn is_crd_name(name: &str) -> bool {
    name.contains('.') && is_dns1123_subdomain(name)
}

/// A cluster id: a hyphenated UUID.
pub fn is_cluster_id(id: &str) -> bool {
    id.len() == 36
        && id.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// What the console needs to know about a kind, from its CRD.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KindInfo {
    pub kind: String,
    pub plural: String,
    pub group: String,
    /// The storage version (else the first served one).
    pub version: String,
    pub namespaced: bool,
}

/// Reads a CustomResourceDefinition.
pub fn kind_info(crd: &Value) -> Option<KindInfo> {
    let spec = crd.get("spec")?;
    let names = spec.get("names")?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let versions = spec.get("versions").and_then(Value::as_array).cloned().unwrap_or_default();
    let version = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .or_else(|| versions.first())
        .map(|v| text(v, "name"))
        .unwrap_or_default();
    let info = KindInfo {
        kind: text(names, "kind"),
        plural: text(names, "plural"),
        group: text(spec, "group"),
        version,
        namespaced: spec.get("scope").and_then(Value::as_str) != Some("Cluster"),
    };
    (!info.kind.is_empty() && !info.plural.is_empty() && !info.version.is_empty()).then_some(info)
}

/// Console paths of plugin pages (docs/architecture.md, "A plugin page, end to end").
pub mod paths {
    use super::encode_segment;

    /// `/[projects/<project>/]plugin-resources/<installation>/<crd>`.
    pub fn list(project: Option<&str>, installation: &str, crd: &str) -> String {
        let base = project.map(|p| format!("/projects/{}", encode_segment(p))).unwrap_or_default();
        format!("{base}/plugin-resources/{}/{}", encode_segment(installation), encode_segment(crd))
    }

    /// The create page of a kind.
    pub fn create(project: Option<&str>, installation: &str, crd: &str) -> String {
        format!("{}/create", list(project, installation, crd))
    }

    /// The detail page of an object; its namespace in `?ns=`.
    pub fn detail(
        project: Option<&str>,
        installation: &str,
        crd: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> String {
        let mut path = format!("{}/{}", list(project, installation, crd), encode_segment(name));
        if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
            path.push_str("?ns=");
            path.push_str(&encode_segment(ns));
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn installation(name: &str, phase: &str, ready: bool, hash: &str) -> Value {
        json!({
            "metadata": {"name": name, "uid": format!("uid-{name}")},
            "spec": {"definitionRef": {"pluginName": "cert-manager", "pluginVersion": "v1.17.2", "definitionHash": hash}},
            "status": {"phase": phase, "ready": ready, "message": "waiting"}
        })
    }

    fn definition() -> Value {
        json!({
            "metadata": {"name": "cert-manager", "displayName": "Cert Manager", "description": "Certificates."},
            "spec": {
                "menu": {
                    "organization": [{"crd": "clusterissuers.cert-manager.io", "label": "Cluster issuers"}],
                    "project": [{"crd": "certificates.cert-manager.io"}, {"crd": "not a crd"}]
                },
                "crds": ["certificates.cert-manager.io", "clusterissuers.cert-manager.io"],
                "customComponents": {"Certificate": {"list": "certificates-list.html", "detail": "", "create": null}}
            }
        })
    }

    fn found(hash: &str) -> DefinitionAnswer {
        DefinitionAnswer::Found { hash: hash.into(), definition: definition() }
    }

    #[test]
    fn reads_installations_and_skips_unaddressable_ones() {
        let list = json!({"items": [
            installation("acme-corp--cert-manager", "Running", true, "sha256:a"),
            {"metadata": {"name": "no-uid"}, "spec": {"definitionRef": {"pluginName": "x"}}},
            "garbage"
        ]});
        let found = installations(&list);
        assert_eq!(found.len(), 1);
        assert!(found[0].is_running());
        assert_eq!(found[0].pinned_hash, "sha256:a");
        assert!(installations(&json!({"kind": "Status"})).is_empty());
    }

    #[test]
    fn a_matching_definition_makes_a_ready_entry() {
        let i = &installations(
            &json!({"items": [installation("acme-corp--cert-manager", "Running", true, "sha256:a")]}),
        )[0];
        let e = entry(i, Some(&found("sha256:a")));
        assert_eq!(e.state, PluginState::Ready);
        assert_eq!(e.display_name, "Cert Manager");
        assert_eq!(
            e.menu_organization,
            [MenuEntry { crd: "clusterissuers.cert-manager.io".into(), label: "Cluster issuers".into() }]
        );
        assert_eq!(
            e.menu_project,
            [MenuEntry { crd: "certificates.cert-manager.io".into(), label: "Certificates".into() }]
        );
        assert_eq!(e.custom_page("Certificate", ResourceView::List), Some("certificates-list.html"));
        assert_eq!(e.custom_page("Certificate", ResourceView::Detail), None, "empty strings are no page");
        assert_eq!(e.custom_page("Certificate", ResourceView::Create), None);
        assert!(e.offers("clusterissuers.cert-manager.io"));
        assert!(!e.offers("secrets.core"));
    }

    #[test]
    fn a_hash_mismatch_is_shown_not_dropped() {
        let i = &installations(
            &json!({"items": [installation("acme-corp--cert-manager", "Running", true, "sha256:a")]}),
        )[0];
        let PluginState::Unavailable(reason) = entry(i, Some(&found("sha256:b"))).state else { panic!() };
        assert!(reason.contains("sha256:a") && reason.contains("sha256:b"), "{reason}");
        let i = &installations(&json!({"items": [installation("x", "Running", true, "")]}))[0];
        assert!(matches!(entry(i, Some(&found("sha256:b"))).state, PluginState::Unavailable(_)));
        assert!(matches!(entry(i, Some(&DefinitionAnswer::Unreachable)).state, PluginState::Unavailable(_)));
        assert!(
            matches!(entry(i, Some(&DefinitionAnswer::Missing("gone".into()))).state, PluginState::Unavailable(r) if r == "gone")
        );
    }

    #[test]
    fn not_running_installations_keep_their_phase() {
        let i = &installations(
            &json!({"items": [installation("acme-corp--external-dns", "Pending", false, "")]}),
        )[0];
        let e = entry(i, None);
        assert_eq!(e.state, PluginState::NotRunning { phase: "Pending".into(), message: "waiting".into() });
        assert!(!e.is_ready());
        let i = &installations(&json!({"items": [installation("y", "Running", false, "sha256:a")]}))[0];
        assert!(!entry(i, Some(&found("sha256:a"))).is_ready(), "running but not ready");
    }

    #[test]
    fn a_definition_with_a_traversing_page_is_unavailable() {
        let mut definition = definition();
        definition["spec"]["customComponents"]["Certificate"]["list"] =
            json!("../../other--plugin/v1/console/x.html");
        let i = &installations(
            &json!({"items": [installation("acme-corp--cert-manager", "Running", true, "sha256:a")]}),
        )[0];
        let e = entry(i, Some(&DefinitionAnswer::Found { hash: "sha256:a".into(), definition }));
        assert!(matches!(e.state, PluginState::Unavailable(_)));
    }

    #[test]
    fn registry_is_sorted_by_display_name() {
        let list = json!({"items": [
            installation("b--zeta", "Running", true, "sha256:a"),
            installation("a--pending", "Pending", false, ""),
        ]});
        let insts = installations(&list);
        let answers = BTreeMap::from([("b--zeta".to_owned(), found("sha256:a"))]);
        let r = registry("c", &insts, &answers);
        let names: Vec<_> = r.plugins.iter().map(|p| p.display_name.as_str()).collect();
        assert_eq!(names, ["Cert Manager", "cert-manager"]);
        assert!(r.find("a--pending").is_some());
    }

    #[test]
    fn page_urls_are_built_as_the_seed_says_on_the_installations_origin() {
        let src =
            |base: &str, c: &str, i: &str, v: &str, f: &str| custom_page(base, c, i, v, f).map(|p| p.src);
        let page = custom_page(
            "http://localhost:8082/",
            "c-1",
            "acme-corp--cert-manager",
            "v1.17.2",
            "/certificates-list.html",
        )
        .unwrap();
        assert_eq!(page.origin, "http://acme-corp--cert-manager.localhost:8082");
        assert_eq!(
            page.src,
            "http://acme-corp--cert-manager.localhost:8082/clusters/c-1/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html"
        );
        assert_eq!(
            src("https://p.example", "c", "i", "v", "pages/a.html").as_deref(),
            Some("https://i.p.example/clusters/c/plugins/i/v/console/pages/a.html")
        );
        assert_eq!(src("https://p.example", "c", "a.b", "v", "x.html"), None, "not a DNS label: no origin");
        for hostile in [
            "../x.html",
            "a/../../b",
            "https://evil.example/x",
            "a\\b",
            "%2e%2e/x",
            "x?y",
            "",
            "/",
            "a//b",
            "./a",
        ] {
            assert_eq!(src("https://p.example", "c", "i", "v", hostile), None, "{hostile}");
        }
        assert_eq!(src("https://p.example", "", "i", "v", "a.html"), None);
    }

    #[test]
    fn names_and_ids() {
        assert!(is_dns1123_subdomain("web-tls.example"));
        assert!(!is_dns1123_subdomain("Web"));
        assert!(!is_dns1123_subdomain(&"a".repeat(254)));
        assert!(is_dns1123_label("prod"));
        assert!(!is_dns1123_label("-prod"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_crd_name("certificates.cert-manager.io"));
        assert!(!is_crd_name("certificates"));
        assert!(is_cluster_id("019b4000-2000-7000-8000-000000000001"));
        assert!(!is_cluster_id("019b4000-2000-7000-8000-00000000000g"));
        assert!(!is_cluster_id("../../etc/passwd-000000000000000000000"));
        assert_eq!(crd_label("certificaterequests.cert-manager.io"), "Certificaterequests");
    }

    #[test]
    fn kind_info_takes_the_storage_version() {
        let crd = json!({"spec": {
            "group": "postgresql.cnpg.io", "scope": "Namespaced",
            "names": {"kind": "Database", "plural": "databases"},
            "versions": [{"name": "v1beta1", "storage": false}, {"name": "v1", "storage": true}]
        }});
        let info = kind_info(&crd).unwrap();
        assert_eq!((info.kind.as_str(), info.version.as_str(), info.namespaced), ("Database", "v1", true));
        assert!(kind_info(&json!({"spec": {"names": {}}})).is_none());
        let cluster = json!({"spec": {"group": "g", "scope": "Cluster", "names": {"kind": "K", "plural": "ks"}, "versions": [{"name": "v1"}]}});
        assert!(!kind_info(&cluster).unwrap().namespaced);
    }

    #[test]
    fn console_paths() {
        assert_eq!(
            paths::list(None, "acme-corp--cert-manager", "certificates.cert-manager.io"),
            "/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io"
        );
        assert_eq!(
            paths::detail(
                Some("analytics"),
                "i",
                "databases.postgresql.cnpg.io",
                "app-db",
                Some("analytics")
            ),
            "/projects/analytics/plugin-resources/i/databases.postgresql.cnpg.io/app-db?ns=analytics"
        );
        assert_eq!(paths::create(None, "i", "k.g"), "/plugin-resources/i/k.g/create");
    }
}
