//! What can go wrong, naming the file or object and the server's message.

use std::path::PathBuf;

use fundament_plugin_types::folder_objects::Refusal;

use fundament_plugin_folder::FolderError;
pub use fundament_plugin_folder::ObjectName;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Not YAML, or not an object with `apiVersion`, `kind` and `metadata.name`.
    #[error("{path}: document {index}: {detail}")]
    Document { path: PathBuf, index: usize, detail: String },
    #[error("{path}: {detail}")]
    Definition { path: PathBuf, detail: String },
    /// A document a plugin folder may not put on a cluster
    /// ([`fundament_plugin_types::folder_objects`]): nothing of the plugin is written.
    #[error("{path}: document {index} ({object}): {refusal}: the plugin is not installed")]
    NotAllowed { path: PathBuf, index: usize, object: ObjectName, refusal: Refusal },
    #[error("{path}: {object}: the cluster serves no kind {} in {api_version}", object.kind)]
    UnknownKind { path: PathBuf, api_version: String, object: ObjectName },
    /// Installing would take over an object someone else made.
    #[error(
        "{path}: {object} exists and was not installed by fundament-dev (it has no label \
         fundament.io/installed-by): it is left as it is; delete it to install this file"
    )]
    NotOurs { path: PathBuf, object: ObjectName },
    /// Installing would redefine the kinds of another installation (or of the platform): a CRD
    /// the installer wrote for `owner`, written again for `installing`.
    #[error(
        "{path}: {object} belongs to {owner}, not {installing}: a plugin folder may define only its \
         own kinds (it is left as it is)"
    )]
    NotItsOwn { path: PathBuf, object: ObjectName, owner: String, installing: String },
    /// The API server refused a request (`code` 0: the request did not reach it).
    #[error("{path}: {object}: {message}")]
    Refused { path: PathBuf, object: ObjectName, code: u16, message: String },
    #[error("{path}: {object} was not established within {seconds} s ({detail})")]
    NotEstablished { path: PathBuf, object: ObjectName, seconds: u64, detail: String },
    #[error(
        "{path}: {object}: the status reads back as phase {phase:?}, ready {ready}, not Running and ready"
    )]
    NotRunning { path: PathBuf, object: ObjectName, phase: String, ready: bool },
    /// What the server answered is not a readable PluginInstallation.
    #[error("{path}: {object}: not readable as a PluginInstallation: {detail}")]
    Unreadable { path: PathBuf, object: ObjectName, detail: String },
    #[error("discovery of {what}: {message}")]
    Discovery { what: String, message: String },
    #[error("uninstall: {object}: {message}")]
    Uninstall { object: ObjectName, code: u16, message: String },
    #[error("uninstall: {object} is still there after {seconds} s")]
    NotGone { object: ObjectName, seconds: u64 },
}

/// A folder's reading and judging ([`fundament_plugin_folder`]), as the installer has always
/// worded it.
impl From<FolderError> for InstallError {
    fn from(error: FolderError) -> InstallError {
        match error {
            FolderError::Io { path, source } => InstallError::Io { path, source },
            FolderError::Document { path, index, detail } => InstallError::Document { path, index, detail },
            FolderError::NotAllowed { path, index, object, refusal } => {
                InstallError::NotAllowed { path, index, object, refusal: *refusal }
            }
        }
    }
}

/// The API server's own message and code, or what kept the request from it with its root
/// cause (a refused connection, a certificate the kubeconfig's CA did not sign, …): kube-rs's
/// own message alone is `ServiceError: client error (Connect)` for all of them.
pub(crate) fn server_message(error: &kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => (status.code, status.message.clone()),
        other => (0, fundament_kube_core::cause::chain(other)),
    }
}

pub(crate) fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}
