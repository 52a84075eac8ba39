//! Answers that are not stored: access reviews, rules reviews, who-am-I, and
//! TokenRequest.

use serde_json::{Value, json};

use crate::authn::User;
use crate::resource::{Builtin, ResourceType};
use crate::status::{self, ApiError, Cause};

/// The attributes of a review's spec.
fn attributes(spec: &Value) -> Result<fundament_rbac::Attributes<'_>, ApiError> {
    fundament_rbac::Attributes::from_review_spec(spec).map_err(|e| {
        ApiError::invalid(
            "SubjectAccessReview",
            "authorization.k8s.io",
            "",
            vec![Cause::new("FieldValueRequired", "spec.resourceAttributes", format!("Required value: {e}"))],
        )
    })
}

/// Whether `user` may do what `attrs` says (superusers may do anything).
pub fn decide(
    policy: &fundament_rbac::Policy,
    user: &User,
    attrs: &fundament_rbac::Attributes<'_>,
) -> fundament_rbac::Decision {
    if user.groups.iter().any(|g| g == "system:masters") {
        return fundament_rbac::Decision { allowed: true, reason: String::new() };
    }
    policy.authorize(&user.rbac(), attrs)
}

pub fn answer(
    rt: &ResourceType,
    policy: &fundament_rbac::Policy,
    requester: &User,
    mut body: Value,
) -> Result<Value, ApiError> {
    let kind = rt.builtin.ok_or_else(ApiError::no_route)?;
    // Every write below indexes into the body: it must be an object.
    if !body.is_object() {
        return Err(ApiError::bad_request("the body of the request must be an object"));
    }
    body["apiVersion"] = json!(rt.api_version());
    body["kind"] = json!(rt.kind);
    if body["metadata"].is_null() {
        body["metadata"] = json!({});
    }
    match kind {
        Builtin::SubjectAccessReview => {
            let spec = &body["spec"];
            let user = User {
                name: spec["user"].as_str().unwrap_or_default().to_string(),
                groups: spec["groups"]
                    .as_array()
                    .map(|g| g.iter().filter_map(|v| v.as_str().map(String::from)).collect())
                    .unwrap_or_default(),
                uid: String::new(),
            };
            if user.name.is_empty() && user.groups.is_empty() {
                let cause = Cause::new(
                    "FieldValueRequired",
                    "spec.user",
                    "Required value: at least one of user or group must be specified",
                );
                return Err(status::invalid(rt, "", cause));
            }
            let d = decide(policy, &user, &attributes(spec)?);
            body["status"] = status(&d);
        }
        Builtin::SelfSubjectAccessReview => {
            let d = decide(policy, requester, &attributes(&body["spec"])?);
            body["status"] = status(&d);
        }
        Builtin::SelfSubjectRulesReview => {
            let ns = body["spec"]["namespace"].as_str().unwrap_or_default().to_string();
            let (resource_rules, non_resource_rules) = policy.rules_for(&requester.rbac(), &ns);
            let mut resource_rules = serde_json::to_value(resource_rules).unwrap_or_else(|_| json!([]));
            if requester.groups.iter().any(|g| g == "system:masters")
                && let Some(list) = resource_rules.as_array_mut()
            {
                list.insert(0, json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
            }
            body["status"] = json!({
                "resourceRules": resource_rules,
                "nonResourceRules": serde_json::to_value(non_resource_rules).unwrap_or_else(|_| json!([])),
                "incomplete": false,
            });
        }
        Builtin::SelfSubjectReview => {
            let mut info = json!({"username": requester.name, "groups": requester.groups});
            if !requester.uid.is_empty() {
                info["uid"] = json!(requester.uid);
            }
            body["status"] = json!({"userInfo": info});
        }
        _ => return Err(ApiError::method_not_allowed()),
    }
    Ok(body)
}

fn status(d: &fundament_rbac::Decision) -> Value {
    let mut s = json!({"allowed": d.allowed});
    if !d.reason.is_empty() {
        s["reason"] = json!(d.reason);
    }
    s
}
