//! The Kubernetes `Status` object: every failure the embedded cluster and the
//! gateway answer with, worded as kube-apiserver words it, so kubectl, client
//! libraries and the plugin SDK print what they print against a real cluster;
//! and what the console reads back out of an API error.

use serde::{Deserialize, Serialize};

/// `metav1.Status`. Serialized, it is the body of every refused request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{code} {reason}: {message}")]
pub struct Status {
    #[serde(default = "status_kind")]
    pub kind: String,
    #[serde(default = "v1")]
    pub api_version: String,
    #[serde(default)]
    pub metadata: ListMeta,
    #[serde(default)]
    pub status: Outcome,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Boxed: a `Result<_, Status>` stays small on the happy path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<StatusDetails>>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code: u16,
}

fn status_kind() -> String {
    "Status".to_string()
}

fn v1() -> String {
    "v1".to_string()
}

fn is_zero(code: &u16) -> bool {
    *code == 0
}

/// A Status carries list metadata, always empty here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListMeta {}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Success,
    #[default]
    Failure,
}

/// What the Status is about, and for `Invalid` the field causes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// How long a client should wait before trying again (429 and 503 answers).
    #[serde(default, skip_serializing_if = "no_wait")]
    pub retry_after_seconds: u32,
}

fn no_wait(n: &u32) -> bool {
    *n == 0
}

/// One field's complaint in an `Invalid` Status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The message without the field, e.g. `Required value`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

impl StatusCause {
    pub fn new(reason: &str, field: &str, message: impl Into<String>) -> Self {
        Self { reason: reason.to_string(), field: field.to_string(), message: message.into() }
    }

    /// `field: message`, as the Status message lists causes.
    pub fn full(&self) -> String {
        if self.field.is_empty() { self.message.clone() } else { format!("{}: {}", self.field, self.message) }
    }
}

/// What a message names: `configmaps` or `certificates.cert-manager.io`.
pub fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() { resource.to_string() } else { format!("{resource}.{group}") }
}

fn about(group: &str, resource: &str, name: &str) -> StatusDetails {
    StatusDetails {
        name: name.to_string(),
        group: group.to_string(),
        kind: resource.to_string(),
        ..Default::default()
    }
}

impl Status {
    /// A failure with the HTTP `code` and the reason kube-apiserver gives that code when
    /// nothing more specific is known (apimachinery's generic server response).
    pub fn for_code(code: u16, message: impl Into<String>) -> Self {
        let reason = match code {
            400 => "BadRequest",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "NotFound",
            405 => "MethodNotAllowed",
            406 => "NotAcceptable",
            409 => "Conflict",
            410 => "Expired",
            413 => "RequestEntityTooLarge",
            415 => "UnsupportedMediaType",
            422 => "Invalid",
            429 => "TooManyRequests",
            500 => "InternalError",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            _ => "Unknown",
        };
        Self::failure(code, reason, message)
    }

    /// A failure with the HTTP `code`, the machine-readable `reason` and the message.
    pub fn failure(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            kind: status_kind(),
            api_version: v1(),
            metadata: ListMeta {},
            status: Outcome::Failure,
            message: message.into(),
            reason: reason.to_string(),
            details: None,
            code,
        }
    }

    /// A `Status` of success, as delete answers for built-in kinds.
    pub fn success(group: &str, kind: &str, name: &str, uid: &str) -> Self {
        let details = StatusDetails { uid: uid.to_string(), ..about(group, kind, name) };
        Self { status: Outcome::Success, ..Self::failure(0, "", "") }.with_details(details)
    }

    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// How long the caller should wait before trying again (`details.retryAfterSeconds`),
    /// if it says.
    pub fn retry_after_seconds(&self) -> Option<u32> {
        self.details.as_ref().map(|d| d.retry_after_seconds).filter(|&seconds| seconds > 0)
    }

    /// The API server's answer to a request without valid credentials.
    pub fn unauthorized() -> Self {
        Self::unauthorized_because("Unauthorized")
    }

    /// The path names no resource this server knows.
    pub fn no_route() -> Self {
        Self::not_found_because("the server could not find the requested resource")
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::not_found_because(format!("{} \"{name}\" not found", group_resource(group, resource)))
            .with_details(about(group, resource, name))
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::failure(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", group_resource(group, resource)),
        )
        .with_details(about(group, resource, name))
    }

    pub fn conflict(group: &str, resource: &str, name: &str) -> Self {
        Self::failure(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                group_resource(group, resource)
            ),
        )
        .with_details(about(group, resource, name))
    }

    /// A `Forbidden` about one object whose reason is `why` (admission).
    pub fn forbidden_because(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let what = group_resource(group, resource);
        let subject = if name.is_empty() { what } else { format!("{what} \"{name}\"") };
        Self::forbidden_because_of(format!("{subject} is forbidden: {why}"))
            .with_details(about(group, resource, name))
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
        Self::forbidden_because_of(format!("forbidden: User \"{user}\" cannot {verb} path \"{path}\""))
            .with_details(StatusDetails::default())
    }

    /// Validation failed: `Kind.group "name" is invalid: …` with one cause per field.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        let qualified = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
        let list: Vec<String> = causes.iter().map(StatusCause::full).collect();
        let joined = if list.len() == 1 { list[0].clone() } else { format!("[{}]", list.join(", ")) };
        let message = format!("{qualified} \"{name}\" is invalid: {joined}");
        Self::failure(422, "Invalid", message)
            .with_details(StatusDetails { causes, ..about(group, kind, name) })
    }

    /// A patch that cannot be applied to the object (422, as the apiserver).
    pub fn invalid_patch(message: &str) -> Self {
        Self::failure(422, "Invalid", message)
    }

    pub fn method_not_allowed() -> Self {
        Self::failure(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        Self::failure(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                if accepted.is_empty() { content_type.to_string() } else { accepted.join(", ") }
            ),
        )
    }

    pub fn not_acceptable(accept: &str) -> Self {
        Self::failure(
            406,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: application/json, application/yaml (got {accept})"
            ),
        )
    }

    pub fn too_large(limit: usize) -> Self {
        Self::failure(413, "RequestEntityTooLarge", format!("Request entity too large: limit is {limit}"))
    }

    /// Something broke inside: the detail goes to the log once, never to the client.
    pub fn internal(detail: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::internal_error()
    }

    /// The client's side of [`Status::internal`], for callers that logged already (a handler
    /// that panicked).
    pub fn internal_error() -> Self {
        Self::failure(500, "InternalError", "an internal error occurred; see the server log")
    }

    /// The Status as a JSON value (a watch stream's ERROR event carries it).
    pub fn to_status(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The Status as a JSON body.
    pub fn body(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a Status out of an API error body; `None` when the body is not one.
    pub fn from_body(body: &[u8]) -> Option<Self> {
        serde_json::from_slice::<Self>(body).ok().filter(|s| s.kind == "Status")
    }
}

/// The failures that are one HTTP code and reason with the caller's message.
macro_rules! failures_with_message {
    ($($(#[$doc:meta])* $name:ident => ($code:literal, $reason:literal);)+) => {
        impl Status {
            $(
                $(#[$doc])*
                pub fn $name(message: impl Into<String>) -> Self {
                    Self::failure($code, $reason, message)
                }
            )+
        }
    };
}

failures_with_message! {
    bad_request => (400, "BadRequest");
    /// A 401 whose message says which check refused (the gateway's).
    unauthorized_because => (401, "Unauthorized");
    /// A 403 whose message is the whole explanation (the gateway's checks).
    forbidden_because_of => (403, "Forbidden");
    /// A 404 whose message is the whole explanation.
    not_found_because => (404, "NotFound");
    gone => (410, "Expired");
    too_many_requests => (429, "TooManyRequests");
    bad_gateway => (502, "InternalError");
    service_unavailable => (503, "ServiceUnavailable");
}

/// The Status as JSON, with `Retry-After` when it says how long to wait, as kube-apiserver
/// writes its own (clients such as client-go wait by the header, not the body).
#[cfg(feature = "axum")]
impl axum::response::IntoResponse for Status {
    fn into_response(self) -> axum::response::Response {
        let code = http::StatusCode::from_u16(self.code).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        let mut response =
            (code, [(http::header::CONTENT_TYPE, "application/json")], self.body()).into_response();
        if let Some(seconds) = self.retry_after_seconds() {
            response.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "axum")]
    #[test]
    fn a_status_that_says_when_to_retry_carries_retry_after() {
        use axum::response::IntoResponse;
        let retry_after = |status: Status| {
            status
                .into_response()
                .headers()
                .get(http::header::RETRY_AFTER)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        let waiting = StatusDetails { retry_after_seconds: 3, ..Default::default() };
        assert_eq!(
            retry_after(Status::too_many_requests("slow down").with_details(waiting)).as_deref(),
            Some("3")
        );
        assert_eq!(retry_after(Status::too_many_requests("slow down")), None);
        let unsaid = StatusDetails { name: "x".into(), ..Default::default() };
        assert_eq!(retry_after(Status::too_many_requests("slow down").with_details(unsaid)), None);
    }

    #[test]
    fn a_bare_code_gets_the_apiservers_generic_reason() {
        let reason = |code| Status::for_code(code, "m").reason;
        assert_eq!(
            [429, 500, 503, 504, 418].map(reason),
            ["TooManyRequests", "InternalError", "ServiceUnavailable", "Timeout", "Unknown"]
        );
        assert_eq!(Status::for_code(503, "m").code, 503);
    }

    #[test]
    fn forbidden_names_user_verb_and_scope_like_the_apiserver() {
        let e = Status::forbidden("bob", "list", "", "configmaps", "", "", "default");
        assert_eq!(
            e.message,
            "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        );
        let e = Status::forbidden("bob", "get", "cert-manager.io", "clusterissuers", "", "x", "");
        assert_eq!(
            e.message,
            "clusterissuers.cert-manager.io \"x\" is forbidden: User \"bob\" cannot get resource \"clusterissuers\" in API group \"cert-manager.io\" at the cluster scope"
        );
    }

    #[test]
    fn invalid_lists_several_causes_in_brackets() {
        let e = Status::invalid(
            "Grant",
            "plugins.camunda.io",
            "g",
            vec![
                StatusCause::new("FieldValueRequired", "spec.template", "Required value"),
                StatusCause::new("FieldValueRequired", "spec.format", "Required value"),
            ],
        );
        assert_eq!(
            e.message,
            "Grant.plugins.camunda.io \"g\" is invalid: [spec.template: Required value, spec.format: Required value]"
        );
        assert_eq!(e.code, 422);
        assert_eq!(e.to_status()["details"]["causes"][0]["field"], "spec.template");
    }

    #[test]
    fn the_wire_form_is_a_metav1_status_and_reads_back() {
        let e = Status::not_found("", "configmaps", "x");
        let v = e.to_status();
        assert_eq!(v["kind"], "Status");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["metadata"], serde_json::json!({}));
        assert_eq!(v["status"], "Failure");
        assert_eq!(v["code"], 404);
        assert_eq!(v["details"], serde_json::json!({"name": "x", "kind": "configmaps"}));
        assert_eq!(Status::from_body(e.body().as_bytes()), Some(e));
        let ok = Status::success("", "Secret", "s", "u-1").to_status();
        assert_eq!(ok["status"], "Success");
        assert!(ok.get("code").is_none() && ok.get("message").is_none());
        assert_eq!(Status::from_body(br#"{"kind":"ConfigMap"}"#), None);
        assert_eq!(Status::from_body(b"not json"), None);
    }
}
