//! The slice of the Connect protocol the metadata service needs: unary JSON over POST, and
//! errors as `{"code": "...", "message": "..."}` with Connect's HTTP status mapping.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The metadata requests are empty messages; anything near this size is not one of them.
const MAX_BODY_BYTES: usize = 16 * 1024;

/// Why a request was refused, as a Connect error. Messages are for the caller and carry no
/// internal detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConnectError {
    /// The service has no such procedure; Connect servers answer 404, which clients read as
    /// `unimplemented`.
    #[error("unknown procedure")]
    UnknownProcedure,
    /// Connect unary requests are POSTs.
    #[error("Connect unary requests use POST")]
    NotPost,
    /// Only the JSON codec is served.
    #[error("unsupported content type: use application/json")]
    UnsupportedContentType,
    /// A `connect-protocol-version` other than 1.
    #[error("unsupported connect-protocol-version")]
    UnsupportedVersion,
    /// The body is not an empty message (`{}` or nothing).
    #[error("invalid request body: expected an empty JSON object")]
    InvalidBody,
    /// The body is larger than any empty message can be.
    #[error("request body too large")]
    TooLarge,
}

impl ConnectError {
    fn code(&self) -> &'static str {
        match self {
            ConnectError::UnknownProcedure | ConnectError::NotPost => "unimplemented",
            ConnectError::UnsupportedContentType
            | ConnectError::UnsupportedVersion
            | ConnectError::InvalidBody => "invalid_argument",
            ConnectError::TooLarge => "resource_exhausted",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ConnectError::UnknownProcedure => StatusCode::NOT_FOUND,
            ConnectError::NotPost => StatusCode::METHOD_NOT_ALLOWED,
            ConnectError::UnsupportedContentType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ConnectError::UnsupportedVersion | ConnectError::InvalidBody => StatusCode::BAD_REQUEST,
            ConnectError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code(), "message": self.to_string()});
        let mut response = (self.status(), axum::Json(body)).into_response();
        if matches!(self, ConnectError::NotPost | ConnectError::UnsupportedContentType) {
            response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        }
        response
    }
}

/// Checks that `request` is a Connect unary JSON call carrying an empty message. Method and
/// headers are checked before the body is read.
pub(crate) async fn expect_empty_request(request: Request) -> Result<(), ConnectError> {
    if request.method() != Method::POST {
        return Err(ConnectError::NotPost);
    }
    check_headers(request.headers())?;
    let bytes = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|_| ConnectError::TooLarge)?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    // Unknown fields are ignored, as Connect's JSON codec does; anything but an object is not a message.
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(ConnectError::InvalidBody),
    }
}

fn check_headers(headers: &HeaderMap) -> Result<(), ConnectError> {
    if !is_json(headers.get(header::CONTENT_TYPE)) {
        return Err(ConnectError::UnsupportedContentType);
    }
    match headers.get("connect-protocol-version") {
        Some(version) if version != "1" => Err(ConnectError::UnsupportedVersion),
        _ => Ok(()),
    }
}

/// `application/json`, optionally with parameters (`; charset=utf-8`), any case.
fn is_json(value: Option<&HeaderValue>) -> bool {
    let Some(value) = value.and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// A successful unary answer.
pub(crate) fn ok_json(message: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(message) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], Body::from(bytes)).into_response(),
        Err(err) => {
            // Our own types always serialise; this is a bug, logged once here.
            tracing::error!(error = %err, "metadata answer not serialised");
            let body = json!({"code": "internal", "message": "internal error"});
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(content_type: Option<&str>, body: &'static str) -> Request {
        let mut builder = http::Request::post("/x");
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        builder.body(Body::from(body)).unwrap()
    }

    #[tokio::test]
    async fn accepts_empty_messages() {
        assert_eq!(expect_empty_request(post(Some("application/json"), "")).await, Ok(()));
        assert_eq!(expect_empty_request(post(Some("application/json"), " {} ")).await, Ok(()));
        assert_eq!(
            expect_empty_request(post(Some("Application/JSON; charset=utf-8"), r#"{"x":1}"#)).await,
            Ok(())
        );
    }

    #[tokio::test]
    async fn refuses_what_is_not_connect_json() {
        let refused = |request| async move { expect_empty_request(request).await.unwrap_err() };
        assert_eq!(refused(post(None, "{}")).await, ConnectError::UnsupportedContentType);
        assert_eq!(
            refused(post(Some("application/proto"), "{}")).await,
            ConnectError::UnsupportedContentType
        );
        assert_eq!(refused(post(Some("application/json"), "[]")).await, ConnectError::InvalidBody);
        assert_eq!(refused(post(Some("application/json"), "{")).await, ConnectError::InvalidBody);
        let get = http::Request::get("/x").body(Body::empty()).unwrap();
        assert_eq!(refused(get).await, ConnectError::NotPost);
        let mut v2 = post(Some("application/json"), "{}");
        v2.headers_mut().insert("connect-protocol-version", HeaderValue::from_static("2"));
        assert_eq!(refused(v2).await, ConnectError::UnsupportedVersion);
        let big = post(Some("application/json"), Box::leak(" ".repeat(MAX_BODY_BYTES + 1).into_boxed_str()));
        assert_eq!(refused(big).await, ConnectError::TooLarge);
    }

    #[test]
    fn errors_map_to_connect_codes_and_statuses() {
        let cases = [
            (ConnectError::UnknownProcedure, "unimplemented", StatusCode::NOT_FOUND),
            (ConnectError::NotPost, "unimplemented", StatusCode::METHOD_NOT_ALLOWED),
            (ConnectError::UnsupportedContentType, "invalid_argument", StatusCode::UNSUPPORTED_MEDIA_TYPE),
            (ConnectError::UnsupportedVersion, "invalid_argument", StatusCode::BAD_REQUEST),
            (ConnectError::InvalidBody, "invalid_argument", StatusCode::BAD_REQUEST),
            (ConnectError::TooLarge, "resource_exhausted", StatusCode::PAYLOAD_TOO_LARGE),
        ];
        for (error, code, status) in cases {
            assert_eq!((error.code(), error.status()), (code, status), "{error:?}");
        }
    }
}
