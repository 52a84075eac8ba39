//! Per-kind behaviour of writes, as kube-apiserver's registry strategies
//! give it: what a create or update may set, how an object is validated and
//! defaulted, what the server fills in on commit, what goes with an object
//! when it is removed, and which derived state (served kinds, RBAC policy) a
//! change makes stale. Built-in kinds have one strategy each (by family in
//! the files below), most of them only [`Rules`]; custom resources share
//! [`crd::CustomResource`].

mod admission;
mod core;
mod crd;
mod rbac;

use serde_json::Value;

use crate::object::NameRule;
use crate::resource::{Builtin, Registry, ResourceType, StorageKey};
use crate::status::{ApiError, Cause};
use crate::store::Store;

/// Derived state a change makes stale.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Derived {
    /// The served kinds (a CRD changed).
    pub registry: bool,
    /// The RBAC policy (a role or binding changed).
    pub policy: bool,
    /// The compiled admission policies (a policy or its binding changed).
    pub admission: bool,
}

impl Derived {
    /// What most changes make stale.
    pub const NOTHING: Derived = Derived { registry: false, policy: false, admission: false };
    /// What a change of a CRD makes stale.
    pub const REGISTRY: Derived = Derived { registry: true, ..Derived::NOTHING };
    /// What a change of a role or binding makes stale.
    pub const POLICY: Derived = Derived { policy: true, ..Derived::NOTHING };
    /// What a change of an admission policy or binding makes stale.
    pub const ADMISSION: Derived = Derived { admission: true, ..Derived::NOTHING };

    pub fn merge(&mut self, other: Derived) {
        self.registry |= other.registry;
        self.policy |= other.policy;
        self.admission |= other.admission;
    }
}

/// What an object is validated against.
pub struct Validation<'a> {
    /// The type written: a custom resource's schema is in it.
    pub rt: &'a ResourceType,
    /// The stored object an update replaces; `None` on a create.
    pub old: Option<&'a Value>,
    /// Strict field validation: an unknown field is an error, not dropped.
    pub strict: bool,
}

/// An object to remove along with another: (where, namespace, name).
pub type Dependent = (StorageKey, String, String);

pub trait Strategy: Sync {
    /// What `metadata.name` must look like.
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// A create from the API: drops what only the server sets. With a status
    /// subresource, the status is the server's (or a status write's).
    fn prepare_for_create(&self, rt: &ResourceType, obj: &mut Value) {
        if rt.status_subresource
            && rt.crd.is_some()
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
    }

    /// An update from the API: with a status subresource a write of the main
    /// resource keeps the old status, and a status write changes only the
    /// status. Without one, there is no status route.
    fn prepare_for_update(
        &self,
        rt: &ResourceType,
        obj: &mut Value,
        old: &Value,
        status_write: bool,
    ) -> Result<(), ApiError> {
        if !rt.status_subresource {
            return if status_write { Err(ApiError::no_route()) } else { Ok(()) };
        }
        let (mut base, status) = if status_write {
            (old.clone(), obj.get("status").cloned())
        } else {
            (std::mem::take(obj), old.get("status").cloned())
        };
        if let Some(m) = base.as_object_mut() {
            match status {
                Some(s) => m.insert("status".into(), s),
                None => m.remove("status"),
            };
        }
        *obj = base;
        Ok(())
    }

    /// Whether `metadata.generation` counts spec changes.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Validates and defaults. Type errors are causes too: nothing here may
    /// index into a field it has not checked.
    fn validate(&self, obj: &mut Value, on: &Validation<'_>) -> Result<Vec<Cause>, ApiError>;

    /// Checks that need an otherwise valid object (a CRD must be servable).
    fn validate_servable(&self, obj: &Value) -> Vec<Cause> {
        let _ = obj;
        Vec::new()
    }

    /// What the server fills in as the object is stored (after validation).
    fn canonicalize(&self, rt: &ResourceType, registry: &Registry, obj: &mut Value) {
        let _ = (rt, registry, obj);
    }

    /// The objects that go when this one goes (a Namespace's contents, a CRD's objects).
    fn dependents(&self, store: &Store, registry: &Registry, gone: &Value) -> Vec<Dependent> {
        let _ = (store, registry, gone);
        Vec::new()
    }

    /// The derived state any change of an object of this kind makes stale.
    fn after_change(&self) -> Derived {
        Derived::NOTHING
    }
}

/// The strategy of a kind that is its rules alone (most built-in kinds): how
/// its objects are named, what makes one valid, and what its changes make stale.
pub struct Rules {
    name_rule: NameRule,
    /// Validates and defaults an object (`old` on updates), as [`Strategy::validate`].
    check: fn(&mut Value, Option<&Value>) -> Vec<Cause>,
    after_change: Derived,
}

impl Rules {
    /// No rules of its own: a subdomain name, any body, nothing made stale.
    pub const NONE: Rules =
        Rules { name_rule: NameRule::Subdomain, check: |_, _| Vec::new(), after_change: Derived::NOTHING };
}

impl Strategy for Rules {
    fn name_rule(&self) -> NameRule {
        self.name_rule
    }

    fn validate(&self, obj: &mut Value, on: &Validation<'_>) -> Result<Vec<Cause>, ApiError> {
        Ok((self.check)(obj, on.old))
    }

    fn after_change(&self) -> Derived {
        self.after_change
    }
}

/// The reviews: answered by [`crate::reviews`], never stored.
static PLAIN: Rules = Rules::NONE;

/// The strategy of a served type.
pub fn for_type(rt: &ResourceType) -> &'static dyn Strategy {
    match rt.builtin {
        Some(b) => for_builtin(b),
        None => &crd::CUSTOM_RESOURCE,
    }
}

/// The strategy of what is stored under `key`: a built-in kind's, else a custom resource's.
pub fn for_key(key: &StorageKey) -> &'static dyn Strategy {
    let builtin = crate::resource::builtins()
        .into_iter()
        .find(|t| t.group == key.group && t.plural == key.resource)
        .and_then(|t| t.builtin);
    match builtin {
        Some(b) => for_builtin(b),
        None => &crd::CUSTOM_RESOURCE,
    }
}

fn for_builtin(b: Builtin) -> &'static dyn Strategy {
    match b {
        Builtin::Namespace => &core::NAMESPACE,
        Builtin::Secret => &core::SECRET,
        Builtin::ConfigMap => &core::CONFIG_MAP,
        Builtin::Service => &core::SERVICE,
        Builtin::ServiceAccount => &core::SERVICE_ACCOUNT,
        Builtin::Event => &core::EVENT,
        Builtin::Role | Builtin::ClusterRole => &rbac::ROLE,
        Builtin::RoleBinding => &rbac::ROLE_BINDING,
        Builtin::ClusterRoleBinding => &rbac::CLUSTER_ROLE_BINDING,
        Builtin::CustomResourceDefinition => &crd::DEFINITION,
        Builtin::ValidatingAdmissionPolicy => &admission::POLICY,
        Builtin::ValidatingAdmissionPolicyBinding => &admission::BINDING,
        Builtin::SubjectAccessReview
        | Builtin::SelfSubjectAccessReview
        | Builtin::SelfSubjectRulesReview
        | Builtin::SelfSubjectReview => &PLAIN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_key_finds_its_strategy() {
        for t in crate::resource::builtins() {
            let by_type = for_type(&t) as *const dyn Strategy as *const ();
            let by_key = for_key(&t.storage_key()) as *const dyn Strategy as *const ();
            assert_eq!(by_type, by_key, "{t:?}");
        }
        let custom = StorageKey { group: "x.io".into(), resource: "things".into() };
        assert!(for_key(&custom).tracks_generation());
        let rbac = StorageKey { group: "rbac.authorization.k8s.io".into(), resource: "rolebindings".into() };
        assert!(for_key(&rbac).after_change().policy);
    }
}
