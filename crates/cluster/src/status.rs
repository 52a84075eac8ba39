//! Kubernetes `Status` errors: every failure the API answers with, worded as
//! kube-apiserver words it, so kubectl and client libraries print what they
//! print against a real cluster.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A failed API call, rendered as a `Status` object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

/// What a message names: `configmaps` or `certificates.cert-manager.io`.
pub fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() { resource.to_string() } else { format!("{resource}.{group}") }
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into(), details: None }
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// The path names no resource this server knows.
    pub fn no_route() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", group_resource(group, resource)))
            .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", group_resource(group, resource)),
        )
        .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    pub fn conflict(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                group_resource(group, resource)
            ),
        )
        .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    /// A `Forbidden` whose message is the whole explanation (admission).
    pub fn forbidden_because(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let what = group_resource(group, resource);
        let subject = if name.is_empty() { what } else { format!("{what} \"{name}\"") };
        Self::new(403, "Forbidden", format!("{subject} is forbidden: {why}"))
            .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    /// RBAC said no: the message names user, verb, resource, group and scope.
    pub fn forbidden(
        user: &str,
        verb: &str,
        group: &str,
        resource: &str,
        subresource: &str,
        name: &str,
        namespace: &str,
    ) -> Self {
        let full =
            if subresource.is_empty() { resource.to_string() } else { format!("{resource}/{subresource}") };
        let scope = if namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace \"{namespace}\"")
        };
        let why =
            format!("User \"{user}\" cannot {verb} resource \"{full}\" in API group \"{group}\" {scope}");
        Self::forbidden_because(group, resource, name, &why)
    }

    pub fn forbidden_path(user: &str, verb: &str, path: &str) -> Self {
        Self::new(403, "Forbidden", format!("forbidden: User \"{user}\" cannot {verb} path \"{path}\""))
            .with_details(json!({}))
    }

    /// Validation failed: `Kind.group "name" is invalid: …` with one cause per field.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> Self {
        let qualified = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
        let list: Vec<String> = causes.iter().map(Cause::full).collect();
        let joined = if list.len() == 1 { list[0].clone() } else { format!("[{}]", list.join(", ")) };
        let message = format!("{qualified} \"{name}\" is invalid: {joined}");
        let causes: Vec<Value> = causes
            .into_iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect();
        Self::new(422, "Invalid", message)
            .with_details(json!({"name": name, "group": group, "kind": kind, "causes": causes}))
    }

    /// A patch that cannot be applied to the object (422, as the apiserver).
    pub fn invalid_patch(message: &str) -> Self {
        Self::new(422, "Invalid", message.to_string())
    }

    pub fn method_not_allowed() -> Self {
        Self::new(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
    }

    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                if accepted.is_empty() { content_type.to_string() } else { accepted.join(", ") }
            ),
        )
    }

    pub fn not_acceptable(accept: &str) -> Self {
        Self::new(
            406,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: application/json, application/yaml (got {accept})"
            ),
        )
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(413, "RequestEntityTooLarge", format!("Request entity too large: limit is {limit}"))
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self::new(502, "InternalError", message)
    }

    /// Something broke inside: the detail goes to the log, never to the client.
    pub fn internal(detail: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::new(500, "InternalError", "an internal error occurred; see the server log")
    }

    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

/// One field's complaint in an `Invalid` status.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    pub reason: String,
    pub field: String,
    /// The message without the field, e.g. `Required value`.
    pub message: String,
}

impl Cause {
    pub fn new(reason: &str, field: &str, message: impl Into<String>) -> Self {
        Self { reason: reason.to_string(), field: field.to_string(), message: message.into() }
    }

    fn full(&self) -> String {
        if self.field.is_empty() { self.message.clone() } else { format!("{}: {}", self.field, self.message) }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (code, [(http::header::CONTENT_TYPE, "application/json")], self.to_status().to_string())
            .into_response()
    }
}

/// A `Status` of success, as delete answers for built-in kinds.
pub fn success(group: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": name, "group": group, "kind": kind, "uid": uid},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_names_user_verb_and_scope_like_the_apiserver() {
        let e = ApiError::forbidden("bob", "list", "", "configmaps", "", "", "default");
        assert_eq!(
            e.message,
            "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        );
        let e = ApiError::forbidden("bob", "get", "cert-manager.io", "clusterissuers", "", "x", "");
        assert_eq!(
            e.message,
            "clusterissuers.cert-manager.io \"x\" is forbidden: User \"bob\" cannot get resource \"clusterissuers\" in API group \"cert-manager.io\" at the cluster scope"
        );
    }

    #[test]
    fn invalid_lists_several_causes_in_brackets() {
        let e = ApiError::invalid(
            "Grant",
            "plugins.camunda.io",
            "g",
            vec![
                Cause::new("FieldValueRequired", "spec.template", "Required value"),
                Cause::new("FieldValueRequired", "spec.format", "Required value"),
            ],
        );
        assert_eq!(
            e.message,
            "Grant.plugins.camunda.io \"g\" is invalid: [spec.template: Required value, spec.format: Required value]"
        );
        assert_eq!(e.code, 422);
        assert_eq!(e.to_status()["details"]["causes"][0]["field"], "spec.template");
    }
}
