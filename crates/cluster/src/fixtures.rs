//! Seed objects from YAML files: `fixtures/cluster/crds`, `fixtures/cluster`,
//! then each plugin folder's `crds/`, `admission/` (its admission policies and
//! bindings) and `fixtures/`. Every object goes
//! through the same validation as an API write, so a broken fixture stops
//! start-up with the file and the reason instead of serving half a cluster.
//!
//! `fixtures/cluster` is the platform's own and may hold anything (it holds
//! the users' RBAC). A plugin folder is its author's, and its objects are
//! created as the cluster itself, before the controller installs the plugin:
//! it is held to [`fundament_plugin_types::folder_objects`]' allow-list (its
//! own CRDs, policies of them, objects of them, Events), checked for the
//! whole folder before any of it is created.

use std::path::{Path, PathBuf};

use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use fundament_plugin_types::folder_objects::{self, MAX_FOLDER_YAML, Part, Refusal};
use serde_json::Value;

use crate::authn::User;
use crate::cluster::{Cluster, WriteOptions};
use crate::controller::PluginDefinition;

#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: document {index} is not valid YAML: {detail}")]
    Yaml { path: PathBuf, index: usize, detail: String },
    #[error("{path}: document {index} ({kind} {name}): {detail}")]
    Object { path: PathBuf, index: usize, kind: String, name: String, detail: String },
    /// A document a plugin folder may not hold: nothing of the folder is created.
    #[error("{path}: document {index} ({kind} {name}): {refusal}: the plugin is not installed")]
    NotAllowed { path: PathBuf, index: usize, kind: String, name: String, refusal: Box<Refusal> },
}

/// The YAML files of `dir`, in name order; a missing directory has none.
pub fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    entries_where(dir, |p| {
        p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
    })
}

/// The entries of `dir` that `keep` keeps, in name order; a missing directory has none.
fn entries_where(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>, FixtureError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(FixtureError::Io { path: dir.to_path_buf(), source }),
    };
    let mut kept: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| keep(p)).collect();
    kept.sort();
    Ok(kept)
}

/// The documents of a multi-document YAML file (empty documents skipped).
pub fn documents(path: &Path) -> Result<Vec<Value>, FixtureError> {
    Ok(file_documents(path)?.into_iter().map(|(_, value)| value).collect())
}

/// The documents of YAML `text` that was read from (or is built in as) `path`.
pub fn documents_in(path: &Path, text: &str) -> Result<Vec<Value>, FixtureError> {
    Ok(indexed_documents(path, text)?.into_iter().map(|(_, value)| value).collect())
}

/// The documents of YAML `text`, each with its index in the text (empty
/// documents are skipped but counted, so the index is the one an editor shows).
fn indexed_documents(path: &Path, text: &str) -> Result<Vec<(usize, Value)>, FixtureError> {
    // Plugin folders' fixtures come from their authors: bounded in nesting and in values (an
    // alias repeats what it names), all documents of the text sharing one budget.
    bounded_value::yaml_documents(text, RepeatedKeys::LastWins)
        .map(|doc| {
            doc.map_err(|e| FixtureError::Yaml {
                path: path.to_path_buf(),
                index: e.index(),
                detail: e.to_string(),
            })
        })
        .collect()
}

/// The documents of the file `path`, each with its index in the file.
fn file_documents(path: &Path) -> Result<Vec<(usize, Value)>, FixtureError> {
    let text = fundament_bounded_file::read_to_string(path, MAX_FOLDER_YAML)
        .map_err(|e| FixtureError::Io { path: path.to_path_buf(), source: e.into_io() })?;
    indexed_documents(path, &text)
}

/// Creates every object of `path` as the cluster itself.
pub fn load_file(cluster: &Cluster, path: &Path) -> Result<usize, FixtureError> {
    let docs = file_documents(path)?;
    let count = docs.len();
    for (index, doc) in docs {
        create(cluster, path, index, doc)?;
    }
    Ok(count)
}

/// Creates the document `index` of `path` as the cluster itself.
fn create(cluster: &Cluster, path: &Path, index: usize, doc: Value) -> Result<(), FixtureError> {
    let api_version = doc["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = doc["kind"].as_str().unwrap_or_default().to_string();
    let name = crate::object::name(&doc).to_string();
    let fail = |detail: String| FixtureError::Object {
        path: path.to_path_buf(),
        index,
        kind: kind.clone(),
        name: name.clone(),
        detail,
    };
    let rt = cluster.registry().by_kind(&api_version, &kind).cloned().ok_or_else(|| {
        fail(format!("no kind {kind} in {api_version} is served (is its CRD loaded first?)"))
    })?;
    let ns = if rt.namespaced {
        // As kubectl does: a namespaced object without one goes to `default`.
        match crate::object::namespace(&doc) {
            "" => "default",
            ns => ns,
        }
        .to_string()
    } else {
        String::new()
    };
    cluster.create(&User::system(), &rt, &ns, doc, WriteOptions::SYSTEM).map_err(|e| fail(e.message))?;
    Ok(())
}

/// Loads the cluster fixtures and the CRDs and objects of every plugin folder, each given by
/// its definition as read at start-up (its folder and `spec.crds`).
pub fn load_all(
    cluster: &Cluster,
    fixtures_dir: &Path,
    plugins: &[PluginDefinition],
) -> Result<usize, FixtureError> {
    let mut files = yaml_files(&fixtures_dir.join("crds"))?;
    files.extend(yaml_files(fixtures_dir)?);
    let mut count = 0;
    for f in &files {
        count += load_file(cluster, f)?;
    }
    for definition in plugins {
        count += load_plugin_objects(cluster, definition)?;
    }
    Ok(count)
}

/// A plugin folder's `crds/`, `admission/`, then `fixtures/`, once the folder
/// as a whole passes [`folder_objects::first_refused`] (with its definition's
/// `spec.crds`): a document it may not hold refuses all of it. The definition is the one the
/// controller installs, not read again: the folder is judged by the `spec.crds` it serves.
pub fn load_plugin_objects(cluster: &Cluster, definition: &PluginDefinition) -> Result<usize, FixtureError> {
    let dir = &definition.dir;
    let mut docs: Vec<(Part, PathBuf, usize, Value)> = Vec::new();
    for part in Part::ALL {
        for f in yaml_files(&dir.join(part.dir()))? {
            docs.extend(file_documents(&f)?.into_iter().map(|(index, doc)| (part, f.clone(), index, doc)));
        }
    }
    let judged: Vec<(Part, &Value)> = docs.iter().map(|(part, _, _, doc)| (*part, doc)).collect();
    if let Some(refused) = folder_objects::first_refused(&definition.crds, &judged) {
        let (_, path, index, _) = &docs[refused.position];
        return Err(FixtureError::NotAllowed {
            path: path.clone(),
            index: *index,
            kind: refused.kind,
            name: refused.name,
            refusal: Box::new(refused.refusal),
        });
    }
    let count = docs.len();
    for (_, path, index, doc) in docs {
        create(cluster, &path, index, doc)?;
    }
    Ok(count)
}

/// The plugin folders under `root` (those with a `definition.yaml`), by name.
pub fn plugin_dirs(root: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    entries_where(root, |p| p.join("definition.yaml").is_file())
}
