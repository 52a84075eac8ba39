//! The plugin folder as the check needs it: its definition, the kinds of its CRDs, its
//! fixtures (what the mock Kubernetes API serves) and the pages to run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fundament_plugin_types::{AllowedResource, PluginDefinition, ResourceRequest};
use serde::Deserialize;
use serde_json::Value;

use crate::CheckError;
use crate::finding::CheckedPage;

/// Where a kind lives in the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindInfo {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub namespaced: bool,
}

/// A plugin folder, read.
#[derive(Debug, Clone)]
pub struct PluginFolder {
    pub dir: PathBuf,
    pub definition: PluginDefinition,
    /// By kind, from `crds/*.yaml`.
    pub kinds: BTreeMap<String, KindInfo>,
    /// Every object of `fixtures/*.yaml`.
    pub fixtures: Vec<Value>,
}

impl PluginFolder {
    /// Reads `dir`: `definition.yaml` (strictly, as the catalog does), `crds/`, `fixtures/`.
    pub fn read(dir: &Path) -> Result<PluginFolder, CheckError> {
        if !dir.join("definition.yaml").is_file() {
            return Err(CheckError::NoDefinition(dir.to_path_buf()));
        }
        let definition = fundament_organization_api::read_definition(dir)?.document;
        let mut kinds = BTreeMap::new();
        for crd in yaml_documents(&dir.join("crds"))? {
            if let Some((kind, info)) = kind_of_crd(&crd) {
                kinds.insert(kind, info);
            }
        }
        let fixtures = yaml_documents(&dir.join("fixtures"))?;
        Ok(PluginFolder { dir: dir.to_path_buf(), definition, kinds, fixtures })
    }

    /// The pages of `spec.customComponents`, as `console/<file>`, each with its kind and view.
    pub fn pages(&self) -> Vec<CheckedPage> {
        let mut pages = Vec::new();
        for (kind, views) in &self.definition.spec.custom_components {
            for (view, file) in [("list", &views.list), ("detail", &views.detail), ("create", &views.create)]
            {
                if let Some(file) = file {
                    pages.push(CheckedPage { file: format!("console/{file}"), kind: kind.clone(), view });
                }
            }
        }
        pages
    }

    /// Whether `spec.allowedResources` admits the request.
    pub fn admits(&self, request: &ResourceRequest<'_>) -> bool {
        self.allowed().iter().any(|a| a.admits(request))
    }

    fn allowed(&self) -> &[AllowedResource] {
        &self.definition.spec.allowed_resources
    }

    /// The first fixture of `kind` (what a detail page is opened on).
    pub fn first_fixture(&self, kind: &str) -> Option<&Value> {
        self.fixtures.iter().find(|o| o["kind"] == kind)
    }

    /// The fixtures of a resource (`group`, `version`, plural `resource`) in `namespace`
    /// (all namespaces when `None`).
    pub fn fixtures_of<'a>(
        &'a self,
        group: &'a str,
        resource: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.fixtures.iter().filter(move |o| {
            let (g, _) = group_version(o);
            g == group
                && self.plural_of(o).as_deref() == Some(resource)
                && namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns))
        })
    }

    /// The plural resource name of an object: from the CRDs, else the kind lowercased plus `s`
    /// (right for the core kinds a plugin's fixtures hold: events, pods, secrets, configmaps).
    fn plural_of(&self, object: &Value) -> Option<String> {
        let kind = object["kind"].as_str()?;
        Some(match self.kinds.get(kind) {
            Some(info) => info.plural.clone(),
            None => format!("{}s", kind.to_ascii_lowercase()),
        })
    }
}

/// `(group, version)` of an object's `apiVersion` (`v1` is the core group).
pub fn group_version(object: &Value) -> (&str, &str) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The kind a CRD defines and where it lives (its storage version, else the first).
fn kind_of_crd(crd: &Value) -> Option<(String, KindInfo)> {
    let spec = &crd["spec"];
    let kind = spec["names"]["kind"].as_str()?.to_string();
    let versions = spec["versions"].as_array()?;
    let version = versions.iter().find(|v| v["storage"] == true).or(versions.first())?;
    let info = KindInfo {
        group: spec["group"].as_str()?.to_string(),
        version: version["name"].as_str()?.to_string(),
        plural: spec["names"]["plural"].as_str()?.to_string(),
        namespaced: spec["scope"].as_str() != Some("Cluster"),
    };
    Some((kind, info))
}

/// Every YAML document of every `*.yaml`/`*.yml` file in `dir` (none when it does not exist),
/// in file name order. A file that is not YAML is skipped: lint reports it.
fn yaml_documents(dir: &Path) -> Result<Vec<Value>, CheckError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CheckError::io(dir, e)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| CheckError::io(&file, e))?;
        for doc in serde_yaml::Deserializer::from_str(&text) {
            if let Ok(value) = Value::deserialize(doc)
                && value.is_object()
            {
                out.push(value);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugins() -> PathBuf {
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
            .join("../../plugins")
    }

    #[test]
    fn reads_kinds_fixtures_and_pages() {
        let p = PluginFolder::read(&plugins().join("cert-manager")).unwrap();
        let cert = &p.kinds["Certificate"];
        assert_eq!(
            (cert.group.as_str(), cert.plural.as_str(), cert.namespaced),
            ("cert-manager.io", "certificates", true)
        );
        assert!(!p.kinds["ClusterIssuer"].namespaced);
        assert_eq!(p.pages().len(), 8);
        assert!(p.first_fixture("Certificate").is_some());
        assert!(p.fixtures_of("cert-manager.io", "certificates", None).count() > 0);
        assert!(p.fixtures_of("", "events", None).count() > 0, "core kinds get a plural too");
    }

    #[test]
    fn a_folder_without_definition_is_named() {
        let err = PluginFolder::read(Path::new("/nonexistent")).unwrap_err();
        assert_eq!(err.to_string(), "/nonexistent: no definition.yaml in that folder");
    }
}
