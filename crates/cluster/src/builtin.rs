//! Validation of the built-in kinds: what a real API server refuses about
//! them, in its words.

use base64::Engine;
use serde_json::Value;

use crate::resource::{Builtin, ResourceType};
use crate::status::Cause;

pub fn validate(rt: &ResourceType, obj: &mut Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(kind) = rt.builtin else { return causes };
    match kind {
        Builtin::ConfigMap => {
            for field in ["data", "binaryData"] {
                if let Some(map) = obj[field].as_object() {
                    for (k, v) in map {
                        if !v.is_string() {
                            causes.push(Cause::new(
                                "FieldValueTypeInvalid",
                                &format!("{field}[{k}]"),
                                "Invalid value: must be a string",
                            ));
                        }
                    }
                } else if !obj[field].is_null() {
                    causes.push(Cause::new(
                        "FieldValueTypeInvalid",
                        field,
                        "Invalid value: must be a map of strings",
                    ));
                }
            }
        }
        Builtin::Secret => {
            // stringData is write-only: it lands in data, base64-encoded.
            if let Some(string_data) = obj.as_object_mut().and_then(|m| m.remove("stringData"))
                && let Some(map) = string_data.as_object()
            {
                for (k, v) in map {
                    let text = v.as_str().unwrap_or_default();
                    obj["data"][k] = Value::String(base64::engine::general_purpose::STANDARD.encode(text));
                }
            }
            if let Some(map) = obj["data"].as_object() {
                for (k, v) in map {
                    let ok = v
                        .as_str()
                        .is_some_and(|s| base64::engine::general_purpose::STANDARD.decode(s).is_ok());
                    if !ok {
                        causes.push(Cause::new(
                            "FieldValueInvalid",
                            &format!("data[{k}]"),
                            "Invalid value: \"<secret contents redacted>\": must be base64-encoded",
                        ));
                    }
                }
            }
            if obj["type"].is_null() {
                obj["type"] = Value::String("Opaque".into());
            }
            if let Some(old) = old
                && old["type"] != obj["type"]
            {
                causes.push(Cause::new("FieldValueInvalid", "type", "Invalid value: field is immutable"));
            }
        }
        Builtin::Service => {
            if let Some(ports) = obj["spec"]["ports"].as_array() {
                for (i, p) in ports.iter().enumerate() {
                    let port = p["port"].as_i64().unwrap_or(0);
                    if !(1..=65535).contains(&port) {
                        causes.push(Cause::new(
                            "FieldValueInvalid",
                            &format!("spec.ports[{i}].port"),
                            format!("Invalid value: {port}: must be between 1 and 65535, inclusive"),
                        ));
                    }
                }
            }
            if obj["spec"]["type"].is_null() {
                obj["spec"]["type"] = Value::String("ClusterIP".into());
            }
        }
        Builtin::Role | Builtin::ClusterRole => {
            if let Some(rules) = obj["rules"].as_array() {
                for (i, r) in rules.iter().enumerate() {
                    if r["verbs"].as_array().is_none_or(Vec::is_empty) {
                        causes.push(Cause::new(
                            "FieldValueRequired",
                            &format!("rules[{i}].verbs"),
                            "Required value: verbs must contain at least one value",
                        ));
                    }
                }
            }
        }
        Builtin::RoleBinding | Builtin::ClusterRoleBinding => {
            let role_ref = &obj["roleRef"];
            if role_ref["name"].as_str().is_none_or(str::is_empty) {
                causes.push(Cause::new("FieldValueRequired", "roleRef.name", "Required value"));
            }
            let kind_ok = match kind {
                Builtin::RoleBinding => matches!(role_ref["kind"].as_str(), Some("Role" | "ClusterRole")),
                _ => role_ref["kind"].as_str() == Some("ClusterRole"),
            };
            if !kind_ok {
                causes.push(Cause::new(
                    "FieldValueNotSupported",
                    "roleRef.kind",
                    format!("Unsupported value: {}: supported values: \"ClusterRole\"", role_ref["kind"]),
                ));
            }
            if let Some(old) = old
                && old["roleRef"] != obj["roleRef"]
            {
                causes.push(Cause::new(
                    "FieldValueInvalid",
                    "roleRef",
                    "Invalid value: cannot change roleRef",
                ));
            }
        }
        Builtin::ValidatingAdmissionPolicy => causes.extend(crate::admission::policy::validate_policy(obj)),
        Builtin::ValidatingAdmissionPolicyBinding => {
            causes.extend(crate::admission::policy::validate_binding(obj))
        }
        _ => {}
    }
    causes
}
