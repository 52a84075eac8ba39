//! `spec.allowedResources`: what the gateway lets the plugin's pages ask for.
//! An entry the gateway cannot match is a silent "forbidden" later.

use serde_json::Value;

use super::{Finding, strings};
use crate::path;

/// The verbs of API requests the gateway classifies; nothing else can match.
pub(crate) const REQUEST_VERBS: [&str; 8] =
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];

pub(super) fn check(entries: &Value, out: &mut Vec<Finding>) {
    for (k, entry) in entries.as_array().into_iter().flatten().enumerate() {
        if entry.is_object() {
            check_entry(&path::index("spec.allowedResources", k), entry, out);
        }
    }
}

fn check_entry(at: &str, entry: &Value, out: &mut Vec<Finding>) {
    if entry["group"].is_null() {
        out.push(Finding::error(path::field(at, "group"), "group is required (use \"\" for the core group)"));
    }
    let empty = |key: &str| entry[key].is_null() || entry[key] == "";
    if empty("version") {
        out.push(Finding::error(path::field(at, "version"), "version is required, e.g. \"v1\""));
    }
    if empty("resource") {
        out.push(Finding::error(
            path::field(at, "resource"),
            "resource is required: the lower-case plural, e.g. \"certificates\"",
        ));
    }
    let verbs_at = path::field(at, "verbs");
    if entry["verbs"].as_array().is_none_or(|v| v.is_empty()) {
        out.push(Finding::error(&verbs_at, "verbs is required and must not be empty"));
    }
    for (j, verb) in strings(&entry["verbs"]) {
        if !REQUEST_VERBS.contains(&verb) {
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
    use serde_json::json;

    fn run(entry: Value) -> Vec<Finding> {
        let mut out = Vec::new();
        check(&json!([entry]), &mut out);
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
