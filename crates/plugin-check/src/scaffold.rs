//! `fundament plugin new NAME`: a plugin folder that works as written — a definition, the CRD of
//! one kind (`Widget`), fixtures, and custom list and detail pages using the SDK — and passes
//! `fundament plugin lint` and `fundament plugin check` as generated.

use std::path::{Path, PathBuf};

use fundament_kube_core::validation::is_dns1123_label;

use crate::CheckError;

/// The longest plugin name: its installations are `<organization>--<name>` DNS labels.
pub const MAX_NAME: usize = 40;

/// The files, by path (with `{{group}}` in it), and their templates.
const FILES: &[(&str, &str)] = &[
    ("definition.yaml", include_str!("../assets/scaffold/definition.yaml")),
    ("README.md", include_str!("../assets/scaffold/README.md")),
    ("crds/widgets.{{group}}.yaml", include_str!("../assets/scaffold/crds/widgets.yaml")),
    ("fixtures/widgets.yaml", include_str!("../assets/scaffold/fixtures/widgets.yaml")),
    ("console/_shared.js", include_str!("../assets/scaffold/console/_shared.js")),
    ("console/widgets-list.html", include_str!("../assets/scaffold/console/widgets-list.html")),
    ("console/widgets-list.js", include_str!("../assets/scaffold/console/widgets-list.js")),
    ("console/widgets-detail.html", include_str!("../assets/scaffold/console/widgets-detail.html")),
    ("console/widgets-detail.js", include_str!("../assets/scaffold/console/widgets-detail.js")),
];

/// The plugin name of a target folder: its last component, which must be a DNS label of at
/// most [`MAX_NAME`] characters.
pub fn plugin_name(dir: &Path) -> Result<String, CheckError> {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let bad = |reason: String| CheckError::BadName { name: name.clone(), reason };
    if name.is_empty() {
        return Err(bad("give the plugin's folder, e.g. `fundament plugin new my-plugin`".into()));
    }
    if name.len() > MAX_NAME {
        return Err(bad(format!(
            "at most {MAX_NAME} characters (installations are named <organization>--<name>)"
        )));
    }
    if !is_dns1123_label(&name) {
        return Err(bad(
            "a plugin name is a DNS label: lower-case letters, digits and '-', starting and ending \
                        with a letter or digit, e.g. my-plugin"
                .into(),
        ));
    }
    Ok(name)
}

/// Writes a new plugin folder at `dir` (created; it may exist only when empty). Returns the
/// files written, relative to `dir`.
pub fn new_plugin(dir: &Path) -> Result<Vec<PathBuf>, CheckError> {
    let name = plugin_name(dir)?;
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(CheckError::NotEmpty(dir.to_path_buf()));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(CheckError::io(dir, e)),
    }
    let title = title(&name);
    let group = format!("{name}.example.io");
    let fill = |text: &str| {
        text.replace("{{name}}", &name).replace("{{title}}", &title).replace("{{group}}", &group)
    };
    let mut written = Vec::new();
    for (path, template) in FILES {
        let relative = PathBuf::from(fill(path));
        let file = dir.join(&relative);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CheckError::io(parent, e))?;
        }
        std::fs::write(&file, fill(template)).map_err(|e| CheckError::io(&file, e))?;
        written.push(relative);
    }
    Ok(written)
}

/// `my-plugin` → `My Plugin`.
fn title(name: &str) -> String {
    name.split('-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_short_dns_labels() {
        assert_eq!(plugin_name(Path::new("some/dir/my-plugin")).unwrap(), "my-plugin");
        for bad in ["My_Plugin", "-x", "x-", "a.b", &"x".repeat(41)] {
            let err = plugin_name(Path::new(bad)).unwrap_err().to_string();
            assert!(err.starts_with(&format!("invalid plugin name {bad:?}")), "{err}");
        }
        assert_eq!(title("my-first-plugin"), "My First Plugin");
    }

    #[test]
    fn refuses_a_folder_with_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("taken");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("x"), "").unwrap();
        let err = new_plugin(&dir).unwrap_err().to_string();
        assert!(err.ends_with("exists and is not empty; pick a new folder"), "{err}");
    }

    #[test]
    fn writes_a_folder_that_lints_clean() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("my-plugin");
        std::fs::create_dir(&dir).unwrap(); // an empty folder is fine
        let files = new_plugin(&dir).unwrap();
        assert!(files.contains(&PathBuf::from("crds/widgets.my-plugin.example.io.yaml")));
        let findings = fundament_organization_api::lint::lint_dir(&dir);
        let errors: Vec<String> = findings
            .iter()
            .filter(|f| f.severity == fundament_organization_api::lint::Severity::Error)
            .map(|f| f.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let text = std::fs::read_to_string(dir.join("definition.yaml")).unwrap();
        assert!(!text.contains("{{"), "{text}");
    }
}
