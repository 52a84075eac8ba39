//! The mock plugin controller: what plugin-controller does on a real cluster,
//! without pods. A PluginInstallation of a known plugin definition gets its
//! namespace `plugin-<name>`, ServiceAccount `plugin`, the ClusterRole
//! `plugin-<name>-scope` with the definition's `permissions.rbac` bound to
//! that ServiceAccount, a Service on port 8080, and status Running/ready.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fundament_plugin_types::{DefinitionRef, InstallationSpec, PluginInstallation, RbacRule, hash_manifest};
use serde_json::{Value, json};

use crate::authn::User;
use crate::cluster::{Cluster, WriteOptions, now_rfc3339};
use crate::object;
use crate::status::ApiError;
use crate::store::EventType;

pub const INSTALLATION_GROUP: &str = "plugins.fundament.io";

/// Marks installations of development plugin folders: plugin-proxy serves their
/// pages without long-lived caching, so edits show on reload.
pub use fundament_plugin_types::DEVELOPMENT_LABEL;

/// A plugin definition read from a plugin folder.
#[derive(Debug, Clone)]
pub struct PluginDefinition {
    pub name: String,
    pub version: String,
    /// `sha256:<hex>` of the definition.yaml bytes.
    pub hash: String,
    /// `spec.permissions.rbac`: the rules of the installation's ClusterRole.
    pub rules: Vec<RbacRule>,
    pub dir: PathBuf,
    /// Loaded with `fundament dev --plugin`: its pages change while it runs.
    pub development: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
}

pub fn read_definition(dir: &Path) -> Result<PluginDefinition, DefinitionError> {
    let path = dir.join("definition.yaml");
    let bytes = std::fs::read(&path).map_err(|source| DefinitionError::Io { path: path.clone(), source })?;
    let invalid = |detail: String| DefinitionError::Invalid { path: path.clone(), detail };
    let doc: Value = serde_yaml::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    let definition =
        fundament_plugin_types::PluginDefinition::from_value(&doc).map_err(|e| invalid(e.to_string()))?;
    let metadata = definition.metadata;
    if metadata.name.is_empty() {
        return Err(invalid("metadata.name is missing".into()));
    }
    if metadata.version.is_empty() {
        return Err(invalid("metadata.version is missing".into()));
    }
    Ok(PluginDefinition {
        name: metadata.name,
        version: metadata.version,
        // The same bytes organization-api hashes, so the pin of an installation made here is the catalog's.
        hash: hash_manifest(&bytes),
        rules: definition.spec.permissions.rbac,
        dir: dir.to_path_buf(),
        development: false,
    })
}

/// The installation name of a plugin in an organization: `<organization>--<plugin>`.
pub fn installation_name(organization: &str, plugin: &str) -> String {
    format!("{organization}--{plugin}")
}

/// The plugin definitions the controller knows.
#[derive(Clone, Default)]
pub struct Definitions(pub Arc<Vec<PluginDefinition>>);

impl Definitions {
    fn find(&self, name: &str, version: &str) -> Option<&PluginDefinition> {
        self.0.iter().find(|d| d.name == name && d.version == version)
    }
}

fn create_or_keep(cluster: &Cluster, api_version: &str, kind: &str, obj: Value) -> Result<(), ApiError> {
    let rt = cluster.registry().by_kind(api_version, kind).cloned().ok_or_else(ApiError::no_route)?;
    let ns = object::namespace(&obj).to_string();
    match cluster.create(&User::system(), &rt, &ns, obj, WriteOptions::SYSTEM) {
        Ok(_) => Ok(()),
        Err(e) if e.reason == "AlreadyExists" => Ok(()),
        Err(e) => Err(e),
    }
}

fn labels(installation: &str, plugin: &str) -> Value {
    json!({
        "plugins.fundament.io/plugin": plugin,
        "plugins.fundament.io/installation-name": installation,
        "app.kubernetes.io/managed-by": "plugin-controller",
    })
}

/// Creates what an installation needs (idempotent).
pub fn materialize(cluster: &Cluster, installation: &str, def: &PluginDefinition) -> Result<(), ApiError> {
    let ns = format!("plugin-{installation}");
    let l = labels(installation, &def.name);
    create_or_keep(cluster, "v1", "Namespace", json!({"metadata": {"name": ns, "labels": l}}))?;
    create_or_keep(
        cluster,
        "v1",
        "ServiceAccount",
        json!({"metadata": {"name": "plugin", "namespace": ns, "labels": l}}),
    )?;
    create_or_keep(
        cluster,
        "v1",
        "Service",
        json!({"metadata": {"name": format!("plugin-{installation}"), "namespace": ns, "labels": l},
               "spec": {"type": "ClusterIP", "clusterIP": "None", "publishNotReadyAddresses": true,
                        "selector": {"plugins.fundament.io/installation-name": installation},
                        "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}]}}),
    )?;
    let rbac = "rbac.authorization.k8s.io/v1";
    let role = format!("plugin-{installation}-scope");
    create_or_keep(
        cluster,
        rbac,
        "ClusterRole",
        json!({"metadata": {"name": role, "labels": l}, "rules": def.rules}),
    )?;
    create_or_keep(
        cluster,
        rbac,
        "ClusterRoleBinding",
        json!({"metadata": {"name": role, "labels": l},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": [{"kind": "ServiceAccount", "name": "plugin", "namespace": ns}]}),
    )?;
    create_or_keep(
        cluster,
        rbac,
        "RoleBinding",
        json!({"metadata": {"name": format!("plugin-{installation}-admin"), "namespace": ns, "labels": l},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"kind": "ServiceAccount", "name": "plugin", "namespace": ns}]}),
    )
}

fn running_status(generation: i64) -> Value {
    let now = now_rfc3339();
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

/// Installs `def` as `<organization>--<name>`: the installation object, Running, and its children.
pub fn install(cluster: &Cluster, organization: &str, def: &PluginDefinition) -> Result<String, ApiError> {
    let name = installation_name(organization, &def.name);
    materialize(cluster, &name, def)?;
    create_or_keep(
        cluster,
        &format!("{INSTALLATION_GROUP}/v1"),
        "PluginInstallation",
        json!({"metadata": {"name": name, "labels": if def.development {
                json!({"plugins.fundament.io/plugin": def.name, DEVELOPMENT_LABEL: "true"})
            } else {
                json!({"plugins.fundament.io/plugin": def.name})
            }},
               "spec": InstallationSpec { definition_ref: DefinitionRef {
                   plugin_name: def.name.clone(),
                   plugin_version: def.version.clone(),
                   definition_hash: def.hash.clone(),
               }},
               "status": running_status(1)}),
    )?;
    Ok(name)
}

/// Reconciles installations created or deleted later (kubectl apply/delete).
pub fn spawn(cluster: Arc<Cluster>, definitions: Definitions) -> tokio::task::JoinHandle<()> {
    let (mut rx, _) = cluster.subscribe();
    tokio::spawn(async move {
        loop {
            let change = match rx.recv().await {
                Ok(c) => c,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "plugin controller fell behind");
                    continue;
                }
                Err(_) => return,
            };
            if change.key.group != INSTALLATION_GROUP || change.key.resource != "plugininstallations" {
                continue;
            }
            let obj = &change.object;
            let name = object::name(obj).to_string();
            let result = match change.kind {
                EventType::Deleted => teardown(&cluster, &name),
                _ => reconcile(&cluster, &definitions, obj),
            };
            if let Err(e) = result {
                tracing::warn!(installation = %name, error = %e, "plugin controller could not reconcile");
            }
        }
    })
}

fn failed(reason: &str, message: String) -> Value {
    json!({
        "phase": "Failed",
        "ready": false,
        "message": message,
        "conditions": [{"type": "PluginScopeReady", "status": "False", "reason": reason,
            "message": message, "lastTransitionTime": now_rfc3339()}],
    })
}

fn reconcile(cluster: &Cluster, definitions: &Definitions, obj: &Value) -> Result<(), ApiError> {
    let phase = obj["status"]["phase"].as_str();
    if matches!(phase, Some("Running" | "Failed")) || object::is_terminating(obj) {
        return Ok(());
    }
    let rt = cluster
        .registry()
        .by_kind(&format!("{INSTALLATION_GROUP}/v1"), "PluginInstallation")
        .cloned()
        .ok_or_else(ApiError::no_route)?;
    let mut updated = obj.clone();
    // Nothing is created for an unknown plugin or a bad pin, as the real controller fetches the definition first.
    let (name, status) = match PluginInstallation::from_value(obj) {
        // Without a definitionRef there is no definition to find; the name is read on its own for the update.
        Err(e) => (
            object::name(obj).to_string(),
            failed("DefinitionNotFound", format!("plugin definition not found: {e}")),
        ),
        Ok(installation) => {
            let r = installation.definition_ref();
            let (plugin, version, pinned) = (&r.plugin_name, &r.plugin_version, &r.definition_hash);
            let name = installation.metadata.name.clone();
            let status = match definitions.find(plugin, version) {
                None => {
                    failed("DefinitionNotFound", format!("plugin definition {plugin}@{version} not found"))
                }
                Some(def) if !pinned.is_empty() && *pinned != def.hash => failed(
                    "MaterialisationFailed",
                    format!("pinned definition hash {pinned} does not match the definition's {}", def.hash),
                ),
                Some(def) => {
                    materialize(cluster, &name, def)?;
                    running_status(installation.metadata.generation.unwrap_or(1))
                }
            };
            (name, status)
        }
    };
    updated["status"] = status;
    cluster.update(&User::system(), &rt, "", &name, updated, true, WriteOptions::SYSTEM).map(|_| ())
}

fn teardown(cluster: &Cluster, installation: &str) -> Result<(), ApiError> {
    let registry = cluster.registry();
    let user = User::system();
    let role = format!("plugin-{installation}-scope");
    for (group, plural, ns, name) in [
        ("rbac.authorization.k8s.io", "clusterrolebindings", "", role.as_str()),
        ("rbac.authorization.k8s.io", "clusterroles", "", role.as_str()),
        ("", "namespaces", "", &format!("plugin-{installation}")),
    ] {
        if let Some(rt) = registry.get(group, "v1", plural) {
            match cluster.delete(&user, rt, ns, name, &Value::Null, WriteOptions::SYSTEM) {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}
