//! What installing a plugin puts on a cluster, built in one place: the
//! embedded cluster's mock controller and the installer (`fundament-installer`,
//! sandbox mode against a real cluster) create exactly these objects, so a
//! plugin behaves the same in both.
//!
//! For an installation `<organization>--<plugin>`: the namespace
//! `plugin-<installation>` with the ServiceAccount `plugin` and a headless
//! Service on port 8080, the ClusterRole `plugin-<installation>-scope` with the
//! definition's `permissions.rbac` bound to that ServiceAccount, a RoleBinding
//! to `admin` in its own namespace, and the PluginInstallation pinning the
//! definition by its hash, with the status a running plugin reports.

use serde_json::{Value, json};

use crate::{DEVELOPMENT_LABEL, DefinitionRef, PluginDefinition, RbacRule, hash_manifest};

/// `apiVersion` of PluginInstallation.
pub const INSTALLATION_API_VERSION: &str = "plugins.fundament.io/v1";
/// `kind` of PluginInstallation.
pub const INSTALLATION_KIND: &str = "PluginInstallation";
/// The plugin (`metadata.name` of its definition) an object belongs to.
pub const PLUGIN_LABEL: &str = "plugins.fundament.io/plugin";
/// The installation an object belongs to; the Service selects the plugin's pods by it.
pub const INSTALLATION_NAME_LABEL: &str = "plugins.fundament.io/installation-name";
/// The ServiceAccount a plugin runs as, in its namespace.
pub const PLUGIN_SERVICE_ACCOUNT: &str = "plugin";

const RBAC: &str = "rbac.authorization.k8s.io/v1";

/// The parts of a definition that installing it needs, with the hash an
/// installation pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedDefinition {
    pub name: String,
    pub version: String,
    /// `sha256:<hex>` of the definition.yaml bytes ([`hash_manifest`]).
    pub hash: String,
    /// `spec.permissions.rbac`: the rules of the installation's ClusterRole.
    pub rules: Vec<RbacRule>,
    /// `spec.crds`: the CRDs the plugin manages, `<plural>.<group>`; its folder's
    /// `crds/` may define only these (when it lists any, see [`crate::folder_objects`]).
    pub crds: Vec<String>,
}

/// Why a definition cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("{0}")]
    Invalid(#[from] serde_json::Error),
    #[error("metadata.name is missing")]
    MissingName,
    #[error("metadata.version is missing")]
    MissingVersion,
}

impl PinnedDefinition {
    /// Reads a definition from the bytes of its file and the document they
    /// parse to (the caller parses the YAML: this crate does no IO).
    pub fn from_manifest(bytes: &[u8], document: &Value) -> Result<PinnedDefinition, PinError> {
        let definition = PluginDefinition::from_value(document)?;
        let metadata = definition.metadata;
        if metadata.name.is_empty() {
            return Err(PinError::MissingName);
        }
        if metadata.version.is_empty() {
            return Err(PinError::MissingVersion);
        }
        Ok(PinnedDefinition {
            name: metadata.name,
            version: metadata.version,
            // The bytes organization-api hashes, so the pin is the catalog's.
            hash: hash_manifest(bytes),
            rules: definition.spec.permissions.rbac,
            crds: definition.spec.crds,
        })
    }

    /// The `spec.definitionRef` of an installation of this definition.
    pub fn definition_ref(&self) -> DefinitionRef {
        DefinitionRef {
            plugin_name: self.name.clone(),
            plugin_version: self.version.clone(),
            definition_hash: self.hash.clone(),
        }
    }
}

/// The installation name of a plugin in an organization: `<organization>--<plugin>`.
pub fn installation_name(organization: &str, plugin: &str) -> String {
    format!("{organization}--{plugin}")
}

/// The namespace of an installation's children: `plugin-<installation>`.
pub fn plugin_namespace(installation: &str) -> String {
    format!("plugin-{installation}")
}

/// The ClusterRole (and its ClusterRoleBinding) with the definition's rules:
/// `plugin-<installation>-scope`.
pub fn scope_role(installation: &str) -> String {
    format!("plugin-{installation}-scope")
}

fn child_labels(installation: &str, plugin: &str) -> Value {
    json!({
        PLUGIN_LABEL: plugin,
        INSTALLATION_NAME_LABEL: installation,
        "app.kubernetes.io/managed-by": "plugin-controller",
    })
}

/// The children of an installation, in the order they can be created (the
/// namespace before what lives in it), each with `apiVersion` and `kind`.
pub fn installation_objects(installation: &str, plugin: &str, rules: &[RbacRule]) -> Vec<Value> {
    let ns = plugin_namespace(installation);
    let labels = child_labels(installation, plugin);
    let role = scope_role(installation);
    let subjects = json!([{"kind": "ServiceAccount", "name": PLUGIN_SERVICE_ACCOUNT, "namespace": ns}]);
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": PLUGIN_SERVICE_ACCOUNT, "namespace": ns, "labels": labels}}),
        // Headless, so the service proxy reaches the plugin's pod (or, in the
        // embedded cluster, its in-process runtime) without a cluster IP.
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": ns, "namespace": ns, "labels": labels},
               "spec": {"type": "ClusterIP", "clusterIP": "None", "publishNotReadyAddresses": true,
                        "selector": {INSTALLATION_NAME_LABEL: installation},
                        "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}]}}),
        json!({"apiVersion": RBAC, "kind": "ClusterRole",
               "metadata": {"name": role, "labels": labels}, "rules": rules}),
        json!({"apiVersion": RBAC, "kind": "ClusterRoleBinding",
               "metadata": {"name": role, "labels": labels},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": subjects}),
        json!({"apiVersion": RBAC, "kind": "RoleBinding",
               "metadata": {"name": format!("{ns}-admin"), "namespace": ns, "labels": labels},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
               "subjects": subjects}),
    ]
}

/// The PluginInstallation `name` of `definition`, without status (a status
/// subresource ignores it on create; see [`running_status`]).
pub fn installation(name: &str, definition: DefinitionRef, development: bool) -> Value {
    let mut labels = json!({PLUGIN_LABEL: definition.plugin_name});
    if development {
        labels[DEVELOPMENT_LABEL] = json!("true");
    }
    json!({
        "apiVersion": INSTALLATION_API_VERSION,
        "kind": INSTALLATION_KIND,
        "metadata": {"name": name, "labels": labels},
        "spec": {"definitionRef": definition},
    })
}

/// The status of a running, ready installation of spec `generation`, its
/// conditions changed at `now` (RFC 3339).
pub fn running_status(generation: i64, now: &str) -> Value {
    json!({
        "phase": "Running",
        "ready": true,
        "message": "plugin is running",
        "observedGeneration": generation,
        "conditions": [
            {"type": "PluginScopeReady", "status": "True", "reason": "Materialised",
             "message": "ClusterRole and ClusterRoleBinding match the pinned definition",
             "lastTransitionTime": now, "observedGeneration": generation},
            {"type": "Ready", "status": "True", "reason": "Running", "message": "plugin is running",
             "lastTransitionTime": now, "observedGeneration": generation},
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InstallationStatus, PluginInstallation};

    const MANIFEST: &str = "apiVersion: fundament.io/v1\nkind: PluginDefinition\n";

    fn rule() -> RbacRule {
        RbacRule {
            api_groups: vec!["demo.io".into()],
            resources: vec!["items".into()],
            verbs: vec!["get".into()],
            resource_names: vec![],
        }
    }

    #[test]
    fn a_definition_is_pinned_by_the_hash_of_its_bytes() {
        let doc = json!({"metadata": {"name": "demo", "version": "v1"},
                         "spec": {"permissions": {"rbac": [{"apiGroups": ["demo.io"], "resources": ["items"], "verbs": ["get"]}]},
                                  "crds": ["items.demo.io"]}});
        let pinned = PinnedDefinition::from_manifest(MANIFEST.as_bytes(), &doc).unwrap();
        assert_eq!(pinned.hash, hash_manifest(MANIFEST.as_bytes()));
        assert_eq!(pinned.rules, [rule()]);
        assert_eq!(pinned.crds, ["items.demo.io"]);
        let r = pinned.definition_ref();
        assert_eq!((r.plugin_name.as_str(), r.plugin_version.as_str()), ("demo", "v1"));
        assert_eq!(r.definition_hash, pinned.hash);
    }

    #[test]
    fn a_definition_without_name_or_version_is_refused() {
        let no_name = json!({"metadata": {"version": "v1"}});
        let no_version = json!({"metadata": {"name": "demo"}});
        let bad = json!({"spec": {"crds": "x"}});
        for (doc, message) in
            [(no_name, "metadata.name is missing"), (no_version, "metadata.version is missing")]
        {
            assert_eq!(PinnedDefinition::from_manifest(b"", &doc).unwrap_err().to_string(), message);
        }
        assert!(matches!(PinnedDefinition::from_manifest(b"", &bad), Err(PinError::Invalid(_))));
    }

    #[test]
    fn the_children_are_named_after_the_installation_and_labelled() {
        let objects = installation_objects("acme--demo", "demo", &[rule()]);
        let kinds: Vec<(&str, &str, &str)> = objects
            .iter()
            .map(|o| {
                let namespace = o["metadata"]["namespace"].as_str().unwrap_or("");
                (o["kind"].as_str().unwrap(), o["metadata"]["name"].as_str().unwrap(), namespace)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("Namespace", "plugin-acme--demo", ""),
                ("ServiceAccount", "plugin", "plugin-acme--demo"),
                ("Service", "plugin-acme--demo", "plugin-acme--demo"),
                ("ClusterRole", "plugin-acme--demo-scope", ""),
                ("ClusterRoleBinding", "plugin-acme--demo-scope", ""),
                ("RoleBinding", "plugin-acme--demo-admin", "plugin-acme--demo"),
            ]
        );
        for o in &objects {
            assert_eq!(o["metadata"]["labels"][INSTALLATION_NAME_LABEL], "acme--demo", "{o}");
            assert_eq!(o["metadata"]["labels"][PLUGIN_LABEL], "demo", "{o}");
        }
        assert_eq!(
            objects[3]["rules"],
            json!([{"apiGroups": ["demo.io"], "resources": ["items"], "verbs": ["get"]}])
        );
        assert_eq!(objects[4]["subjects"][0]["namespace"], "plugin-acme--demo");
    }

    #[test]
    fn an_installation_reads_back_as_the_typed_installation() {
        let pinned = PinnedDefinition {
            name: "demo".into(),
            version: "v1".into(),
            hash: "sha256:ab".into(),
            rules: vec![],
            crds: vec![],
        };
        for development in [false, true] {
            let mut object = installation("acme--demo", pinned.definition_ref(), development);
            assert!(object.get("status").is_none());
            object["status"] = running_status(2, "2026-01-01T00:00:00Z");
            let read = PluginInstallation::from_value(&object).unwrap();
            assert_eq!(read.metadata.name, "acme--demo");
            assert_eq!(read.definition_ref(), &pinned.definition_ref());
            assert_eq!(read.is_development(), development);
            assert!(read.is_running());
            assert_eq!(
                read.status,
                InstallationStatus {
                    phase: "Running".into(),
                    ready: true,
                    message: "plugin is running".into()
                }
            );
            assert_eq!(object["status"]["conditions"][1]["observedGeneration"], 2);
        }
    }
}
