//! The plugins of one cluster as the console shows them, and the names and
//! URLs their pages live under. Pure functions over the data the services
//! answer, so the rules are tested without any service running.
//!
//! - [`entries`]: installations joined with their definitions (the registry).
//! - [`pages`]: where a plugin's own pages are framed from.
//! - [`paths`]: the console's paths of plugin kinds.
//! - [`names`]: names, ids and URL segments as Kubernetes and browsers check them.
//! - [`kind`]: what the console needs to know about a kind, from its CRD.

pub mod entries;
pub mod kind;
pub mod names;
pub mod pages;
pub mod paths;

pub use entries::{
    CustomComponents, DEFINITION_UNREACHABLE, DefinitionAnswer, KindGuides, MenuEntry,
    ORGANIZATION_API_UNREACHABLE, PluginEntry, PluginState, Registry, ResourceView, crd_label, entry,
    installations, registry,
};
pub use kind::{KindInfo, kind_info};
pub use names::{encode_segment, is_cluster_id, is_crd_name, is_dns1123_label, is_dns1123_subdomain};
pub use pages::{PageUrl, custom_page, safe_page_path};
