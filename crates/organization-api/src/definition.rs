//! One plugin definition: the file as published, its hash, and its content.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

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
    /// The YAML as JSON, keys as written (`metadata`, `spec.menu`, …).
    pub definition: Value,
    /// The plugin folder it was read from (`console/`, `crds/` live there).
    pub dir: PathBuf,
}

/// One entry of `spec.allowedResources`: what the plugin's pages may ask the
/// gateway for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The API version, e.g. `v1`.
    pub version: String,
    /// The plural resource name, e.g. `certificates`.
    pub resource: String,
    /// The request verbs (`get`, `list`, `watch`, `create`, …).
    pub verbs: Vec<String>,
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
        // The schema check guarantees both are non-empty strings.
        let text = |field: &str| doc["metadata"][field].as_str().unwrap_or_default().to_string();
        Ok(Definition {
            name: text("name"),
            version: text("version"),
            hash: hash_manifest(manifest.as_bytes()),
            manifest,
            definition: doc,
            dir: dir.to_path_buf(),
        })
    }

    /// The parsed `spec.allowedResources`. Missing parts are empty strings,
    /// which match no request: the gateway fails closed on a sloppy entry.
    pub fn allowed_resources(&self) -> Vec<AllowedResource> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        self.definition["spec"]["allowedResources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| entry.is_object())
            .map(|entry| AllowedResource {
                group: text(&entry["group"]),
                version: text(&entry["version"]),
                resource: text(&entry["resource"]),
                verbs: entry["verbs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect(),
            })
            .collect()
    }
}

/// Reads and strictly parses `dir/definition.yaml`.
pub fn read_definition(dir: &Path) -> Result<Definition, CatalogError> {
    let path = dir.join("definition.yaml");
    let bytes = std::fs::read(&path).map_err(|source| CatalogError::Io { path: path.clone(), source })?;
    let manifest = String::from_utf8(bytes)
        .map_err(|_| CatalogError::Syntax { path, reason: "definition.yaml is not UTF-8".to_string() })?;
    Definition::from_manifest(manifest, dir)
}

/// `sha256:` + lower-case hex of the bytes, as upstream's `HashManifest`.
pub fn hash_manifest(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hash = String::with_capacity(7 + 64);
    hash.push_str("sha256:");
    for byte in digest {
        hash.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        hash.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
    }
    hash
}

/// The manifest text and the document, or why the bytes are not YAML.
pub(crate) fn parse_document(bytes: &[u8]) -> Result<(String, Value), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "definition.yaml is not UTF-8".to_string())?;
    Ok((text.to_string(), parse_yaml(text)?))
}

fn parse_yaml(text: &str) -> Result<Value, String> {
    serde_yaml::from_str(text).map_err(|e| format!("invalid YAML: {e}"))
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
        // The SHA-256 test vector of "abc".
        assert_eq!(
            hash_manifest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
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
            vec![
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
        let syntax = Definition::from_manifest("a: [".into(), Path::new("/p/demo")).unwrap_err();
        assert!(syntax.to_string().starts_with("/p/demo/definition.yaml: invalid YAML: "), "{syntax}");
    }

    #[test]
    fn read_definition_reports_a_missing_file() {
        let err = read_definition(Path::new("/nonexistent/demo")).unwrap_err();
        assert!(err.to_string().starts_with("cannot read /nonexistent/demo/definition.yaml: "), "{err}");
    }
}
