//! The plugin folder as the check needs it: its definition, the kinds of its CRDs, its
//! fixtures (what the mock Kubernetes API serves) and the pages to run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fundament_plugin_types::{AllowedResource, PluginDefinition, ResourceRequest};
use serde::Deserialize;
use serde_json::Value;

use crate::CheckError;
use crate::files::{self, MAX_YAML, Refused};
use crate::finding::CheckedPage;

/// Where a kind lives in the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindInfo {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub namespaced: bool,
}

/// A plugin folder, read.
#[derive(Debug, Clone)]
pub struct PluginFolder {
    pub dir: PathBuf,
    pub definition: PluginDefinition,
    /// By kind, from `crds/*.yaml`.
    pub kinds: BTreeMap<String, KindInfo>,
    /// Every object of `fixtures/*.yaml`.
    pub fixtures: Vec<Value>,
}

impl PluginFolder {
    /// Reads `dir`: `definition.yaml` (strictly, as the catalog does), `crds/`, `fixtures/`.
    pub fn read(dir: &Path) -> Result<PluginFolder, CheckError> {
        check_files(dir)?;
        let definition = fundament_organization_api::read_definition(dir)?.document;
        let mut kinds = BTreeMap::new();
        for crd in yaml_documents(dir, "crds")? {
            if let Some((kind, info)) = kind_of_crd(&crd) {
                kinds.insert(kind, info);
            }
        }
        let fixtures = yaml_documents(dir, "fixtures")?;
        Ok(PluginFolder { dir: dir.to_path_buf(), definition, kinds, fixtures })
    }

    /// The pages of `spec.customComponents`, as `console/<file>`, each with its kind and view.
    pub fn pages(&self) -> Vec<CheckedPage> {
        let mut pages = Vec::new();
        for (kind, views) in &self.definition.spec.custom_components {
            for (view, file) in [("list", &views.list), ("detail", &views.detail), ("create", &views.create)]
            {
                if let Some(file) = file {
                    pages.push(CheckedPage { file: format!("console/{file}"), kind: kind.clone(), view });
                }
            }
        }
        pages
    }

    /// Whether `spec.allowedResources` admits the request.
    pub fn admits(&self, request: &ResourceRequest<'_>) -> bool {
        self.allowed().iter().any(|a| a.admits(request))
    }

    fn allowed(&self) -> &[AllowedResource] {
        &self.definition.spec.allowed_resources
    }

    /// The first fixture of `kind` (what a detail page is opened on).
    pub fn first_fixture(&self, kind: &str) -> Option<&Value> {
        self.fixtures.iter().find(|o| o["kind"] == kind)
    }

    /// The fixtures of a resource (`group`, `version`, plural `resource`) in `namespace`
    /// (all namespaces when `None`).
    pub fn fixtures_of<'a>(
        &'a self,
        group: &'a str,
        resource: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.fixtures.iter().filter(move |o| {
            let (g, _) = group_version(o);
            g == group
                && self.plural_of(o).as_deref() == Some(resource)
                && namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns))
        })
    }

    /// The plural resource name of an object: from the CRDs, else the kind lowercased plus `s`
    /// (right for the core kinds a plugin's fixtures hold: events, pods, secrets, configmaps).
    fn plural_of(&self, object: &Value) -> Option<String> {
        let kind = object["kind"].as_str()?;
        Some(match self.kinds.get(kind) {
            Some(info) => info.plural.clone(),
            None => format!("{}s", kind.to_ascii_lowercase()),
        })
    }
}

/// `(group, version)` of an object's `apiVersion` (`v1` is the core group).
pub fn group_version(object: &Value) -> (&str, &str) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The kind a CRD defines and where it lives (its storage version, else the first).
fn kind_of_crd(crd: &Value) -> Option<(String, KindInfo)> {
    let spec = &crd["spec"];
    let kind = spec["names"]["kind"].as_str()?.to_string();
    let versions = spec["versions"].as_array()?;
    let version = versions.iter().find(|v| v["storage"] == true).or(versions.first())?;
    let info = KindInfo {
        group: spec["group"].as_str()?.to_string(),
        version: version["name"].as_str()?.to_string(),
        plural: spec["names"]["plural"].as_str()?.to_string(),
        namespaced: spec["scope"].as_str() != Some("Cluster"),
    };
    Some((kind, info))
}

/// Refuses a folder whose YAML files (`definition.yaml`, `crds/*.yaml`, `fixtures/*.yaml`) are
/// not regular files inside it of at most [`MAX_YAML`] bytes, before anything reads them: lint
/// and the catalog's reader read them as they are, and their messages quote what they read
/// (a `definition.yaml -> ~/.kube/config` would land in the report).
pub fn check_files(dir: &Path) -> Result<(), CheckError> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CheckError::NoFolder(dir.to_path_buf()));
        }
        Ok(meta) if !meta.is_dir() => return Err(CheckError::NotAFolder(dir.to_path_buf())),
        _ => {}
    }
    let definition = dir.join("definition.yaml");
    match files::resolve_inside(dir, &definition, MAX_YAML) {
        Ok(_) => {}
        Err(Refused::NotFound) => return Err(CheckError::NoDefinition(dir.to_path_buf())),
        Err(reason) => return Err(refused(&definition, reason)),
    }
    for sub in ["crds", "fixtures"] {
        for file in yaml_files(dir, sub)? {
            files::resolve_inside(dir, &file, MAX_YAML).map_err(|reason| refused(&file, reason))?;
        }
    }
    Ok(())
}

/// Why `path` is not read: an I/O error as such, else a refusal.
fn refused(path: &Path, reason: Refused) -> CheckError {
    match reason {
        Refused::Io(e) => CheckError::io(path, e),
        reason => CheckError::Refused { path: path.to_path_buf(), reason },
    }
}

/// The `*.yaml`/`*.yml` entries of the plugin folder's `sub` (none when it does not exist), in
/// file name order. `sub` itself must lie inside the folder.
fn yaml_files(dir: &Path, sub: &str) -> Result<Vec<PathBuf>, CheckError> {
    let folder = dir.join(sub);
    if files::subfolder_inside(dir, sub).map_err(|reason| refused(&folder, reason))?.is_none() {
        return Ok(Vec::new());
    }
    // Listed under the path as given, so that errors name the files as the author knows them.
    let entries = std::fs::read_dir(&folder).map_err(|e| CheckError::io(&folder, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every YAML document of every `*.yaml`/`*.yml` file in the plugin folder's `sub`, in file
/// name order, each file read as [`check_files`] admits it. A file that is not YAML is
/// skipped: lint reports it.
fn yaml_documents(dir: &Path, sub: &str) -> Result<Vec<Value>, CheckError> {
    let mut out = Vec::new();
    for file in yaml_files(dir, sub)? {
        let bytes = files::read_inside(dir, &file, MAX_YAML).map_err(|reason| refused(&file, reason))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            CheckError::io(&file, std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"))
        })?;
        for doc in serde_yaml::Deserializer::from_str(&text) {
            if let Ok(value) = Value::deserialize(doc)
                && value.is_object()
            {
                out.push(value);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugins() -> PathBuf {
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
            .join("../../plugins")
    }

    #[test]
    fn reads_kinds_fixtures_and_pages() {
        let p = PluginFolder::read(&plugins().join("cert-manager")).unwrap();
        let cert = &p.kinds["Certificate"];
        assert_eq!(
            (cert.group.as_str(), cert.plural.as_str(), cert.namespaced),
            ("cert-manager.io", "certificates", true)
        );
        assert!(!p.kinds["ClusterIssuer"].namespaced);
        assert_eq!(p.pages().len(), 8);
        assert!(p.first_fixture("Certificate").is_some());
        assert!(p.fixtures_of("cert-manager.io", "certificates", None).count() > 0);
        assert!(p.fixtures_of("", "events", None).count() > 0, "core kinds get a plural too");
    }

    /// A scaffolded plugin folder (regular files only) to plant things in.
    fn scaffolded() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("my-plugin");
        crate::scaffold::new_plugin(&dir).unwrap();
        (tmp, dir)
    }

    /// Reads `dir` on a thread of its own, so that a read that hangs fails the test instead.
    fn read_quickly(dir: &Path) -> Result<PluginFolder, CheckError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send((check_files(&dir), PluginFolder::read(&dir)));
        });
        let (checked, read) =
            rx.recv_timeout(std::time::Duration::from_secs(5)).expect("hung reading the folder");
        match (checked, read) {
            (Ok(()), read) => read,
            (Err(e), Err(_)) => Err(e),
            (Err(e), Ok(_)) => panic!("check_files refused what read accepted: {e}"),
        }
    }

    #[test]
    fn a_fixture_fifo_is_refused_quickly() {
        let (_tmp, dir) = scaffolded();
        let fifo = dir.join("fixtures/pipe.yaml");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let err = read_quickly(&dir).unwrap_err();
        assert!(matches!(err, CheckError::Refused { reason: Refused::NotRegular, .. }), "{err}");
        assert!(err.to_string().contains("pipe.yaml is refused: it is not a regular file"), "{err}");
    }

    #[test]
    fn a_fixture_symlink_to_a_device_or_out_of_the_folder_is_refused() {
        let (tmp, dir) = scaffolded();
        std::os::unix::fs::symlink("/dev/zero", dir.join("fixtures/zero.yaml")).unwrap();
        let err = read_quickly(&dir).unwrap_err();
        assert!(matches!(err, CheckError::Refused { reason: Refused::Outside(_), .. }), "{err}");
        std::fs::remove_file(dir.join("fixtures/zero.yaml")).unwrap();
        // definition.yaml, and a whole fixtures/ elsewhere.
        std::fs::write(tmp.path().join("config"), "apiVersion: v1\nkind: Config\n").unwrap();
        std::fs::rename(dir.join("definition.yaml"), dir.join("real.yaml")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("config"), dir.join("definition.yaml")).unwrap();
        let err = read_quickly(&dir).unwrap_err();
        assert!(matches!(err, CheckError::Refused { reason: Refused::Outside(_), .. }), "{err}");
        std::fs::remove_file(dir.join("definition.yaml")).unwrap();
        std::os::unix::fs::symlink("real.yaml", dir.join("definition.yaml")).unwrap();
        assert!(read_quickly(&dir).is_ok(), "a symlink inside the folder is fine");
        std::fs::rename(dir.join("fixtures"), tmp.path().join("fixtures")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("fixtures"), dir.join("fixtures")).unwrap();
        let err = read_quickly(&dir).unwrap_err();
        assert!(matches!(err, CheckError::Refused { reason: Refused::Outside(_), .. }), "{err}");
    }

    #[test]
    fn a_big_fixture_is_refused() {
        let (_tmp, dir) = scaffolded();
        let big = std::fs::File::create(dir.join("fixtures/big.yaml")).unwrap();
        big.set_len(MAX_YAML + 1).unwrap();
        let err = read_quickly(&dir).unwrap_err();
        assert!(matches!(err, CheckError::Refused { reason: Refused::TooLarge { .. }, .. }), "{err}");
    }

    #[test]
    fn a_folder_without_definition_is_named() {
        let err = PluginFolder::read(Path::new("/nonexistent")).unwrap_err();
        assert_eq!(err.to_string(), "/nonexistent: no such folder");
        let dir = tempfile::tempdir().unwrap();
        let err = PluginFolder::read(dir.path()).unwrap_err();
        assert_eq!(err.to_string(), format!("{}: no definition.yaml in that folder", dir.path().display()));
        let file = dir.path().join("definition.yaml");
        std::fs::write(&file, "kind: x\n").unwrap();
        let err = PluginFolder::read(&file).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: not a folder; give the plugin's folder (the one holding definition.yaml)",
                file.display()
            )
        );
    }
}
