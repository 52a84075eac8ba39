//! `x-kubernetes-embedded-resource` objects must look like resources: a string
//! `apiVersion` that parses as a group/version and a string `kind` (`schemaobjectmeta`).
//! Their `metadata` is left to the server.

use crate::error::{BadValue, FieldError};
use crate::path::Path;
use crate::schema::Node;
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

const DNS1035_LABEL: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";

static DNS1035: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{DNS1035_LABEL}$")).expect("static regex"));

/// Appends the errors of the embedded resources in `x`; `resource_root` marks the
/// object itself, which the server checks.
pub(crate) fn validate(
    node: &Node,
    x: &Value,
    path: &Path<'_>,
    resource_root: bool,
    errors: &mut Vec<FieldError>,
) {
    match x {
        Value::Object(map) => {
            if node.embedded && !resource_root {
                embedded_resource(map, path, errors);
            }
            node.for_each_child(map, |k, v, child, is_key| {
                let p = if is_key { path.key(k) } else { path.child(k) };
                validate(child, v, &p, false, errors);
            });
        }
        Value::Array(items) => {
            if let Some(item_node) = node.items.as_deref() {
                for (i, item) in items.iter().enumerate() {
                    validate(item_node, item, &path.index(i), false, errors);
                }
            }
        }
        _ => {}
    }
}

fn embedded_resource(x: &Map<String, Value>, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    if !x.contains_key("apiVersion") {
        errors.push(FieldError::required(path.child("apiVersion").field(), "must not be empty"));
    }
    if !x.contains_key("kind") {
        errors.push(FieldError::required(path.child("kind").field(), "must not be empty"));
    }
    if let Some(v) = x.get("apiVersion") {
        let field = path.child("apiVersion").field();
        match v {
            Value::String(s) if s.is_empty() => {
                errors.push(FieldError::invalid(field, BadValue::string(""), "must not be empty"))
            }
            Value::String(s) if s.matches('/').count() > 1 => errors.push(FieldError::invalid(
                field,
                BadValue::string(s.clone()),
                format!("unexpected GroupVersion string: {s}"),
            )),
            Value::String(_) => {}
            other => {
                errors.push(FieldError::invalid(field, BadValue::Json(other.clone()), "must be a string"))
            }
        }
    }
    if let Some(v) = x.get("kind") {
        let field = path.child("kind").field();
        match v {
            Value::String(s) if s.is_empty() => {
                errors.push(FieldError::invalid(field, BadValue::string(""), "must not be empty"))
            }
            Value::String(s) => {
                let problems = dns1035_label(&s.to_lowercase());
                if !problems.is_empty() {
                    errors.push(FieldError::invalid(
                        field,
                        BadValue::string(s.clone()),
                        format!("may have mixed case, but should otherwise match: {}", problems.join(",")),
                    ));
                }
            }
            other => {
                errors.push(FieldError::invalid(field, BadValue::Json(other.clone()), "must be a string"))
            }
        }
    }
}

/// `validation.IsDNS1035Label`.
fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !DNS1035.is_match(s) {
        errs.push(format!(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '{DNS1035_LABEL}')"
        ));
    }
    errs
}
