//! Taking away what the installer installed: every object of every served
//! kind that carries [`INSTALLED_BY_LABEL`], and the labels it added to
//! namespaces it found. Nothing else is touched: a namespace marked
//! [`ADOPTED_BY_LABEL`] existed before and is never deleted, even if it
//! carries [`INSTALLED_BY_LABEL`] too.

use std::collections::HashSet;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersion;
use kube::discovery::{self, ApiCapabilities, ApiResource, Scope, verbs};
use serde_json::{Map, Value, json};

use crate::apply::{added_labels, adopted, installed_here};
use crate::error::{InstallError, ObjectName, is_status, server_message};
use crate::installer::{Installer, Summary};
use crate::{ADDED_LABELS_ANNOTATION, ADOPTED_BY_LABEL, FIELD_MANAGER, INSTALLED_BY_LABEL};

/// How long deleted namespaces and CRDs may take to go (a real cluster's
/// namespace controller empties a namespace first).
const GONE_TIMEOUT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(200);

/// The order of removal: installations before what they use, namespaces
/// after what is in them, CRDs after their objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Installations,
    Objects,
    Namespaces,
    Definitions,
}

fn phase(resource: &ApiResource) -> Phase {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("plugins.fundament.io", "PluginInstallation") => Phase::Installations,
        ("", "Namespace") => Phase::Namespaces,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Phase::Definitions,
        _ => Phase::Objects,
    }
}

impl Installer {
    /// Deletes every object the installer created (deleting one that is gone
    /// already is fine), takes its labels off the namespaces it adopted, and
    /// waits until the deleted namespaces and CRDs are gone.
    pub async fn uninstall(&self) -> Result<Summary, InstallError> {
        let mut summary = Summary::default();
        let kinds = self.deletable_kinds().await?;
        let mut seen = HashSet::new();
        let mut waiting = Vec::new();
        for current in [Phase::Installations, Phase::Objects, Phase::Namespaces, Phase::Definitions] {
            for (resource, caps) in kinds.iter().filter(|(r, _)| phase(r) == current) {
                for object in self.installed(resource).await? {
                    // The same object can be listed under two groups (core and events.k8s.io Events).
                    if !seen.insert(object.metadata.uid.clone().unwrap_or_default()) {
                        continue;
                    }
                    let name = ObjectName::of(&resource.kind, &object);
                    let api = self.api(resource, caps, &name.namespace);
                    match api.delete(&name.name, &DeleteParams::background()).await {
                        Ok(_) => summary.deleted += 1,
                        Err(e) if is_status(&e, 404) => {}
                        Err(e) => return Err(failed(name, &e)),
                    }
                    tracing::debug!(object = %name, "deleted");
                    if current >= Phase::Namespaces {
                        waiting.push((api, name));
                    }
                }
            }
        }
        summary.adopted = self.release_namespaces().await?;
        for (api, name) in waiting {
            wait_gone(&api, name).await?;
        }
        // Kinds of deleted CRDs are no longer served.
        self.writer.kinds.forget_all();
        tracing::info!(%summary, "uninstalled");
        Ok(summary)
    }

    /// Every kind the cluster serves that can be listed and deleted, in the
    /// preferred version of its group. A group that does not answer is left
    /// out with a warning: the installer writes only built-in kinds and CRDs,
    /// which always answer.
    async fn deletable_kinds(&self) -> Result<Vec<(ApiResource, ApiCapabilities)>, InstallError> {
        let client = self.writer.client();
        let failed = |e: kube::Error| InstallError::Discovery {
            what: "API groups".into(),
            message: server_message(&e).1,
        };
        let mut versions = vec![GroupVersion::gv("", "v1")];
        for group in client.list_api_groups().await.map_err(failed)?.groups {
            let version = group.preferred_version.or_else(|| group.versions.into_iter().next());
            if let Some(version) = version {
                versions.push(GroupVersion::gv(&group.name, &version.version));
            }
        }
        let mut kinds = Vec::new();
        for gv in versions {
            match discovery::pinned_group(client, &gv).await {
                Ok(group) => {
                    kinds.extend(group.versioned_resources(&gv.version).into_iter().filter(|(_, caps)| {
                        caps.supports_operation(verbs::LIST) && caps.supports_operation(verbs::DELETE)
                    }))
                }
                Err(e) => {
                    tracing::warn!(group_version = %gv.api_version(), error = %server_message(&e).1, "discovery failed: its kinds are not searched");
                }
            }
        }
        Ok(kinds)
    }

    /// The objects of `resource` that carry the installer's label.
    async fn installed(&self, resource: &ApiResource) -> Result<Vec<DynamicObject>, InstallError> {
        let api: Api<DynamicObject> = Api::all_with(self.writer.client().clone(), resource);
        let selector = format!("{INSTALLED_BY_LABEL}={FIELD_MANAGER}");
        let list = api.list(&ListParams::default().labels(&selector)).await.map_err(|e| {
            let name = ObjectName {
                kind: resource.kind.clone(),
                namespace: String::new(),
                name: format!("-l {selector}"),
            };
            failed(name, &e)
        })?;
        // The server selected them; the label is checked again so that nothing else can be deleted.
        // Objects a controller made for one of ours (the EndpointSlices of a Service, which copy
        // its labels) go with their owner, by the garbage collector: they are not the installer's.
        let controlled = |o: &DynamicObject| {
            o.metadata.owner_references.iter().flatten().any(|r| r.controller == Some(true))
        };
        // A namespace the installer adopted existed before it: it is only given back its labels
        // (release_namespaces), never deleted, whatever else it carries.
        Ok(list
            .items
            .into_iter()
            .filter(|o| installed_here(&o.metadata) && !controlled(o) && !adopted(&o.metadata))
            .collect())
    }

    fn api(&self, resource: &ApiResource, caps: &ApiCapabilities, namespace: &str) -> Api<DynamicObject> {
        let client = self.writer.client().clone();
        match caps.scope {
            Scope::Namespaced => Api::namespaced_with(client, namespace, resource),
            Scope::Cluster => Api::all_with(client, resource),
        }
    }

    /// Takes the labels the installer added off the namespaces it adopted.
    async fn release_namespaces(&self) -> Result<usize, InstallError> {
        let namespaces: Api<DynamicObject> = Api::all_with(
            self.writer.client().clone(),
            &ApiResource::from_gvk(&kube::core::GroupVersionKind::gvk("", "v1", "Namespace")),
        );
        let selector = format!("{ADOPTED_BY_LABEL}={FIELD_MANAGER}");
        let list = namespaces.list(&ListParams::default().labels(&selector)).await.map_err(|e| {
            failed(
                ObjectName {
                    kind: "Namespace".into(),
                    namespace: String::new(),
                    name: format!("-l {selector}"),
                },
                &e,
            )
        })?;
        let mut released = 0;
        for ns in list.items {
            let name = ObjectName::of("Namespace", &ns);
            let mut labels: Map<String, Value> =
                added_labels(&ns.metadata).into_iter().map(|k| (k, Value::Null)).collect();
            labels.insert(ADOPTED_BY_LABEL.into(), Value::Null);
            // The installer no longer gives a namespace it adopts its label, but an older one could
            // have (from a document that carried it): left there, the next uninstall would delete
            // the namespace.
            labels.insert(INSTALLED_BY_LABEL.into(), Value::Null);
            let patch =
                json!({"metadata": {"labels": labels, "annotations": {ADDED_LABELS_ANNOTATION: null}}});
            let params = PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..PatchParams::default() };
            match namespaces.patch(&name.name, &params, &Patch::Merge(&patch)).await {
                Ok(_) => released += 1,
                Err(e) if is_status(&e, 404) => {}
                Err(e) => return Err(failed(name, &e)),
            }
        }
        Ok(released)
    }
}

fn failed(object: ObjectName, error: &kube::Error) -> InstallError {
    let (code, message) = server_message(error);
    InstallError::Uninstall { object, code, message }
}

async fn wait_gone(api: &Api<DynamicObject>, object: ObjectName) -> Result<(), InstallError> {
    let deadline = tokio::time::Instant::now() + GONE_TIMEOUT;
    loop {
        match api.get_opt(&object.name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) if tokio::time::Instant::now() >= deadline => {
                return Err(InstallError::NotGone { object, seconds: GONE_TIMEOUT.as_secs() });
            }
            Ok(Some(_)) => tokio::time::sleep(POLL).await,
            Err(e) => return Err(failed(object, &e)),
        }
    }
}
