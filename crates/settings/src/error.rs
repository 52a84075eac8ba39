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
    /// A setting that the mode or another setting makes necessary is set nowhere. Its default
    /// does not come into it (it has none), so the message names every spelling that sets it.
    #[error(
        "--{flag} ({env}, or {file_key} in the settings file) is required {when} and is not set: {what}",
        flag = .key.flag(), env = .key.env(), file_key = .key.file_key()
    )]
    Required {
        /// The setting.
        key: Key,
        /// When it is required: `in real mode`, `with --openfga-url`.
        when: String,
        /// What it is, in words: `the Gardener's kubeconfig`.
        what: String,
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

impl SettingsError {
    /// `key` is required `when` (`in real mode`, `with --oidc-issuer`) and set nowhere; `what`
    /// says what it is.
    pub fn required(key: Key, when: impl Into<String>, what: impl Into<String>) -> Self {
        SettingsError::Required { key, when: when.into(), what: what.into() }
    }
}
