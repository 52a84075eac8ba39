//! RBAC escalation prevention, as kube-apiserver does it. A Role or ClusterRole may be written
//! only by a user who holds every permission it grants, or who may `escalate` it; a binding only
//! by one who holds every permission of the role it names, or who may `bind` that role; an
//! `aggregationRule` only by one who may `escalate` (it pulls in rules the writer does not see).
//! Without it, anyone allowed to create a binding could bind `cluster-admin` to themselves.

use fundament_rbac::{Attributes, Policy, PolicyRule};
use serde_json::Value;

use crate::authn::User;
use crate::object;
use crate::resource::ResourceType;
use crate::reviews;
use crate::status::ApiError;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Refuses a write of `obj` (a Role, ClusterRole, RoleBinding or ClusterRoleBinding) by `user`
/// that would grant what `user` does not hold.
pub(crate) fn check(policy: &Policy, user: &User, rt: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    if rt.group != RBAC_GROUP {
        return Ok(());
    }
    let (namespace, name) = (object::namespace(obj), object::name(obj));
    let may = |verb: &str, resource: &str, name: &str| {
        let attrs =
            Attributes::Resource { verb, api_group: RBAC_GROUP, resource, subresource: "", name, namespace };
        reviews::decide(policy, user, &attrs).allowed
    };
    // system:masters holds everything (and `decide` says so for every check below).
    let (rules, role_resource, role_name) = match rt.plural.as_str() {
        "roles" | "clusterroles" => {
            if may("escalate", &rt.plural, name) {
                return Ok(());
            }
            if obj.get("aggregationRule").is_some_and(|a| !a.is_null()) {
                return Err(ApiError::forbidden_because(
                    RBAC_GROUP,
                    &rt.plural,
                    name,
                    &format!(
                        "user \"{}\" must have cluster-admin privileges to use the aggregationRule",
                        user.name
                    ),
                ));
            }
            let rules: Vec<PolicyRule> =
                serde_json::from_value(obj.get("rules").cloned().unwrap_or(Value::Null)).unwrap_or_default();
            (rules, rt.plural.as_str(), name)
        }
        "rolebindings" | "clusterrolebindings" => {
            let role_ref = &obj["roleRef"];
            let (kind, role) =
                (role_ref["kind"].as_str().unwrap_or(""), role_ref["name"].as_str().unwrap_or(""));
            let resource = if kind == "Role" { "roles" } else { "clusterroles" };
            if may("bind", resource, role) {
                return Ok(());
            }
            let held = if kind == "Role" {
                policy.role_rules(namespace, role)
            } else {
                policy.cluster_role_rules(role)
            };
            let Some(held) = held else {
                return Err(ApiError::forbidden_because(
                    RBAC_GROUP,
                    &rt.plural,
                    name,
                    &format!("{kind} \"{role}\" not found, and user \"{}\" may not bind it", user.name),
                ));
            };
            (held.to_vec(), resource, role)
        }
        _ => return Ok(()),
    };
    let missing = policy.uncovered(&user.rbac(), namespace, &rules);
    if missing.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = missing.iter().map(|r| describe(r)).collect();
    Err(ApiError::forbidden_because(
        RBAC_GROUP,
        &rt.plural,
        name,
        &format!(
            "user \"{}\" (groups={:?}) is attempting to grant RBAC permissions not currently held \
             (through {role_resource} \"{role_name}\"):\n{}",
            user.name,
            user.groups,
            listed.join("\n")
        ),
    ))
}

/// A rule as kube-apiserver's message shows it.
fn describe(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    if !rule.api_groups.is_empty() {
        parts.push(format!("APIGroups:{:?}", rule.api_groups));
    }
    if !rule.resources.is_empty() {
        parts.push(format!("Resources:{:?}", rule.resources));
    }
    if !rule.resource_names.is_empty() {
        parts.push(format!("ResourceNames:{:?}", rule.resource_names));
    }
    if !rule.non_resource_urls.is_empty() {
        parts.push(format!("NonResourceURLs:{:?}", rule.non_resource_urls));
    }
    parts.push(format!("Verbs:{:?}", rule.verbs));
    format!("{{{}}}", parts.join(", "))
}
