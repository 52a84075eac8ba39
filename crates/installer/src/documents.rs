//! The YAML of `fixtures/cluster` and of plugin folders, read as objects.
//!
//! The file walk is the embedded cluster's (`fundament_cluster::fixtures::yaml_files`),
//! repeated here because the installer must not pull the embedded cluster into a binary
//! that talks to real clusters; the document split is the one both share
//! ([`bounded_value::yaml_documents`]), and the definition is pinned with the same
//! [`PinnedDefinition`] the embedded cluster's controller uses.

use std::path::{Path, PathBuf};

use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use fundament_plugin_types::folder_objects::{self, MAX_FOLDER_YAML, Part};
use fundament_plugin_types::install::PinnedDefinition;
use kube::api::DynamicObject;
use serde_json::Value;

use crate::error::{InstallError, ObjectName};

/// One object of a file, and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub path: PathBuf,
    /// Its index among the file's documents (empty ones counted), as messages name it.
    pub index: usize,
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
    let text = fundament_bounded_file::read_to_string(path, MAX_FOLDER_YAML)
        .map_err(|e| InstallError::Io { path: path.to_path_buf(), source: e.into_io() })?;
    let mut docs = Vec::new();
    // A plugin folder's file comes from its author: bounded in nesting and in values (an alias
    // repeats what it names), all documents of the file sharing one budget. Judged one at a
    // time: a bad object is reported before a later document that is not YAML.
    for doc in bounded_value::yaml_documents(&text, RepeatedKeys::LastWins) {
        let (index, value) = doc.map_err(|e| InstallError::Document {
            path: path.to_path_buf(),
            index: e.index(),
            detail: format!("not YAML: {e}"),
        })?;
        let fail = |detail: String| InstallError::Document { path: path.to_path_buf(), index, detail };
        let object: DynamicObject =
            serde_json::from_value(value).map_err(|e| fail(format!("not a Kubernetes object: {e}")))?;
        let typed = object.types.as_ref().is_some_and(|t| !t.api_version.is_empty() && !t.kind.is_empty());
        if !typed {
            return Err(fail("apiVersion and kind are required".into()));
        }
        if object.metadata.name.as_deref().unwrap_or_default().is_empty() {
            return Err(fail("metadata.name is required".into()));
        }
        docs.push(Document { path: path.to_path_buf(), index, object });
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

/// The documents of a plugin folder's `crds/`, `admission/` and `fixtures/`,
/// each with its part, once the folder as a whole may be put on a cluster
/// ([`folder_objects::first_refused`]): one document it may not put there
/// refuses the whole folder, before anything of it is written. `listed_crds`
/// is the definition's `spec.crds`.
pub(crate) fn plugin_folder(
    dir: &Path,
    listed_crds: &[String],
) -> Result<Vec<(Part, Document)>, InstallError> {
    let mut docs = Vec::new();
    for part in Part::ALL {
        docs.extend(directory(&dir.join(part.dir()))?.into_iter().map(|doc| (part, doc)));
    }
    let values = docs
        .iter()
        .map(|(part, doc)| {
            let value = serde_json::to_value(&doc.object).map_err(|e| InstallError::Document {
                path: doc.path.clone(),
                index: doc.index,
                detail: format!("not a Kubernetes object: {e}"),
            })?;
            Ok((*part, value))
        })
        .collect::<Result<Vec<_>, InstallError>>()?;
    let judged: Vec<(Part, &Value)> = values.iter().map(|(part, value)| (*part, value)).collect();
    if let Some(refused) = folder_objects::first_refused(listed_crds, &judged) {
        let (_, doc) = &docs[refused.position];
        return Err(InstallError::NotAllowed {
            path: doc.path.clone(),
            index: doc.index,
            object: ObjectName::of(doc.kind(), &doc.object),
            refusal: refused.refusal,
        });
    }
    Ok(docs)
}

/// `dir/definition.yaml`, pinned by the hash organization-api gives its bytes.
pub(crate) fn read_definition(dir: &Path) -> Result<(PathBuf, PinnedDefinition), InstallError> {
    let path = dir.join("definition.yaml");
    let bytes = fundament_bounded_file::read(&path, MAX_FOLDER_YAML)
        .map_err(|e| InstallError::Io { path: path.clone(), source: e.into_io() })?;
    let invalid = |detail: String| InstallError::Definition { path: path.clone(), detail };
    // The author's file: bounded in nesting and in what its aliases repeat (bounded_value).
    let document = bounded_value::yaml_document(&bytes, RepeatedKeys::LastWins)
        .map_err(|e| invalid(format!("not YAML: {e}")))?;
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
    fn a_file_that_expands_or_nests_without_bound_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        // Each document within its own bytes' budget, the file not: they share one budget.
        let bomb = format!("a: &a [{}]\nb: [{}]\n", "0,".repeat(2_000), "*a,".repeat(1_000));
        let text = format!("apiVersion: v1\nkind: Event\nmetadata: {{name: a}}\n---\n{bomb}");
        let started = std::time::Instant::now();
        let err = documents(&write(dir.path(), "bomb.yaml", &text)).unwrap_err().to_string();
        assert!(err.contains("document 1: not YAML") && err.contains("more than"), "{err}");
        let err = documents(&write(dir.path(), "deep.yaml", &"[".repeat(100_000))).unwrap_err().to_string();
        assert!(err.contains("nest deeper"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn a_fifo_a_device_or_a_huge_file_is_refused_at_once_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.yaml");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let huge = dir.path().join("huge.yaml");
        std::fs::File::create(&huge).unwrap().set_len(MAX_FOLDER_YAML + 1).unwrap();
        let started = std::time::Instant::now();
        for (path, why) in [
            (fifo.as_path(), "not a regular file"),
            (Path::new("/dev/zero"), "not a regular file"),
            (huge.as_path(), "more than"),
        ] {
            let err = documents(path).unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()) && err.contains(why), "{err}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    /// Every plugin folder of the repository, the end-to-end suites' included.
    fn shipped_plugin_folders() -> Vec<PathBuf> {
        // Read at run time: a test binary outlives the clone it was built in (a shared target).
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo test sets CARGO_MANIFEST_DIR");
        let repo = Path::new(&manifest).join("../..");
        let mut folders: Vec<PathBuf> = std::fs::read_dir(repo.join("plugins"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("definition.yaml").is_file())
            .collect();
        folders.extend(["hostile-plugin", "broken-plugin"].map(|p| repo.join("end2end").join(p)));
        folders.sort();
        folders
    }

    #[test]
    fn every_shipped_plugin_folder_may_be_installed() {
        let folders = shipped_plugin_folders();
        assert!(folders.len() >= 7, "{folders:?}");
        for dir in folders {
            let (_, pinned) = read_definition(&dir).unwrap();
            let docs = plugin_folder(&dir, &pinned.crds).unwrap_or_else(|e| panic!("{e}"));
            assert!(docs.iter().any(|(part, _)| *part == Part::Crds), "{}", dir.display());
        }
    }

    #[test]
    fn a_folder_with_an_object_it_may_not_hold_is_refused_naming_file_document_and_why() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
        let path = write(
            &dir.path().join("fixtures"),
            "grab.yaml",
            "apiVersion: v1\nkind: Event\nmetadata: {name: e, namespace: default}\n---\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: grab}\n\
             roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n",
        );
        let err = plugin_folder(dir.path(), &[]).unwrap_err();
        assert!(matches!(&err, InstallError::NotAllowed { index: 2, .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "{}: document 2 (ClusterRoleBinding grab): fixtures/ may hold only objects of the kinds",
                path.display()
            )),
            "{message}"
        );
        assert!(
            message.ends_with(
                "rbac.authorization.k8s.io/v1 ClusterRoleBinding is neither, and would be \
             written with the installer's (admin) rights: the plugin is not installed"
            ),
            "{message}"
        );
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
        // An alias bomb: 9 levels of 10 aliases each are a billion values, from 300 bytes.
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let previous = format!("*a{}", level - 1);
            bomb.push_str(&format!("a{level}: &a{level} [{}]\n", vec![previous; 10].join(", ")));
        }
        write(dir.path(), "definition.yaml", &bomb);
        let err = read_definition(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not YAML") && err.contains("aliases repeat"), "{err}");
    }
}
