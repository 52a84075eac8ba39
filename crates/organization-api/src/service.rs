//! `organization.v1.PluginService`, Connect unary with the JSON codec.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequest, Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http::Request;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Catalog;
use fundament_connect::{Code, ConnectError, ConnectJson, ok_json};

const SERVICE: &str = "organization.v1.PluginService";

/// The routes of organization-api: `POST /organization.v1.PluginService/<method>`.
///
/// `GetPluginDefinition` is public, as upstream: definitions hold no secrets,
/// and installations pin them by hash. The router has no fallback, so the
/// server can merge it with others.
pub fn router(catalog: Arc<Catalog>) -> Router {
    Router::new()
        .route(&format!("/{SERVICE}/{{method}}"), any(call))
        // The service's name with no method: a Connect error too, not axum's empty 404 (found by
        // tests/integration/connect_fuzz.rs).
        .route(
            &format!("/{SERVICE}/"),
            any(|| async { ConnectError::unknown_procedure(&format!("{SERVICE}/")).into_response() }),
        )
        .route("/livez", axum::routing::get(|| async { "ok" }))
        .route("/readyz", axum::routing::get(readyz))
        .with_state(catalog)
        .layer(fundament_telemetry::catch_panics(fundament_telemetry::PanicAnswer(|| {
            ("application/json", fundament_connect::ConnectError::internal_body())
        })))
}

/// `GET /readyz`: `ok`. The catalog is read before the router exists and nothing else is
/// called at run time, so alive is ready and there is no dependency to show; `?verbose` says
/// so in the format of the other services (`[+]catalog ok`).
async fn readyz(axum::extract::RawQuery(query): axum::extract::RawQuery) -> (http::StatusCode, String) {
    let mut readiness = fundament_health::Readiness::new();
    readiness.gate("catalog", Ok(()));
    readiness.answer(fundament_health::wants_verbose(query.as_deref()))
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
    let ConnectJson(request) = ConnectJson::<GetPluginDefinitionRequest>::from_request(request, &()).await?;
    get_plugin_definition(catalog, request)
}

fn get_plugin_definition(
    catalog: &Catalog,
    request: GetPluginDefinitionRequest,
) -> Result<Response, ConnectError> {
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
    Ok(ok_json(&response))
}
