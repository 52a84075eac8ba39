//! A plugin folder's `crds/`, `admission/` and `fixtures/`, read as the
//! installer applies them, and judged as a whole by
//! [`fundament_plugin_types::folder_objects`]' allow-list.
//!
//! The installer ([`plugin_folder`]) stops at the first problem, before
//! anything of the folder is written; `fundament plugin lint` ([`problems`])
//! reports every one, in the same order and the same words, so a folder lint
//! passes is one the installer takes. One reader for both: a linter with
//! reading rules of its own would pass folders the installer refuses.
//!
//! Each part's YAML files are read in name order (a missing directory has
//! none), each file's documents bounded in nesting and in what its aliases
//! repeat ([`bounded_value::yaml_documents`]), and every document must be a
//! Kubernetes object with `apiVersion`, `kind` and `metadata.name`. The
//! installer reads the platform's own `fixtures/cluster` with the same
//! [`directory`] and [`files`].

#![forbid(unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};

use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use fundament_plugin_types::folder_objects::{self, MAX_FOLDER_YAML, Part, Refusal};
use kube::core::DynamicObject;
use serde_json::Value;

/// An object by kind, namespace and name, as messages name it
/// (`Certificate default/web-tls-cert`, `ClusterRole fundament-read-only`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectName {
    pub kind: String,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
}

impl ObjectName {
    pub fn of(kind: &str, object: &DynamicObject) -> ObjectName {
        ObjectName {
            kind: kind.to_string(),
            namespace: object.metadata.namespace.clone().unwrap_or_default(),
            name: object.metadata.name.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace.as_str() {
            "" => write!(f, "{} {}", self.kind, self.name),
            ns => write!(f, "{} {ns}/{}", self.kind, self.name),
        }
    }
}

/// Why a folder (or a file of it) is not applied: its path, and what
/// [`FolderError::detail`] says of it.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Not YAML, or not an object with `apiVersion`, `kind` and `metadata.name`.
    #[error("{path}: {}", self.detail())]
    Document { path: PathBuf, index: usize, detail: String },
    /// A document a plugin folder may not put on a cluster
    /// ([`fundament_plugin_types::folder_objects`]): nothing of the plugin is written.
    #[error("{path}: {}", self.detail())]
    NotAllowed { path: PathBuf, index: usize, object: ObjectName, refusal: Box<Refusal> },
}

impl FolderError {
    /// The file (or directory) it is about.
    pub fn path(&self) -> &Path {
        match self {
            FolderError::Io { path, .. }
            | FolderError::Document { path, .. }
            | FolderError::NotAllowed { path, .. } => path,
        }
    }

    /// What is wrong with [`FolderError::path`], without the path: `document 2
    /// (Secret default/creds): fixtures/ may hold only …: the plugin is not
    /// installed`.
    pub fn detail(&self) -> String {
        match self {
            FolderError::Io { source, .. } => format!("cannot read it: {source}"),
            FolderError::Document { index, detail, .. } => format!("document {index}: {detail}"),
            FolderError::NotAllowed { index, object, refusal, .. } => {
                format!("document {index} ({object}): {refusal}: the plugin is not installed")
            }
        }
    }
}

/// One object of a file, and where it came from.
#[derive(Debug, Clone)]
pub struct Document {
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
pub fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, FolderError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(FolderError::Io { path: dir.to_path_buf(), source }),
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
pub fn documents(path: &Path) -> Result<Vec<Document>, FolderError> {
    let text = fundament_bounded_file::read_to_string(path, MAX_FOLDER_YAML)
        .map_err(|e| FolderError::Io { path: path.to_path_buf(), source: e.into_io() })?;
    let mut docs = Vec::new();
    // A plugin folder's file comes from its author: bounded in nesting and in values (an alias
    // repeats what it names), all documents of the file sharing one budget. Judged one at a
    // time: a bad object is reported before a later document that is not YAML.
    for doc in bounded_value::yaml_documents(&text, RepeatedKeys::LastWins) {
        let (index, value) = doc.map_err(|e| FolderError::Document {
            path: path.to_path_buf(),
            index: e.index(),
            detail: format!("not YAML: {e}"),
        })?;
        let fail = |detail: String| FolderError::Document { path: path.to_path_buf(), index, detail };
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
pub fn directory(dir: &Path) -> Result<Vec<Document>, FolderError> {
    files(&yaml_files(dir)?)
}

/// The objects of `files`, in order, namespaces first.
pub fn files(files: &[PathBuf]) -> Result<Vec<Document>, FolderError> {
    let mut docs = Vec::new();
    for f in files {
        docs.extend(documents(f)?);
    }
    namespaces_first(&mut docs);
    Ok(docs)
}

/// Stable: otherwise in file and document order, as the embedded cluster loads them.
fn namespaces_first(docs: &mut [Document]) {
    docs.sort_by_key(|d| d.kind() != "Namespace");
}

/// The documents of a plugin folder's `crds/`, `admission/` and `fixtures/`,
/// each with its part, once the folder as a whole may be put on a cluster
/// ([`folder_objects::first_refused`]): one document it may not put there
/// refuses the whole folder, before anything of it is written. `listed_crds`
/// is the definition's `spec.crds`. The error is the first of [`problems`].
pub fn plugin_folder(dir: &Path, listed_crds: &[String]) -> Result<Vec<(Part, Document)>, FolderError> {
    let mut docs = Vec::new();
    for part in Part::ALL {
        docs.extend(directory(&dir.join(part.dir()))?.into_iter().map(|doc| (part, doc)));
    }
    match refused(listed_crds, &docs)?.into_iter().next() {
        Some(refused) => Err(refused),
        None => Ok(docs),
    }
}

/// Every reason the installer has to refuse the plugin folder `dir` (empty:
/// [`plugin_folder`] takes it), in the order it meets them, so the first is
/// the one it names. Each file that cannot be read is one; a folder with any
/// is not judged by the allow-list, whose verdict on the rest would be wrong
/// (a fixture of a CRD that could not be read is not of the folder's kinds).
pub fn problems(dir: &Path, listed_crds: &[String]) -> Vec<FolderError> {
    let mut problems = Vec::new();
    let mut docs = Vec::new();
    for part in Part::ALL {
        let files = yaml_files(&dir.join(part.dir())).unwrap_or_else(|e| {
            problems.push(e);
            Vec::new()
        });
        let mut read = Vec::new();
        for file in files {
            match documents(&file) {
                Ok(file_docs) => read.extend(file_docs),
                Err(e) => problems.push(e),
            }
        }
        namespaces_first(&mut read);
        docs.extend(read.into_iter().map(|doc| (part, doc)));
    }
    if !problems.is_empty() {
        return problems;
    }
    refused(listed_crds, &docs).unwrap_or_else(|e| vec![e])
}

/// Every document of `docs` the folder may not hold ([`folder_objects::refusals`]), in order.
fn refused(listed_crds: &[String], docs: &[(Part, Document)]) -> Result<Vec<FolderError>, FolderError> {
    let values = docs
        .iter()
        .map(|(part, doc)| {
            let value = serde_json::to_value(&doc.object).map_err(|e| FolderError::Document {
                path: doc.path.clone(),
                index: doc.index,
                detail: format!("not a Kubernetes object: {e}"),
            })?;
            Ok((*part, value))
        })
        .collect::<Result<Vec<_>, FolderError>>()?;
    let judged: Vec<(Part, &Value)> = values.iter().map(|(part, value)| (*part, value)).collect();
    Ok(folder_objects::refusals(listed_crds, &judged)
        .map(|refused| {
            let (_, doc) = &docs[refused.position];
            FolderError::NotAllowed {
                path: doc.path.clone(),
                index: doc.index,
                object: ObjectName::of(doc.kind(), &doc.object),
                refusal: Box::new(refused.refusal),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
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

    #[test]
    fn a_folder_with_an_object_it_may_not_hold_is_refused_naming_file_document_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "fixtures/grab.yaml",
            "apiVersion: v1\nkind: Event\nmetadata: {name: e, namespace: default}\n---\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: grab}\n\
             roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n",
        );
        let err = plugin_folder(dir.path(), &[]).unwrap_err();
        assert!(matches!(&err, FolderError::NotAllowed { index: 2, .. }), "{err:?}");
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
        assert_eq!(message, format!("{}: {}", err.path().display(), err.detail()));
    }

    const WIDGETS: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata: {name: widgets.example.io}\n\
        spec: {group: example.io, scope: Namespaced, names: {plural: widgets, kind: Widget}}\n";
    const GADGETS: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata: {name: gadgets.example.io}\n\
        spec: {group: example.io, scope: Namespaced, names: {plural: gadgets, kind: Gadget}}\n";

    /// What the installer refuses first is what lint names first, and lint names the rest too.
    #[test]
    fn problems_are_every_refusal_the_first_being_the_installers() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "crds/widgets.example.io.yaml", WIDGETS);
        write(dir.path(), "crds/gadgets.example.io.yaml", GADGETS);
        write(
            dir.path(),
            "fixtures/demo.yaml",
            "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n---\n\
             apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\n",
        );
        let listed = ["widgets.example.io".to_string()];
        let found: Vec<String> = problems(dir.path(), &listed).iter().map(ToString::to_string).collect();
        let crd = dir.path().join("crds/gadgets.example.io.yaml");
        let fixture = dir.path().join("fixtures/demo.yaml");
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0],
            format!(
                "{}: document 0 (CustomResourceDefinition gadgets.example.io): the CRD \
                 \"gadgets.example.io\" is not listed in the definition's spec.crds: the plugin is not installed",
                crd.display()
            )
        );
        assert!(
            found[1].starts_with(&format!(
                "{}: document 1 (Secret default/creds): fixtures/ may hold only objects of the kinds this \
                 plugin's crds/ define",
                fixture.display()
            )),
            "{}",
            found[1]
        );
        assert_eq!(plugin_folder(dir.path(), &listed).unwrap_err().to_string(), found[0]);
        // Listed, and without the Secret: nothing to refuse, for either.
        let both = ["widgets.example.io".to_string(), "gadgets.example.io".to_string()];
        write(
            dir.path(),
            "fixtures/demo.yaml",
            "apiVersion: example.io/v1\nkind: Gadget\nmetadata: {name: g}\n",
        );
        assert!(problems(dir.path(), &both).is_empty());
        assert_eq!(plugin_folder(dir.path(), &both).unwrap().len(), 3);
    }

    #[test]
    fn problems_name_every_file_that_cannot_be_read_and_judge_no_further() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "crds/widgets.yaml", &format!("{WIDGETS}---\nkind: Widget\n"));
        write(dir.path(), "fixtures/a.yaml", "apiVersion: example.io/v1\nkind: Widget\n");
        write(dir.path(), "fixtures/b.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n");
        let found: Vec<String> = problems(dir.path(), &[]).iter().map(FolderError::detail).collect();
        assert_eq!(
            found,
            ["document 1: apiVersion and kind are required", "document 0: metadata.name is required"]
        );
        assert_eq!(
            plugin_folder(dir.path(), &[]).unwrap_err().to_string(),
            format!("{}: {}", dir.path().join("crds/widgets.yaml").display(), found[0])
        );
    }
}
