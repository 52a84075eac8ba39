//! The YAML of `fixtures/cluster` and of plugin folders, read as objects.
//!
//! The reader is `fundament_plugin_folder`'s, which `fundament plugin lint` shares (a folder
//! lint passes is one installed here); its file walk is the embedded cluster's
//! (`fundament_cluster::fixtures::yaml_files`), repeated there because the installer must not
//! pull the embedded cluster into a binary that talks to real clusters; the document split is
//! the one all share ([`bounded_value::yaml_documents`]), and the definition is pinned with the
//! same [`PinnedDefinition`] the embedded cluster's controller uses.

use std::path::{Path, PathBuf};

use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use fundament_plugin_types::folder_objects::{MAX_FOLDER_YAML, Part};
use fundament_plugin_types::install::PinnedDefinition;

pub(crate) use fundament_plugin_folder::Document;

use crate::error::InstallError;

/// The YAML files of `dir`, in name order; a missing directory has none.
pub(crate) fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, InstallError> {
    Ok(fundament_plugin_folder::yaml_files(dir)?)
}

/// The objects of every YAML file of `dir`, namespaces first (they hold the rest).
pub(crate) fn directory(dir: &Path) -> Result<Vec<Document>, InstallError> {
    Ok(fundament_plugin_folder::directory(dir)?)
}

/// The objects of `files`, in order, namespaces first.
pub(crate) fn files(files: &[PathBuf]) -> Result<Vec<Document>, InstallError> {
    Ok(fundament_plugin_folder::files(files)?)
}

/// The documents of a plugin folder's `crds/`, `admission/` and `fixtures/`,
/// each with its part, once the folder as a whole may be put on a cluster
/// ([`fundament_plugin_folder::plugin_folder`]). `listed_crds` is the
/// definition's `spec.crds`.
pub(crate) fn plugin_folder(
    dir: &Path,
    listed_crds: &[String],
) -> Result<Vec<(Part, Document)>, InstallError> {
    Ok(fundament_plugin_folder::plugin_folder(dir, listed_crds)?)
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

    /// The installer refuses a folder with an object it may not hold as `NotAllowed`, in the
    /// shared reader's words (`fundament_plugin_folder` tests the words themselves).
    #[test]
    fn a_folder_with_an_object_it_may_not_hold_is_refused_in_the_readers_words() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
        write(
            &dir.path().join("fixtures"),
            "grab.yaml",
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: grab}\n",
        );
        let err = plugin_folder(dir.path(), &[]).unwrap_err();
        assert!(matches!(&err, InstallError::NotAllowed { index: 0, .. }), "{err:?}");
        let reader = fundament_plugin_folder::plugin_folder(dir.path(), &[]).unwrap_err();
        assert_eq!(err.to_string(), reader.to_string());
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
