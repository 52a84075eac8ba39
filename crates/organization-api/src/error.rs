use std::path::PathBuf;

/// Why the catalog (or one definition) could not be loaded. Loading stops at
/// the first problem: a catalog that silently lacks a plugin is worse than a
/// service that does not start.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A file or folder could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not UTF-8 YAML.
    #[error("{}: {reason}", .path.display())]
    Syntax {
        /// The definition file.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// The definition breaks the PluginDefinition schema.
    #[error("{}: {field}: {message}", .path.display())]
    Invalid {
        /// The definition file.
        path: PathBuf,
        /// Where in the definition, e.g. `spec.menu.project[1].crd`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Two folders define the same name and version.
    #[error("{name}@{version} is defined twice: {} and {}", .first.display(), .second.display())]
    Duplicate {
        /// `metadata.name`.
        name: String,
        /// `metadata.version`.
        version: String,
        /// The first definition file.
        first: PathBuf,
        /// The second definition file.
        second: PathBuf,
    },
}
