//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The example plugins of the repository, found when the tests run: a path or file compiled in
/// would tie the test binary to the clone that built it (every clone shares one target dir).
pub fn plugins_dir() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
        .join("../../plugins")
}

/// Copies a folder tree (the example plugins are small).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Writes `dir/definition.yaml`.
pub fn write_definition(dir: &Path, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("definition.yaml"), text).unwrap();
}

/// A valid development definition of a plugin with one CRD, `things.x.io`,
/// kind `Thing`. Tests replace parts of it to break one rule at a time.
pub const BASE: &str = "\
apiVersion: fundament.io/v1
kind: PluginDefinition
metadata:
  name: things
  displayName: Things
  version: v1.0.0
spec:
  permissions:
    rbac:
    - apiGroups: [x.io]
      resources: [things]
      verbs: [get, list, watch]
  menu:
    project:
    - crd: things.x.io
      list: true
      detail: true
      label: Things
  crds:
  - things.x.io
  customComponents:
    Thing:
      list: things-list.html
  allowedResources:
  - group: x.io
    version: v1
    resource: things
    verbs: [get, list, watch]
";

/// The CRD file of `things.x.io`.
pub const THINGS_CRD: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.x.io
spec:
  group: x.io
  names: {kind: Thing, plural: things, singular: thing, listKind: ThingList}
  scope: Namespaced
  versions: []
";

/// A plugin folder with `definition` and the files BASE refers to.
pub fn plugin_folder(root: &Path, definition: &str) -> PathBuf {
    let dir = root.join("things");
    write_definition(&dir, definition);
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    std::fs::write(dir.join("crds/things.x.io.yaml"), THINGS_CRD).unwrap();
    std::fs::create_dir_all(dir.join("console")).unwrap();
    std::fs::write(dir.join("console/things-list.html"), "<!doctype html>").unwrap();
    dir
}
