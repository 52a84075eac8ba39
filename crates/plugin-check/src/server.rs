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
//!
//! The folder may be someone else's (the check runs in CI on pull requests), so its pages must
//! not read the machine and must not send anything off it: files are served only from inside
//! `console/` ([`crate::files`]); the host page's CSP lets its frame show the run's origin only
//! and the pages have plugin-proxy's, which keeps them on their own origin and the mock API;
//! Chromium resolves no other name ([`crate::cdp`]).

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
use crate::files::{self, Refused};
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
    /// Paths of the run's origin that name a file the check refuses to serve, and why (a
    /// symlink out of `console/`, a hidden name, not a regular file, too large).
    pub refused: Vec<(String, String)>,
    /// The last request of the run's page (to its origin or the mock API).
    pub last_request: Instant,
}

impl Default for RunRecord {
    fn default() -> Self {
        RunRecord {
            calls: Vec::new(),
            csp_reports: Vec::new(),
            missing: Vec::new(),
            refused: Vec::new(),
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
    /// The loopback port every origin of the stack shares.
    pub fn port(&self) -> u16 {
        self.port
    }

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
    // Chromium's proxy is this server (crate::cdp): it tunnels nothing anywhere.
    if method == Method::CONNECT {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::CONTENT_SECURITY_POLICY, DATA_CSP)], "no tunnels")
            .into_response();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h).to_ascii_lowercase();
    let label = host.strip_suffix(".localhost").unwrap_or_default();
    let mut response = match label {
        "console" => return host_page(&mock, uri.path(), uri.query().unwrap_or_default()),
        run if run.starts_with("run-") => return run_origin(&mock, run, &method, &uri, &body).await,
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
        // Also what Chromium sends to its proxy (this server): every request off loopback.
        _ => (StatusCode::NOT_FOUND, "unknown host").into_response(),
    };
    // Never a document anyone should render: should a page get one shown, it runs nothing.
    response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(DATA_CSP));
    response
}

/// The CSP of what is data, not a page (the mock API's answers, unknown hosts).
const DATA_CSP: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// The host page's CSP: its own script, and a frame that may show run `run`'s origin only
/// (`frame-src` is checked on every navigation of the frame, the page's own included, so the
/// plugin page cannot take its frame to another origin); nothing else.
fn host_csp(mock: &Mock, run: Option<&str>) -> String {
    let frame = run.map_or_else(|| "'none'".to_string(), |label| mock.run_origin(label));
    format!(
        "default-src 'none'; script-src 'self'; frame-src {frame}; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'; object-src 'none'"
    )
}

/// The run a host page is for: `run=run-<n>` of its query.
fn run_of_query(query: &str) -> Option<&str> {
    query.split('&').find_map(|pair| pair.strip_prefix("run=")).filter(|label| {
        label.strip_prefix("run-").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

fn host_page(mock: &Mock, path: &str, query: &str) -> Response {
    let mut response = match path {
        "/" | "/host.html" => {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], HOST_HTML).into_response()
        }
        "/host.js" => ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], HOST_JS).into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&host_csp(mock, run_of_query(query))) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The file `console/<raw>` names (`raw` still percent-encoded), if the check may serve it.
async fn console_file(mock: &Mock, raw: &str) -> Result<Vec<u8>, Refused> {
    let path = files::url_path(raw)?;
    let dir = mock.plugin.dir.clone();
    // Blocking file system calls (canonicalize, stat, read) off the runtime's threads.
    tokio::task::spawn_blocking(move || files::read_console(&dir, &path))
        .await
        .unwrap_or_else(|e| Err(Refused::Io(std::io::Error::other(e))))
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
    let file = path.strip_prefix(&mock.page_prefix()).filter(|f| !f.is_empty());
    let found = match (sdk, file) {
        (Some((content_type, text)), _) => Ok((content_type.to_string(), text.as_bytes().to_vec())),
        (None, Some(file)) => console_file(mock, file)
            .await
            .map(|bytes| (fundament_plugin_origin::console_file_type(file), bytes)),
        (None, None) => Err(Refused::NotFound),
    };
    let csp = format!(
        "{}; report-uri {CSP_REPORT_PATH}",
        fundament_plugin_origin::page_csp(&mock.kube_origin(), &mock.host_origin())
    );
    let mut response = match found {
        Ok((content_type, bytes)) => {
            mock.touch(run, |_| {});
            ([(header::CONTENT_TYPE, content_type)], bytes).into_response()
        }
        Err(Refused::NotFound) => {
            if path != "/favicon.ico" {
                mock.touch(run, |r| r.missing.push(path.to_string()));
            }
            (StatusCode::NOT_FOUND, "not found").into_response()
        }
        // As plugin-runtime: a 404 that says nothing of what is there.
        Err(refused) => {
            mock.touch(run, |r| r.refused.push((path.to_string(), refused.to_string())));
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// The mock stack of a scaffolded plugin, unstarted (the handlers are called directly).
    fn mock() -> (tempfile::TempDir, Arc<Mock>) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("my-plugin");
        crate::scaffold::new_plugin(&dir).unwrap();
        let plugin = PluginFolder::read(&dir).unwrap();
        (tmp, Arc::new(Mock { plugin, port: 4242, runs: Mutex::new(HashMap::new()) }))
    }

    async fn get(mock: &Arc<Mock>, host: &str, path_and_query: &str) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(&format!("{host}:4242")).unwrap());
        let uri: Uri = path_and_query.parse().unwrap();
        dispatch(State(Arc::clone(mock)), Method::GET, uri, headers, Bytes::new()).await
    }

    fn csp(response: &Response) -> &str {
        response.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap()
    }

    #[tokio::test]
    async fn pages_are_served_with_plugin_proxys_csp() {
        let (_tmp, mock) = mock();
        let page = format!("{}widgets-list.html", mock.page_prefix());
        let response = get(&mock, "run-0.localhost", &page).await;
        assert_eq!(response.status(), StatusCode::OK);
        let csp = csp(&response);
        assert!(csp.starts_with("default-src 'self'; script-src 'self';"), "{csp}");
        assert!(csp.contains("connect-src 'self' http://kube.localhost:4242;"), "{csp}");
        assert!(csp.contains("frame-ancestors http://console.localhost:4242;"), "{csp}");
        assert!(csp.ends_with(&format!("report-uri {CSP_REPORT_PATH}")), "{csp}");
        // The 404s too, and the SDK.
        let missing = get(&mock, "run-0.localhost", &format!("{}nope.js", mock.page_prefix())).await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert!(self::csp(&missing).starts_with("default-src 'self'"));
        let sdk = get(&mock, "run-0.localhost", "/plugins/sdk/v1/plugin-sdk.js").await;
        assert!(self::csp(&sdk).starts_with("default-src 'self'"));
    }

    #[tokio::test]
    async fn the_host_page_may_frame_its_run_only() {
        let (_tmp, mock) = mock();
        let response = get(&mock, "console.localhost", "/host.html?run=run-3").await;
        assert_eq!(response.status(), StatusCode::OK);
        let csp = csp(&response);
        assert!(
            csp.starts_with("default-src 'none'; script-src 'self'; frame-src http://run-3.localhost:4242;"),
            "{csp}"
        );
        assert!(csp.contains("form-action 'none'") && csp.contains("base-uri 'none'"), "{csp}");
        for query in ["", "?run=evil.example", "?run=run-", "?run=run-1%20http://evil.example"] {
            let response = get(&mock, "console.localhost", &format!("/host.html{query}")).await;
            assert!(self::csp(&response).contains("frame-src 'none';"), "{query}");
        }
        let js = get(&mock, "console.localhost", "/host.js").await;
        assert!(self::csp(&js).starts_with("default-src 'none'"));
        // The mock API and unknown hosts (what reaches the server as Chromium's proxy).
        for host in ["kube.localhost", "evil.example"] {
            assert_eq!(self::csp(&get(&mock, host, "/").await), DATA_CSP, "{host}");
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("192.0.2.1:3478"));
        let uri: Uri = "192.0.2.1:3478".parse().unwrap();
        let tunnel = dispatch(State(Arc::clone(&mock)), Method::CONNECT, uri, headers, Bytes::new()).await;
        assert_eq!(tunnel.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[tokio::test]
    async fn a_symlink_out_of_console_is_refused_and_recorded() {
        let (tmp, mock) = mock();
        let dir = &mock.plugin.dir;
        symlink("/", dir.join("console/r")).unwrap();
        std::fs::write(tmp.path().join("secret"), "kubeconfig").unwrap();
        symlink(tmp.path().join("secret"), dir.join("console/config.js")).unwrap();
        std::fs::write(dir.join("console/.env"), "TOKEN=1").unwrap();
        let prefix = mock.page_prefix();
        for file in ["r/etc/passwd", "r/etc/hostname", "config.js", ".env", "%2eenv", "r%2f..%2fsecret"] {
            let path = format!("{prefix}{file}");
            let response = get(&mock, "run-0.localhost", &path).await;
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{file}");
            let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
            assert_eq!(&body[..], b"not found", "{file}");
        }
        let record = mock.record("run-0");
        let refused: Vec<&str> = record.refused.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(refused.len(), 6, "{:?}", record.refused);
        assert!(record.missing.is_empty(), "{:?}", record.missing);
        assert!(record.refused[0].1.contains("outside console/"), "{:?}", record.refused);
        assert!(record.refused[3].1.contains("hidden name"), "{:?}", record.refused);
        // The whole console/ elsewhere.
        std::fs::rename(dir.join("console"), tmp.path().join("console")).unwrap();
        symlink(tmp.path().join("console"), dir.join("console")).unwrap();
        let response = get(&mock, "run-1.localhost", &format!("{prefix}widgets-list.html")).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(mock.record("run-1").refused[0].1.contains("outside the plugin folder"));
    }
}
