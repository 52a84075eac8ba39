//! organization-api: the published plugin definitions, by name and version,
//! and the linter plugin authors run before publishing.
//!
//! - [`Catalog`]: the definitions, read from `plugins/*/definition.yaml`, each
//!   strictly parsed and addressed by its hash (`sha256:` of the file bytes);
//! - [`router`]: `organization.v1.PluginService/GetPluginDefinition`, Connect
//!   unary JSON, so Connect clients and plain `fetch`/`curl` both work;
//! - [`lint`]: every problem of a plugin folder at once, with field paths, for
//!   `fundament plugin lint DIR`.
#![forbid(unsafe_code)]

mod catalog;
mod definition;
mod error;
mod path;
mod schema;
mod service;

pub mod lint;

pub use catalog::Catalog;
pub use definition::{AllowedResource, Definition, MAX_FOLDER_YAML, hash_manifest, read_definition};
pub use error::CatalogError;
pub use service::router;
