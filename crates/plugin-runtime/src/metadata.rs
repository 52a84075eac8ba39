//! `pluginmetadata.v1.PluginMetadataService`: what plugin-controller polls (every 30 s) to set
//! the PluginInstallation's phase, and the identity of the running build.

use axum::extract::{Path, State};
use axum::response::Response;
use fundament_connect::{ConnectError, ConnectJson, ok_json};
use serde::Serialize;
use serde_json::{Map, Value};

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

/// The metadata requests are empty messages: any JSON object (unknown fields are ignored, as
/// Connect's JSON codec does), nothing near this size.
type EmptyRequest = ConnectJson<Map<String, Value>, { 16 * 1024 }>;

/// `GetStatus` → `{"phase", "message"}`.
pub(crate) async fn get_status(State(runtime): State<Runtime>, _: EmptyRequest) -> Response {
    ok_json(&runtime.status())
}

/// `GetMetadata` → `{"name", "version", "definitionHash", "phase", "message"}`.
pub(crate) async fn get_metadata(State(runtime): State<Runtime>, _: EmptyRequest) -> Response {
    let info = runtime.info();
    let status = runtime.status();
    ok_json(&Metadata {
        name: &info.name,
        version: &info.version,
        definition_hash: &info.definition_hash,
        phase: status.phase,
        message: status.message,
    })
}

/// Any other procedure of the service, whatever the HTTP method (upstream's `RequestUninstall`
/// included: this port is unauthenticated, so it offers nothing that changes state).
pub(crate) async fn unknown_procedure(Path(procedure): Path<String>) -> ConnectError {
    ConnectError::unknown_procedure(&format!("{}/{procedure}", SERVICE.trim_start_matches('/')))
}
