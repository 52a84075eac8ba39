//! The access review resources (authorization.k8s.io/v1) the server answers:
//! reading a SubjectAccessReview spec and writing review statuses.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::{Attributes, Decision, PolicyRule, RbacError, UserInfo};

/// A SelfSubjectRulesReview `resourceRules` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRule {
    /// Verbs granted.
    pub verbs: Vec<String>,
    /// API groups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Names the rule is limited to; empty means all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
}

/// A SelfSubjectRulesReview `nonResourceRules` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NonResourceRule {
    /// Verbs granted.
    pub verbs: Vec<String>,
    /// Paths, exact or ending in `*`.
    #[serde(rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
}

impl From<&PolicyRule> for ResourceRule {
    fn from(rule: &PolicyRule) -> Self {
        Self {
            verbs: rule.verbs.clone(),
            api_groups: rule.api_groups.clone(),
            resources: rule.resources.clone(),
            resource_names: rule.resource_names.clone(),
        }
    }
}

impl From<&PolicyRule> for NonResourceRule {
    fn from(rule: &PolicyRule) -> Self {
        Self { verbs: rule.verbs.clone(), non_resource_urls: rule.non_resource_urls.clone() }
    }
}

/// The `status` of a (Self)SubjectAccessReview. `denied` (only set by
/// authorizers with explicit denies) and an empty `reason` are omitted, as
/// the API server's `omitempty` fields are.
pub fn subject_access_review_status(decision: &Decision) -> Value {
    let mut status = Map::new();
    status.insert("allowed".to_owned(), Value::Bool(decision.allowed));
    if !decision.reason.is_empty() {
        status.insert("reason".to_owned(), Value::String(decision.reason.clone()));
    }
    Value::Object(status)
}

/// The `status` of a SelfSubjectRulesReview. Both lists are always present;
/// `incomplete` is false because RBAC is the only authorizer and lists everything.
pub fn subject_rules_review_status(
    resource_rules: &[ResourceRule],
    non_resource_rules: &[NonResourceRule],
) -> Value {
    json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    })
}

impl<'a> Attributes<'a> {
    /// The attributes of a (Self)SubjectAccessReview `spec`, borrowed from it.
    ///
    /// Exactly one of `resourceAttributes` and `nonResourceAttributes` must be
    /// set, as the API server requires. `resourceAttributes.group` is the API
    /// group; `version` plays no part in RBAC.
    pub fn from_review_spec(spec: &'a Value) -> Result<Self, RbacError> {
        let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
        let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
        match (resource, non_resource) {
            (Some(r), None) => Ok(Self::Resource {
                verb: str_field(r, "verb")?,
                api_group: str_field(r, "group")?,
                resource: str_field(r, "resource")?,
                subresource: str_field(r, "subresource")?,
                name: str_field(r, "name")?,
                namespace: str_field(r, "namespace")?,
            }),
            (None, Some(n)) => {
                Ok(Self::NonResource { verb: str_field(n, "verb")?, path: str_field(n, "path")? })
            }
            _ => Err(RbacError::InvalidReview(
                "exactly one of nonResourceAttributes or resourceAttributes must be specified".to_owned(),
            )),
        }
    }
}

impl UserInfo {
    /// The user a SubjectAccessReview `spec` asks about (`user`, `groups`, `extra`).
    /// The API server requires a user or a group.
    pub fn from_review_spec(spec: &Value) -> Result<Self, RbacError> {
        let name = str_field(spec, "user")?.to_owned();
        let groups: Vec<String> = match spec.get("groups") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| RbacError::InvalidReview(format!("groups: {e}")))?,
        };
        let extra = match spec.get("extra") {
            None | Some(Value::Null) => Default::default(),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| RbacError::InvalidReview(format!("extra: {e}")))?,
        };
        if name.is_empty() && groups.is_empty() {
            return Err(RbacError::InvalidReview(
                "at least one of user or group must be specified".to_owned(),
            ));
        }
        Ok(Self { name, groups, extra })
    }
}

/// A string field, empty when absent or null.
fn str_field<'a>(object: &'a Value, key: &str) -> Result<&'a str, RbacError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(RbacError::InvalidReview(format!("{key} must be a string"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_review_status_shape() {
        let allowed = Decision { allowed: true, reason: "RBAC: allowed by x".to_owned() };
        assert_eq!(
            subject_access_review_status(&allowed),
            json!({"allowed": true, "reason": "RBAC: allowed by x"})
        );
        assert_eq!(subject_access_review_status(&Decision::deny()), json!({"allowed": false}));
        let denied_with_message = Decision { allowed: false, reason: "no".to_owned() };
        assert_eq!(
            subject_access_review_status(&denied_with_message),
            json!({"allowed": false, "reason": "no"})
        );
    }

    #[test]
    fn rules_review_status_shape() {
        let rule = PolicyRule {
            verbs: vec!["get".into()],
            api_groups: vec![String::new()],
            resources: vec!["pods".into()],
            non_resource_urls: vec!["/healthz".into()],
            ..PolicyRule::default()
        };
        let status =
            subject_rules_review_status(&[ResourceRule::from(&rule)], &[NonResourceRule::from(&rule)]);
        assert_eq!(
            status,
            json!({
                "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                "incomplete": false
            })
        );
        assert_eq!(
            subject_rules_review_status(&[], &[]),
            json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false})
        );
    }

    #[test]
    fn reads_review_specs() {
        let spec = json!({
            "user": "alice", "groups": ["devs"], "extra": {"scopes": ["a"]},
            "resourceAttributes": {"namespace": "team", "verb": "get", "group": "apps", "version": "v1",
                                   "resource": "deployments", "subresource": "scale", "name": "web"}
        });
        assert_eq!(
            Attributes::from_review_spec(&spec).unwrap(),
            Attributes::Resource {
                verb: "get",
                api_group: "apps",
                resource: "deployments",
                subresource: "scale",
                name: "web",
                namespace: "team"
            }
        );
        let user = UserInfo::from_review_spec(&spec).unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["devs"]);
        assert_eq!(user.extra["scopes"], ["a"]);

        let spec = json!({"groups": ["g"], "nonResourceAttributes": {"path": "/healthz", "verb": "get"}});
        assert_eq!(
            Attributes::from_review_spec(&spec).unwrap(),
            Attributes::NonResource { verb: "get", path: "/healthz" }
        );
        assert_eq!(UserInfo::from_review_spec(&spec).unwrap().name, "");

        assert!(Attributes::from_review_spec(&json!({"user": "a"})).is_err());
        assert!(
            Attributes::from_review_spec(&json!({"resourceAttributes": {}, "nonResourceAttributes": {}}))
                .is_err()
        );
        assert!(Attributes::from_review_spec(&json!({"resourceAttributes": {"verb": 1}})).is_err());
        assert!(UserInfo::from_review_spec(&json!({"resourceAttributes": {}})).is_err());
        assert!(UserInfo::from_review_spec(&json!({"user": "a", "groups": "g"})).is_err());
    }
}
