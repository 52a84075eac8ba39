//! The cluster's state and the operations on it: every read and write goes
//! through here, whether it came over HTTP, from fixtures or from the mock
//! plugin controller, so all of them meet the same validation and admission.

use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::sync::watch::channel as watch_channel;

use crate::admission;
use crate::authn::User;
use crate::fields;
use crate::journal::{Journal, PersistError};
use crate::object;
use crate::query::ListQuery;
use crate::resource::{self, Registry, ResourceType, StorageKey};
use crate::status::{self, ApiError};
use crate::store::{Change, EventType, Store};
use crate::strategy::{self, Derived};

/// Where a write comes from: the API (checked) or the server itself (fixtures,
/// snapshots, the mock controller), which may set status and timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Api,
    System,
}

/// Options of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    pub dry_run: bool,
    pub origin: Origin,
    /// `fieldValidation=Strict`: unknown fields are an error, not dropped.
    pub strict: bool,
}

impl WriteOptions {
    pub const API: Self = Self { dry_run: false, origin: Origin::Api, strict: false };
    pub const SYSTEM: Self = Self { dry_run: false, origin: Origin::System, strict: false };
}

pub struct State {
    pub store: Store,
    pub registry: Arc<Registry>,
    pub policy: Arc<fundament_rbac::Policy>,
    /// The bound admission policies, compiled.
    pub admission: Arc<crate::admission::Admission>,
    /// Changes of the write in progress: announced once they are durable.
    pending: Vec<Arc<Change>>,
}

/// The cluster: state behind a lock, and a channel of changes for watches.
pub struct Cluster {
    state: RwLock<State>,
    changes: broadcast::Sender<Arc<Change>>,
    /// With `--state-file`: where every write goes before it is seen.
    journal: OnceLock<Arc<Journal>>,
    /// Set at shutdown: open watches end (with a BOOKMARK where the client allows them).
    closing: tokio::sync::watch::Sender<bool>,
}

pub fn now_rfc3339() -> String {
    let now =
        time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

impl Default for Cluster {
    fn default() -> Self {
        Self::new()
    }
}

impl Cluster {
    pub fn new() -> Self {
        let (changes, _) = broadcast::channel(4096);
        let state = State {
            store: Store::default(),
            registry: Arc::new(Registry::new(resource::builtins())),
            policy: Arc::new(fundament_rbac::Policy::default()),
            admission: Arc::default(),
            pending: Vec::new(),
        };
        Self { state: RwLock::new(state), changes, journal: OnceLock::new(), closing: watch_channel(false).0 }
    }

    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs one write under the lock. Its changes are journaled (with
    /// `--state-file`) before they are announced; if that fails they are
    /// undone, derived state is rebuilt, and the write answers a 500 Status.
    fn transact<T>(&self, write: impl FnOnce(&mut State) -> Result<T, ApiError>) -> Result<T, ApiError> {
        let mut state = self.write();
        let rv_before = state.store.resource_version();
        let result = write(&mut state);
        let changes = std::mem::take(&mut state.pending);
        if changes.is_empty() {
            return result;
        }
        if let Some(journal) = self.journal.get()
            && let Err(error) = journal.persist(&state, &changes)
        {
            tracing::error!(%error, "write refused: it could not be saved");
            state.store.undo(&changes, rv_before);
            rebuild_derived(&mut state);
            return Err(error.to_status());
        }
        for change in changes {
            let _ = self.changes.send(change);
        }
        result
    }

    /// Keeps the state in `journal` from now on, starting with a snapshot of
    /// it. When that fails (a read-only directory, a full disk) the journal
    /// stays attached: writes are refused until a snapshot can be written.
    pub fn keep_in(&self, journal: Arc<Journal>) -> Result<(), PersistError> {
        let state = self.write();
        let journal = self.journal.get_or_init(|| journal);
        journal.compact(&state)
    }

    /// The journal, when the state is kept in a file.
    pub fn journal(&self) -> Option<Arc<Journal>> {
        self.journal.get().cloned()
    }

    /// Writes the whole state as the snapshot (at shutdown), when it is kept in a file.
    pub fn save_state(&self) -> Result<(), PersistError> {
        match self.journal.get() {
            Some(journal) => journal.compact(&self.read()),
            None => Ok(()),
        }
    }

    /// Ends every open watch (at shutdown), and every watch started later.
    pub fn close_watches(&self) {
        self.closing.send_replace(true);
    }

    /// Resolves once [`Cluster::close_watches`] was called.
    pub fn closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut closing = self.closing.subscribe();
        async move {
            let _ = closing.wait_for(|c| *c).await;
        }
    }

    pub fn registry(&self) -> Arc<Registry> {
        Arc::clone(&self.read().registry)
    }

    pub fn policy(&self) -> Arc<fundament_rbac::Policy> {
        Arc::clone(&self.read().policy)
    }

    /// A receiver of every change from now on, and the resourceVersion it starts after.
    pub fn subscribe(&self) -> (broadcast::Receiver<Arc<Change>>, u64) {
        let state = self.read();
        (self.changes.subscribe(), state.store.resource_version())
    }

    /// Like [`Cluster::subscribe`], for a caller already holding the read lock.
    pub fn subscribe_locked(&self, state: &State) -> (broadcast::Receiver<Arc<Change>>, u64) {
        (self.changes.subscribe(), state.store.resource_version())
    }

    /// The resource type for a group/version/plural, if served.
    pub fn resource(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.read().registry.get(group, version, plural).cloned()
    }

    // ----- reads -----

    pub fn get(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<Value, ApiError> {
        let state = self.read();
        Ok(at_version(stored(&state, rt, ns, name)?, rt))
    }

    /// A page of matching objects, the list's resourceVersion and the continue token.
    pub fn list(&self, rt: &ResourceType, ns: &str, q: &ListQuery) -> Result<ListPage, ApiError> {
        q.check_fields(rt)?;
        let start = decode_continue(&q.continue_token)?;
        let state = self.read();
        let key = rt.storage_key();
        let mut items = Vec::new();
        let mut remaining = 0usize;
        let mut next = None;
        for ((o_ns, o_name), obj) in state.store.iter(&key, ns) {
            if let Some((s_ns, s_name)) = &start
                && (o_ns, o_name) <= (s_ns, s_name)
            {
                continue;
            }
            if !q.matches(obj) {
                continue;
            }
            if q.limit > 0 && items.len() == q.limit {
                remaining += 1;
                if next.is_none() {
                    let last: &Value = items.last().map(|v: &Arc<Value>| v.as_ref()).unwrap_or(&Value::Null);
                    next = Some(encode_continue(object::namespace(last), object::name(last)));
                }
                continue;
            }
            items.push(Arc::clone(obj));
        }
        let rv = state.store.resource_version();
        drop(state);
        Ok(ListPage {
            items: items.iter().map(|o| at_version(o, rt)).collect(),
            resource_version: rv,
            continue_token: next,
            remaining: if remaining > 0 { Some(remaining) } else { None },
        })
    }

    // ----- writes -----

    /// Creates an object. `ns` is the namespace of the request path.
    pub fn create(
        &self,
        user: &User,
        rt: &ResourceType,
        ns: &str,
        body: Value,
        opts: WriteOptions,
    ) -> Result<Value, ApiError> {
        let mut obj = prepare_body(rt, ns, body, true)?;
        if opts.origin == Origin::Api {
            if !object::resource_version(&obj).is_empty() {
                return Err(ApiError::bad_request(
                    "resourceVersion should not be set on objects to be created",
                ));
            }
            strategy::for_type(rt).prepare_for_create(rt, &mut obj);
        }
        self.transact(|state| {
            if object::name(&obj).is_empty() && !object::generate_name(&obj).is_empty() {
                let prefix = object::generate_name(&obj).to_string();
                let generated =
                    generate_name(&prefix, |n| state.store.get(&rt.storage_key(), ns, n).is_some());
                metadata_mut(rt, &mut obj)?.insert("name".into(), Value::String(generated));
            }
            let name = object::name(&obj).to_string();
            if rt.namespaced && state.store.get(&namespaces_key(), "", ns).is_none() {
                return Err(ApiError::not_found("", "namespaces", ns));
            }
            if state.store.get(&rt.storage_key(), object::namespace(&obj), &name).is_some() {
                return Err(ApiError::already_exists(&rt.group, &rt.plural, &name));
            }
            self.check_new(state, rt, &mut obj, None, "", user, opts)?;
            if opts.origin == Origin::Api || object::creation_timestamp(&obj).is_empty() {
                metadata_mut(rt, &mut obj)?.insert("creationTimestamp".into(), Value::String(now_rfc3339()));
            }
            let meta = metadata_mut(rt, &mut obj)?;
            meta.insert("uid".into(), Value::String(uuid::Uuid::new_v4().to_string()));
            // The server's own, as kube-apiserver clears them: an object created "being
            // deleted" kept its finalizers' hold, and a later delete did nothing.
            if opts.origin == Origin::Api {
                meta.remove("deletionTimestamp");
                meta.remove("deletionGracePeriodSeconds");
            }
            if strategy::for_type(rt).tracks_generation() {
                meta.insert("generation".into(), json!(1));
            }
            if opts.dry_run {
                let rv = Value::String(state.store.resource_version().to_string());
                metadata_mut(rt, &mut obj)?.insert("resourceVersion".into(), rv);
                return Ok(at_version(&obj, rt));
            }
            let committed = self.commit(state, rt, obj)?;
            Ok(at_version(&committed, rt))
        })
    }

    /// Replaces an object (PUT), or only its status when `status` is set.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &self,
        user: &User,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        body: Value,
        status: bool,
        opts: WriteOptions,
    ) -> Result<Value, ApiError> {
        let obj = prepare_body(rt, ns, body, false)?;
        if object::name(&obj) != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                object::name(&obj)
            )));
        }
        self.transact(|state| {
            let old = Arc::clone(stored(state, rt, ns, name)?);
            self.replace(state, user, rt, &old, obj, status, opts)
        })
    }

    /// Applies a patch to the current object and stores the result.
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &self,
        user: &User,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        patch: &crate::patch::Patch,
        status: bool,
        opts: WriteOptions,
    ) -> Result<Value, ApiError> {
        self.transact(|state| {
            let old = Arc::clone(stored(state, rt, ns, name)?);
            let current = at_version(&old, rt);
            let patched = patch.apply(&current, rt)?;
            let patched = prepare_body(rt, ns, patched, false)?;
            if object::name(&patched) != name {
                return Err(ApiError::bad_request(
                    "metadata.name: Invalid value: the name cannot be changed by a patch",
                ));
            }
            self.replace(state, user, rt, &old, patched, status, opts)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn replace(
        &self,
        state: &mut State,
        user: &User,
        rt: &ResourceType,
        old: &Arc<Value>,
        mut obj: Value,
        status: bool,
        opts: WriteOptions,
    ) -> Result<Value, ApiError> {
        let name = object::name(old).to_string();
        let rv = object::resource_version(&obj);
        if !rv.is_empty() && rv != object::resource_version(old) {
            return Err(ApiError::conflict(&rt.group, &rt.plural, &name));
        }
        let uid = object::uid(&obj);
        if !uid.is_empty() && uid != object::uid(old) {
            return Err(ApiError::conflict(&rt.group, &rt.plural, &name));
        }
        // The server owns these: whatever the body says, they stay.
        let meta = metadata_mut(rt, &mut obj)?;
        for owned in ["uid", "creationTimestamp", "generation", "deletionTimestamp", "namespace"] {
            match old["metadata"].get(owned) {
                Some(v) => meta.insert(owned.into(), v.clone()),
                None => meta.remove(owned),
            };
        }
        let strategy = strategy::for_type(rt);
        if opts.origin == Origin::Api {
            strategy.prepare_for_update(rt, &mut obj, old, status)?;
        }
        let old_at = at_version(old, rt);
        self.check_new(state, rt, &mut obj, Some(&old_at), if status { "status" } else { "" }, user, opts)?;
        if strategy.tracks_generation() && spec_changed(old, &obj) {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            metadata_mut(rt, &mut obj)?.insert("generation".into(), json!(generation));
        }
        if strip_volatile(&obj) == strip_volatile(old) {
            // Nothing changed: no new resourceVersion, no event (as the apiserver).
            return Ok(old_at);
        }
        if opts.dry_run {
            return Ok(at_version(&obj, rt));
        }
        let finished = object::is_terminating(&obj)
            && obj["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty);
        if finished {
            // The last finalizer went: the object goes as a delete would take it.
            let ns = object::namespace(old).to_string();
            self.remove(state, &rt.storage_key(), &ns, &name);
            return Ok(at_version(&obj, rt));
        }
        let committed = self.commit(state, rt, obj)?;
        Ok(at_version(&committed, rt))
    }

    /// Validation and admission of a new or changed object.
    #[allow(clippy::too_many_arguments)]
    fn check_new(
        &self,
        state: &State,
        rt: &ResourceType,
        obj: &mut Value,
        old: Option<&Value>,
        subresource: &str,
        user: &User,
        opts: WriteOptions,
    ) -> Result<(), ApiError> {
        let name = object::name(obj).to_string();
        let strategy = strategy::for_type(rt);
        // A name is checked when it is chosen; an update cannot change it.
        let mut causes =
            if old.is_some() { Vec::new() } else { object::check_name(&name, strategy.name_rule()) };
        causes.extend(object::check_labels_and_annotations(&obj["metadata"]));
        causes.extend(strategy.validate(obj, &strategy::Validation { rt, old, strict: opts.strict })?);
        if causes.is_empty() {
            causes = strategy.validate_servable(obj);
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid(&rt.kind, &rt.group, &name, causes));
        }
        if opts.origin == Origin::Api {
            crate::escalation::check(&state.policy, user, rt, obj)?;
            admission::admit(
                state,
                &admission::Attributes::write(rt, obj, old, subresource, user, opts.dry_run),
            )?;
        }
        Ok(())
    }

    /// Stamps a resourceVersion, stores, announces, and keeps derived state
    /// (served kinds, RBAC policy) in step.
    fn commit(&self, state: &mut State, rt: &ResourceType, mut obj: Value) -> Result<Arc<Value>, ApiError> {
        let key = rt.storage_key();
        let strategy = strategy::for_type(rt);
        strategy.canonicalize(rt, &state.registry, &mut obj);
        let rv = state.store.next_rv();
        let meta = metadata_mut(rt, &mut obj)?;
        meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        meta.remove("managedFields");
        let change = state.store.put(&key, rv, obj);
        let stored = Arc::clone(&change.object);
        state.pending.push(change);
        self.settle(state, strategy.after_change());
        Ok(stored)
    }

    /// Deletes an object (or marks it, while finalizers remain).
    pub fn delete(
        &self,
        user: &User,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        preconditions: &Value,
        opts: WriteOptions,
    ) -> Result<Value, ApiError> {
        self.transact(|state| {
            let key = rt.storage_key();
            let old = Arc::clone(stored(state, rt, ns, name)?);
            if let Some(uid) = preconditions["uid"].as_str()
                && uid != object::uid(&old)
            {
                return Err(ApiError::conflict(&rt.group, &rt.plural, name));
            }
            if let Some(rv) = preconditions["resourceVersion"].as_str()
                && rv != object::resource_version(&old)
            {
                return Err(ApiError::conflict(&rt.group, &rt.plural, name));
            }
            if opts.origin == Origin::Api {
                admission::admit(state, &admission::Attributes::delete(rt, &old, user, opts.dry_run))?;
            }
            if opts.dry_run {
                return Ok(at_version(&old, rt));
            }
            let has_finalizers = old["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
            if has_finalizers {
                if object::is_terminating(&old) {
                    return Ok(at_version(&old, rt));
                }
                let mut marked = (*old).clone();
                let meta = metadata_mut(rt, &mut marked)?;
                meta.insert("deletionTimestamp".into(), Value::String(now_rfc3339()));
                meta.insert("deletionGracePeriodSeconds".into(), json!(0));
                let committed = self.commit(state, rt, marked)?;
                return Ok(at_version(&committed, rt));
            }
            let gone = self
                .remove(state, &key, ns, name)
                .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
            Ok(at_version(&gone, rt))
        })
    }

    /// The one way an object leaves the store, whatever removed it (a delete,
    /// its last finalizer going, a namespace's or CRD's deletion): announced,
    /// its cascade run (a Namespace's contents, a CRD's objects), and derived
    /// state (served kinds, RBAC policy) rebuilt once at the end.
    fn remove(&self, state: &mut State, key: &StorageKey, ns: &str, name: &str) -> Option<Arc<Value>> {
        let mut derived = Derived::default();
        let gone = self.remove_one(state, key, ns, name, &mut derived)?;
        self.settle(state, derived);
        Some(gone)
    }

    fn remove_one(
        &self,
        state: &mut State,
        key: &StorageKey,
        ns: &str,
        name: &str,
        derived: &mut Derived,
    ) -> Option<Arc<Value>> {
        let rv = state.store.next_rv();
        let change = state.store.remove(key, ns, name, rv)?;
        let gone = Arc::clone(&change.object);
        state.pending.push(change);
        let strategy = strategy::for_key(key);
        derived.merge(strategy.after_change());
        let cascade = strategy.dependents(&state.store, &state.registry, &gone);
        for (k, n, o) in cascade {
            self.remove_one(state, &k, &n, &o, derived);
        }
        Some(gone)
    }

    /// Rebuilds what the changed kinds feed.
    fn settle(&self, state: &mut State, derived: Derived) {
        if derived.registry {
            state.registry = Arc::new(rebuild_registry(&state.store));
        }
        if derived.policy {
            state.policy = Arc::new(rebuild_policy(&state.store));
        }
        if derived.admission {
            state.admission = Arc::new(crate::admission::Admission::rebuild(&state.store));
        }
    }

    /// Deletes every matching object; answers the list of what was deleted.
    pub fn delete_collection(
        &self,
        user: &User,
        rt: &ResourceType,
        ns: &str,
        q: &ListQuery,
        opts: WriteOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let page = self.list(rt, ns, &ListQuery { limit: 0, continue_token: String::new(), ..q.clone() })?;
        let mut deleted = Vec::new();
        for item in page.items {
            match self.delete(user, rt, object::namespace(&item), object::name(&item), &Value::Null, opts) {
                Ok(v) => deleted.push(v),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }

    /// Puts objects as they were saved (snapshot restore): no validation, same uids.
    pub fn restore(&self, objects: impl IntoIterator<Item = (StorageKey, Value)>, rv: u64) {
        let mut state = self.write();
        for (key, obj) in objects {
            let obj_rv = object::resource_version(&obj).parse().unwrap_or(0);
            state.store.put(&key, obj_rv, obj);
        }
        state.store.set_resource_version(rv);
        rebuild_derived(&mut state);
    }
}

/// Served kinds, RBAC policy and admission, from the store as it is.
fn rebuild_derived(state: &mut State) {
    state.registry = Arc::new(rebuild_registry(&state.store));
    state.policy = Arc::new(rebuild_policy(&state.store));
    state.admission = Arc::new(crate::admission::Admission::rebuild(&state.store));
}

/// One page of a list.
pub struct ListPage {
    pub items: Vec<Value>,
    pub resource_version: u64,
    pub continue_token: Option<String>,
    pub remaining: Option<usize>,
}

/// The stored object `name` of `rt` in `ns`, or the API's NotFound.
fn stored<'a>(state: &'a State, rt: &ResourceType, ns: &str, name: &str) -> Result<&'a Arc<Value>, ApiError> {
    state
        .store
        .get(&rt.storage_key(), ns, name)
        .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))
}

fn namespaces_key() -> StorageKey {
    StorageKey { group: String::new(), resource: "namespaces".into() }
}

fn crds_key() -> StorageKey {
    StorageKey { group: "apiextensions.k8s.io".into(), resource: "customresourcedefinitions".into() }
}

/// The object as read at `rt`'s version (CRD versions convert by renaming only).
pub fn at_version(obj: &Value, rt: &ResourceType) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(rt.api_version()));
        m.insert("kind".into(), Value::String(rt.kind.clone()));
    }
    v
}

/// An object's metadata, for writing. A body's was checked by [`prepare_body`];
/// a stored one may come from a snapshot that was never validated.
fn metadata_mut<'a>(rt: &ResourceType, obj: &'a mut Value) -> Result<&'a mut fields::Object, ApiError> {
    let name = object::name(obj).to_string();
    fields::object_at(obj, &["metadata"]).map_err(|c| status::invalid(rt, &name, c))
}

/// The types of the metadata fields every kind reads.
const METADATA_TYPES: &[(&[&str], &str)] = &[
    (&["metadata"], "object"),
    (&["metadata", "name"], "string"),
    (&["metadata", "generateName"], "string"),
    (&["metadata", "namespace"], "string"),
    (&["metadata", "resourceVersion"], "string"),
    (&["metadata", "uid"], "string"),
    (&["metadata", "labels"], "object"),
    (&["metadata", "annotations"], "object"),
    (&["metadata", "finalizers"], "array"),
    (&["metadata", "ownerReferences"], "array"),
];

/// Checks apiVersion/kind/namespace of a body against the endpoint and fills them in.
fn prepare_body(rt: &ResourceType, ns: &str, body: Value, creating: bool) -> Result<Value, ApiError> {
    let Value::Object(_) = body else {
        return Err(ApiError::bad_request("the body of the request must be a JSON or YAML object"));
    };
    let mut obj = body;
    let expected = rt.api_version();
    match obj["apiVersion"].as_str() {
        Some(v) if !v.is_empty() && v != expected => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expected})"
            )));
        }
        _ => obj["apiVersion"] = Value::String(expected),
    }
    match obj["kind"].as_str() {
        Some(k) if !k.is_empty() && k != rt.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                rt.kind
            )));
        }
        _ => obj["kind"] = Value::String(rt.kind.clone()),
    }
    // Every later step reads and writes metadata by these types: a body that breaks
    // them is refused here, before anything is touched.
    let mut causes = fields::expect_all(&obj, METADATA_TYPES);
    causes.extend(fields::expect_elements(&obj, &["metadata", "finalizers"], "string"));
    causes.extend(fields::expect_elements(&obj, &["metadata", "ownerReferences"], "object"));
    if !causes.is_empty() {
        let name = object::name(&obj).to_string();
        return Err(ApiError::invalid(&rt.kind, &rt.group, &name, causes));
    }
    let meta = metadata_mut(rt, &mut obj)?;
    if rt.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(n) if !n.is_empty() && n != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => meta.insert("namespace".into(), Value::String(ns.to_string())),
        };
    } else {
        meta.remove("namespace");
    }
    if creating && object::name(&obj).is_empty() && object::generate_name(&obj).is_empty() {
        return Err(status::invalid(rt, "", object::name_required()));
    }
    check_stored_size(&obj)?;
    Ok(obj)
}

/// etcd's bound on one stored object, which kube-apiserver answers with "request is too large":
/// without it, patches grew an object to any size, and each write kept another copy in the
/// change log. And a depth the state file can read back (serde_json's 128 levels, with the
/// journal's own wrapping): deeper, the file would not load at the next start.
const MAX_STORED_BYTES: usize = 1536 * 1024;
const MAX_STORED_DEPTH: usize = 120;

fn check_stored_size(obj: &Value) -> Result<(), ApiError> {
    // The depth first, counted without recursion: serializing is recursive.
    if crate::patch::depth(obj) > MAX_STORED_DEPTH {
        return Err(ApiError::bad_request(format!("the object nests deeper than {MAX_STORED_DEPTH} levels")));
    }
    let bytes = serde_json::to_vec(obj).map_or(usize::MAX, |json| json.len());
    if bytes > MAX_STORED_BYTES {
        return Err(ApiError::failure(413, "RequestEntityTooLarge", "etcdserver: request is too large"));
    }
    Ok(())
}

fn generate_name(prefix: &str, taken: impl Fn(&str) -> bool) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    use rand::Rng;
    let mut rng = rand::rng();
    let base: String = prefix.chars().take(58).collect();
    loop {
        let suffix: String = (0..5).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect();
        let candidate = format!("{base}{suffix}");
        if !taken(&candidate) {
            return candidate;
        }
    }
}

fn strip_volatile(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v["metadata"].as_object_mut() {
        m.remove("resourceVersion");
        m.remove("managedFields");
        m.remove("generation");
    }
    v
}

/// Did anything but metadata and status change? (Then generation moves.)
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
            m.remove("apiVersion");
            m.remove("kind");
        }
        v
    };
    strip(old) != strip(new)
}

/// Built-in kinds plus every version of every stored CRD.
pub fn rebuild_registry(store: &Store) -> Registry {
    let mut types = resource::builtins();
    for (_, crd) in store.iter(&crds_key(), "") {
        match resource::from_crd(crd) {
            Ok(list) => types.extend(list),
            Err(errors) => tracing::warn!(crd = object::name(crd), ?errors, "stored CRD cannot be served"),
        }
    }
    Registry::new(types)
}

/// The RBAC policy of every stored role and binding.
pub fn rebuild_policy(store: &Store) -> fundament_rbac::Policy {
    let group = "rbac.authorization.k8s.io";
    let mut objects = Vec::new();
    for resource in ["roles", "clusterroles", "rolebindings", "clusterrolebindings"] {
        let key = StorageKey { group: group.into(), resource: resource.into() };
        objects.extend(store.iter(&key, "").map(|(_, v)| Arc::clone(v)));
    }
    let (policy, errors) = fundament_rbac::Policy::from_objects(objects.iter().map(|v| v.as_ref()));
    for e in errors {
        tracing::warn!(error = %e, "RBAC object ignored");
    }
    policy
}

fn decode_continue(token: &str) -> Result<Option<(String, String)>, ApiError> {
    use base64::Engine;
    if token.is_empty() {
        return Ok(None);
    }
    let bad = || ApiError::bad_request("continue key is not valid: illegal base64 data");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    match (v["ns"].as_str(), v["name"].as_str()) {
        (Some(ns), Some(name)) => Ok(Some((ns.to_string(), name.to_string()))),
        _ => Err(bad()),
    }
}

fn encode_continue(ns: &str, name: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json!({"ns": ns, "name": name}).to_string())
}

/// The event a change is for a watcher with a selection: objects that leave
/// the selection are DELETED for it, objects that enter it ADDED.
pub fn event_for(change: &Change, q: &ListQuery) -> Option<EventType> {
    let now = q.matches(&change.object);
    let before = change.old.as_deref().is_some_and(|o| q.matches(o));
    match change.kind {
        EventType::Added if now => Some(EventType::Added),
        EventType::Deleted if before || now => Some(EventType::Deleted),
        EventType::Modified => match (before, now) {
            (true, true) => Some(EventType::Modified),
            (false, true) => Some(EventType::Added),
            (true, false) => Some(EventType::Deleted),
            (false, false) => None,
        },
        _ => None,
    }
}
