//! `spec.allowedResources`: what the gateway lets the plugin's pages ask for.
//! An entry the gateway cannot match is a silent "forbidden" later.

use fundament_plugin_types::outline::{AllowedResourceOutline, Items, Lenient};

use super::Finding;
use crate::path;

/// The verbs of API requests the gateway classifies; nothing else can match.
pub(crate) const REQUEST_VERBS: [&str; 8] =
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];

pub(super) fn check(entries: &Items<AllowedResourceOutline>, out: &mut Vec<Finding>) {
    for (k, entry) in entries.items() {
        check_entry(&path::index("spec.allowedResources", k), entry, out);
    }
}

fn check_entry(at: &str, entry: &AllowedResourceOutline, out: &mut Vec<Finding>) {
    if entry.group.is_absent() {
        out.push(Finding::error(path::field(at, "group"), "group is required (use \"\" for the core group)"));
    }
    // A part of the wrong type was reported by the schema check.
    let empty = |part: &Lenient<String>| part.is_absent() || part.get().is_some_and(String::is_empty);
    if empty(&entry.version) {
        out.push(Finding::error(path::field(at, "version"), "version is required, e.g. \"v1\""));
    }
    if empty(&entry.resource) {
        out.push(Finding::error(
            path::field(at, "resource"),
            "resource is required: the lower-case plural, e.g. \"certificates\"",
        ));
    }
    let verbs_at = path::field(at, "verbs");
    if !entry.verbs.has_items() {
        out.push(Finding::error(&verbs_at, "verbs is required and must not be empty"));
    }
    for (j, verb) in entry.verbs.items() {
        if !REQUEST_VERBS.contains(&verb.as_str()) {
            out.push(Finding::error(
                path::index(&verbs_at, j),
                format!("verb {verb:?} is not one of {}", REQUEST_VERBS.join(", ")),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn run(entry: Value) -> Vec<Finding> {
        let mut out = Vec::new();
        check(&serde_json::from_value(json!([entry])).unwrap(), &mut out);
        out
    }

    #[test]
    fn core_group_is_the_empty_string() {
        assert_eq!(
            run(json!({"group": "", "version": "v1", "resource": "events", "verbs": ["get"]})),
            vec![]
        );
    }

    #[test]
    fn every_part_is_required_and_verbs_are_request_verbs() {
        let at = "spec.allowedResources[0]";
        assert_eq!(
            run(json!({"version": "", "verbs": ["get", "serve"]})),
            vec![
                Finding::error(format!("{at}.group"), "group is required (use \"\" for the core group)"),
                Finding::error(format!("{at}.version"), "version is required, e.g. \"v1\""),
                Finding::error(
                    format!("{at}.resource"),
                    "resource is required: the lower-case plural, e.g. \"certificates\""
                ),
                Finding::error(
                    format!("{at}.verbs[1]"),
                    "verb \"serve\" is not one of get, list, watch, create, update, patch, delete, deletecollection"
                ),
            ]
        );
        assert_eq!(
            run(json!({"group": "x.io", "version": "v1", "resource": "things", "verbs": []})),
            vec![Finding::error(format!("{at}.verbs"), "verbs is required and must not be empty")]
        );
    }
}
