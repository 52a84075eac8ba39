//! Reading and checking object metadata: names, labels, annotations.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::fields;
use crate::status::Cause;

/// A text field of `metadata`; empty where absent or not a string (the
/// write path refuses such objects before they are stored).
fn text<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj["metadata"][field].as_str().unwrap_or_default()
}

pub fn name(obj: &Value) -> &str {
    text(obj, "name")
}

pub fn namespace(obj: &Value) -> &str {
    text(obj, "namespace")
}

pub fn uid(obj: &Value) -> &str {
    text(obj, "uid")
}

pub fn labels(obj: &Value) -> BTreeMap<String, String> {
    string_map(&obj["metadata"]["labels"])
}

pub fn string_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
        .unwrap_or_default()
}

pub fn resource_version(obj: &Value) -> &str {
    text(obj, "resourceVersion")
}

pub fn generate_name(obj: &Value) -> &str {
    text(obj, "generateName")
}

/// RFC 3339; empty until the cluster has stored the object.
pub fn creation_timestamp(obj: &Value) -> &str {
    text(obj, "creationTimestamp")
}

/// Whether a delete waits for the object's finalizers.
pub fn is_terminating(obj: &Value) -> bool {
    obj["metadata"]["deletionTimestamp"].is_string()
}

use fundament_kube_core::validation;
pub use fundament_kube_core::validation::{
    DNS1123_LABEL_MSG, DNS1123_SUBDOMAIN_MSG, is_dns1123_label, is_dns1123_subdomain, is_label_value,
    is_qualified_name,
};

/// What a kind's names must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// DNS-1123 subdomain: most kinds.
    Subdomain,
    /// DNS-1123 label: namespaces, services.
    Label,
    /// Any path segment (RBAC kinds: `system:basic-user`).
    PathSegment,
}

/// The cause of an object with neither a name nor a prefix to generate one from.
pub fn name_required() -> Cause {
    Cause::new("FieldValueRequired", "metadata.name", "Required value: name or generateName is required")
}

/// Checks `metadata.name` against the kind's rule.
pub fn check_name(name: &str, rule: NameRule) -> Vec<Cause> {
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(name_required());
        return causes;
    }
    if rule == NameRule::PathSegment {
        let problem = match name {
            "." => Some("may not be '.'"),
            ".." => Some("may not be '..'"),
            _ if name.contains('/') => Some("may not contain '/'"),
            _ if name.contains('%') => Some("may not contain '%'"),
            _ => None,
        };
        if let Some(p) = problem {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!("Invalid value: \"{name}\": {p}"),
            ));
        }
        return causes;
    }
    let errors = match rule {
        NameRule::Label => validation::dns1123_label_errors(name),
        _ => validation::dns1123_subdomain_errors(name),
    };
    for e in errors {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "metadata.name",
            format!("Invalid value: \"{name}\": {e}"),
        ));
    }
    causes
}

/// Labels and annotations: keys are qualified names, label values ≤ 63
/// characters, annotations ≤ 256 KiB in all; values must be strings.
pub fn check_labels_and_annotations(meta: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (field, is_labels) in [("labels", true), ("annotations", false)] {
        let v = &meta[field];
        if v.is_null() {
            continue;
        }
        let Some(map) = v.as_object() else {
            causes.push(fields::not_a_string_map(&format!("metadata.{field}")));
            continue;
        };
        let mut total = 0;
        for (k, val) in map {
            let path = format!("metadata.{field}");
            for e in validation::qualified_name_errors(k) {
                causes.push(Cause::new("FieldValueInvalid", &path, format!("Invalid value: \"{k}\": {e}")));
            }
            let Some(s) = val.as_str() else {
                causes.push(fields::not_a_string(&format!("{path}.{k}")));
                continue;
            };
            total += k.len() + s.len();
            if is_labels {
                for e in validation::label_value_errors(s) {
                    causes.push(Cause::new(
                        "FieldValueInvalid",
                        &path,
                        format!("Invalid value: \"{s}\": {e}"),
                    ));
                }
            }
        }
        if !is_labels && total > 256 * 1024 {
            causes.push(Cause::new(
                "FieldValueTooLong",
                "metadata.annotations",
                "Too long: may not be more than 262144 bytes",
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_dns1123() {
        assert!(check_name("web-tls.cert", NameRule::Subdomain).is_empty());
        assert!(!check_name("Web", NameRule::Subdomain).is_empty());
        assert!(!check_name("a.b", NameRule::Label).is_empty());
        assert!(!check_name(&"a".repeat(64), NameRule::Label).is_empty());
        assert!(!check_name("-a", NameRule::Subdomain).is_empty());
        assert_eq!(check_name("", NameRule::Subdomain)[0].reason, "FieldValueRequired");
        assert!(check_name("system:basic-user", NameRule::PathSegment).is_empty());
        assert!(!check_name("a/b", NameRule::PathSegment).is_empty());
    }

    #[test]
    fn labels_are_checked_key_and_value() {
        assert!(
            check_labels_and_annotations(&json!({"labels": {"plugins.camunda.io/cluster": "orders"}}))
                .is_empty()
        );
        assert_eq!(check_labels_and_annotations(&json!({"labels": {"a": "x".repeat(64)}})).len(), 1);
        assert_eq!(check_labels_and_annotations(&json!({"labels": {"/a": "x"}})).len(), 1);
        assert_eq!(check_labels_and_annotations(&json!({"labels": {"a": 1}})).len(), 1);
        assert!(check_labels_and_annotations(&json!({"annotations": {"a": "any text, spaces!"}})).is_empty());
    }
}
