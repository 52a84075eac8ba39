use std::path::PathBuf;

use crate::layer::{Key, Source};

/// Why the settings could not be resolved. Each message is one line and names
/// the setting by its flag, environment variable or file key.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A value that does not parse as what the setting needs.
    #[error("invalid {key} {value:?} (from {origin}): {reason}", key = .key.describe(), origin = .origin.describe(.key))]
    Invalid {
        /// The setting.
        key: Key,
        /// Where the value came from.
        origin: Source,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A path setting names what is not there (checked where a command needs it).
    #[error(
        "{key} {path}: {problem} (set --{flag} or {env})",
        key = .key.describe(), path = .path.display(), flag = .key.flag(), env = .key.env()
    )]
    Missing {
        /// The setting.
        key: Key,
        /// The path it gives.
        path: PathBuf,
        /// What is not there.
        problem: String,
    },
    /// The settings file could not be read.
    #[error("cannot read settings file {}: {reason}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error, in words.
        reason: String,
    },
    /// The settings file is not valid TOML or has unknown keys.
    #[error("settings file {}: {reason}", .path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The parser's message, on one line.
        reason: String,
    },
}
