//! Reading and checking object metadata: names, labels, annotations.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::status::Cause;

pub fn name(obj: &Value) -> &str {
    obj["metadata"]["name"].as_str().unwrap_or_default()
}

pub fn namespace(obj: &Value) -> &str {
    obj["metadata"]["namespace"].as_str().unwrap_or_default()
}

pub fn uid(obj: &Value) -> &str {
    obj["metadata"]["uid"].as_str().unwrap_or_default()
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
    obj["metadata"]["resourceVersion"].as_str().unwrap_or_default()
}

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

pub fn is_dns1123_label(s: &str) -> bool {
    is_label_part(s)
}

pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label_part)
}

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

/// Checks `metadata.name` against the kind's rule.
pub fn check_name(name: &str, rule: NameRule) -> Vec<Cause> {
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(Cause::new(
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
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
    if rule == NameRule::Label {
        if name.len() > 63 {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!("Invalid value: \"{name}\": must be no more than 63 characters"),
            ));
        }
        if !is_dns1123_label(name) {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!("Invalid value: \"{name}\": {DNS1123_LABEL_MSG}"),
            ));
        }
    } else {
        if name.len() > 253 {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!("Invalid value: \"{name}\": must be no more than 253 characters"),
            ));
        }
        if !is_dns1123_subdomain(name) {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!("Invalid value: \"{name}\": {DNS1123_SUBDOMAIN_MSG}"),
            ));
        }
    }
    causes
}

fn is_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty() || !is_dns1123_subdomain(p))
    {
        return false;
    }
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

pub fn is_label_value(v: &str) -> bool {
    let b = v.as_bytes();
    b.is_empty()
        || (b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
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
            causes.push(Cause::new(
                "FieldValueTypeInvalid",
                &format!("metadata.{field}"),
                "Invalid value: must be a map of strings",
            ));
            continue;
        };
        let mut total = 0;
        for (k, val) in map {
            let path = format!("metadata.{field}");
            if !is_qualified_name(k) {
                causes.push(Cause::new("FieldValueInvalid", &path, format!("Invalid value: \"{k}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")));
            }
            let Some(s) = val.as_str() else {
                causes.push(Cause::new(
                    "FieldValueTypeInvalid",
                    &format!("{path}.{k}"),
                    "Invalid value: must be a string",
                ));
                continue;
            };
            total += k.len() + s.len();
            if is_labels && !is_label_value(s) {
                causes.push(Cause::new("FieldValueInvalid", &path, format!("Invalid value: \"{s}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")));
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
