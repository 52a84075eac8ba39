//! Settings of the Fundament stack.
//!
//! Every setting has one name and three spellings: a command-line flag, an
//! environment variable and a key in `Leptos.toml`. They are resolved in that
//! order (flags > environment > file > defaults) and every value is checked
//! once, here, so a bad value fails at start-up with one line that names the
//! setting and where it came from.
#![forbid(unsafe_code)]

#[cfg(test)]
mod checkout;
mod error;
mod file;
mod layer;
mod listen_url;
mod resolve;
pub mod table;

pub use error::SettingsError;
pub use file::load_file;
pub use layer::{Key, Layer, Source, ValueKind};
pub use listen_url::{ListenUrlMismatch, url_misses_listen};
pub use resolve::{
    AuditViewSettings, ClusterSettings, FgaSettings, Mode, OidcSettings, PLUGIN_SDK_FILES, ScaleSettings,
    ServiceListen, ServiceUrls, Settings, resolve,
};
