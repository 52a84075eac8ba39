//! `GET|HEAD /console/<file>`: the plugin's pages, as plugin-proxy fetches them.
//!
//! A plain static file server with fewer features than usual, on purpose: no directory
//! listings, an index page only at the root, no guessing at malformed paths. The CSP and cache
//! policy are plugin-proxy's; this only makes sure a browser never sniffs a type.

use std::borrow::Cow;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::asset_path::{self, AssetRequest};
use crate::assets::AssetError;
use crate::runtime::Runtime;

/// The route prefix, also stripped from the raw path.
pub(crate) const PREFIX: &str = "/console/";

/// Serves `/console/` and everything below it. HEAD is answered by axum from this GET handler
/// with the body dropped and the headers kept.
pub(crate) async fn serve(State(runtime): State<Runtime>, uri: Uri) -> Response {
    // The raw path, still percent-encoded: asset_path decodes it segment by segment.
    let raw = uri.path().strip_prefix(PREFIX).unwrap_or_default();
    let path = match asset_path::parse(raw) {
        Ok(AssetRequest::File(path)) => path,
        Ok(AssetRequest::Index) => "index.html".to_owned(),
        Ok(AssetRequest::Directory) => return not_found(),
        Err(err) => {
            tracing::debug!(path = uri.path(), error = %err, "console path refused");
            return plain(StatusCode::BAD_REQUEST, "invalid path");
        }
    };
    match runtime.assets().load(&path).await {
        Ok(contents) => file(&path, contents),
        Err(AssetError::NotFound) => not_found(),
        Err(AssetError::Io(err)) => {
            tracing::error!(path, error = %err, "console asset not read");
            plain(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
        }
    }
}

fn file(path: &str, contents: Cow<'static, [u8]>) -> Response {
    let body = match contents {
        Cow::Borrowed(bytes) => Body::from(bytes),
        Cow::Owned(bytes) => Body::from(bytes),
    };
    let content_type = HeaderValue::from_str(&fundament_plugin_origin::console_file_type(path))
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    nosniff((StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response())
}

pub(crate) fn not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "not found")
}

/// A short text answer, as Go's `http.Error` writes them (which is what upstream clients see).
fn plain(status: StatusCode, message: &'static str) -> Response {
    let content_type = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    nosniff((status, content_type, format!("{message}\n")).into_response())
}

fn nosniff(mut response: Response) -> Response {
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
