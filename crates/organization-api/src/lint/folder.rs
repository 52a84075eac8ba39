//! `crds/`, `admission/` and `fixtures/`: what the installer puts on a cluster with its own
//! (admin) rights, held to an allow-list (`fundament_plugin_types::folder_objects`). The
//! folder is read and judged by the installer's own reader ([`fundament_plugin_folder`]), so
//! every object it would refuse is an error here, in its words: a folder lint passes is one
//! `fundament dev --plugin` installs.

use std::path::Path;

use super::Finding;

/// One error per file that cannot be read, or per document the folder may not hold, at the
/// file's path in the folder (`fixtures/demo.yaml`); `listed_crds` is `spec.crds`.
pub(super) fn check(dir: &Path, listed_crds: &[String], out: &mut Vec<Finding>) {
    for problem in fundament_plugin_folder::problems(dir, listed_crds) {
        let file = problem.path().strip_prefix(dir).unwrap_or(problem.path());
        out.push(Finding::error(file.display().to_string(), problem.detail()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::Severity;

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const WIDGETS: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata: {name: widgets.example.io}\n\
        spec: {group: example.io, scope: Namespaced, names: {plural: widgets, kind: Widget}}\n";

    fn run(dir: &Path, listed: &[&str]) -> Vec<(Severity, String, String)> {
        let listed: Vec<String> = listed.iter().map(ToString::to_string).collect();
        let mut out = Vec::new();
        check(dir, &listed, &mut out);
        out.into_iter().map(|f| (f.severity, f.path, f.message)).collect()
    }

    #[test]
    fn a_folder_of_its_own_kinds_is_clean() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "crds/widgets.example.io.yaml", WIDGETS);
        write(
            dir.path(),
            "fixtures/w.yaml",
            "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w}\n",
        );
        assert_eq!(run(dir.path(), &["widgets.example.io"]), vec![]);
        assert_eq!(run(dir.path(), &[]), vec![], "a definition that lists no CRDs");
    }

    #[test]
    fn every_file_that_cannot_be_read_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "crds/widgets.example.io.yaml", WIDGETS);
        write(dir.path(), "fixtures/a.yaml", "apiVersion: example.io/v1\nkind: Widget\n");
        write(dir.path(), "fixtures/b.yaml", "- [\n");
        let found = run(dir.path(), &[]);
        let files: Vec<&str> = found.iter().map(|(_, file, _)| file.as_str()).collect();
        assert_eq!(files, ["fixtures/a.yaml", "fixtures/b.yaml"]);
        assert_eq!(found[0].2, "document 0: metadata.name is required");
        assert!(found[1].2.starts_with("document 0: not YAML"), "{}", found[1].2);
    }
}
