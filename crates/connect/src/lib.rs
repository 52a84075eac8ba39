//! The Connect protocol (connectrpc.com/docs/protocol), unary and JSON only,
//! as every service of the console speaks it:
//!
//! - errors are `{"code": "<code>", "message": "<text>"}` with Connect's HTTP
//!   status for the code ([`Code::http_status`]);
//! - a call is a POST (else 405 with `Allow: POST`) of `application/json`
//!   with any parameters (else 415 with `Accept-Post: application/json`,
//!   which also stops cross-site HTML forms: they cannot send JSON without a
//!   CORS preflight), `connect-protocol-version` 1 when sent (else 400), and
//!   a body within the service's limit (else 413) — all checked before the
//!   body is read, by the [`ConnectJson`] extractor;
//! - an empty body is the empty message `{}`, and unknown fields are ignored,
//!   as Connect's JSON codec does;
//! - an unknown procedure answers 404, which clients read as `unimplemented`.
//!
//! Messages are shown to callers, so they never carry internal detail: use
//! [`ConnectError::internal`], which logs the detail once.
#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::fmt::Display;

use axum::extract::{FromRequest, Request};
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;

const INTERNAL_MESSAGE: &str = "internal error";

/// The default request body limit: every call of these services is a few hundred bytes.
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

/// Connect's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Canceled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Canceled => "canceled",
            Code::Unknown => "unknown",
            Code::InvalidArgument => "invalid_argument",
            Code::DeadlineExceeded => "deadline_exceeded",
            Code::NotFound => "not_found",
            Code::AlreadyExists => "already_exists",
            Code::PermissionDenied => "permission_denied",
            Code::ResourceExhausted => "resource_exhausted",
            Code::FailedPrecondition => "failed_precondition",
            Code::Aborted => "aborted",
            Code::OutOfRange => "out_of_range",
            Code::Unimplemented => "unimplemented",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
            Code::DataLoss => "data_loss",
            Code::Unauthenticated => "unauthenticated",
        }
    }

    /// The protocol's mapping of codes to HTTP statuses.
    pub fn http_status(self) -> StatusCode {
        match self {
            Code::Canceled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
            Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
            Code::InvalidArgument | Code::OutOfRange => StatusCode::BAD_REQUEST,
            Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Code::FailedPrecondition => StatusCode::PRECONDITION_FAILED,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        }
    }

    /// The protocol's code for an HTTP error status that carries no Connect error of its own
    /// (the Connect spec's "HTTP to error code" table).
    pub fn from_http_status(status: StatusCode) -> Code {
        match status.as_u16() {
            400 => Code::Internal,
            401 => Code::Unauthenticated,
            403 => Code::PermissionDenied,
            404 => Code::Unimplemented,
            429 | 502 | 503 | 504 => Code::Unavailable,
            _ => Code::Unknown,
        }
    }
}

/// An error answer: a code, a message for the caller, and the HTTP status (the code's, except
/// for the transport-level refusals that keep the status an HTTP server gives them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    code: Code,
    message: Cow<'static, str>,
    status: StatusCode,
    /// `Allow` or `Accept-Post`: what would have worked.
    hint: Option<(HeaderName, &'static str)>,
}

impl ConnectError {
    pub fn new(code: Code, message: impl Into<Cow<'static, str>>) -> Self {
        ConnectError { code, message: message.into(), status: code.http_status(), hint: None }
    }

    /// Logs `detail` once, here, and answers only "internal error".
    pub fn internal(context: &str, detail: impl Display) -> Self {
        tracing::error!(error = %detail, "{context}");
        ConnectError::new(Code::Internal, INTERNAL_MESSAGE)
    }

    /// The body of an internal error, for callers that logged already (a handler that panicked).
    pub fn internal_body() -> String {
        serde_json::to_string(&ErrorBody { code: Code::Internal.as_str(), message: INTERNAL_MESSAGE })
            .unwrap_or_default()
    }

    /// No such procedure: 404, as Connect servers (an HTTP mux underneath) answer.
    pub fn unknown_procedure(procedure: &str) -> Self {
        ConnectError {
            status: StatusCode::NOT_FOUND,
            ..ConnectError::new(Code::Unimplemented, format!("unknown procedure {procedure}"))
        }
    }

    /// Connect unary calls are POSTs.
    pub fn method_not_allowed(method: &Method) -> Self {
        ConnectError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            hint: Some((header::ALLOW, "POST")),
            ..ConnectError::new(Code::Unimplemented, format!("HTTP method {method} is not allowed; use POST"))
        }
    }

    /// Only the JSON codec is served.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        ConnectError {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            hint: Some((HeaderName::from_static("accept-post"), "application/json")),
            ..ConnectError::new(
                Code::InvalidArgument,
                format!("content type {content_type:?} is not supported; use application/json"),
            )
        }
    }

    pub fn too_large(limit: usize) -> Self {
        ConnectError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            ..ConnectError::new(
                Code::ResourceExhausted,
                format!("request body is larger than {} KiB", limit / 1024),
            )
        }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'static str,
    message: &'a str,
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        let body = ErrorBody { code: self.code.as_str(), message: &self.message };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some((name, value)) = self.hint {
            response.headers_mut().insert(name, HeaderValue::from_static(value));
        }
        response
    }
}

/// A successful unary answer: the message as JSON.
pub fn ok_json(message: &impl Serialize) -> Response {
    match serde_json::to_vec(message) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        // Our own types always serialise: this is a bug, logged once here.
        Err(err) => ConnectError::internal("answer not serialised", err).into_response(),
    }
}

/// A Connect unary JSON request whose body decodes as `T`, at most `LIMIT` bytes. Method,
/// content type and protocol version are checked before the body is read.
pub struct ConnectJson<T, const LIMIT: usize = DEFAULT_BODY_LIMIT>(pub T);

impl<S: Send + Sync, T: DeserializeOwned, const LIMIT: usize> FromRequest<S> for ConnectJson<T, LIMIT> {
    type Rejection = ConnectError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ConnectError> {
        check_call(req.method(), req.headers())?;
        let bytes = axum::body::to_bytes(req.into_body(), LIMIT).await.map_err(|err| {
            // The limit is the only error a fully buffered body can hit short of a broken connection.
            tracing::debug!(error = %err, "request body not read");
            ConnectError::too_large(LIMIT)
        })?;
        decode(&bytes).map(ConnectJson)
    }
}

/// The checks of a unary call that need no body.
pub fn check_call(method: &Method, headers: &http::HeaderMap) -> Result<(), ConnectError> {
    if method != Method::POST {
        return Err(ConnectError::method_not_allowed(method));
    }
    let content_type = headers.get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("(not text)"));
    if !content_type.is_some_and(is_json) {
        return Err(ConnectError::unsupported_media_type(content_type.unwrap_or_default()));
    }
    match headers.get("connect-protocol-version") {
        Some(version) if version != "1" => {
            Err(ConnectError::new(Code::InvalidArgument, "unsupported connect-protocol-version"))
        }
        _ => Ok(()),
    }
}

/// A message from a request body: an empty (or blank) body is `{}`.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ConnectError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { bytes };
    serde_json::from_slice(bytes)
        .map_err(|err| ConnectError::new(Code::InvalidArgument, format!("invalid request body: {err}")))
}

/// `application/json`, optionally with parameters (`; charset=utf-8`), any case.
fn is_json(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use http_body_util::BodyExt;
    use serde_json::{Value, json};

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

    async fn body_of(error: ConnectError) -> (StatusCode, http::HeaderMap, Value) {
        let response = error.into_response();
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (parts.status, parts.headers, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn accepts_json_with_parameters_and_empty_bodies() {
        assert_eq!(extract(post("application/json", r#"{"name":"a","x":1}"#)).await.unwrap().name, "a");
        assert_eq!(
            extract(post("Application/JSON; charset=utf-8", r#"{"name":"b"}"#)).await.unwrap().name,
            "b"
        );
        assert_eq!(extract(post("application/json", " \n")).await.unwrap().name, "");
    }

    #[tokio::test]
    async fn refuses_what_is_not_a_connect_json_call() {
        for content_type in ["text/plain", "application/proto", "application/jsonx"] {
            let err = extract(post(content_type, "{}")).await.unwrap_err();
            let (status, headers, body) = body_of(err).await;
            assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
            assert_eq!(headers["accept-post"], "application/json");
            assert_eq!(
                body,
                json!({"code": "invalid_argument", "message": format!("content type {content_type:?} is not supported; use application/json")})
            );
        }
        let no_type = http::Request::post("/x").body(Body::from("{}")).unwrap();
        assert_eq!(extract(no_type).await.unwrap_err().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let err = extract(http::Request::get("/x").body(Body::empty()).unwrap()).await.unwrap_err();
        let (status, headers, body) = body_of(err).await;
        assert_eq!(
            (status, &headers[header::ALLOW]),
            (StatusCode::METHOD_NOT_ALLOWED, &HeaderValue::from_static("POST"))
        );
        assert_eq!(
            body,
            json!({"code": "unimplemented", "message": "HTTP method GET is not allowed; use POST"})
        );
        let err = extract(post("application/json", "{")).await.unwrap_err();
        assert_eq!((err.code(), err.status()), (Code::InvalidArgument, StatusCode::BAD_REQUEST));
        assert!(err.message().starts_with("invalid request body: "));
        assert_eq!(
            extract(post("application/json", r#"{"name": 5}"#)).await.unwrap_err().code(),
            Code::InvalidArgument
        );
        let mut request = post("application/json", "{}");
        request.headers_mut().insert("connect-protocol-version", HeaderValue::from_static("2"));
        assert_eq!(extract(request).await.unwrap_err().code(), Code::InvalidArgument);
        let big = format!(r#"{{"name":"{}"}}"#, "a".repeat(DEFAULT_BODY_LIMIT));
        let err = extract(post("application/json", big)).await.unwrap_err();
        assert_eq!((err.code(), err.status()), (Code::ResourceExhausted, StatusCode::PAYLOAD_TOO_LARGE));
        let small =
            ConnectJson::<Probe, 16>::from_request(post("application/json", r#"{"name":"abcdefghij"}"#), &())
                .await;
        assert_eq!(small.err().map(|e| e.status()), Some(StatusCode::PAYLOAD_TOO_LARGE));
    }

    #[tokio::test]
    async fn errors_are_connect_json_with_the_http_mapping() {
        // Every code, with the protocol's HTTP status and wire name.
        let cases = [
            (Code::InvalidArgument, 400, "invalid_argument"),
            (Code::OutOfRange, 400, "out_of_range"),
            (Code::Unauthenticated, 401, "unauthenticated"),
            (Code::PermissionDenied, 403, "permission_denied"),
            (Code::NotFound, 404, "not_found"),
            (Code::AlreadyExists, 409, "already_exists"),
            (Code::Aborted, 409, "aborted"),
            (Code::FailedPrecondition, 412, "failed_precondition"),
            (Code::ResourceExhausted, 429, "resource_exhausted"),
            (Code::Canceled, 499, "canceled"),
            (Code::Unimplemented, 501, "unimplemented"),
            (Code::Unknown, 500, "unknown"),
            (Code::Internal, 500, "internal"),
            (Code::DataLoss, 500, "data_loss"),
            (Code::Unavailable, 503, "unavailable"),
            (Code::DeadlineExceeded, 504, "deadline_exceeded"),
        ];
        for (code, status, name) in cases {
            let (got, headers, body) = body_of(ConnectError::new(code, "why")).await;
            assert_eq!(got.as_u16(), status);
            assert_eq!(headers["content-type"], "application/json");
            assert_eq!(body, json!({"code": name, "message": "why"}));
        }
        let (status, _, body) = body_of(ConnectError::unknown_procedure("a.v1.S/M")).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("unimplemented")));
    }

    #[test]
    fn http_statuses_without_a_connect_error_map_as_the_spec_says() {
        let code = |n: u16| Code::from_http_status(StatusCode::from_u16(n).unwrap());
        assert_eq!(
            [400, 401, 403, 404, 429, 502, 503, 504, 500, 418].map(code),
            [
                Code::Internal,
                Code::Unauthenticated,
                Code::PermissionDenied,
                Code::Unimplemented,
                Code::Unavailable,
                Code::Unavailable,
                Code::Unavailable,
                Code::Unavailable,
                Code::Unknown,
                Code::Unknown
            ]
        );
    }

    #[test]
    fn internal_errors_hide_their_detail() {
        let err = ConnectError::internal("lookup failed", "dial tcp 10.0.0.7:443: connection refused");
        assert_eq!((err.code(), err.message()), (Code::Internal, "internal error"));
    }
}
