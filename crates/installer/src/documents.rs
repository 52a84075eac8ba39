//! The YAML of `fixtures/cluster` and of plugin folders, read as objects.
//!
//! The file walk and the document split are the embedded cluster's
//! (`fundament_cluster::fixtures::{yaml_files, documents}`), repeated here
//! because the installer must not pull the embedded cluster into a binary
//! that talks to real clusters; the definition is pinned with the same
//! [`PinnedDefinition`] the embedded cluster's controller uses.

use std::path::{Path, PathBuf};

use fundament_plugin_types::install::PinnedDefinition;
use kube::api::DynamicObject;
use serde_json::Value;

use crate::error::InstallError;

/// One object of a file, and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub path: PathBuf,
    pub object: DynamicObject,
}

impl Document {
    pub fn kind(&self) -> &str {
        self.object.types.as_ref().map_or("", |t| t.kind.as_str())
    }
}

/// The YAML files of `dir`, in name order; a missing directory has none.
pub(crate) fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, InstallError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(InstallError::Io { path: dir.to_path_buf(), source }),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    Ok(files)
}

/// The objects of a multi-document YAML file (empty documents skipped).
pub(crate) fn documents(path: &Path) -> Result<Vec<Document>, InstallError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| InstallError::Io { path: path.to_path_buf(), source })?;
    let mut docs = Vec::new();
    for (index, doc) in serde_yaml::Deserializer::from_str(&text).enumerate() {
        let fail = |detail: String| InstallError::Document { path: path.to_path_buf(), index, detail };
        let value =
            <Value as serde::Deserialize>::deserialize(doc).map_err(|e| fail(format!("not YAML: {e}")))?;
        if value.is_null() {
            continue;
        }
        let object: DynamicObject =
            serde_json::from_value(value).map_err(|e| fail(format!("not a Kubernetes object: {e}")))?;
        let typed = object.types.as_ref().is_some_and(|t| !t.api_version.is_empty() && !t.kind.is_empty());
        if !typed {
            return Err(fail("apiVersion and kind are required".into()));
        }
        if object.metadata.name.as_deref().unwrap_or_default().is_empty() {
            return Err(fail("metadata.name is required".into()));
        }
        docs.push(Document { path: path.to_path_buf(), object });
    }
    Ok(docs)
}

/// The objects of every YAML file of `dir`, namespaces first (they hold the rest).
pub(crate) fn directory(dir: &Path) -> Result<Vec<Document>, InstallError> {
    files(&yaml_files(dir)?)
}

/// The objects of `files`, in order, namespaces first.
pub(crate) fn files(files: &[PathBuf]) -> Result<Vec<Document>, InstallError> {
    let mut docs = Vec::new();
    for f in files {
        docs.extend(documents(f)?);
    }
    // Stable: otherwise in file and document order, as the embedded cluster loads them.
    docs.sort_by_key(|d| d.kind() != "Namespace");
    Ok(docs)
}

/// `dir/definition.yaml`, pinned by the hash organization-api gives its bytes.
pub(crate) fn read_definition(dir: &Path) -> Result<(PathBuf, PinnedDefinition), InstallError> {
    let path = dir.join("definition.yaml");
    let bytes = std::fs::read(&path).map_err(|source| InstallError::Io { path: path.clone(), source })?;
    let invalid = |detail: String| InstallError::Definition { path: path.clone(), detail };
    let document: Value = serde_yaml::from_slice(&bytes).map_err(|e| invalid(format!("not YAML: {e}")))?;
    let pinned = PinnedDefinition::from_manifest(&bytes, &document).map_err(|e| invalid(e.to_string()))?;
    Ok((path, pinned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_directory_reads_in_name_order_with_namespaces_first() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: n}\n");
        write(
            dir.path(),
            "a.yml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\n---\n---\n\
             apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n",
        );
        write(dir.path(), "notes.txt", "not yaml: [");
        let names: Vec<String> =
            directory(dir.path()).unwrap().iter().map(|d| d.object.metadata.name.clone().unwrap()).collect();
        assert_eq!(names, ["n", "a", "b"]);
        assert!(directory(&dir.path().join("missing")).unwrap().is_empty());
    }

    #[test]
    fn a_document_without_type_or_name_names_file_and_index() {
        let dir = tempfile::tempdir().unwrap();
        for (text, detail) in [
            (
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\n",
                "apiVersion and kind",
            ),
            (
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\n",
                "metadata.name",
            ),
            (
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n[1, 2]\n",
                "not a Kubernetes object",
            ),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n: : :\n", "not YAML"),
        ] {
            let path = write(dir.path(), "x.yaml", text);
            let err = documents(&path).unwrap_err().to_string();
            assert!(err.starts_with(&format!("{}: document 1: {detail}", path.display())), "{err}");
        }
    }

    #[test]
    fn a_definition_is_pinned_by_the_hash_of_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let text =
            "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata: {name: demo, version: v1}\n";
        write(dir.path(), "definition.yaml", text);
        let (path, pinned) = read_definition(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("definition.yaml"));
        assert_eq!(pinned.hash, fundament_plugin_types::hash_manifest(text.as_bytes()));
        write(dir.path(), "definition.yaml", "metadata: {name: demo}\n");
        let err = read_definition(dir.path()).unwrap_err().to_string();
        assert!(err.ends_with("definition.yaml: metadata.version is missing"), "{err}");
    }
}
