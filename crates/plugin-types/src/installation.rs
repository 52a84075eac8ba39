//! `PluginInstallation` (`plugins.fundament.io/v1`): which plugin definition a
//! cluster runs, pinned by its content hash.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::serde_util::or_default;

/// Marks installations of development plugin folders: plugin-proxy serves their
/// pages without long-lived caching, so edits show on reload.
pub const DEVELOPMENT_LABEL: &str = "fundament.io/development";

/// A PluginInstallation as the services read it. `spec.definitionRef` with
/// `pluginName` and `pluginVersion` is required, as the CRD requires it: an
/// object without it cannot be tied to any definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginInstallation {
    #[serde(default)]
    pub metadata: InstallationMetadata,
    pub spec: InstallationSpec,
    #[serde(default, deserialize_with = "or_default")]
    pub status: InstallationStatus,
}

/// The parts of `metadata` that are read. Wrong types read as empty, as the
/// untyped readers did: an empty name or uid matches nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallationMetadata {
    #[serde(default, deserialize_with = "or_default")]
    pub name: String,
    #[serde(default, deserialize_with = "or_default")]
    pub uid: String,
    #[serde(default, deserialize_with = "or_default")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    #[serde(default, deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallationSpec {
    pub definition_ref: DefinitionRef,
}

/// `spec.definitionRef`: the definition by name and version, and the hash it
/// must have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionRef {
    /// The catalog name of the plugin (`metadata.name` of its definition).
    pub plugin_name: String,
    /// The published version of the definition.
    pub plugin_version: String,
    /// `sha256:<hex>` of the definition manifest; empty means unpinned.
    #[serde(default)]
    pub definition_hash: String,
}

/// `status`, as the plugin controller writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallationStatus {
    #[serde(default, deserialize_with = "or_default")]
    pub phase: String,
    #[serde(default, deserialize_with = "or_default")]
    pub ready: bool,
    #[serde(default, deserialize_with = "or_default")]
    pub message: String,
}

/// Why an object is not a readable PluginInstallation.
#[derive(Debug, thiserror::Error)]
#[error("not a valid PluginInstallation: {0}")]
pub struct InstallationError(#[from] serde_json::Error);

impl PluginInstallation {
    /// Reads an installation from the JSON the API server answers.
    pub fn from_value(object: &Value) -> Result<PluginInstallation, InstallationError> {
        Ok(PluginInstallation::deserialize(object)?)
    }

    /// The pinned definition.
    pub fn definition_ref(&self) -> &DefinitionRef {
        &self.spec.definition_ref
    }

    /// Whether it installs a development plugin folder ([`DEVELOPMENT_LABEL`] is `"true"`).
    pub fn is_development(&self) -> bool {
        self.metadata.labels.get(DEVELOPMENT_LABEL).is_some_and(|v| v == "true")
    }

    /// Running and ready: the phase the console uses plugins in.
    pub fn is_running(&self) -> bool {
        self.status.phase == "Running" && self.status.ready
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_an_installation() {
        let i = PluginInstallation::from_value(&json!({
            "metadata": {"name": "acme--demo", "uid": "u-1", "generation": 3,
                         "labels": {"fundament.io/development": "true"}},
            "spec": {"definitionRef": {"pluginName": "demo", "pluginVersion": "v1", "definitionHash": "sha256:a"}},
            "status": {"phase": "Running", "ready": true, "message": "ok"}
        }))
        .unwrap();
        assert_eq!((i.metadata.name.as_str(), i.metadata.uid.as_str()), ("acme--demo", "u-1"));
        assert_eq!(i.metadata.generation, Some(3));
        assert_eq!(i.definition_ref().plugin_name, "demo");
        assert_eq!(i.definition_ref().definition_hash, "sha256:a");
        assert!(i.is_development() && i.is_running());
    }

    #[test]
    fn the_definition_ref_is_required_and_the_rest_is_lenient() {
        for bad in [
            json!({"metadata": {"name": "x"}}),
            json!({"spec": {}}),
            json!({"spec": {"definitionRef": {"pluginName": "x"}}}),
            json!({"spec": {"definitionRef": {"pluginName": 1, "pluginVersion": "v1"}}}),
            json!("garbage"),
        ] {
            let err = PluginInstallation::from_value(&bad).unwrap_err();
            assert!(err.to_string().starts_with("not a valid PluginInstallation: "), "{err}");
        }
        let i = PluginInstallation::from_value(&json!({
            "metadata": {"name": 7, "labels": "x"},
            "spec": {"definitionRef": {"pluginName": "x", "pluginVersion": "v1"}},
            "status": {"phase": ["?"], "ready": "yes"}
        }))
        .unwrap();
        assert_eq!(i.metadata.name, "");
        assert_eq!(i.definition_ref().definition_hash, "", "unpinned");
        assert!(!i.is_development() && !i.is_running());
    }
}
