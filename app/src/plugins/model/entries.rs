//! The registry: a cluster's plugin installations joined with their
//! definitions, checked against the definition hash each one pins.

use std::collections::BTreeMap;

use fundament_plugin_types::{KindGuide, PluginDefinition, PluginInstallation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::names::is_crd_name;
use super::pages::safe_page_path;

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
    /// Kind → what the generated views say about its conditions, labels and
    /// refused writes (`spec.guides` of the definition).
    pub guides: KindGuides,
}

/// A plugin's guides, kind → [`KindGuide`], kept as their JSON text and read by the page of a
/// kind. The registry is read by the main wasm chunk (for the sidebar, on every first load);
/// typed, it carried the guides' deserializers there too (about 1½ KB brotli), which only the
/// plugin routes' chunk uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KindGuides(String);

impl KindGuides {
    pub fn new(guides: &BTreeMap<String, KindGuide>) -> KindGuides {
        if guides.is_empty() {
            return KindGuides::default();
        }
        // A map of strings to plain structs: writing it as JSON cannot fail.
        KindGuides(serde_json::to_string(guides).unwrap_or_default())
    }

    /// The guide of a kind; an empty one (no advice) if the plugin ships none.
    pub fn of(&self, kind: &str) -> KindGuide {
        if self.0.is_empty() {
            return KindGuide::default();
        }
        serde_json::from_str::<BTreeMap<String, KindGuide>>(&self.0)
            .ok()
            .and_then(|mut guides| guides.remove(kind))
            .unwrap_or_default()
    }
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Registry {
    pub cluster_id: String,
    /// Sorted by display name.
    pub plugins: Vec<PluginEntry>,
    /// The installation list's resourceVersion: where the browser's watch of the
    /// installations starts.
    #[serde(default)]
    pub resource_version: String,
    /// Some definition could not be fetched from organization-api just now (a kept copy was
    /// used, or the plugin is unavailable): the browser asks again until it can.
    #[serde(default)]
    pub organization_api_unreachable: bool,
}

/// Two registries are equal when they show the same plugins: the version moves with every
/// write to the cluster, and a newer answer with the same plugins must change nothing on the page.
impl PartialEq for Registry {
    fn eq(&self, other: &Self) -> bool {
        self.cluster_id == other.cluster_id
            && self.plugins == other.plugins
            && self.organization_api_unreachable == other.organization_api_unreachable
    }
}

impl Eq for Registry {}

impl Registry {
    /// The installation with this name.
    pub fn find(&self, installation_name: &str) -> Option<&PluginEntry> {
        self.plugins.iter().find(|p| p.installation_name == installation_name)
    }
}

/// The installations of a `PluginInstallationList`; items that are not
/// installations (no definition reference) or have no name or uid are
/// skipped: they cannot be addressed.
pub fn installations(list: &Value) -> Vec<PluginInstallation> {
    list.get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| PluginInstallation::from_value(item).ok())
        .filter(|i| {
            !i.metadata.name.is_empty()
                && !i.metadata.uid.is_empty()
                && !i.definition_ref().plugin_name.is_empty()
        })
        .collect()
}

/// What organization-api said about an installation's definition.
#[derive(Debug, Clone, PartialEq)]
pub enum DefinitionAnswer {
    /// `{hash, definition}` of `GetPluginDefinition` (boxed: a definition is large
    /// next to the other answers).
    Found { hash: String, definition: Box<PluginDefinition> },
    /// organization-api could not be asked; this is the copy the console fetched earlier
    /// with the hash the installation pins (definitions are content-addressed by it).
    Kept { hash: String, definition: Box<PluginDefinition> },
    /// No such definition (the reason is for users).
    Missing(String),
    /// organization-api could not be asked (details are in the server log).
    Unreachable,
}

/// What an installation whose definition could not be fetched says.
pub const DEFINITION_UNREACHABLE: &str = "Its definition cannot be loaded right now: organization-api cannot be reached. The console tries again by itself.";

/// What the sidebar says while organization-api cannot be reached.
pub const ORGANIZATION_API_UNREACHABLE: &str =
    "organization-api cannot be reached: plugins are shown as last loaded.";

/// One registry entry: the installation, and its definition when it runs.
/// `answer` is `None` for installations that are not running.
pub fn entry(installation: &PluginInstallation, answer: Option<&DefinitionAnswer>) -> PluginEntry {
    let pinned = installation.definition_ref();
    let mut entry = PluginEntry {
        installation_name: installation.metadata.name.clone(),
        installation_uid: installation.metadata.uid.clone(),
        plugin_name: pinned.plugin_name.clone(),
        version: pinned.plugin_version.clone(),
        display_name: pinned.plugin_name.clone(),
        description: String::new(),
        state: PluginState::Ready,
        menu_organization: Vec::new(),
        menu_project: Vec::new(),
        crds: Vec::new(),
        custom_components: BTreeMap::new(),
        guides: KindGuides::default(),
    };
    if !installation.is_running() {
        let status = &installation.status;
        let phase = if status.phase.is_empty() { "Unknown".to_owned() } else { status.phase.clone() };
        entry.state = PluginState::NotRunning { phase, message: status.message.clone() };
        return entry;
    }
    let (hash, definition) = match answer {
        Some(DefinitionAnswer::Found { hash, definition } | DefinitionAnswer::Kept { hash, definition }) => {
            (hash, definition)
        }
        Some(DefinitionAnswer::Missing(reason)) => {
            entry.state = PluginState::Unavailable(reason.clone());
            return entry;
        }
        Some(DefinitionAnswer::Unreachable) | None => {
            entry.state = PluginState::Unavailable(DEFINITION_UNREACHABLE.to_owned());
            return entry;
        }
    };
    apply_definition(&mut entry, definition);
    if pinned.definition_hash.is_empty() {
        entry.state = PluginState::Unavailable(
            "The installation pins no definition hash, so its definition cannot be verified.".to_owned(),
        );
    } else if &pinned.definition_hash != hash {
        entry.state = PluginState::Unavailable(format!(
            "Definition mismatch: the installation pins {} but organization-api serves {} for {}@{}.",
            pinned.definition_hash, hash, pinned.plugin_name, pinned.plugin_version
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

/// Takes the fields the console uses from a definition: blank texts are
/// absent, and menu entries that do not name a CRD are dropped (the linter
/// reports both).
fn apply_definition(entry: &mut PluginEntry, definition: &PluginDefinition) {
    let meta = &definition.metadata;
    let spec = &definition.spec;
    let display = meta.display_name.trim();
    if !display.is_empty() {
        entry.display_name = display.to_owned();
    }
    entry.description = meta.description.trim().to_owned();
    entry.menu_organization = menu_entries(&spec.menu.organization);
    entry.menu_project = menu_entries(&spec.menu.project);
    entry.crds = spec.crds.clone();
    let non_empty = |v: &Option<String>| v.as_deref().filter(|s| !s.trim().is_empty()).map(str::to_owned);
    entry.custom_components = spec
        .custom_components
        .iter()
        .map(|(kind, pages)| {
            let pages = CustomComponents {
                list: non_empty(&pages.list),
                detail: non_empty(&pages.detail),
                create: non_empty(&pages.create),
            };
            (kind.clone(), pages)
        })
        .collect();
    entry.guides = KindGuides::new(&spec.guides);
}

fn menu_entries(items: &[fundament_plugin_types::MenuItem]) -> Vec<MenuEntry> {
    items
        .iter()
        .filter(|item| is_crd_name(&item.crd))
        .map(|item| {
            let label = item
                .label
                .as_deref()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map_or_else(|| crd_label(&item.crd), str::to_owned);
            MenuEntry { crd: item.crd.clone(), label }
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
    installations: &[PluginInstallation],
    answers: &BTreeMap<String, DefinitionAnswer>,
) -> Registry {
    let mut plugins: Vec<PluginEntry> =
        installations.iter().map(|i| entry(i, answers.get(&i.metadata.name))).collect();
    plugins.sort_by(|a, b| {
        a.display_name
            .to_lowercase()
            .cmp(&b.display_name.to_lowercase())
            .then(a.installation_name.cmp(&b.installation_name))
    });
    let organization_api_unreachable =
        answers.values().any(|a| matches!(a, DefinitionAnswer::Kept { .. } | DefinitionAnswer::Unreachable));
    Registry {
        cluster_id: cluster_id.to_owned(),
        plugins,
        resource_version: String::new(),
        organization_api_unreachable,
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
                "customComponents": {"Certificate": {"list": "certificates-list.html", "detail": "", "create": null}},
                "guides": {"Certificate": {"labels": [{"key": "cert-manager.io/issuer", "description": "Who signs it."}]}}
            }
        })
    }

    fn typed(definition: &Value) -> PluginDefinition {
        PluginDefinition::from_value(definition).unwrap()
    }

    fn found(hash: &str) -> DefinitionAnswer {
        DefinitionAnswer::Found { hash: hash.into(), definition: Box::new(typed(&definition())) }
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
        assert_eq!(found[0].definition_ref().definition_hash, "sha256:a");
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
        assert_eq!(
            e.guides.of("Certificate").label_description("cert-manager.io/issuer"),
            Some("Who signs it.")
        );
        assert_eq!(e.guides.of("Issuer"), KindGuide::default(), "no guide: no advice");
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
        let e = entry(
            i,
            Some(&DefinitionAnswer::Found {
                hash: "sha256:a".into(),
                definition: Box::new(typed(&definition)),
            }),
        );
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
    fn unlabelled_menu_entries_are_named_after_their_plural() {
        assert_eq!(crd_label("certificaterequests.cert-manager.io"), "Certificaterequests");
        assert_eq!(crd_label(""), "");
    }
}
