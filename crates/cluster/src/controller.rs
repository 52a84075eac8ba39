//! The mock plugin controller: what plugin-controller does on a real cluster,
//! without pods. A PluginInstallation of a known plugin definition gets its
//! namespace `plugin-<name>`, ServiceAccount `plugin`, the ClusterRole
//! `plugin-<name>-scope` with the definition's `permissions.rbac` bound to
//! that ServiceAccount, a Service on port 8080, and status Running/ready.
//! The objects come from `fundament_plugin_types::install`, which the
//! installer (sandbox mode on a real cluster) builds them with too.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use fundament_plugin_types::folder_objects::MAX_FOLDER_YAML;
use fundament_plugin_types::install::{self, PinnedDefinition};
use fundament_plugin_types::{PluginInstallation, RbacRule};
use serde_json::{Value, json};

use crate::authn::User;
use crate::cluster::{Cluster, WriteOptions, now_rfc3339};
use crate::object;
use crate::resource::ResourceType;
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
    /// `spec.crds`: the CRDs its folder's `crds/` may define (when it lists any).
    pub crds: Vec<String>,
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
    let bytes = fundament_bounded_file::read(&path, MAX_FOLDER_YAML)
        .map_err(|e| DefinitionError::Io { path: path.clone(), source: e.into_io() })?;
    let invalid = |detail: String| DefinitionError::Invalid { path: path.clone(), detail };
    // The author's file: bounded in nesting and in what its aliases repeat (bounded_value).
    let doc =
        bounded_value::yaml_document(&bytes, RepeatedKeys::LastWins).map_err(|e| invalid(e.to_string()))?;
    let PinnedDefinition { name, version, hash, rules, crds } =
        PinnedDefinition::from_manifest(&bytes, &doc).map_err(|e| invalid(e.to_string()))?;
    Ok(PluginDefinition { name, version, hash, rules, crds, dir: dir.to_path_buf(), development: false })
}

/// The installation name of a plugin in an organization: `<organization>--<plugin>`.
pub use fundament_plugin_types::install::installation_name;

/// The plugin definitions the controller knows.
#[derive(Clone, Default)]
pub struct Definitions(pub Arc<Vec<PluginDefinition>>);

impl PluginDefinition {
    /// The `spec.definitionRef` of an installation of this definition.
    pub fn definition_ref(&self) -> fundament_plugin_types::DefinitionRef {
        fundament_plugin_types::DefinitionRef {
            plugin_name: self.name.clone(),
            plugin_version: self.version.clone(),
            definition_hash: self.hash.clone(),
        }
    }
}

impl Definitions {
    fn find(&self, name: &str, version: &str) -> Option<&PluginDefinition> {
        self.0.iter().find(|d| d.name == name && d.version == version)
    }
}

/// The type of `obj` (complete with `apiVersion` and `kind`).
fn resource_of(cluster: &Cluster, obj: &Value) -> Result<Arc<ResourceType>, ApiError> {
    let (api_version, kind) = (obj["apiVersion"].as_str().unwrap_or(""), obj["kind"].as_str().unwrap_or(""));
    cluster.registry().by_kind(api_version, kind).cloned().ok_or_else(ApiError::no_route)
}

/// Creates `obj` unless it exists: the installation object, which a user or
/// the seed may have made first and whose spec is theirs.
fn create_or_keep(cluster: &Cluster, obj: Value) -> Result<(), ApiError> {
    let rt = resource_of(cluster, &obj)?;
    let ns = object::namespace(&obj).to_string();
    match cluster.create(&User::system(), &rt, &ns, obj, WriteOptions::SYSTEM) {
        Ok(_) => Ok(()),
        Err(e) if e.reason == "AlreadyExists" => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes `obj` (one of an installation's children) exactly as the controller
/// builds it: created, or replaced whole where it exists. Kept as found, an
/// object made before the controller ran (a ClusterRole named like the
/// plugin's scope role, with `*` rules or an `aggregationRule`; a binding of
/// another role) would outlive the check of the definition's rules
/// ([`refused_rbac`]) and grant what no definition may. Only the status and
/// what the server owns (uid, creation time) survive a replace; a binding
/// whose `roleRef` differs is deleted and created again, since a binding's
/// `roleRef` cannot change.
fn create_or_replace(cluster: &Cluster, obj: Value) -> Result<(), ApiError> {
    let rt = resource_of(cluster, &obj)?;
    let (ns, name) = (object::namespace(&obj).to_string(), object::name(&obj).to_string());
    let system = User::system();
    let current = match cluster.get(&rt, &ns, &name) {
        Ok(current) => current,
        Err(e) if e.code == 404 => {
            return cluster.create(&system, &rt, &ns, obj, WriteOptions::SYSTEM).map(|_| ());
        }
        Err(e) => return Err(e),
    };
    if obj.get("roleRef").is_some() && current["roleRef"] != obj["roleRef"] {
        cluster.delete(&system, &rt, &ns, &name, &Value::Null, WriteOptions::SYSTEM)?;
        return cluster.create(&system, &rt, &ns, obj, WriteOptions::SYSTEM).map(|_| ());
    }
    let mut desired = obj;
    if let (Some(fields), Some(status)) = (desired.as_object_mut(), current.get("status")) {
        fields.insert("status".into(), status.clone());
    }
    cluster.update(&system, &rt, &ns, &name, desired, false, WriteOptions::SYSTEM).map(|_| ())
}

/// Makes what an installation needs, exactly as the definition says (idempotent: an object that
/// is as it should be is left alone). A definition whose `permissions.rbac` would hand the plugin
/// the cluster ([`fundament_plugin_types::takeover`]) is refused, before anything is created.
pub fn materialize(cluster: &Cluster, installation: &str, def: &PluginDefinition) -> Result<(), ApiError> {
    if let Some(refusal) = refused_rbac(def) {
        return Err(ApiError::forbidden_because_of(refusal));
    }
    install::installation_objects(installation, &def.name, &def.rules)
        .into_iter()
        .try_for_each(|obj| create_or_replace(cluster, obj))
}

/// Why `def` is not installed, if its `permissions.rbac` would hand the plugin the cluster.
fn refused_rbac(def: &PluginDefinition) -> Option<String> {
    let refused = fundament_plugin_types::first_takeover(&def.rules)?;
    Some(format!("plugin {} {}: {refused}; it is not installed", def.name, def.version))
}

fn running_status(generation: i64) -> Value {
    install::running_status(generation, &now_rfc3339())
}

/// Installs `def` as `<organization>--<name>`: the installation object, Running, and its children.
pub fn install(cluster: &Cluster, organization: &str, def: &PluginDefinition) -> Result<String, ApiError> {
    let name = installation_name(organization, &def.name);
    materialize(cluster, &name, def)?;
    let mut obj = install::installation(&name, def.definition_ref(), def.development);
    // Created as the cluster itself, which keeps the status (an API create would drop it).
    obj["status"] = running_status(1);
    create_or_keep(cluster, obj)?;
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
                Some(def) => match refused_rbac(def) {
                    Some(refusal) => failed("MaterialisationFailed", refusal),
                    None => {
                        materialize(cluster, &name, def)?;
                        running_status(installation.metadata.generation.unwrap_or(1))
                    }
                },
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
    let role = install::scope_role(installation);
    for (group, plural, ns, name) in [
        ("rbac.authorization.k8s.io", "clusterrolebindings", "", role.as_str()),
        ("rbac.authorization.k8s.io", "clusterroles", "", role.as_str()),
        ("", "namespaces", "", &install::plugin_namespace(installation)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(rules: Vec<RbacRule>) -> PluginDefinition {
        PluginDefinition {
            name: "grabby".into(),
            version: "v1".into(),
            hash: "sha256:ab".into(),
            rules,
            crds: Vec::new(),
            dir: PathBuf::from("grabby"),
            development: false,
        }
    }

    fn put(cluster: &Cluster, obj: Value) {
        let rt = resource_of(cluster, &obj).unwrap();
        let ns = object::namespace(&obj).to_string();
        cluster.create(&User::system(), &rt, &ns, obj, WriteOptions::SYSTEM).unwrap();
    }

    fn get(cluster: &Cluster, api_version: &str, kind: &str, ns: &str, name: &str) -> Value {
        let rt = cluster.registry().by_kind(api_version, kind).cloned().unwrap();
        cluster.get(&rt, ns, name).unwrap()
    }

    /// Objects named like an installation's, made before the controller ran (by a fixture, say),
    /// are replaced by what the definition says, not kept: otherwise a scope role of `*` would
    /// outlive the check of the definition's rules.
    #[test]
    fn what_was_made_before_the_controller_is_replaced_by_what_the_definition_says() {
        let cluster = Cluster::new();
        let (ns, role) = ("plugin-acme--grabby", "plugin-acme--grabby-scope");
        let everything = json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]);
        put(
            &cluster,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns,
            "labels": {"fundament.io/project": "webshop", "pod-security.kubernetes.io/enforce": "privileged"}}}),
        );
        put(
            &cluster,
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "plugin", "namespace": ns, "annotations": {"note": "theirs"}}}),
        );
        put(
            &cluster,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": role}, "rules": everything,
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}),
        );
        put(
            &cluster,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "User", "name": "mallory"}]}),
        );
        let rules = vec![RbacRule {
            api_groups: vec!["example.io".into()],
            resources: vec!["widgets".into()],
            verbs: vec!["get".into()],
            resource_names: Vec::new(),
        }];
        let def = definition(rules);
        materialize(&cluster, "acme--grabby", &def).unwrap();

        let want = install::installation_objects("acme--grabby", "grabby", &def.rules);
        for want in &want {
            let (api_version, kind) = (want["apiVersion"].as_str().unwrap(), want["kind"].as_str().unwrap());
            let have = get(&cluster, api_version, kind, object::namespace(want), object::name(want));
            for field in ["rules", "roleRef", "subjects", "spec"] {
                assert_eq!(have.get(field), want.get(field), "{kind}: {field}: {have}");
            }
            assert_eq!(have["metadata"]["labels"], want["metadata"]["labels"], "{kind}: {have}");
            assert!(have["metadata"]["annotations"].is_null(), "{kind}: {have}");
        }
        let have = get(&cluster, "rbac.authorization.k8s.io/v1", "ClusterRole", "", role);
        assert!(have.get("aggregationRule").is_none(), "{have}");

        // Idempotent: a second pass writes nothing.
        let before = get(&cluster, "rbac.authorization.k8s.io/v1", "ClusterRole", "", role);
        materialize(&cluster, "acme--grabby", &def).unwrap();
        let after = get(&cluster, "rbac.authorization.k8s.io/v1", "ClusterRole", "", role);
        assert_eq!(object::resource_version(&before), object::resource_version(&after));
    }
}
