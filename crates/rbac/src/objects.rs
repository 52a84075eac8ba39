//! The rbac.authorization.k8s.io/v1 kinds, read from the store's Kubernetes JSON.
//!
//! Only the fields authorization needs are kept. Reading is lenient where the
//! API server's own JSON is (absent or `null` lists are empty) and strict where
//! a missing field would change what is granted (names, namespaces, roleRef).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::{LabelSelector, RbacError};

/// The API group of the RBAC kinds.
pub const RBAC_API_GROUP: &str = "rbac.authorization.k8s.io";

/// One rule of a Role or ClusterRole (`rbacv1.PolicyRule`).
///
/// A rule with `resources` applies to resource requests, one with
/// `nonResourceURLs` to non-resource requests; `*` is the wildcard in `verbs`,
/// `apiGroups`, `resources` (plus `*/<subresource>`) and `nonResourceURLs`
/// (plus a trailing `*` prefix match).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    /// Verbs granted; `*` grants every verb, custom ones (`serve`, `bind`…) included.
    #[serde(deserialize_with = "nullable")]
    pub verbs: Vec<String>,
    /// API groups the resources belong to; `""` is the core group.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources, as `pods`, `pods/log`, `*/scale` or `*`.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Object names the rule is limited to; empty means every name.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Non-resource paths, exact or ending in `*` (a prefix match). Kubernetes spells the
    /// field `nonResourceURLs`, not camelCase.
    #[serde(
        rename = "nonResourceURLs",
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

/// Who a binding grants to (`rbacv1.Subject`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`; anything else matches nobody.
    #[serde(deserialize_with = "nullable")]
    pub kind: String,
    /// `rbac.authorization.k8s.io` for users and groups, empty for service accounts.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The user, group or service account name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// The service account's namespace (unused for users and groups).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// The role a binding grants (`rbacv1.RoleRef`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RoleRef {
    /// `rbac.authorization.k8s.io`.
    #[serde(deserialize_with = "nullable")]
    pub api_group: String,
    /// `Role` or `ClusterRole`.
    #[serde(deserialize_with = "nullable")]
    pub kind: String,
    /// The role's name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
}

/// `aggregationRule`: the ClusterRole's rules are the union of the rules of
/// the ClusterRoles its selectors match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AggregationRule {
    /// A ClusterRole matched by any of them contributes its rules.
    #[serde(deserialize_with = "nullable")]
    pub cluster_role_selectors: Vec<LabelSelector>,
}

/// A namespaced set of rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Role {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `rules`.
    pub rules: Vec<PolicyRule>,
}

/// A cluster-wide set of rules, possibly aggregated from other ClusterRoles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterRole {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`, which aggregation selectors match.
    pub labels: BTreeMap<String, String>,
    /// `rules` as stored; replaced by the aggregate when `aggregation_rule` is set.
    pub rules: Vec<PolicyRule>,
    /// `aggregationRule`.
    pub aggregation_rule: Option<AggregationRule>,
}

/// Grants a Role or ClusterRole to subjects within one namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleBinding {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`: the only namespace the binding grants in.
    pub namespace: String,
    /// `subjects`.
    pub subjects: Vec<Subject>,
    /// `roleRef`: a Role of this namespace or a ClusterRole.
    pub role_ref: RoleRef,
}

/// Grants a ClusterRole to subjects in every namespace and cluster-wide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterRoleBinding {
    /// `metadata.name`.
    pub name: String,
    /// `subjects`.
    pub subjects: Vec<Subject>,
    /// `roleRef`: a ClusterRole.
    pub role_ref: RoleRef,
}

impl Role {
    /// Reads a Role from its Kubernetes JSON.
    pub fn from_object(object: &Value) -> Result<Self, RbacError> {
        let raw = RawObject::read(object, "Role")?;
        let namespace = raw.namespace("Role")?;
        Ok(Self { name: raw.metadata.name, namespace, rules: raw.rules })
    }
}

impl ClusterRole {
    /// Reads a ClusterRole from its Kubernetes JSON. A selector Kubernetes
    /// would reject is an error, since what it aggregates would be a guess.
    pub fn from_object(object: &Value) -> Result<Self, RbacError> {
        let raw = RawObject::read(object, "ClusterRole")?;
        if let Some(rule) = &raw.aggregation_rule {
            for selector in &rule.cluster_role_selectors {
                selector.validate().map_err(|reason| RbacError::InvalidSelector {
                    name: raw.metadata.name.clone(),
                    reason,
                })?;
            }
        }
        Ok(Self {
            name: raw.metadata.name,
            labels: raw.metadata.labels,
            rules: raw.rules,
            aggregation_rule: raw.aggregation_rule,
        })
    }
}

impl RoleBinding {
    /// Reads a RoleBinding from its Kubernetes JSON.
    pub fn from_object(object: &Value) -> Result<Self, RbacError> {
        let raw = RawObject::read(object, "RoleBinding")?;
        let namespace = raw.namespace("RoleBinding")?;
        let role_ref = raw.role_ref("RoleBinding")?;
        Ok(Self { name: raw.metadata.name, namespace, subjects: raw.subjects, role_ref })
    }
}

impl ClusterRoleBinding {
    /// Reads a ClusterRoleBinding from its Kubernetes JSON.
    pub fn from_object(object: &Value) -> Result<Self, RbacError> {
        let raw = RawObject::read(object, "ClusterRoleBinding")?;
        let role_ref = raw.role_ref("ClusterRoleBinding")?;
        Ok(Self { name: raw.metadata.name, subjects: raw.subjects, role_ref })
    }
}

/// `true` when `api_version` is absent or in the RBAC group: a CRD may well
/// have a kind called `Role`, and it must not grant anything.
pub(crate) fn is_rbac_api_version(api_version: Option<&str>) -> bool {
    api_version.is_none_or(|v| v.split_once('/').is_some_and(|(group, _)| group == RBAC_API_GROUP))
}

/// Every field any of the four kinds has; each kind keeps its own.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawObject {
    #[serde(deserialize_with = "nullable")]
    api_version: Option<String>,
    #[serde(deserialize_with = "nullable")]
    kind: Option<String>,
    #[serde(deserialize_with = "nullable")]
    metadata: RawMeta,
    #[serde(deserialize_with = "nullable")]
    rules: Vec<PolicyRule>,
    #[serde(deserialize_with = "nullable")]
    aggregation_rule: Option<AggregationRule>,
    #[serde(deserialize_with = "nullable")]
    subjects: Vec<Subject>,
    #[serde(deserialize_with = "nullable")]
    role_ref: Option<RoleRef>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RawMeta {
    #[serde(deserialize_with = "nullable")]
    name: String,
    #[serde(deserialize_with = "nullable")]
    namespace: String,
    #[serde(deserialize_with = "nullable")]
    labels: BTreeMap<String, String>,
}

impl RawObject {
    fn read(object: &Value, kind: &'static str) -> Result<Self, RbacError> {
        let name = || object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let raw = Self::deserialize(object).map_err(|e| RbacError::Malformed {
            kind,
            name: name(),
            reason: e.to_string(),
        })?;
        let kind_ok = raw.kind.as_deref().is_none_or(|k| k == kind);
        if !kind_ok || !is_rbac_api_version(raw.api_version.as_deref()) {
            return Err(RbacError::WrongKind {
                expected: kind,
                found: format!(
                    "{}/{}",
                    raw.api_version.as_deref().unwrap_or_default(),
                    raw.kind.as_deref().unwrap_or_default()
                ),
            });
        }
        if raw.metadata.name.is_empty() {
            return Err(RbacError::Missing { kind, name: String::new(), field: "metadata.name" });
        }
        Ok(raw)
    }

    fn namespace(&self, kind: &'static str) -> Result<String, RbacError> {
        if self.metadata.namespace.is_empty() {
            return Err(RbacError::Missing {
                kind,
                name: self.metadata.name.clone(),
                field: "metadata.namespace",
            });
        }
        Ok(self.metadata.namespace.clone())
    }

    fn role_ref(&self, kind: &'static str) -> Result<RoleRef, RbacError> {
        match &self.role_ref {
            Some(r) if !r.name.is_empty() && !r.kind.is_empty() => Ok(r.clone()),
            _ => Err(RbacError::Missing { kind, name: self.metadata.name.clone(), field: "roleRef" }),
        }
    }
}

/// Reads `null` as the default: Go's encoder writes empty lists as `null`
/// when the field has no `omitempty`, and such JSON is common in stores.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn policy_rule_uses_kubernetes_field_names() {
        let rule: PolicyRule = serde_json::from_value(json!({
            "apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"],
            "resourceNames": ["web"], "nonResourceURLs": ["/healthz"]
        }))
        .unwrap();
        assert_eq!(rule.api_groups, ["apps"]);
        assert_eq!(rule.resource_names, ["web"]);
        assert_eq!(rule.non_resource_urls, ["/healthz"]);
        let back = serde_json::to_value(&rule).unwrap();
        assert_eq!(back["nonResourceURLs"], json!(["/healthz"]));
        assert_eq!(
            serde_json::to_value(PolicyRule { verbs: vec!["get".into()], ..PolicyRule::default() }).unwrap(),
            json!({"verbs": ["get"]}),
            "empty lists are omitted, verbs never"
        );
    }

    #[test]
    fn reads_a_role_with_null_lists() {
        let role = Role::from_object(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r", "namespace": "team", "labels": null},
            "rules": [{"apiGroups": null, "resources": ["pods"], "verbs": ["get"], "resourceNames": null}]
        }))
        .unwrap();
        assert_eq!(role.namespace, "team");
        assert_eq!(role.rules[0].api_groups, Vec::<String>::new());
        let empty = Role::from_object(&json!({"metadata": {"name": "r", "namespace": "n"}, "rules": null}));
        assert_eq!(empty.unwrap().rules, vec![]);
    }

    #[test]
    fn reads_a_cluster_role_with_aggregation() {
        let role = ClusterRole::from_object(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "monitoring", "labels": {"a": "b"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]},
            "rules": null
        }))
        .unwrap();
        assert_eq!(role.labels.get("a").map(String::as_str), Some("b"));
        let agg = role.aggregation_rule.unwrap();
        assert_eq!(agg.cluster_role_selectors[0].match_labels.get("agg").map(String::as_str), Some("true"));
    }

    #[test]
    fn rejects_invalid_aggregation_selectors() {
        let err = ClusterRole::from_object(&json!({
            "kind": "ClusterRole", "metadata": {"name": "x"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchExpressions": [{"key": "k", "operator": "In"}]}]}
        }))
        .unwrap_err();
        assert!(matches!(err, RbacError::InvalidSelector { .. }), "{err}");
        let err = ClusterRole::from_object(&json!({
            "kind": "ClusterRole", "metadata": {"name": "x"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchExpressions": [{"key": "k", "operator": "Gt"}]}]}
        }))
        .unwrap_err();
        assert!(matches!(err, RbacError::Malformed { ref name, .. } if name == "x"), "{err}");
    }

    #[test]
    fn reads_bindings() {
        let rb = RoleBinding::from_object(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "team"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "ci"},
                         {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}]
        }))
        .unwrap();
        assert_eq!(rb.role_ref.kind, "ClusterRole");
        assert_eq!(rb.subjects[0].namespace, "ci");
        assert_eq!(rb.subjects[1].api_group, RBAC_API_GROUP);

        let crb = ClusterRoleBinding::from_object(&json!({
            "kind": "ClusterRoleBinding", "metadata": {"name": "c"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}
        }))
        .unwrap();
        assert!(crb.subjects.is_empty(), "subjects may be absent");
    }

    #[test]
    fn required_fields_and_kinds() {
        let missing = |v: Value| RoleBinding::from_object(&v).unwrap_err();
        assert!(matches!(
            missing(json!({"metadata": {"namespace": "n"}, "roleRef": {"kind": "Role", "name": "r"}})),
            RbacError::Missing { field: "metadata.name", .. }
        ));
        assert!(matches!(
            missing(json!({"metadata": {"name": "b"}, "roleRef": {"kind": "Role", "name": "r"}})),
            RbacError::Missing { field: "metadata.namespace", .. }
        ));
        assert!(matches!(
            missing(json!({"metadata": {"name": "b", "namespace": "n"}})),
            RbacError::Missing { field: "roleRef", .. }
        ));
        assert!(matches!(
            Role::from_object(&json!({"kind": "ClusterRole", "metadata": {"name": "r", "namespace": "n"}})),
            Err(RbacError::WrongKind { .. })
        ));
        assert!(matches!(
            Role::from_object(
                &json!({"apiVersion": "example.com/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "n"}})
            ),
            Err(RbacError::WrongKind { .. })
        ));
        assert!(matches!(Role::from_object(&json!("nope")), Err(RbacError::Malformed { .. })));
        assert!(matches!(
            Role::from_object(
                &json!({"metadata": {"name": "r", "namespace": "n"}, "rules": [{"verbs": "get"}]})
            ),
            Err(RbacError::Malformed { .. })
        ));
    }

    #[test]
    fn api_version_check() {
        assert!(is_rbac_api_version(None));
        assert!(is_rbac_api_version(Some("rbac.authorization.k8s.io/v1")));
        assert!(is_rbac_api_version(Some("rbac.authorization.k8s.io/v1beta1")));
        assert!(!is_rbac_api_version(Some("v1")));
        assert!(!is_rbac_api_version(Some("rbac.authorization.k8s.io.evil.com/v1")));
    }
}
