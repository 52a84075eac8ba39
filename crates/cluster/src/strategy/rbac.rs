//! RBAC: roles, cluster roles and their bindings. Every change of one
//! rebuilds the policy requests are authorized by.

use serde_json::Value;

use super::{Derived, Rules};
use crate::fields;
use crate::object::NameRule;
use crate::status::Cause;

/// What every RBAC kind shares: names like `system:basic-user`, and every
/// change rebuilds the policy.
const RBAC: Rules = Rules { name_rule: NameRule::PathSegment, after_change: Derived::POLICY, ..Rules::NONE };

/// Role and ClusterRole.
pub static ROLE: Rules = Rules { check: |obj, _| validate_role(obj), ..RBAC };

fn validate_role(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut types = fields::expect_all(obj, &[(&["rules"], "array"), (&["aggregationRule"], "object")]);
    types.extend(fields::expect_elements(obj, &["rules"], "object"));
    if !types.is_empty() {
        return types;
    }
    if let Some(rules) = obj["rules"].as_array() {
        for (i, r) in rules.iter().enumerate() {
            if r["verbs"].as_array().is_none_or(Vec::is_empty) {
                causes.push(Cause::new(
                    "FieldValueRequired",
                    &format!("rules[{i}].verbs"),
                    "Required value: verbs must contain at least one value",
                ));
            }
        }
    }
    causes
}

pub static ROLE_BINDING: Rules = Rules { check: |obj, old| validate_binding(obj, old, false), ..RBAC };
pub static CLUSTER_ROLE_BINDING: Rules = Rules { check: |obj, old| validate_binding(obj, old, true), ..RBAC };

/// A RoleBinding (`cluster: false`) or ClusterRoleBinding.
fn validate_binding(obj: &Value, old: Option<&Value>, cluster: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut types = fields::expect_all(obj, &[(&["roleRef"], "object"), (&["subjects"], "array")]);
    types.extend(fields::expect_elements(obj, &["subjects"], "object"));
    if !types.is_empty() {
        return types;
    }
    let role_ref = &obj["roleRef"];
    if role_ref["name"].as_str().is_none_or(str::is_empty) {
        causes.push(Cause::new("FieldValueRequired", "roleRef.name", "Required value"));
    }
    let kind_ok = if cluster {
        role_ref["kind"].as_str() == Some("ClusterRole")
    } else {
        matches!(role_ref["kind"].as_str(), Some("Role" | "ClusterRole"))
    };
    if !kind_ok {
        causes.push(Cause::new(
            "FieldValueNotSupported",
            "roleRef.kind",
            format!("Unsupported value: {}: supported values: \"ClusterRole\"", role_ref["kind"]),
        ));
    }
    if let Some(old) = old
        && old["roleRef"] != obj["roleRef"]
    {
        causes.push(Cause::new("FieldValueInvalid", "roleRef", "Invalid value: cannot change roleRef"));
    }
    causes
}
