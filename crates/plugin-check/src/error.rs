//! Why a check or a scaffold could not be done at all (as opposed to findings, which are
//! what a check that ran found).

use std::path::{Path, PathBuf};

use crate::files::Refused;
use crate::finding::escape_controls;

/// The crate's one error type. Names and text that come from the plugin folder (file names,
/// what the catalog's reader quotes of a file) are shown with control characters escaped, as
/// findings are: the folder may be someone else's, and its names must not drive the terminal.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{}: no definition.yaml in that folder", shown(.0))]
    NoDefinition(PathBuf),
    #[error("{}: no such folder", shown(.0))]
    NoFolder(PathBuf),
    #[error("{}: not a folder; give the plugin's folder (the one holding definition.yaml)", shown(.0))]
    NotAFolder(PathBuf),
    #[error("cannot read the plugin: {}", escape_controls(&.0.to_string()))]
    Definition(#[from] fundament_organization_api::CatalogError),
    #[error("cannot read {}: {source}", shown(path))]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "{} is refused: {reason}; the check reads only regular files inside the plugin folder",
        shown(path)
    )]
    Refused { path: PathBuf, reason: Refused },
    #[error(
        "cannot start Chromium ({path}): {source}; install it (Debian: apt-get install chromium) or pass --chromium PATH"
    )]
    ChromiumStart { path: PathBuf, source: std::io::Error },
    #[error("Chromium ({}) did not open its DevTools endpoint within 20 s{}", path.display(), said(stderr))]
    ChromiumEndpoint { path: PathBuf, stderr: String },
    #[error("the DevTools connection failed: {0}")]
    Devtools(String),
    #[error("DevTools command {method} failed: {message}")]
    Command { method: String, message: String },
    #[error("cannot listen on 127.0.0.1: {0}")]
    Listen(std::io::Error),
    #[error("invalid plugin name {name:?}: {reason}")]
    BadName { name: String, reason: String },
    #[error("{0} exists and is not empty; pick a new folder")]
    NotEmpty(PathBuf),
}

impl CheckError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> CheckError {
        CheckError::Io { path: path.into(), source }
    }
}

fn shown(path: &Path) -> String {
    escape_controls(&path.display().to_string()).into_owned()
}

/// Chromium's last lines on stderr, after the error's sentence.
fn said(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!("; it said:\n{stderr}") }
}
