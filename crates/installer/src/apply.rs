//! Writing one object: a server-side apply as [`FIELD_MANAGER`], forced, of
//! the document with the installer's label, and an update of its status
//! through the status subresource where the kind has one.
//!
//! An API server that refuses apply patches (415: one before 1.16, or the
//! embedded cluster today) gets the same result by create, or by a replace
//! of the current object with the document's fields laid over it, skipped
//! when the object has them already; the switch happens once and is logged.
//! An object whose fields the server's schema does not know (a CRD with
//! `x-kubernetes-validations` on a server before 1.25) cannot be applied:
//! server-side apply refuses it whole, while a create or replace drops the
//! unknown fields, as kubectl's client-side apply would. Such an object is
//! written that way, with a warning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use kube::Client;
use kube::api::{Api, DynamicObject, ObjectMeta, Patch, PatchParams, PostParams};
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use serde_json::{Map, Value, json};

use crate::documents::Document;
use crate::error::{InstallError, ObjectName, is_status, server_message};
use crate::kinds::Kinds;
use crate::{
    ADDED_LABELS_ANNOTATION, ADOPTED_BY_LABEL, FIELD_MANAGER, INSTALLED_BY_LABEL, INSTALLED_FOR_ANNOTATION,
};

/// How often a replace is tried in all when it conflicts (another writer in between).
const ATTEMPTS: usize = 5;

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Created,
    Changed,
    /// The object was as the document says already (same resourceVersion).
    Unchanged,
    /// A namespace that existed before got the document's missing labels.
    Adopted,
}

impl Outcome {
    /// The outcome of a write of the object followed by one of its status.
    pub fn then(self, status: Outcome) -> Outcome {
        match (self, status) {
            (Outcome::Unchanged, Outcome::Changed | Outcome::Created) => Outcome::Changed,
            (first, _) => first,
        }
    }
}

/// An object as the cluster has it after a write.
pub(crate) struct Placed {
    pub path: PathBuf,
    pub name: ObjectName,
    pub api: Api<DynamicObject>,
    pub resource: ApiResource,
    pub object: DynamicObject,
    pub outcome: Outcome,
}

impl Placed {
    pub fn refused(&self, error: &kube::Error) -> InstallError {
        refused(&self.path, &self.name, error)
    }
}

/// A document, located: see [`Writer::target`].
struct Target {
    path: PathBuf,
    name: ObjectName,
    api: Api<DynamicObject>,
    resource: ApiResource,
    caps: ApiCapabilities,
    object: DynamicObject,
}

/// What a write for an owner may do with the object of the same name on the cluster.
enum Standing<'a> {
    /// There is none, or it is the installer's and not recorded for another owner.
    Write,
    /// A namespace the installer did not make (or adopted before): it only gets labels.
    Adopt(&'a DynamicObject),
}

/// The [`Standing`] of a write of `name` for `owner`, `current` being what is there: someone
/// else's object ([`InstallError::NotOurs`]; a namespace is adopted), or one the installer
/// recorded for another owner ([`InstallError::NotItsOwn`]), is left as it is. One written by
/// an installer that recorded no owner yet is taken as it is, and gets the record.
fn standing<'a>(
    path: &std::path::Path,
    name: &ObjectName,
    resource: &ApiResource,
    current: Option<&'a DynamicObject>,
    owner: &str,
) -> Result<Standing<'a>, InstallError> {
    let Some(current) = current else { return Ok(Standing::Write) };
    // A namespace adopted before stays adopted, even if it carries the installer's label too
    // (an install before adopting dropped it could have left it there).
    if !installed_here(&current.metadata) || adopted(&current.metadata) {
        return match resource.group.is_empty() && resource.kind == "Namespace" {
            true => Ok(Standing::Adopt(current)),
            false => Err(InstallError::NotOurs { path: path.to_path_buf(), object: name.clone() }),
        };
    }
    let recorded = current.metadata.annotations.as_ref().and_then(|a| a.get(INSTALLED_FOR_ANNOTATION));
    match recorded {
        Some(recorded) if recorded != owner => Err(InstallError::NotItsOwn {
            path: path.to_path_buf(),
            object: name.clone(),
            owner: recorded.clone(),
            installing: owner.to_string(),
        }),
        _ => Ok(Standing::Write),
    }
}

pub(crate) struct Writer {
    client: Client,
    pub kinds: Kinds,
    /// Until the server answers an apply patch with 415.
    server_side_apply: AtomicBool,
}

impl Writer {
    pub fn new(client: Client) -> Writer {
        Writer { kinds: Kinds::new(client.clone()), client, server_side_apply: AtomicBool::new(true) }
    }

    pub fn uses_server_side_apply(&self) -> bool {
        self.server_side_apply.load(Ordering::Relaxed)
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Installs one document for `owner` (an installation's name, or [`crate::PLATFORM`]): the
    /// object, then (for a custom resource with a status subresource) the document's status.
    pub async fn put(&self, doc: Document, owner: &str) -> Result<Placed, InstallError> {
        let Target { path, name, api, resource, caps, mut object } = self.target(doc).await?;
        let status = split_status(&mut object, &resource, &caps);
        let current = api.get_opt(&name.name).await.map_err(|e| refused(&path, &name, &e))?;
        if let Standing::Adopt(current) = standing(&path, &name, &resource, current.as_ref(), owner)? {
            let (stored, outcome) =
                adopt(&api, current, &object).await.map_err(|e| refused(&path, &name, &e))?;
            return Ok(Placed { path, name, api, resource, object: stored, outcome });
        }
        mark(&mut object.metadata, &resource, owner);
        let before = current.as_ref().map(|c| c.metadata.resource_version.clone().unwrap_or_default());
        let stored =
            self.write(&api, &name, current, &object).await.map_err(|e| refused(&path, &name, &e))?;
        let outcome = outcome_of(before.as_deref(), &stored);
        let mut placed = Placed { path, name, api, resource, outcome, object: stored };
        if let Some(status) = status {
            let before = placed.object.metadata.resource_version.clone();
            placed.object = self.put_status(&placed, status).await?;
            placed.outcome = placed.outcome.then(outcome_of(before.as_deref(), &placed.object));
        }
        Ok(placed)
    }

    /// Whether [`Writer::put`] of `doc` for `owner` would be refused by what is on the cluster
    /// now ([`InstallError::NotOurs`], [`InstallError::NotItsOwn`]), without writing anything.
    /// A kind the cluster does not serve yet (one of a CRD still to be installed) has no
    /// objects: nothing to check.
    pub async fn check(&self, doc: &Document, owner: &str) -> Result<(), InstallError> {
        let Target { path, name, api, resource, .. } = match self.target(doc.clone()).await {
            Err(InstallError::UnknownKind { .. }) => return Ok(()),
            other => other?,
        };
        let current = api.get_opt(&name.name).await.map_err(|e| refused(&path, &name, &e))?;
        standing(&path, &name, &resource, current.as_ref(), owner).map(|_| ())
    }

    /// Where `doc` goes: its kind's API (a namespaced object without a namespace goes to
    /// `default`, as kubectl does), and the object as the installer writes it, without the
    /// server's fields and a document's installer marks.
    async fn target(&self, doc: Document) -> Result<Target, InstallError> {
        let Document { path, mut object, .. } = doc;
        let types = object.types.clone().unwrap_or_default();
        let mut name = ObjectName {
            kind: types.kind.clone(),
            namespace: String::new(),
            name: object.metadata.name.clone().unwrap_or_default(),
        };
        let Some((resource, caps)) = self.kinds.find(&types.api_version, &types.kind).await? else {
            return Err(InstallError::UnknownKind { path, api_version: types.api_version, object: name });
        };
        let api: Api<DynamicObject> = if caps.scope == Scope::Namespaced {
            let ns = object
                .metadata
                .namespace
                .clone()
                .filter(|ns| !ns.is_empty())
                .unwrap_or_else(|| "default".into());
            object.metadata.namespace = Some(ns.clone());
            name.namespace = ns.clone();
            Api::namespaced_with(self.client.clone(), &ns, &resource)
        } else {
            object.metadata.namespace = None;
            Api::all_with(self.client.clone(), &resource)
        };
        clear_server_fields(&mut object.metadata);
        clear_installer_marks(&mut object.metadata);
        Ok(Target { path, name, api, resource, caps, object })
    }

    /// Writes `status` through the status subresource of `placed` (unless it
    /// says so already); the object as stored after.
    ///
    /// An update, as controllers write status, not an apply: before 1.22 an
    /// object's managedFields do not tell its status from the rest, so
    /// applying both as one manager makes each apply take the other's fields
    /// away and back (on 1.20.2 every apply of the object after one of its
    /// status, and the reverse, is a new resourceVersion), and no install
    /// would ever be unchanged.
    pub async fn put_status(&self, placed: &Placed, status: Value) -> Result<DynamicObject, InstallError> {
        let name = placed.name.name.as_str();
        let params = post_params();
        let mut attempt = 1;
        loop {
            let mut current = placed.api.get_status(name).await.map_err(|e| placed.refused(&e))?;
            if current.data.get("status").is_some_and(|have| contains(have, &status)) {
                return Ok(current);
            }
            if let Value::Object(data) = &mut current.data {
                data.insert("status".into(), status.clone());
            }
            match placed.api.replace_status(name, &params, &current).await {
                // Written in between (the embedded cluster's controller): again, from what is there now.
                Err(e) if is_status(&e, 409) && attempt < ATTEMPTS => attempt += 1,
                other => return other.map_err(|e| placed.refused(&e)),
            }
        }
    }

    /// Applies `desired`; `current` is the object before, if there was one.
    async fn write(
        &self,
        api: &Api<DynamicObject>,
        object: &ObjectName,
        current: Option<DynamicObject>,
        desired: &DynamicObject,
    ) -> Result<DynamicObject, kube::Error> {
        let name = object.name.as_str();
        if self.uses_server_side_apply() {
            match api.patch(name, &apply_params(), &Patch::Apply(desired)).await {
                Err(e) if is_status(&e, 415) => self.no_server_side_apply(&e),
                Err(e) if unknown_to_the_schema(&e) => tracing::warn!(
                    %object,
                    answer = %server_message(&e).1,
                    "server-side apply refuses fields the server does not know: written by create or replace, \
                     which drop them"
                ),
                other => return other,
            }
        }
        let params = post_params();
        let wanted = serde_json::to_value(desired).map_err(kube::Error::SerdeError)?;
        let (mut current, mut attempt) = (current, 1);
        loop {
            let Some(now) = current.take() else {
                return api.create(&params, desired).await;
            };
            let mut merged = serde_json::to_value(&now).map_err(kube::Error::SerdeError)?;
            if contains(&merged, &wanted) {
                return Ok(now);
            }
            overlay(&mut merged, &wanted);
            let merged: DynamicObject = serde_json::from_value(merged).map_err(kube::Error::SerdeError)?;
            match api.replace(name, &params, &merged).await {
                // Written in between (a controller's status): again, from what is there now.
                Err(e) if is_status(&e, 409) && attempt < ATTEMPTS => {
                    attempt += 1;
                    current = api.get_opt(name).await?;
                }
                other => return other,
            }
        }
    }

    fn no_server_side_apply(&self, error: &kube::Error) {
        if self.server_side_apply.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                answer = %server_message(error).1,
                "the API server refuses server-side apply: objects are created, or replaced with the files' fields"
            );
        }
    }
}

/// The refusal of an apply patch with a field the server's OpenAPI schema
/// lacks (structured-merge-diff cannot type it; the server answers 500).
fn unknown_to_the_schema(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status)
        if status.message.contains("failed to create typed patch object") && status.message.contains("field not declared in schema"))
}

fn apply_params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER).force()
}

fn post_params() -> PostParams {
    PostParams { dry_run: false, field_manager: Some(FIELD_MANAGER.into()) }
}

fn refused(path: &std::path::Path, name: &ObjectName, error: &kube::Error) -> InstallError {
    let (code, message) = server_message(error);
    InstallError::Refused { path: path.to_path_buf(), object: name.clone(), code, message }
}

/// Whether `metadata` carries the installer's label.
pub(crate) fn installed_here(metadata: &ObjectMeta) -> bool {
    metadata.labels.as_ref().and_then(|l| l.get(INSTALLED_BY_LABEL)).is_some_and(|v| v == FIELD_MANAGER)
}

/// Whether `metadata` marks a namespace the installer adopted (it existed before).
pub(crate) fn adopted(metadata: &ObjectMeta) -> bool {
    metadata.labels.as_ref().and_then(|l| l.get(ADOPTED_BY_LABEL)).is_some_and(|v| v == FIELD_MANAGER)
}

/// The installer's label, and on a CRD the owner it is written for.
fn mark(metadata: &mut ObjectMeta, resource: &ApiResource, owner: &str) {
    metadata.labels.get_or_insert_with(BTreeMap::new).insert(INSTALLED_BY_LABEL.into(), FIELD_MANAGER.into());
    if is_crd(resource) {
        metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(INSTALLED_FOR_ANNOTATION.into(), owner.into());
    }
}

/// Whether `resource` is CustomResourceDefinitions: the kind whose objects record their owner.
pub(crate) fn is_crd(resource: &ApiResource) -> bool {
    resource.group == "apiextensions.k8s.io" && resource.kind == "CustomResourceDefinition"
}

/// The installer's own marks, whatever a document says: they decide what
/// uninstall deletes ([`INSTALLED_BY_LABEL`]), what it leaves and which labels
/// it takes away ([`ADOPTED_BY_LABEL`], [`ADDED_LABELS_ANNOTATION`]), and whose
/// kinds a CRD defines ([`INSTALLED_FOR_ANNOTATION`]), so only the installer
/// sets them, and only on what it created or adopted.
fn clear_installer_marks(metadata: &mut ObjectMeta) {
    if let Some(labels) = metadata.labels.as_mut() {
        labels.remove(INSTALLED_BY_LABEL);
        labels.remove(ADOPTED_BY_LABEL);
    }
    if let Some(annotations) = metadata.annotations.as_mut() {
        annotations.remove(ADDED_LABELS_ANNOTATION);
        annotations.remove(INSTALLED_FOR_ANNOTATION);
    }
}

/// Whether adopting a namespace may add label `key` of a document to it. Not
/// the installer's marks ([`clear_installer_marks`] took them off the document
/// already; a namespace the installer did not make must never carry
/// [`INSTALLED_BY_LABEL`], or uninstall would delete it), and not Pod Security
/// Admission's `pod-security.kubernetes.io/…`: a namespace that existed before
/// keeps the pod security its owner gave it.
fn adoptable_label(key: &str) -> bool {
    key != INSTALLED_BY_LABEL && key != ADOPTED_BY_LABEL && !key.starts_with("pod-security.kubernetes.io/")
}

/// The fields a server sets: a fixture's (its creation time) would be refused or ignored.
fn clear_server_fields(metadata: &mut ObjectMeta) {
    metadata.uid = None;
    metadata.resource_version = None;
    metadata.creation_timestamp = None;
    metadata.generation = None;
    metadata.managed_fields = None;
    metadata.self_link = None;
    metadata.deletion_timestamp = None;
    metadata.deletion_grace_period_seconds = None;
}

/// The status the document's object gets through the status subresource, if
/// any. With a status subresource a write of the object drops its status, so
/// it is taken out either way; it is written back only for custom resources,
/// since the status of a built-in kind (a Namespace's phase) is its
/// controller's to write on a real cluster.
fn split_status(object: &mut DynamicObject, resource: &ApiResource, caps: &ApiCapabilities) -> Option<Value> {
    if !caps.subresources.iter().any(|(sub, _)| sub.plural == "status") {
        return None;
    }
    let status = object.data.as_object_mut().and_then(|data| data.remove("status"))?;
    (!builtin_group(&resource.group) && !status.is_null()).then_some(status)
}

/// The API groups of Kubernetes itself.
fn builtin_group(group: &str) -> bool {
    matches!(group, "" | "apps" | "batch" | "autoscaling" | "policy" | "extensions")
        || group.ends_with(".k8s.io")
}

/// Created when there was nothing before, unchanged when the resourceVersion stayed.
fn outcome_of(before: Option<&str>, after: &DynamicObject) -> Outcome {
    match (before, after.metadata.resource_version.as_deref()) {
        (None, _) => Outcome::Created,
        (Some(a), Some(b)) if a == b => Outcome::Unchanged,
        _ => Outcome::Changed,
    }
}

/// Adds the labels of `desired` that `current` lacks (but never the
/// installer's marks or pod security, see [`adoptable_label`]), and records
/// which, so that uninstall can take exactly those away again. Labels someone
/// else set stay as they are, whatever the document says.
async fn adopt(
    api: &Api<DynamicObject>,
    current: &DynamicObject,
    desired: &DynamicObject,
) -> Result<(DynamicObject, Outcome), kube::Error> {
    let have = current.metadata.labels.clone().unwrap_or_default();
    let missing: Map<String, Value> = desired
        .metadata
        .labels
        .iter()
        .flatten()
        .filter(|(key, _)| !have.contains_key(*key) && adoptable_label(key))
        .map(|(key, value)| (key.clone(), Value::String(value.clone())))
        .collect();
    if missing.is_empty() && adopted(&current.metadata) {
        return Ok((current.clone(), Outcome::Unchanged));
    }
    let mut added: BTreeSet<String> = added_labels(&current.metadata);
    added.extend(missing.keys().cloned());
    let mut labels = missing;
    labels.insert(ADOPTED_BY_LABEL.into(), json!(FIELD_MANAGER));
    let added: Vec<String> = added.into_iter().collect();
    let patch =
        json!({"metadata": {"labels": labels, "annotations": {ADDED_LABELS_ANNOTATION: added.join(",")}}});
    let params = PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..PatchParams::default() };
    let name = current.metadata.name.as_deref().unwrap_or_default();
    let stored = api.patch(name, &params, &Patch::Merge(&patch)).await?;
    Ok((stored, Outcome::Adopted))
}

/// The labels [`adopt`] added to a namespace.
pub(crate) fn added_labels(metadata: &ObjectMeta) -> BTreeSet<String> {
    let recorded = metadata.annotations.as_ref().and_then(|a| a.get(ADDED_LABELS_ANNOTATION));
    recorded
        .map(|list| list.split(',').filter(|k| !k.is_empty()).map(String::from).collect())
        .unwrap_or_default()
}

/// Whether `have` has every field of `want` with its value (maps may have
/// more keys; lists match element by element, as a server adds defaults to
/// each element).
fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w.iter().all(|(key, wv)| match h.get(key) {
            Some(hv) => contains(hv, wv),
            None => wv.is_null(),
        }),
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(a, b)| contains(a, b))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (h, w) => h == w,
    }
}

/// Lays `top` over `base`: maps merge, anything else is replaced, `null` removes.
fn overlay(base: &mut Value, top: &Value) {
    match (base, top) {
        (Value::Object(b), Value::Object(t)) => {
            for (key, value) in t {
                if value.is_null() {
                    b.remove(key);
                } else if let Some(existing) = b.get_mut(key) {
                    overlay(existing, value);
                } else {
                    b.insert(key.clone(), value.clone());
                }
            }
        }
        (base, top) => *base = top.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_sees_the_documents_fields_among_the_servers() {
        let have = json!({"metadata": {"name": "a", "uid": "u", "labels": {"x": "1", "y": "2"}},
                          "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "size": 3.0}});
        assert!(contains(
            &have,
            &json!({"metadata": {"labels": {"x": "1"}}, "spec": {"ports": [{"port": 80}], "size": 3}})
        ));
        assert!(contains(&have, &json!({"spec": {"gone": null}})));
        assert!(!contains(&have, &json!({"metadata": {"labels": {"x": "2"}}})));
        assert!(!contains(&have, &json!({"spec": {"ports": [{"port": 80}, {"port": 81}]}})));
        assert!(!contains(&have, &json!({"spec": {"other": 1}})));
    }

    #[test]
    fn overlay_merges_maps_and_replaces_the_rest() {
        let mut base =
            json!({"metadata": {"labels": {"x": "1", "y": "2"}}, "spec": {"list": [1, 2], "keep": true}});
        overlay(&mut base, &json!({"metadata": {"labels": {"x": "9", "y": null}}, "spec": {"list": [3]}}));
        assert_eq!(base, json!({"metadata": {"labels": {"x": "9"}}, "spec": {"list": [3], "keep": true}}));
    }

    #[test]
    fn built_in_groups_are_told_from_custom_ones() {
        for group in ["", "apps", "batch", "rbac.authorization.k8s.io", "apiextensions.k8s.io"] {
            assert!(builtin_group(group), "{group}");
        }
        for group in ["cert-manager.io", "plugins.fundament.io", "demo.fundament.io"] {
            assert!(!builtin_group(group), "{group}");
        }
    }

    #[test]
    fn a_field_unknown_to_the_schema_is_told_from_other_refusals() {
        let refusal = |code: u16, message: &str| {
            kube::Error::Api(kube::core::Status::failure(message, "InternalError").with_code(code).boxed())
        };
        // As kube-apiserver 1.20.2 answers for a CRD with x-kubernetes-validations.
        let unknown = refusal(
            500,
            "failed to create typed patch object: .spec.versions[0].schema.openAPIV3Schema.properties.spec\
             .properties.definitionRef.x-kubernetes-validations: field not declared in schema",
        );
        assert!(unknown_to_the_schema(&unknown));
        assert!(!unknown_to_the_schema(&refusal(
            500,
            "failed to create typed patch object: .spec.size: expected numeric"
        )));
        assert!(!unknown_to_the_schema(&refusal(422, "spec.note: Invalid value")));
        assert!(is_status(&refusal(415, "unsupported"), 415));
    }

    #[test]
    fn a_documents_installer_marks_are_taken_off() {
        let mut metadata: ObjectMeta = serde_json::from_value(json!({"name": "kube-system",
            "labels": {INSTALLED_BY_LABEL: FIELD_MANAGER, ADOPTED_BY_LABEL: FIELD_MANAGER, "team": "a"},
            "annotations": {ADDED_LABELS_ANNOTATION: "team", INSTALLED_FOR_ANNOTATION: "platform", "note": "n"}}))
        .unwrap();
        clear_installer_marks(&mut metadata);
        assert_eq!(metadata.labels, Some(BTreeMap::from([("team".into(), "a".into())])));
        assert_eq!(metadata.annotations, Some(BTreeMap::from([("note".into(), "n".into())])));
    }

    #[test]
    fn adopting_adds_neither_the_installers_marks_nor_pod_security() {
        for key in [
            INSTALLED_BY_LABEL,
            ADOPTED_BY_LABEL,
            "pod-security.kubernetes.io/enforce",
            "pod-security.kubernetes.io/warn-version",
        ] {
            assert!(!adoptable_label(key), "{key}");
        }
        for key in ["fundament.io/project", "kubernetes.io/metadata.name", "team"] {
            assert!(adoptable_label(key), "{key}");
        }
    }

    #[test]
    fn a_status_write_after_an_unchanged_object_is_a_change() {
        assert_eq!(Outcome::Unchanged.then(Outcome::Changed), Outcome::Changed);
        assert_eq!(Outcome::Unchanged.then(Outcome::Unchanged), Outcome::Unchanged);
        assert_eq!(Outcome::Created.then(Outcome::Changed), Outcome::Created);
    }
}
