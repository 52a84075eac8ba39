//! The Connect protocol's unary error: an HTTP status and a JSON body
//! `{"code": "<code>", "message": "<text>"}` (connectrpc.com/docs/protocol).

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::json;

/// The Connect codes this service answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    InvalidArgument,
    NotFound,
    Unimplemented,
    Internal,
}

impl Code {
    fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "invalid_argument",
            Code::NotFound => "not_found",
            Code::Unimplemented => "unimplemented",
            Code::Internal => "internal",
        }
    }
}

/// A Connect error with its HTTP status. The status is usually the code's
/// (400, 404, 500), but transport-level refusals keep the HTTP status a
/// Connect server gives them (404 unknown procedure, 405, 415).
#[derive(Debug)]
pub(crate) struct ConnectError {
    status: StatusCode,
    code: Code,
    message: String,
    /// `Allow` / `Accept-Post`, telling the client what would work.
    hint: Option<(header::HeaderName, &'static str)>,
}

impl ConnectError {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> ConnectError {
        let status = match code {
            Code::InvalidArgument => StatusCode::BAD_REQUEST,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ConnectError { status, code, message: message.into(), hint: None }
    }

    /// No such procedure: 404, which Connect clients read as `unimplemented`.
    pub(crate) fn unknown_procedure(procedure: &str) -> ConnectError {
        ConnectError {
            status: StatusCode::NOT_FOUND,
            ..ConnectError::new(Code::Unimplemented, format!("unknown procedure {procedure}"))
        }
    }

    /// Connect unary calls are POSTs.
    pub(crate) fn method_not_allowed(method: &http::Method) -> ConnectError {
        ConnectError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            hint: Some((header::ALLOW, "POST")),
            ..ConnectError::new(Code::Unimplemented, format!("HTTP method {method} is not allowed; use POST"))
        }
    }

    /// Only the JSON codec is implemented.
    pub(crate) fn unsupported_media_type(content_type: &str) -> ConnectError {
        ConnectError {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            hint: Some((header::HeaderName::from_static("accept-post"), "application/json")),
            ..ConnectError::new(
                Code::Unimplemented,
                format!("content type {content_type:?} is not supported; use application/json"),
            )
        }
    }
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        let mut response =
            (self.status, Json(json!({"code": self.code.as_str(), "message": self.message}))).into_response();
        if let Some((name, value)) = self.hint {
            response.headers_mut().insert(name, HeaderValue::from_static(value));
        }
        response
    }
}
