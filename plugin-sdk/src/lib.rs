//! The plugin SDK's files as the services serve them, compiled in (`fundament plugin check`
//! serves them from memory).
//!
//! A crate of its own, rooted at `plugin-sdk/`, because cargo records a file compiled in from
//! outside the including package by its absolute path: every clone shares one target directory,
//! and a crate that reached across with `../../../plugin-sdk/` was compiled again in every clone
//! at a new path. Files inside the package are recorded relative to it.

#![forbid(unsafe_code)]

/// `plugin-sdk.min.js`: the script as served (`plugin-sdk/minify.mjs` makes it from `plugin-sdk.js`).
pub const SCRIPT: &str = include_str!("../plugin-sdk.min.js");
/// `plugin-sdk.css`.
pub const STYLES: &str = include_str!("../plugin-sdk.css");
/// `plugin-sdk.d.ts`: the types for plugin authors.
pub const TYPES: &str = include_str!("../plugin-sdk.d.ts");
