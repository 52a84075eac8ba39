//! The Connect protocol, unary and JSON only: request checks, and errors as
//! `{"code": "...", "message": "..."}` with Connect's HTTP status mapping.

use std::borrow::Cow;
use std::fmt::Display;

use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::json;

/// Request bodies above this are refused: every request of this service is a few hundred bytes.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;

/// The Connect error codes this service answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    InvalidArgument,
    Unauthenticated,
    PermissionDenied,
    NotFound,
    ResourceExhausted,
    Unimplemented,
    Internal,
    Unavailable,
}

impl Code {
    fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "invalid_argument",
            Code::Unauthenticated => "unauthenticated",
            Code::PermissionDenied => "permission_denied",
            Code::NotFound => "not_found",
            Code::ResourceExhausted => "resource_exhausted",
            Code::Unimplemented => "unimplemented",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
        }
    }

    /// Connect's mapping of codes to HTTP statuses.
    fn status(self) -> StatusCode {
        match self {
            Code::InvalidArgument => StatusCode::BAD_REQUEST,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// An error answer. Its message is shown to the caller, so it never carries internal detail:
/// use [`ConnectError::internal`] for failures of our own or of our dependencies.
#[derive(Debug)]
pub(crate) struct ConnectError {
    code: Code,
    message: Cow<'static, str>,
    status: StatusCode,
    allow_post: bool,
}

impl ConnectError {
    pub(crate) fn new(code: Code, message: impl Into<Cow<'static, str>>) -> Self {
        ConnectError { code, message: message.into(), status: code.status(), allow_post: false }
    }

    /// Logs `detail` once, here, and answers only "internal error".
    pub(crate) fn internal(context: &str, detail: impl Display) -> Self {
        tracing::error!(error = %detail, "{context}");
        ConnectError::new(Code::Internal, "internal error")
    }

    /// Unknown procedures answer 404, as Connect servers (an HTTP mux underneath) do; clients
    /// map a 404 to `unimplemented` either way.
    pub(crate) fn unknown_procedure() -> Self {
        ConnectError::new(Code::Unimplemented, "unknown procedure").with_status(StatusCode::NOT_FOUND)
    }

    fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    #[cfg(test)]
    pub(crate) fn code(&self) -> Code {
        self.code
    }
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code.as_str(), "message": self.message});
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.allow_post {
            let headers = response.headers_mut();
            headers.insert(header::ALLOW, HeaderValue::from_static("POST"));
            headers.insert("accept-post", HeaderValue::from_static("application/json"));
        }
        response
    }
}

/// A Connect unary JSON request body. Refuses (before reading the body) other methods (405),
/// other content types (415: also what stops cross-site HTML forms, which cannot send JSON
/// without a CORS preflight), other protocol versions (400) and bodies over 64 KiB (413).
/// Unknown fields are ignored and an empty body is `{}`, as Connect's JSON codec does.
pub(crate) struct ConnectJson<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ConnectJson<T> {
    type Rejection = ConnectError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ConnectError> {
        if req.method() != Method::POST {
            let error = ConnectError::new(Code::Unimplemented, "Connect unary requests use POST");
            return Err(ConnectError {
                allow_post: true,
                ..error.with_status(StatusCode::METHOD_NOT_ALLOWED)
            });
        }
        if !is_json(req.headers().get(header::CONTENT_TYPE)) {
            let error =
                ConnectError::new(Code::InvalidArgument, "unsupported content type: use application/json");
            return Err(ConnectError {
                allow_post: true,
                ..error.with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
            });
        }
        if let Some(version) = req.headers().get("connect-protocol-version")
            && version != "1"
        {
            return Err(ConnectError::new(Code::InvalidArgument, "unsupported connect-protocol-version"));
        }
        let too_large = || {
            ConnectError::new(Code::ResourceExhausted, "request body is larger than 64 KiB")
                .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        };
        let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES).await.map_err(|err| {
            // The limit is the only error a fully buffered body can hit short of a broken connection.
            tracing::debug!(error = %err, "request body not read");
            too_large()
        })?;
        let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
        serde_json::from_slice(bytes)
            .map(ConnectJson)
            .map_err(|err| ConnectError::new(Code::InvalidArgument, format!("invalid request body: {err}")))
    }
}

/// `application/json`, optionally with parameters (`; charset=utf-8`), any case.
fn is_json(value: Option<&HeaderValue>) -> bool {
    let Some(value) = value.and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use http_body_util::BodyExt;

    #[derive(serde::Deserialize, Debug)]
    struct Probe {
        #[serde(default)]
        name: String,
    }

    async fn extract(request: http::Request<Body>) -> Result<Probe, ConnectError> {
        ConnectJson::<Probe>::from_request(request, &()).await.map(|ConnectJson(probe)| probe)
    }

    fn post(content_type: &str, body: impl Into<Body>) -> http::Request<Body> {
        http::Request::post("/x").header("content-type", content_type).body(body.into()).unwrap()
    }

    #[tokio::test]
    async fn accepts_json_with_parameters_and_empty_bodies() {
        assert_eq!(extract(post("application/json", r#"{"name":"a","x":1}"#)).await.unwrap().name, "a");
        assert_eq!(
            extract(post("Application/JSON; charset=utf-8", r#"{"name":"b"}"#)).await.unwrap().name,
            "b"
        );
        assert_eq!(extract(post("application/json", "")).await.unwrap().name, "");
    }

    #[tokio::test]
    async fn refuses_what_is_not_connect_json() {
        let err = extract(post("text/plain", "{}")).await.unwrap_err();
        assert_eq!(err.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let err = extract(post("application/proto", "{}")).await.unwrap_err();
        assert_eq!(err.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let err = extract(http::Request::get("/x").body(Body::empty()).unwrap()).await.unwrap_err();
        assert_eq!(err.status, StatusCode::METHOD_NOT_ALLOWED);
        let err = extract(post("application/json", "{")).await.unwrap_err();
        assert_eq!((err.code(), err.status), (Code::InvalidArgument, StatusCode::BAD_REQUEST));
        let err = extract(post("application/json", r#"{"name": 5}"#)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        let mut request = post("application/json", "{}");
        request.headers_mut().insert("connect-protocol-version", HeaderValue::from_static("2"));
        assert_eq!(extract(request).await.unwrap_err().code(), Code::InvalidArgument);
        let big = format!(r#"{{"name":"{}"}}"#, "a".repeat(MAX_BODY_BYTES));
        let err = extract(post("application/json", big)).await.unwrap_err();
        assert_eq!((err.code(), err.status), (Code::ResourceExhausted, StatusCode::PAYLOAD_TOO_LARGE));
    }

    #[tokio::test]
    async fn errors_are_connect_json_with_the_http_mapping() {
        let cases = [
            (Code::InvalidArgument, 400, "invalid_argument"),
            (Code::Unauthenticated, 401, "unauthenticated"),
            (Code::PermissionDenied, 403, "permission_denied"),
            (Code::NotFound, 404, "not_found"),
            (Code::ResourceExhausted, 429, "resource_exhausted"),
            (Code::Unimplemented, 501, "unimplemented"),
            (Code::Internal, 500, "internal"),
            (Code::Unavailable, 503, "unavailable"),
        ];
        for (code, status, name) in cases {
            let response = ConnectError::new(code, "why").into_response();
            assert_eq!(response.status().as_u16(), status);
            assert_eq!(response.headers()["content-type"], "application/json");
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(body, json!({"code": name, "message": "why"}));
        }
        let response = ConnectError::unknown_procedure().into_response();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn internal_errors_hide_their_detail() {
        let err = ConnectError::internal("lookup failed", "dial tcp 10.0.0.7:443: connection refused");
        assert_eq!(err.message, "internal error");
        assert_eq!(err.code(), Code::Internal);
    }
}
