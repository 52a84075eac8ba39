//! `pluginmetadata.v1.PluginMetadataService`: what plugin-controller polls (every 30 s) to set
//! the PluginInstallation's phase, and the identity of the running build.

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::connect::{self, ConnectError};
use crate::runtime::{Phase, Runtime};

/// The service's path prefix; procedures are `<SERVICE>/<Method>`.
pub(crate) const SERVICE: &str = "/pluginmetadata.v1.PluginMetadataService";

/// The answer of `GetMetadata`: the status plus which definition this build was published as.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Metadata<'a> {
    name: &'a str,
    version: &'a str,
    definition_hash: &'a str,
    phase: Phase,
    message: String,
}

/// `GetStatus` → `{"phase", "message"}`.
pub(crate) async fn get_status(State(runtime): State<Runtime>, request: Request) -> Response {
    if let Err(error) = connect::expect_empty_request(request).await {
        return error.into_response();
    }
    connect::ok_json(&runtime.status())
}

/// `GetMetadata` → `{"name", "version", "definitionHash", "phase", "message"}`.
pub(crate) async fn get_metadata(State(runtime): State<Runtime>, request: Request) -> Response {
    if let Err(error) = connect::expect_empty_request(request).await {
        return error.into_response();
    }
    let info = runtime.info();
    let status = runtime.status();
    connect::ok_json(&Metadata {
        name: &info.name,
        version: &info.version,
        definition_hash: &info.definition_hash,
        phase: status.phase,
        message: status.message,
    })
}

/// Any other procedure of the service, whatever the HTTP method (upstream's `RequestUninstall`
/// included: this port is unauthenticated, so it offers nothing that changes state).
pub(crate) async fn unknown_procedure() -> ConnectError {
    ConnectError::UnknownProcedure
}
