//! Why a check or a scaffold could not be done at all (as opposed to findings, which are
//! what a check that ran found).

use std::path::PathBuf;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{0}: no definition.yaml in that folder")]
    NoDefinition(PathBuf),
    #[error("cannot read the plugin: {0}")]
    Definition(#[from] fundament_organization_api::CatalogError),
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "cannot start Chromium ({path}): {source}; install it (Debian: apt-get install chromium) or pass --chromium PATH"
    )]
    ChromiumStart { path: PathBuf, source: std::io::Error },
    #[error("Chromium ({0}) did not open its DevTools endpoint within 20 s")]
    ChromiumEndpoint(PathBuf),
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
