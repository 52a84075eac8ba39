//! The runtime's HTTP surface, through `Runtime::router` with `oneshot` (no socket): probes,
//! the metadata service, and console assets from both sources with every refusal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use fundament_plugin_runtime::{Assets, Phase, PluginInfo, Runtime};
use http_body_util::BodyExt;
use include_dir::{Dir, include_dir};
use tower::ServiceExt;

static CONSOLE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tests/fixtures/console");
static FIXTURES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tests/fixtures");

const STATUS: &str = "/pluginmetadata.v1.PluginMetadataService/GetStatus";
const METADATA: &str = "/pluginmetadata.v1.PluginMetadataService/GetMetadata";

fn info() -> PluginInfo {
    PluginInfo {
        name: "cert-manager".into(),
        version: "v1.17.2".into(),
        definition_hash: "sha256:0123456789abcdef".into(),
    }
}

fn embedded() -> Runtime {
    Runtime::new(info(), Assets::Embedded(&CONSOLE))
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }

    fn header(&self, name: header::HeaderName) -> &str {
        self.headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or_default()
    }

    fn json(&self) -> serde_json::Value {
        assert_eq!(self.header(header::CONTENT_TYPE), "application/json");
        serde_json::from_slice(&self.body).unwrap()
    }
}

async fn send(runtime: &Runtime, request: Request<Body>) -> Answer {
    let response = runtime.router().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Answer { status, headers, body }
}

async fn call(runtime: &Runtime, method: Method, uri: &str) -> Answer {
    send(runtime, Request::builder().method(method).uri(uri).body(Body::empty()).unwrap()).await
}

async fn get(runtime: &Runtime, uri: &str) -> Answer {
    call(runtime, Method::GET, uri).await
}

async fn connect(runtime: &Runtime, uri: &str, body: &'static str) -> Answer {
    let request =
        Request::post(uri).header(header::CONTENT_TYPE, "application/json").body(Body::from(body)).unwrap();
    send(runtime, request).await
}

// --- probes -------------------------------------------------------------------------------------

#[tokio::test]
async fn livez_is_always_ok() {
    let answer = get(&embedded(), "/livez").await;
    assert_eq!((answer.status, answer.text()), (StatusCode::OK, "ok"));
}

#[tokio::test]
async fn readyz_is_503_until_report_ready() {
    let runtime = embedded();
    let answer = get(&runtime, "/readyz").await;
    assert_eq!((answer.status, answer.text()), (StatusCode::SERVICE_UNAVAILABLE, "not ready"));

    runtime.set_status(Phase::Running, "set by hand");
    assert_eq!(get(&runtime, "/readyz").await.status, StatusCode::SERVICE_UNAVAILABLE);

    runtime.report_ready();
    let answer = get(&runtime, "/readyz").await;
    assert_eq!((answer.status, answer.text()), (StatusCode::OK, "ok"));
}

#[tokio::test]
async fn probes_refuse_other_methods() {
    for uri in ["/livez", "/readyz"] {
        assert_eq!(
            call(&embedded(), Method::POST, uri).await.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{uri}"
        );
    }
}

// --- metadata service ---------------------------------------------------------------------------

#[tokio::test]
async fn get_status_follows_the_reported_phase() {
    let runtime = embedded();
    let answer = connect(&runtime, STATUS, "{}").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json(), serde_json::json!({"phase": "installing", "message": ""}));

    runtime.set_status(Phase::Degraded, "webhook unreachable");
    let answer = connect(&runtime, STATUS, "").await;
    assert_eq!(answer.json(), serde_json::json!({"phase": "degraded", "message": "webhook unreachable"}));

    runtime.report_ready();
    assert_eq!(connect(&runtime, STATUS, "{}").await.json()["phase"], "running");
    runtime.set_status(Phase::Uninstalling, "uninstalling");
    assert_eq!(connect(&runtime, STATUS, "{}").await.json()["phase"], "uninstalling");
    runtime.set_status(Phase::Failed, "gave up");
    assert_eq!(connect(&runtime, STATUS, "{}").await.json()["phase"], "failed");
}

#[tokio::test]
async fn get_metadata_names_the_definition() {
    let runtime = embedded();
    runtime.report_ready();
    let answer = connect(&runtime, METADATA, r#"{"ignored": true}"#).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.json(),
        serde_json::json!({
            "name": "cert-manager",
            "version": "v1.17.2",
            "definitionHash": "sha256:0123456789abcdef",
            "phase": "running",
            "message": "",
        })
    );
}

#[tokio::test]
async fn unknown_procedures_are_404_unimplemented() {
    let runtime = embedded();
    for uri in [
        "/pluginmetadata.v1.PluginMetadataService/RequestUninstall",
        "/pluginmetadata.v1.PluginMetadataService/GetDefinition",
        "/pluginmetadata.v1.PluginMetadataService/GetStatus/extra",
    ] {
        let answer = connect(&runtime, uri, "{}").await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(answer.json()["code"], "unimplemented", "{uri}");
    }
    let answer = call(&runtime, Method::GET, "/pluginmetadata.v1.PluginMetadataService/Nope").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn non_post_is_405() {
    for method in [Method::GET, Method::PUT, Method::DELETE, Method::HEAD] {
        for uri in [STATUS, METADATA] {
            let answer = call(&embedded(), method.clone(), uri).await;
            assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
            assert_eq!(answer.header(header::ALLOW), "POST");
            if method != Method::HEAD {
                assert_eq!(answer.json()["code"], "unimplemented");
            }
        }
    }
}

#[tokio::test]
async fn malformed_connect_requests_are_refused() {
    let runtime = embedded();
    let text =
        Request::post(STATUS).header(header::CONTENT_TYPE, "text/plain").body(Body::from("{}")).unwrap();
    let answer = send(&runtime, text).await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(answer.json()["code"], "invalid_argument");

    let answer = connect(&runtime, METADATA, "not json").await;
    assert_eq!(
        (answer.status, answer.json()["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_argument"))
    );

    let v2 = Request::post(STATUS)
        .header(header::CONTENT_TYPE, "application/json")
        .header("connect-protocol-version", "2")
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(send(&runtime, v2).await.status, StatusCode::BAD_REQUEST);
}

// --- console assets -----------------------------------------------------------------------------

/// A page file served with its type and `nosniff`.
async fn assert_served(runtime: &Runtime, uri: &str, content_type: &str, body: &str) {
    let answer = get(runtime, uri).await;
    assert_eq!(answer.status, StatusCode::OK, "{uri}");
    assert_eq!(answer.header(header::CONTENT_TYPE), content_type, "{uri}");
    assert_eq!(answer.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{uri}");
    assert_eq!(answer.text(), body, "{uri}");
}

async fn assert_serves_the_fixture(runtime: &Runtime) {
    const HTML: &str = "text/html; charset=utf-8";
    const JS: &str = "text/javascript; charset=utf-8";
    let index = "<!doctype html>\n<title>index</title>\n";
    let page = "<!doctype html>\n<title>page</title>\n";
    for (uri, content_type, body) in [
        ("/console/index.html", HTML, index),
        ("/console/", HTML, index),
        ("/console/app.js", JS, "export const page = \"app\";\n"),
        ("/console/mod.mjs", JS, "export const page = \"module\";\n"),
        ("/console/style.css", "text/css; charset=utf-8", "body { margin: 0; }\n"),
        ("/console/data.json", "application/json", "{\"ok\":true}\n"),
        ("/console/sub/page.html?v=1", HTML, page),
        ("/console/sub/deeper/note.txt", "text/plain; charset=utf-8", "deep\n"),
        ("/console/s%75b/page.html", HTML, page),
    ] {
        assert_served(runtime, uri, content_type, body).await;
    }
    let blob = get(runtime, "/console/blob.bin").await;
    assert_eq!(blob.header(header::CONTENT_TYPE), "application/octet-stream");
    assert_eq!(&blob.body[..], b"\x00\x01binary");
}

async fn assert_refuses_what_is_not_a_file(runtime: &Runtime) {
    for uri in [
        "/console/missing.html",
        "/console/sub",
        "/console/sub/",
        "/console/sub/deeper",
        "/console/sub/deeper/",
        "/console/index.html/x",
        "/console/SUB/page.html",
        "/console",
        "/consolex/index.html",
        "/other",
    ] {
        let answer = get(runtime, uri).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(answer.text(), "not found\n", "{uri}");
        assert_eq!(answer.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{uri}");
    }
}

const TRAVERSALS: &[&str] = &[
    "/console/..",
    "/console/../Cargo.toml",
    "/console/sub/../index.html",
    "/console/sub/../../Cargo.toml",
    "/console/./index.html",
    "/console/%2e%2e/Cargo.toml",
    "/console/%2E%2E/Cargo.toml",
    "/console/.%2e/Cargo.toml",
    "/console/..%2fCargo.toml",
    "/console/sub%2fpage.html",
    "/console/sub%2Fpage.html",
    "/console/..\\Cargo.toml",
    "/console/sub%5cpage.html",
    "/console//index.html",
    "/console/sub//page.html",
    "/console/index.html%00",
    "/console/index.html%00.js",
    "/console/bad%zzescape",
    "/console/bad%ffutf8",
];

async fn assert_refuses_traversal(runtime: &Runtime) {
    for uri in TRAVERSALS {
        let answer = get(runtime, uri).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{uri}");
        assert_eq!(answer.text(), "invalid path\n", "{uri}");
        assert_eq!(answer.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{uri}");
    }
}

async fn assert_only_get_and_head(runtime: &Runtime) {
    let head = call(runtime, Method::HEAD, "/console/app.js").await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(head.header(header::CONTENT_TYPE), "text/javascript; charset=utf-8");
    assert_eq!(head.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert!(head.body.is_empty());
    assert_eq!(call(runtime, Method::HEAD, "/console/missing.js").await.status, StatusCode::NOT_FOUND);
    for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH, Method::OPTIONS] {
        for uri in ["/console/app.js", "/console/", "/console/missing.js"] {
            assert_eq!(
                call(runtime, method.clone(), uri).await.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {uri}"
            );
        }
    }
}

#[tokio::test]
async fn embedded_assets_are_served() {
    assert_serves_the_fixture(&embedded()).await;
}

#[tokio::test]
async fn embedded_subdirectory_is_served_relative_to_itself() {
    let console = FIXTURES.get_dir("console").unwrap();
    let runtime = Runtime::new(info(), Assets::Embedded(console));
    assert_serves_the_fixture(&runtime).await;
    assert_eq!(get(&runtime, "/console/console/index.html").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn embedded_refusals() {
    let runtime = embedded();
    assert_refuses_what_is_not_a_file(&runtime).await;
    assert_refuses_traversal(&runtime).await;
    assert_only_get_and_head(&runtime).await;
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "fundament-plugin-runtime-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the fixture (the embedded copy) into `root/console`, beside a secret outside it.
fn write_fixture(root: &Path) -> PathBuf {
    let console = root.join("console");
    copy(&CONSOLE, &console);
    std::fs::write(root.join("secret.txt"), "secret").unwrap();
    console
}

fn copy(dir: &Dir<'static>, to: &Path) {
    std::fs::create_dir_all(to.join(dir.path())).unwrap();
    for file in dir.files() {
        std::fs::write(to.join(file.path()), file.contents()).unwrap();
    }
    for sub in dir.dirs() {
        copy(sub, to);
    }
}

#[tokio::test]
async fn directory_assets_are_served() {
    let temp = TempDir::new();
    let runtime = Runtime::new(info(), Assets::Directory(write_fixture(&temp.0)));
    assert_serves_the_fixture(&runtime).await;
}

#[tokio::test]
async fn directory_assets_show_edits_without_restart() {
    let temp = TempDir::new();
    let console = write_fixture(&temp.0);
    let runtime = Runtime::new(info(), Assets::Directory(console.clone()));
    assert_eq!(get(&runtime, "/console/new.js").await.status, StatusCode::NOT_FOUND);
    std::fs::write(console.join("new.js"), "export {};\n").unwrap();
    assert_served(&runtime, "/console/new.js", "text/javascript; charset=utf-8", "export {};\n").await;
}

#[tokio::test]
async fn directory_refusals() {
    let temp = TempDir::new();
    let runtime = Runtime::new(info(), Assets::Directory(write_fixture(&temp.0)));
    assert_refuses_what_is_not_a_file(&runtime).await;
    assert_refuses_traversal(&runtime).await;
    assert_only_get_and_head(&runtime).await;
    assert_eq!(get(&runtime, "/console/../secret.txt").await.status, StatusCode::BAD_REQUEST);
}

#[cfg(unix)]
#[tokio::test]
async fn directory_symlinks_out_of_the_root_are_not_followed() {
    let temp = TempDir::new();
    let console = write_fixture(&temp.0);
    std::os::unix::fs::symlink(temp.0.join("secret.txt"), console.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(console.join("app.js"), console.join("alias.js")).unwrap();
    let runtime = Runtime::new(info(), Assets::Directory(console));
    assert_eq!(get(&runtime, "/console/leak.txt").await.status, StatusCode::NOT_FOUND);
    assert_served(
        &runtime,
        "/console/alias.js",
        "text/javascript; charset=utf-8",
        "export const page = \"app\";\n",
    )
    .await;
}

/// A symlink inside the root to a hidden file, a FIFO (which would never end) and a device are
/// not served; the URL alone (`/console/.env`) is refused before the disk is looked at.
#[cfg(unix)]
#[tokio::test]
async fn directory_hidden_files_fifos_and_devices_are_not_served() {
    let temp = TempDir::new();
    let console = write_fixture(&temp.0);
    std::fs::write(console.join(".env"), "TOKEN=x").unwrap();
    std::os::unix::fs::symlink(console.join(".env"), console.join("env.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", console.join("zero.js")).unwrap();
    let fifo = console.join("pipe.js");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let runtime = Runtime::new(info(), Assets::Directory(console));
    assert_eq!(get(&runtime, "/console/.env").await.status, StatusCode::BAD_REQUEST);
    for uri in ["/console/env.txt", "/console/zero.js", "/console/pipe.js"] {
        let answered = tokio::time::timeout(std::time::Duration::from_secs(5), get(&runtime, uri)).await;
        assert_eq!(answered.expect(uri).status, StatusCode::NOT_FOUND, "{uri}");
    }
}

#[tokio::test]
async fn a_missing_directory_serves_nothing() {
    let temp = TempDir::new();
    let runtime = Runtime::new(info(), Assets::Directory(temp.0.join("absent")));
    assert_eq!(get(&runtime, "/console/index.html").await.status, StatusCode::NOT_FOUND);
    assert_eq!(get(&runtime, "/console/").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn without_assets_every_console_path_is_404() {
    let runtime = Runtime::new(info(), Assets::None);
    for uri in ["/console/", "/console/index.html", "/console/sub/page.html"] {
        assert_eq!(get(&runtime, uri).await.status, StatusCode::NOT_FOUND, "{uri}");
    }
    assert_eq!(get(&runtime, "/console/../x").await.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn no_index_means_404_at_the_root() {
    let temp = TempDir::new();
    std::fs::write(temp.0.join("page.html"), "<p>page</p>").unwrap();
    let runtime = Runtime::new(info(), Assets::Directory(temp.0.clone()));
    assert_eq!(get(&runtime, "/console/").await.status, StatusCode::NOT_FOUND);
    assert_eq!(get(&runtime, "/console/page.html").await.status, StatusCode::OK);
}
