//! `PluginDefinition` (`fundament.io/v1`): a plugin's `definition.yaml`.
//!
//! The strict schema (unknown fields, field paths in every message) is
//! organization-api's job; these types read a document that passed it, and
//! read one that did not as far as it goes, so that every field is named in
//! one place.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::allowed::AllowedResource;
use crate::guide::KindGuide;
use crate::serde_util::null_default;

/// `sha256:` + lower-case hex of the manifest bytes, as upstream's
/// `HashManifest`: the hash an installation pins. It covers the file exactly
/// as published, so a reformatted definition is a different definition.
pub fn hash_manifest(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hash = String::with_capacity(7 + 64);
    hash.push_str("sha256:");
    for byte in digest {
        hash.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        hash.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
    }
    hash
}

/// A plugin definition document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginDefinition {
    #[serde(default, deserialize_with = "null_default")]
    pub api_version: String,
    #[serde(default, deserialize_with = "null_default")]
    pub kind: String,
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: DefinitionMetadata,
    #[serde(default, deserialize_with = "null_default")]
    pub spec: DefinitionSpec,
}

impl PluginDefinition {
    /// Reads a definition from its JSON form (organization-api's answer, or the
    /// YAML parsed into JSON).
    pub fn from_value(document: &Value) -> Result<PluginDefinition, serde_json::Error> {
        PluginDefinition::deserialize(document)
    }

    /// The guide of `kind`, if the definition ships one.
    pub fn guide(&self, kind: &str) -> Option<&KindGuide> {
        self.spec.guides.get(kind)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionMetadata {
    /// The catalog name; required (the schema says so).
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// The published version; required.
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    #[serde(default, deserialize_with = "null_default")]
    pub display_name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    #[serde(default, deserialize_with = "null_default")]
    pub author: String,
    #[serde(default, deserialize_with = "null_default")]
    pub license: String,
    #[serde(default, deserialize_with = "null_default")]
    pub icon: String,
    #[serde(default, deserialize_with = "null_default")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urls: Option<Urls>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Urls {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionSpec {
    /// The plugin's image as a digest reference; development definitions have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub permissions: Permissions,
    #[serde(default, deserialize_with = "null_default")]
    pub menu: Menu,
    /// The CRDs the plugin manages, `<plural>.<group>`.
    #[serde(default, deserialize_with = "null_default")]
    pub crds: Vec<String>,
    /// Kind → the pages the plugin ships for it under `console/`.
    #[serde(default, deserialize_with = "null_default")]
    pub custom_components: BTreeMap<String, CustomComponents>,
    /// CRD name → hints for the generated views.
    #[serde(default, deserialize_with = "null_default")]
    pub ui_hints: BTreeMap<String, UiHint>,
    #[serde(default, deserialize_with = "null_default")]
    pub allowed_resources: Vec<AllowedResource>,
    /// Kind → what the console tells users about objects of that kind
    /// (condition reasons, labels, refusals); see [`KindGuide`].
    #[serde(default, deserialize_with = "null_default")]
    pub guides: BTreeMap<String, KindGuide>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    #[serde(default, deserialize_with = "null_default")]
    pub capabilities: Vec<String>,
    /// Materialised as the ClusterRole of the plugin's ServiceAccount.
    #[serde(default, deserialize_with = "null_default")]
    pub rbac: Vec<RbacRule>,
}

/// One RBAC policy rule, with Kubernetes' field names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RbacRule {
    #[serde(default, deserialize_with = "null_default")]
    pub api_groups: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub resources: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub verbs: Vec<String>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Menu {
    #[serde(default, deserialize_with = "null_default")]
    pub organization: Vec<MenuItem>,
    #[serde(default, deserialize_with = "null_default")]
    pub project: Vec<MenuItem>,
}

/// One sidebar entry as written; the console drops entries whose `crd` is not
/// a CRD name, and the linter reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MenuItem {
    #[serde(default, deserialize_with = "null_default")]
    pub crd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The page files of one kind, relative to `console/`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomComponents {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiHint {
    #[serde(default, deserialize_with = "null_default")]
    pub form_groups: Vec<FormGroup>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_mapping: Option<StatusMapping>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormGroup {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusMapping {
    #[serde(default, deserialize_with = "null_default")]
    pub json_path: String,
    #[serde(default, deserialize_with = "null_default")]
    pub values: BTreeMap<String, Badge>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Badge>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Badge {
    #[serde(default, deserialize_with = "null_default")]
    pub badge: String,
    #[serde(default, deserialize_with = "null_default")]
    pub label: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hash_is_sha256_of_the_bytes() {
        // The SHA-256 test vector of "abc".
        assert_eq!(
            hash_manifest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(hash_manifest(b"abc"), hash_manifest(b"abc\n"));
    }

    #[test]
    fn reads_a_definition_and_treats_null_as_absent() {
        let d = PluginDefinition::from_value(&json!({
            "apiVersion": "fundament.io/v1",
            "kind": "PluginDefinition",
            "metadata": {"name": "demo", "version": "v0.1.0", "displayName": "Demo", "tags": null},
            "spec": {
                "permissions": {"rbac": [{"apiGroups": [""], "resources": ["events"], "verbs": ["get"]}]},
                "menu": {"organization": null, "project": [{"crd": "items.demo.io", "label": "Items"}]},
                "crds": ["items.demo.io"],
                "customComponents": {"Item": {"list": "items.html"}},
                "allowedResources": [{"group": "", "version": "v1", "resource": "events", "verbs": ["get"]}],
                "guides": {"Item": {"labels": [{"key": "demo.io/owner", "description": "Who owns it."}]}}
            }
        }))
        .unwrap();
        assert_eq!((d.metadata.name.as_str(), d.metadata.display_name.as_str()), ("demo", "Demo"));
        assert!(d.metadata.tags.is_empty() && d.spec.menu.organization.is_empty());
        assert_eq!(d.spec.menu.project[0].label.as_deref(), Some("Items"));
        assert_eq!(d.spec.permissions.rbac[0].resources, ["events"]);
        assert_eq!(d.spec.custom_components["Item"].list.as_deref(), Some("items.html"));
        assert_eq!(d.spec.allowed_resources[0].resource, "events");
        assert_eq!(d.guide("Item").unwrap().label_description("demo.io/owner"), Some("Who owns it."));
        assert!(d.guide("Other").is_none());
    }

    #[test]
    fn a_field_of_the_wrong_type_is_an_error() {
        let err = PluginDefinition::from_value(&json!({"spec": {"crds": "items.demo.io"}})).unwrap_err();
        assert!(err.to_string().contains("expected a sequence"), "{err}");
    }
}
