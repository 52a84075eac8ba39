//! Validation of the built-in kinds: what a real API server refuses about
//! them, in its words.

use base64::Engine;
use serde_json::Value;

use crate::fields;
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
            let types = fields::expect_all(
                obj,
                &[(&["data"], "object"), (&["stringData"], "object"), (&["type"], "string")],
            );
            if !types.is_empty() {
                return types;
            }
            // stringData is write-only: it lands in data, base64-encoded.
            if let Some(Value::Object(string_data)) = obj.as_object_mut().and_then(|m| m.remove("stringData"))
            {
                match fields::object_at(obj, &["data"]) {
                    Ok(data) => {
                        for (k, v) in string_data {
                            match v.as_str() {
                                Some(text) => {
                                    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
                                    data.insert(k, Value::String(encoded));
                                }
                                None => {
                                    causes.push(fields::wrong_type(&format!("stringData[{k}]"), &v, "string"))
                                }
                            }
                        }
                    }
                    Err(cause) => causes.push(cause),
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
            if obj["type"].is_null()
                && let Err(cause) = fields::set(obj, &["type"], Value::String("Opaque".into()))
            {
                causes.push(cause);
            }
            if let Some(old) = old
                && old["type"] != obj["type"]
            {
                causes.push(Cause::new("FieldValueInvalid", "type", "Invalid value: field is immutable"));
            }
        }
        Builtin::Service => {
            let mut types = fields::expect_all(obj, &[(&["spec"], "object"), (&["spec", "ports"], "array")]);
            types.extend(fields::expect_elements(obj, &["spec", "ports"], "object"));
            if !types.is_empty() {
                return types;
            }
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
            match fields::object_at(obj, &["spec"]) {
                Ok(spec) if spec.get("type").is_none_or(Value::is_null) => {
                    spec.insert("type".into(), Value::String("ClusterIP".into()));
                }
                Ok(_) => {}
                Err(cause) => causes.push(cause),
            }
        }
        Builtin::Role | Builtin::ClusterRole => {
            let mut types =
                fields::expect_all(obj, &[(&["rules"], "array"), (&["aggregationRule"], "object")]);
            types.extend(fields::expect_elements(obj, &["rules"], "object"));
            if !types.is_empty() {
                return types;
            }
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
            let mut types = fields::expect_all(obj, &[(&["roleRef"], "object"), (&["subjects"], "array")]);
            types.extend(fields::expect_elements(obj, &["subjects"], "object"));
            if !types.is_empty() {
                return types;
            }
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
        Builtin::Namespace => {
            causes.extend(fields::expect_all(obj, &[(&["spec"], "object"), (&["status"], "object")]));
        }
        Builtin::ServiceAccount => {
            causes.extend(fields::expect_all(
                obj,
                &[(&["secrets"], "array"), (&["imagePullSecrets"], "array")],
            ));
        }
        Builtin::Event => {
            causes
                .extend(fields::expect_all(obj, &[(&["involvedObject"], "object"), (&["source"], "object")]));
        }
        Builtin::CustomResourceDefinition => {
            causes.extend(fields::expect_all(
                obj,
                &[(&["spec"], "object"), (&["spec", "names"], "object"), (&["spec", "versions"], "array")],
            ));
            causes.extend(fields::expect_elements(obj, &["spec", "versions"], "object"));
        }
        _ => {}
    }
    causes
}
