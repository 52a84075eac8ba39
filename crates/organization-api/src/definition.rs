//! One plugin definition: the file as published, its hash, and its content.

use std::path::{Path, PathBuf};

use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use fundament_plugin_types::PluginDefinition;
pub use fundament_plugin_types::{AllowedResource, hash_manifest};
use serde_json::Value;

use crate::CatalogError;
use crate::lint::Severity;
use crate::schema;

/// A plugin definition as the catalog serves it.
#[derive(Debug, Clone)]
pub struct Definition {
    /// `metadata.name`: the catalog name.
    pub name: String,
    /// `metadata.version`.
    pub version: String,
    /// The `definition.yaml` text, verbatim: what the hash covers.
    pub manifest: String,
    /// `sha256:` + hex of the manifest bytes; installations pin it.
    pub hash: String,
    /// The YAML as JSON, keys as written (`metadata`, `spec.menu`, …): what
    /// `GetPluginDefinition` answers.
    pub definition: Value,
    /// The same document, typed: what the services read.
    pub document: PluginDefinition,
    /// The plugin folder it was read from (`console/`, `crds/` live there).
    pub dir: PathBuf,
}

impl Definition {
    /// Parses a manifest as if read from `dir/definition.yaml`: the strict
    /// schema of reference §6.1, without `spec.image` (development definitions
    /// have none). For callers that hold the text, such as tests.
    pub fn from_manifest(manifest: String, dir: &Path) -> Result<Definition, CatalogError> {
        let path = dir.join("definition.yaml");
        let doc =
            parse_yaml(&manifest).map_err(|reason| CatalogError::Syntax { path: path.clone(), reason })?;
        if let Some(problem) = schema::check(&doc).into_iter().find(|f| f.severity == Severity::Error) {
            return Err(CatalogError::Invalid { path, field: problem.path, message: problem.message });
        }
        // The schema admits only what the types describe, so this fails only if the two disagree.
        let document = PluginDefinition::from_value(&doc).map_err(|e| CatalogError::Invalid {
            path: path.clone(),
            field: String::new(),
            message: e.to_string(),
        })?;
        Ok(Definition {
            name: document.metadata.name.clone(),
            version: document.metadata.version.clone(),
            hash: hash_manifest(manifest.as_bytes()),
            manifest,
            definition: doc,
            document,
            dir: dir.to_path_buf(),
        })
    }

    /// The parsed `spec.allowedResources`. Missing parts are empty strings;
    /// the linter reports them.
    pub fn allowed_resources(&self) -> &[AllowedResource] {
        &self.document.spec.allowed_resources
    }
}

pub use fundament_plugin_types::folder_objects::MAX_FOLDER_YAML;

/// The bytes of a plugin folder's YAML file `path`: a regular file (a FIFO would block the
/// reader, a device never end) of at most [`MAX_FOLDER_YAML`] bytes. Folders come from plugin
/// authors, whose files the linter and the catalog read.
pub(crate) fn read_folder_file(path: &Path) -> std::io::Result<Vec<u8>> {
    fundament_bounded_file::read(path, MAX_FOLDER_YAML)
        .map_err(fundament_bounded_file::BoundedFileError::into_io)
}

/// Reads and strictly parses `dir/definition.yaml`.
pub fn read_definition(dir: &Path) -> Result<Definition, CatalogError> {
    let path = dir.join("definition.yaml");
    let bytes = read_folder_file(&path).map_err(|source| CatalogError::Io { path: path.clone(), source })?;
    let manifest = String::from_utf8(bytes)
        .map_err(|_| CatalogError::Syntax { path, reason: "definition.yaml is not UTF-8".to_string() })?;
    Definition::from_manifest(manifest, dir)
}

/// The manifest text and the document, or why the bytes are not YAML.
pub(crate) fn parse_document(bytes: &[u8]) -> Result<(String, Value), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "definition.yaml is not UTF-8".to_string())?;
    Ok((text.to_string(), parse_yaml(text)?))
}

/// Bounded in nesting and in values: an alias repeats what it names, and 2 MB of them would
/// expand to billions of values (`fundament_kube_core::bounded_value`).
///
/// One document: a definition with a second `---` document is refused, not half read. A key
/// written twice is refused too (a second `spec:` is never silently dropped).
pub(crate) fn parse_yaml(text: &str) -> Result<Value, String> {
    bounded_value::yaml_document(text.as_bytes(), RepeatedKeys::Refuse)
        .map_err(|e| format!("invalid YAML: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "apiVersion: fundament.io/v1\nkind: PluginDefinition\n\
        metadata:\n  name: demo\n  version: v0.1.0\n\
        spec:\n  allowedResources:\n  - group: \"\"\n    version: v1\n    resource: events\n    verbs: [get, list]\n\
          \x20 - {group: x.io, version: v1, resource: things, verbs: [get]}\n";

    #[test]
    fn hash_is_sha256_of_the_bytes() {
        assert_eq!(hash_manifest(MANIFEST.as_bytes()), hash_manifest(MANIFEST.as_bytes()));
        assert_ne!(hash_manifest(MANIFEST.as_bytes()), hash_manifest(format!("{MANIFEST}\n").as_bytes()));
    }

    #[test]
    fn parses_a_development_definition() {
        let def = Definition::from_manifest(MANIFEST.to_string(), Path::new("/plugins/demo")).unwrap();
        assert_eq!((def.name.as_str(), def.version.as_str()), ("demo", "v0.1.0"));
        assert_eq!(def.manifest, MANIFEST);
        assert_eq!(def.hash, hash_manifest(MANIFEST.as_bytes()));
        assert_eq!(def.definition["metadata"]["name"], "demo");
        assert_eq!(def.dir, Path::new("/plugins/demo"));
        assert_eq!(
            def.allowed_resources(),
            [
                AllowedResource {
                    group: String::new(),
                    version: "v1".into(),
                    resource: "events".into(),
                    verbs: vec!["get".into(), "list".into()],
                },
                AllowedResource {
                    group: "x.io".into(),
                    version: "v1".into(),
                    resource: "things".into(),
                    verbs: vec!["get".into()],
                },
            ]
        );
    }

    #[test]
    fn strict_parsing_names_file_field_and_reason() {
        let bad = MANIFEST.replace("kind: PluginDefinition", "kind: Plugin");
        let err = Definition::from_manifest(bad, Path::new("/p/demo")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/p/demo/definition.yaml: kind: unsupported kind \"Plugin\", expected \"PluginDefinition\""
        );
        let unknown = format!("{MANIFEST}  extra: 1\n");
        let err = Definition::from_manifest(unknown, Path::new("/p/demo")).unwrap_err();
        assert!(matches!(&err, CatalogError::Invalid { field, .. } if field == "spec.extra"), "{err}");
        let bomb = format!("a: &a [{}]\nb: [{}]\n", ["0"; 1000].join(","), ["*a"; 1000].join(","));
        let err = Definition::from_manifest(bomb, Path::new("/p/demo")).unwrap_err().to_string();
        assert!(err.contains("more than"), "{err}");
        let deep = format!("a: {}", "[".repeat(100_000));
        let started = std::time::Instant::now();
        let err = Definition::from_manifest(deep, Path::new("/p/demo")).unwrap_err().to_string();
        assert!(err.contains("nest deeper") && started.elapsed().as_secs() < 1, "{err}");
        let syntax = Definition::from_manifest("a: [".into(), Path::new("/p/demo")).unwrap_err();
        assert!(syntax.to_string().starts_with("/p/demo/definition.yaml: invalid YAML: "), "{syntax}");
    }

    #[test]
    fn read_definition_reports_a_missing_file() {
        let err = read_definition(Path::new("/nonexistent/demo")).unwrap_err();
        assert!(err.to_string().starts_with("cannot read /nonexistent/demo/definition.yaml: "), "{err}");
    }
}
