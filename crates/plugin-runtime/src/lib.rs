//! The runtime every Rust plugin embeds: one HTTP server on the plugin pod's port (8080) with
//!
//! - `GET /livez` — `200 ok` while the process serves at all (the Deployment's liveness probe);
//! - `GET /readyz` — `200 ok` once the plugin called [`Runtime::report_ready`], `503 not ready`
//!   before (the readiness probe);
//! - `POST /pluginmetadata.v1.PluginMetadataService/GetStatus` and `…/GetMetadata` — Connect unary
//!   JSON: the phase plugin-controller polls and maps onto the PluginInstallation's status;
//! - `GET|HEAD /console/<file>` — the plugin's pages, which plugin-proxy fetches through the API
//!   server's service proxy and serves to the console's iframe with the plugin CSP.
//!
//! # Why there is no authentication
//!
//! The Service of a plugin is cluster-internal: the only ways in are the API server's service
//! proxy (plugin-proxy, which authenticates the user and checks the installed version before it
//! fetches a page) and plugin-controller's status poll from inside the cluster. Nothing here is
//! secret (pages are public assets of a published version; status and metadata are what the
//! PluginInstallation shows anyway) and nothing here changes state: there is deliberately no
//! `RequestUninstall` on this unauthenticated port. A NetworkPolicy can narrow it further.
//!
//! Build a [`Runtime`], hand its [`Runtime::router`] to your own server or call [`serve`].
#![forbid(unsafe_code)]

mod asset_path;
mod assets;
mod console;
mod health;
mod metadata;
mod runtime;
mod server;

pub use assets::Assets;
pub use runtime::{Phase, PluginInfo, Runtime};
pub use server::{serve, serve_wrapped};
