//! The plugin data that kube-api-proxy, plugin-proxy, authn, organization-api,
//! the embedded cluster and the console all read, typed once.
//!
//! Every reader used to index `serde_json::Value` on its own (`["spec"]
//! ["definitionRef"]["pluginName"]`), each with its own idea of a missing
//! field. Here the shapes are written down with serde, and the few rules that
//! travel with the data (the definition hash, what an `allowedResources`
//! entry admits, what a condition reason means) live next to them, as do the
//! messages of the console's postMessage protocol ([`protocol`]). A linter
//! reads a definition part by part with [`outline::DefinitionOutline`]. What
//! installing a plugin creates is built by [`install`], for the embedded
//! cluster and the installer alike, and [`folder_objects`] says what a plugin
//! folder may put on a cluster beside it. No IO and no heavy dependencies, so
//! the browser build of the console uses it too.

#![forbid(unsafe_code)]

mod allowed;
pub mod audit;
mod definition;
pub mod folder_objects;
mod guide;
pub mod install;
mod installation;
pub mod outline;
pub mod protocol;
mod serde_util;
mod takeover;

pub use allowed::{AllowedResource, ResourceRequest};
pub use definition::{
    Badge, CustomComponents, DefinitionMetadata, DefinitionSpec, FormGroup, Menu, MenuItem, Permissions,
    PluginDefinition, RbacRule, StatusMapping, UiHint, Urls, hash_manifest,
};
pub use guide::{ConditionAdvice, KindGuide, LabelGuide, Refusal, Summary};
pub use installation::{
    DEVELOPMENT_LABEL, DefinitionRef, InstallationError, InstallationMetadata, InstallationSpec,
    InstallationStatus, PluginInstallation,
};
pub use takeover::{RefusedRule, Takeover, first_takeover, takeover};
