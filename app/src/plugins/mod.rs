//! The plugin integration: discovery, the registry the sidebar and plugin
//! routes read, and the frame that hosts a plugin's page.

pub mod api;
#[cfg(feature = "ssr")]
pub mod backend;
#[cfg(feature = "ssr")]
pub mod cache;
#[cfg(feature = "ssr")]
pub mod call_limits;
pub mod frame;
#[cfg(feature = "hydrate")]
mod host;
pub mod message_budget;
pub mod model;
pub mod navigation;
pub mod protocol;
pub mod registry;
pub mod token;
