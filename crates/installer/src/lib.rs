//! The installer of sandbox mode: puts on a real cluster what the embedded
//! cluster seeds itself with (`fundament dev`), so the console, kube-api-proxy
//! and plugin pages meet the same objects there, and takes exactly that away
//! again.
//!
//! - [`Installer::install_platform`]: the platform CRDs of `fixtures/cluster/crds`
//!   (each waited for until Established and served), then the other files of
//!   `fixtures/cluster` (namespaces, the users' ServiceAccounts and RBAC, the
//!   seed's installations) except the embedded cluster's stand-in for a real
//!   server's bootstrap RBAC;
//! - [`Installer::install_plugin`]: a plugin folder's `crds/`, `admission/`
//!   (where the cluster serves ValidatingAdmissionPolicy), `fixtures/`, the
//!   installation's objects of [`fundament_plugin_types::install`] and its
//!   PluginInstallation with a Running, ready status, read back to check. The
//!   folder is written by a hostile author as far as the installer knows, and
//!   with this client's admin rights: a definition whose RBAC would hand the
//!   plugin the cluster, or a folder with an object outside
//!   [`fundament_plugin_types::folder_objects`]' allow-list (its own CRDs,
//!   policies of them, objects of them, Events), is refused before anything
//!   is written;
//! - [`Installer::uninstall`]: everything that carries [`INSTALLED_BY_LABEL`],
//!   installations first and CRDs last, except namespaces it adopted.
//!
//! Objects are written by server-side apply as [`FIELD_MANAGER`] (forced),
//! statuses by update of the status subresource, each only where it differs,
//! so a second install changes nothing. Kinds are found through the cluster's
//! discovery; a document of a kind the cluster does not serve is an error
//! that names its file. Namespaces that exist already (`default`) are not
//! taken over: they get the files' missing labels (never the installer's own
//! marks, never `pod-security.kubernetes.io/…`), which uninstall takes away
//! again, and are never deleted; any other object that exists and is not the
//! installer's is an error, and so is a CRD the installer wrote for another
//! installation or the platform ([`INSTALLED_FOR_ANNOTATION`]). Both are found
//! before anything of a plugin (or the platform) is written. The marks
//! ([`INSTALLED_BY_LABEL`], [`ADOPTED_BY_LABEL`], [`ADDED_LABELS_ANNOTATION`],
//! [`INSTALLED_FOR_ANNOTATION`]) are the installer's alone: a document's are
//! dropped.
#![forbid(unsafe_code)]
#![allow(
    clippy::result_large_err,
    reason = "an InstallError names file, object and the server's message; it is returned once per \
              failed install, next to network round trips, so its size costs nothing worth boxing for"
)]

mod apply;
mod documents;
mod error;
mod installer;
mod kinds;
mod uninstall;

pub use error::{InstallError, ObjectName};
pub use installer::{InstalledPlugin, Installer, Summary};

/// The field manager of every write, and the value of [`INSTALLED_BY_LABEL`].
pub const FIELD_MANAGER: &str = "fundament-dev";

/// Marks what the installer created, so that uninstall removes exactly that.
pub const INSTALLED_BY_LABEL: &str = "fundament.io/installed-by";

/// Marks a namespace that existed before (`default`, `kube-system`) and that
/// the installer only added labels to: uninstall takes the labels away and
/// leaves the namespace.
pub const ADOPTED_BY_LABEL: &str = "fundament.io/adopted-by";

/// The labels the installer added to an adopted namespace, comma-separated.
pub const ADDED_LABELS_ANNOTATION: &str = "fundament.io/added-labels";

/// On a CRD the installer wrote: the installation it was written for
/// (`<organization>--<plugin>`), or [`PLATFORM`]. Every plugin and the platform share
/// [`INSTALLED_BY_LABEL`]; this tells whose kinds a CRD defines, so that one plugin
/// folder cannot redefine another's.
pub const INSTALLED_FOR_ANNOTATION: &str = "fundament.io/installed-for";

/// The owner [`INSTALLED_FOR_ANNOTATION`] records for the platform's CRDs (no
/// installation's name: those are `<organization>--<plugin>`).
pub const PLATFORM: &str = "platform";
