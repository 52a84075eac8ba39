//! Response messages shared by several procedures, in Connect's JSON mapping (camelCase names,
//! int64 as strings).

use axum::Json;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// `authn.v1` TokenResponse: a bearer token and its lifetime.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    pub(crate) token_type: &'static str,
    /// int64 seconds; a string in Connect JSON.
    pub(crate) expires_in: String,
}

impl TokenResponse {
    pub(crate) fn bearer(access_token: String, expires_in_secs: i64) -> Self {
        TokenResponse { access_token, token_type: "Bearer", expires_in: expires_in_secs.to_string() }
    }
}

/// A 200 answer that no cache may keep: every body of this service names a user or carries a token.
pub(crate) fn private_json(body: impl Serialize) -> Response {
    let mut response = Json(body).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
