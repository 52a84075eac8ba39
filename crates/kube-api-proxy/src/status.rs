//! Refusals as Kubernetes `Status` objects, so kubectl, client libraries and
//! the SDK read them like any API error. Each message says which check refused.

use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into() }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(401, "Unauthorized", message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "NotFound", message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }
    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self::new(502, "InternalError", message)
    }
    /// The detail goes to the log once; the client reads a fixed text.
    pub fn internal(detail: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "kube-api-proxy internal error");
        Self::new(500, "InternalError", "an internal error occurred in kube-api-proxy; see its log")
    }

    pub fn body(&self) -> String {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        })
        .to_string()
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (code, [(header::CONTENT_TYPE, "application/json")], self.body()).into_response()
    }
}
