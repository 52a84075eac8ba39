//! The mock stack on one loopback port, told apart by host name (Chromium maps `*.localhost`
//! to loopback):
//!
//! - `console.localhost`: the mock host, a console stand-in page (`assets/host.html`) that
//!   frames a plugin page and speaks the protocol (the runner drives it);
//! - `run-<n>.localhost`: one origin per page run, serving the plugin folder's `console/` at
//!   the path plugin-proxy uses, the SDK at `/plugins/sdk/v1/`, every file with plugin-proxy's
//!   CSP (plus a `report-uri` so violations reach the check);
//! - `kube.localhost`: the mock Kubernetes API ([`crate::kube`]).
//!
//! Everything a run's page does on the server is recorded under its origin's label.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::CheckError;
use crate::kube::{self, Call};
use crate::plugin::PluginFolder;

/// The cluster id the pages are given.
pub const CLUSTER_ID: &str = "0190c4ec-0000-7000-8000-00000000c4ec";
/// Where CSP violation reports go, on each run's origin.
const CSP_REPORT_PATH: &str = "/__fundament-check/csp-report";

const HOST_HTML: &str = include_str!("../assets/host.html");
const HOST_JS: &str = include_str!("../assets/host.js");
/// The SDK as plugin-proxy serves it (the minified script).
const SDK_JS: &str = fundament_plugin_sdk::SCRIPT;
const SDK_CSS: &str = fundament_plugin_sdk::STYLES;
const SDK_DTS: &str = fundament_plugin_sdk::TYPES;

/// What the server saw of one run.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub calls: Vec<Call>,
    /// The `csp-report` objects of the violation reports.
    pub csp_reports: Vec<Value>,
    /// Paths of the run's origin that the folder does not have.
    pub missing: Vec<String>,
    /// The last request of the run's page (to its origin or the mock API).
    pub last_request: Instant,
}

impl Default for RunRecord {
    fn default() -> Self {
        RunRecord {
            calls: Vec::new(),
            csp_reports: Vec::new(),
            missing: Vec::new(),
            last_request: Instant::now(),
        }
    }
}

/// The mock stack's state.
pub struct Mock {
    pub plugin: PluginFolder,
    port: u16,
    runs: Mutex<HashMap<String, RunRecord>>,
}

impl Mock {
    pub fn host_origin(&self) -> String {
        format!("http://console.localhost:{}", self.port)
    }

    pub fn kube_origin(&self) -> String {
        format!("http://kube.localhost:{}", self.port)
    }

    pub fn run_origin(&self, label: &str) -> String {
        format!("http://{label}.localhost:{}", self.port)
    }

    /// The installation name the pages are told (`acme-corp--<plugin>`).
    pub fn installation(&self) -> String {
        format!("acme-corp--{}", self.plugin.definition.metadata.name)
    }

    /// The path of `console/<file>` on a run's origin, as plugin-proxy serves it.
    pub fn page_prefix(&self) -> String {
        format!(
            "/clusters/{CLUSTER_ID}/plugins/{}/{}/console/",
            self.installation(),
            self.plugin.definition.metadata.version
        )
    }

    /// The plugin folder's file (`console/x.js`) a URL of a run's origin names, if it does.
    pub fn file_of_url(&self, url: &str) -> Option<String> {
        let rest = url.split_once("://")?.1;
        let path = &rest[rest.find('/')?..];
        let path = path.split(['?', '#']).next().unwrap_or_default();
        path.strip_prefix(&self.page_prefix()).map(|f| format!("console/{f}"))
    }

    /// What the server saw of run `label` so far.
    pub fn record(&self, label: &str) -> RunRecord {
        self.runs().get(label).cloned().unwrap_or_default()
    }

    fn runs(&self) -> MutexGuard<'_, HashMap<String, RunRecord>> {
        self.runs.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn touch(&self, label: &str, update: impl FnOnce(&mut RunRecord)) {
        let mut runs = self.runs();
        let record = runs.entry(label.to_string()).or_default();
        record.last_request = Instant::now();
        update(record);
    }
}

/// Starts the mock stack on `127.0.0.1:0`; it runs until the task is aborted.
pub async fn start(plugin: PluginFolder) -> Result<(Arc<Mock>, JoinHandle<()>), CheckError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(CheckError::Listen)?;
    let port = listener.local_addr().map_err(CheckError::Listen)?.port();
    let mock = Arc::new(Mock { plugin, port, runs: Mutex::new(HashMap::new()) });
    let app = Router::new().fallback(dispatch).with_state(Arc::clone(&mock));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((mock, task))
}

async fn dispatch(
    State(mock): State<Arc<Mock>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h).to_ascii_lowercase();
    let label = host.strip_suffix(".localhost").unwrap_or_default();
    match label {
        "console" => host_page(uri.path()),
        "kube" => {
            let run = headers
                .get(header::ORIGIN)
                .and_then(|o| o.to_str().ok())
                .and_then(|o| o.split_once("://"))
                .and_then(|(_, h)| h.split(['.', ':']).next())
                .unwrap_or("unknown")
                .to_string();
            let query = uri.query().unwrap_or_default();
            let (response, call) = kube::handle(&mock.plugin, &method, uri.path(), query, &headers, &body);
            mock.touch(&run, |r| r.calls.extend(call));
            response
        }
        run if run.starts_with("run-") => run_origin(&mock, run, &method, &uri, &body).await,
        _ => (StatusCode::NOT_FOUND, "unknown host").into_response(),
    }
}

fn host_page(path: &str) -> Response {
    match path {
        "/" | "/host.html" => {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], HOST_HTML).into_response()
        }
        "/host.js" => ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], HOST_JS).into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn run_origin(mock: &Mock, run: &str, method: &Method, uri: &Uri, body: &Bytes) -> Response {
    let path = uri.path();
    if *method == Method::POST && path == CSP_REPORT_PATH {
        if let Ok(report) = serde_json::from_slice::<Value>(body) {
            mock.touch(run, |r| r.csp_reports.push(report["csp-report"].clone()));
        }
        return StatusCode::NO_CONTENT.into_response();
    }
    let sdk = match path {
        "/plugins/sdk/v1/plugin-sdk.js" => Some(("text/javascript; charset=utf-8", SDK_JS)),
        "/plugins/sdk/v1/plugin-sdk.css" => Some(("text/css; charset=utf-8", SDK_CSS)),
        "/plugins/sdk/v1/plugin-sdk.d.ts" => Some(("text/plain; charset=utf-8", SDK_DTS)),
        _ => None,
    };
    let file = path
        .strip_prefix(&mock.page_prefix())
        .filter(|f| !f.is_empty() && f.split('/').all(|seg| !seg.is_empty() && seg != "." && seg != ".."));
    let found = match (sdk, file) {
        (Some((content_type, text)), _) => Some((content_type.to_string(), text.as_bytes().to_vec())),
        (None, Some(file)) => tokio::fs::read(mock.plugin.dir.join("console").join(file))
            .await
            .ok()
            .map(|bytes| (content_type(file), bytes)),
        (None, None) => None,
    };
    let csp = format!(
        "{}; report-uri {CSP_REPORT_PATH}",
        fundament_plugin_origin::page_csp(&mock.kube_origin(), &mock.host_origin())
    );
    let mut response = match found {
        Some((content_type, bytes)) => {
            mock.touch(run, |_| {});
            ([(header::CONTENT_TYPE, content_type)], bytes).into_response()
        }
        None => {
            if path != "/favicon.ico" {
                mock.touch(run, |r| r.missing.push(path.to_string()));
            }
            (StatusCode::NOT_FOUND, "not found").into_response()
        }
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// As plugin-proxy types files.
fn content_type(file: &str) -> String {
    let lower = file.to_ascii_lowercase();
    match lower.rsplit('.').next().unwrap_or_default() {
        "html" | "htm" => "text/html; charset=utf-8".into(),
        "js" | "mjs" => "text/javascript; charset=utf-8".into(),
        "css" => "text/css; charset=utf-8".into(),
        "json" => "application/json".into(),
        "ts" => "text/plain; charset=utf-8".into(),
        _ => mime_guess::from_path(&lower).first_or_octet_stream().essence_str().to_string(),
    }
}
