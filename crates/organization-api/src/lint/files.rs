//! The files a definition refers to: `crds/<name>.yaml` for every entry of
//! `spec.crds`, `console/<file>` for every page of `spec.customComponents`.

use fundament_kube_core::validation::is_dns1123_label;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fundament_kube_core::DynamicObject;
use fundament_plugin_types::CustomComponents;
use fundament_plugin_types::outline::{Entries, Items};
use serde::Deserialize;
use serde_json::Value;

use super::Finding;
use crate::path;

/// What the linter learned from `spec.crds` and the CRD files.
pub(super) struct Crds {
    /// The entries of `spec.crds`.
    pub names: Vec<String>,
    /// The kinds of those CRDs; `None` when a CRD file is missing or broken,
    /// so kinds cannot be checked.
    pub kinds: Option<BTreeSet<String>>,
}

pub(super) fn check_crds(dir: &Path, crds: &Items<String>, out: &mut Vec<Finding>) -> Crds {
    let mut names: Vec<String> = Vec::new();
    // Kind → the CRD that has it; complete only if every CRD file was read.
    let mut kinds: BTreeMap<String, String> = BTreeMap::new();
    let mut complete = true;
    for (j, name) in crds.items() {
        let at = path::index("spec.crds", j);
        if names.iter().any(|n| n == name) {
            out.push(Finding::warning(at, format!("{name:?} is listed twice")));
            continue;
        }
        names.push(name.clone());
        if !is_crd_name(name) {
            out.push(Finding::error(
                at,
                format!(
                    "{name:?} must be a CRD name <plural>.<group>, e.g. \"certificates.cert-manager.io\""
                ),
            ));
            complete = false;
            continue;
        }
        match crd_kind(dir, name, &at) {
            // customComponents is keyed by kind (upstream gap 23).
            Ok(kind) => match kinds.get(&kind) {
                Some(other) => out.push(Finding::warning(
                    at,
                    format!(
                        "{name:?} has kind {kind:?} like {other:?}: customComponents, keyed by kind, \
                         cannot tell their pages apart"
                    ),
                )),
                None => {
                    kinds.insert(kind, name.to_string());
                }
            },
            Err(finding) => {
                out.push(finding);
                complete = false;
            }
        }
    }
    Crds { names, kinds: complete.then(|| kinds.into_keys().collect()) }
}

/// The kind (`spec.names.kind`) of `crds/<name>.yaml`, or what is wrong with it.
fn crd_kind(dir: &Path, name: &str, at: &str) -> Result<String, Finding> {
    let relative = format!("crds/{name}.yaml");
    let file = dir.join(&relative);
    if !file.is_file() {
        return Err(Finding::warning(
            at,
            format!(
                "file {relative} does not exist: the embedded cluster cannot serve this resource and the \
                 console has no schema for its generated views"
            ),
        ));
    }
    let invalid = |reason: String| Finding::error(at, format!("{relative}: {reason}"));
    let doc: Value = crate::definition::read_folder_file(&file)
        .map_err(|e| e.to_string())
        .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned()))
        .and_then(|text| crate::definition::parse_yaml(&text))
        .map_err(invalid)?;
    let crd = DynamicObject::from_value(doc).map_err(|e| invalid(e.to_string()))?;
    let defined = crd.metadata.name.as_str();
    if crd.types.kind != "CustomResourceDefinition" || defined != name {
        return Err(Finding::error(
            at,
            format!("{relative} must be the CustomResourceDefinition {name:?}, found {defined:?}"),
        ));
    }
    let spec = crd.field::<CrdSpec>("spec").map_err(|e| invalid(format!("spec: {e}")))?;
    Ok(spec.map(|spec| spec.names.kind).unwrap_or_default())
}

/// The part of a CRD's `spec` the linter reads.
#[derive(Deserialize)]
struct CrdSpec {
    #[serde(default)]
    names: CrdNames,
}

#[derive(Default, Deserialize)]
struct CrdNames {
    #[serde(default)]
    kind: String,
}

/// `<plural>.<group>`: lower-case DNS labels, at least two.
fn is_crd_name(name: &str) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    labels.len() >= 2 && labels.iter().all(|l| is_dns1123_label(l))
}

/// Every page of `spec.customComponents` names a file under `console/`, for a kind the plugin has.
pub(super) fn check_custom_components(
    dir: &Path,
    components: &Entries<CustomComponents>,
    crds: &Crds,
    out: &mut Vec<Finding>,
) {
    // Pages of the wrong shape were reported by the schema check.
    for (kind, views) in components.entries() {
        let at = path::field("spec.customComponents", kind);
        let pages = [("list", &views.list), ("detail", &views.detail), ("create", &views.create)];
        if pages.iter().all(|(_, file)| file.is_none()) {
            out.push(Finding::warning(&at, "defines no page (list, detail or create)"));
        }
        for (view, file) in pages {
            let Some(file) = file else { continue };
            let view_at = path::field(&at, view);
            if !is_relative_file(file) {
                out.push(Finding::error(
                    view_at,
                    format!(
                        "{file:?} must be a file name relative to console/ (no leading \"/\", no \"..\")"
                    ),
                ));
            } else if !dir.join("console").join(file).is_file() {
                out.push(Finding::error(view_at, format!("file console/{file} does not exist")));
            }
        }
        if let Some(kinds) = &crds.kinds
            && !kinds.contains(kind)
        {
            out.push(Finding::warning(
                at,
                format!("no CRD in spec.crds has kind {kind:?}, so the console never shows these pages"),
            ));
        }
    }
}

/// A path inside `console/`: relative, without `..`, `\` or URL syntax, since
/// plugin-proxy serves it as part of a URL.
fn is_relative_file(file: &str) -> bool {
    !file.is_empty()
        && !file.starts_with('/')
        && !file.contains(['\\', '?', '#'])
        && file.split('/').all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_names_are_plural_dot_group() {
        assert!(is_crd_name("certificates.cert-manager.io"));
        assert!(is_crd_name("demoitems.demo.fundament.io"));
        assert!(!is_crd_name("certificates"));
        assert!(!is_crd_name("Certificates.cert-manager.io"));
        assert!(!is_crd_name("certificates..io"));
    }

    #[test]
    fn console_files_stay_inside_console() {
        assert!(is_relative_file("certificates-list.html"));
        assert!(is_relative_file("pages/list.html"));
        for bad in ["", "/etc/passwd", "../x.html", "a/../../x", "a\\b", "x.html?v=1", "./x.html", "a//b"] {
            assert!(!is_relative_file(bad), "{bad}");
        }
    }
}
