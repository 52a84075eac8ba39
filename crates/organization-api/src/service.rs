//! `organization.v1.PluginService`, Connect unary with the JSON codec.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http::{HeaderMap, Method, Request, header};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Catalog;
use crate::connect::{Code, ConnectError};

const SERVICE: &str = "organization.v1.PluginService";
/// Requests are three short strings; anything near this is not a request.
const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// The routes of organization-api: `POST /organization.v1.PluginService/<method>`.
///
/// `GetPluginDefinition` is public, as upstream: definitions hold no secrets,
/// and installations pin them by hash. The router has no fallback, so the
/// server can merge it with others.
pub fn router(catalog: Arc<Catalog>) -> Router {
    Router::new().route(&format!("/{SERVICE}/{{method}}"), any(call)).with_state(catalog)
}

/// `GetPluginDefinitionRequest`. Field names as protobuf JSON writes them
/// (camelCase), with the proto names accepted too, as protojson does; unknown
/// fields are ignored, as connect-go does.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GetPluginDefinitionRequest {
    /// Catalog definitions are global; organization-scoped ones do not exist
    /// here yet, so the organization does not change the answer.
    organization: Option<String>,
    #[serde(alias = "plugin_name")]
    plugin_name: Option<String>,
    #[serde(alias = "plugin_version")]
    plugin_version: Option<String>,
}

/// `GetPluginDefinitionResponse`.
#[derive(Debug, Serialize)]
struct GetPluginDefinitionResponse<'a> {
    manifest: &'a str,
    hash: &'a str,
    definition: &'a Value,
}

async fn call(
    State(catalog): State<Arc<Catalog>>,
    Path(method): Path<String>,
    request: Request<Body>,
) -> Response {
    match dispatch(&catalog, &method, request).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

async fn dispatch(catalog: &Catalog, method: &str, request: Request<Body>) -> Result<Response, ConnectError> {
    if method != "GetPluginDefinition" {
        return Err(ConnectError::unknown_procedure(&format!("{SERVICE}/{method}")));
    }
    if request.method() != Method::POST {
        return Err(ConnectError::method_not_allowed(request.method()));
    }
    check_content_type(request.headers())?;
    let body = axum::body::to_bytes(request.into_body(), MAX_REQUEST_BYTES).await.map_err(|e| {
        ConnectError::new(Code::InvalidArgument, format!("cannot read the request body: {e}"))
    })?;
    get_plugin_definition(catalog, &body)
}

/// `application/json`, with or without parameters (`; charset=utf-8`).
fn check_content_type(headers: &HeaderMap) -> Result<(), ConnectError> {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let media_type = value.split(';').next().unwrap_or_default().trim();
    if media_type.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(ConnectError::unsupported_media_type(value))
    }
}

fn get_plugin_definition(catalog: &Catalog, body: &Bytes) -> Result<Response, ConnectError> {
    // An empty body is the empty message, as in protobuf.
    let request: GetPluginDefinitionRequest = if body.is_empty() {
        GetPluginDefinitionRequest::default()
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ConnectError::new(Code::InvalidArgument, format!("invalid request body: {e}")))?
    };
    let name = request.plugin_name.unwrap_or_default();
    let version = request.plugin_version.unwrap_or_default();
    if name.is_empty() || version.is_empty() {
        return Err(ConnectError::new(Code::InvalidArgument, "pluginName and pluginVersion are required"));
    }
    let Some(def) = catalog.get(&name, &version) else {
        return Err(ConnectError::new(
            Code::NotFound,
            format!("plugin definition {name}@{version} not found"),
        ));
    };
    tracing::debug!(
        organization = request.organization.as_deref().unwrap_or_default(),
        name,
        version,
        hash = def.hash,
        "GetPluginDefinition"
    );
    let response =
        GetPluginDefinitionResponse { manifest: &def.manifest, hash: &def.hash, definition: &def.definition };
    let json = serde_json::to_vec(&response)
        .map_err(|e| ConnectError::new(Code::Internal, format!("encoding the response: {e}")))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}
