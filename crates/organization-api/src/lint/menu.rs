//! `spec.menu`: every sidebar entry lists a CRD the console loads.

use fundament_plugin_types::outline::{Lenient, MenuOutline};

use super::Finding;
use crate::path;

pub(super) fn check(menu: &Lenient<MenuOutline>, crds: &[String], out: &mut Vec<Finding>) {
    let Some(menu) = menu.get() else { return };
    for (scope, entries) in menu.scopes() {
        let scope_at = path::field("spec.menu", scope);
        // Entries of the wrong shape were reported by the schema check.
        for (i, entry) in entries.items() {
            let at = path::field(&path::index(&scope_at, i), "crd");
            if entry.crd.is_empty() {
                out.push(Finding::error(
                    at,
                    "crd is required: the <plural>.<group> of the CRD this entry lists",
                ));
            } else if !crds.contains(&entry.crd) {
                out.push(Finding::error(
                    at,
                    format!(
                        "crd {:?} is not listed in spec.crds, so the console has no schema for it",
                        entry.crd
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_name_listed_crds() {
        let crds = vec!["a.x.io".to_string()];
        let menu = json!({
            "organization": [{"crd": "a.x.io"}],
            "project": [{"crd": "a.x.io"}, {"crd": "b.x.io"}, {"label": "No CRD"}],
        });
        let mut out = Vec::new();
        check(&serde_json::from_value(menu).unwrap(), &crds, &mut out);
        assert_eq!(
            out,
            vec![
                Finding::error(
                    "spec.menu.project[1].crd",
                    "crd \"b.x.io\" is not listed in spec.crds, so the console has no schema for it"
                ),
                Finding::error(
                    "spec.menu.project[2].crd",
                    "crd is required: the <plural>.<group> of the CRD this entry lists"
                ),
            ]
        );
    }
}
