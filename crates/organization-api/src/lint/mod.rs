//! The plugin definition linter behind `fundament plugin lint DIR`.
//!
//! It reports every problem of a plugin folder at once, each with the field
//! path it is about (`spec.menu.project[1].crd`), so an author fixes them in
//! one go. Errors break the console or the catalog; warnings are legal but
//! probably not what the author meant (or block only publishing).

use std::fmt;
use std::path::Path;

use fundament_plugin_types::outline::DefinitionOutline;
use serde_json::Value;

use crate::definition::parse_document;
use crate::schema;

mod allowed;
mod files;
mod folder;
mod guides;
mod menu;
mod metadata;
mod rbac;

/// One problem of a plugin folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Where in `definition.yaml`, e.g. `spec.menu.project[1].crd`;
    /// `definition.yaml` for problems of the whole file; the folder's file
    /// (`fixtures/demo.yaml`) for an object of `crds/`, `admission/` or
    /// `fixtures/` the installer refuses.
    pub path: String,
    /// What is wrong, and where it matters what to do instead.
    pub message: String,
    /// Whether the folder is broken or just suspicious.
    pub severity: Severity,
}

/// How bad a [`Finding`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The catalog or the console cannot use the plugin as written.
    Error,
    /// Legal, but likely a mistake, or a blocker for publishing only.
    Warning,
}

impl Finding {
    pub(crate) fn error(path: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding { path: path.into(), message: message.into(), severity: Severity::Error }
    }

    pub(crate) fn warning(path: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding { path: path.into(), message: message.into(), severity: Severity::Warning }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// `error: spec.menu.project[1].crd: <message>`, one line per finding.
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.severity, self.message)
        } else {
            write!(f, "{}: {}: {}", self.severity, self.path, self.message)
        }
    }
}

/// Whether any finding is an error (the exit status of the lint command).
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

/// Lints the plugin folder `dir`: its `definition.yaml` against the schema and
/// the rules below, the files it refers to (`console/`, `crds/`), and every
/// object of `crds/`, `admission/` and `fixtures/` the installer would refuse.
pub fn lint_dir(dir: &Path) -> Vec<Finding> {
    let file = dir.join("definition.yaml");
    let bytes = match crate::definition::read_folder_file(&file) {
        Ok(bytes) => bytes,
        Err(e) => {
            return vec![Finding::error("definition.yaml", format!("cannot read {}: {e}", file.display()))];
        }
    };
    let doc = match parse_document(&bytes) {
        Ok((_, doc)) => doc,
        Err(reason) => return vec![Finding::error("definition.yaml", reason)],
    };
    lint_document(dir, &doc)
}

/// The rules, on a parsed document. Each rule reads its part of the outline:
/// a part of the wrong shape was already reported by the schema check, and
/// the rules look at every part of the right one.
fn lint_document(dir: &Path, doc: &Value) -> Vec<Finding> {
    let mut out = schema::check(doc);
    if !doc.is_object() {
        return out;
    }
    let outline = DefinitionOutline::read(doc);
    let spec = outline.spec();
    metadata::check(&outline.metadata(), &mut out);
    if let Some(permissions) = spec.permissions.get() {
        rbac::check(&permissions.rbac, &mut out);
    }
    let crds = files::check_crds(dir, &spec.crds, &mut out);
    folder::check(dir, &crds.names, &mut out);
    menu::check(&spec.menu, &crds.names, &mut out);
    files::check_custom_components(dir, &spec.custom_components, &crds, &mut out);
    allowed::check(&spec.allowed_resources, &mut out);
    guides::check(&spec.guides, crds.kinds.as_ref(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_print_on_one_line() {
        let f = Finding::error("spec.crds[0]", "bad");
        assert_eq!(f.to_string(), "error: spec.crds[0]: bad");
        assert_eq!(Finding::warning("", "odd").to_string(), "warning: odd");
        assert!(has_errors(&[Finding::warning("a", "b"), f]));
        assert!(!has_errors(&[Finding::warning("a", "b")]));
    }

    #[test]
    fn an_unreadable_folder_is_one_error() {
        let findings = lint_dir(Path::new("/nonexistent/fundament-plugin"));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, "definition.yaml");
        assert!(
            findings[0].message.starts_with("cannot read /nonexistent/fundament-plugin/definition.yaml: ")
        );
    }
}
