//! The core group's kinds: namespaces, secrets, config maps, services,
//! service accounts, events.

use base64::Engine;
use serde_json::{Value, json};

use super::{Dependent, Rules, Strategy, Validation};
use crate::fields;
use crate::object::NameRule;
use crate::resource::{Registry, ResourceType};
use crate::status::{ApiError, Cause};
use crate::store::Store;

pub struct Namespace;
pub static NAMESPACE: Namespace = Namespace;

impl Strategy for Namespace {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn validate(&self, obj: &mut Value, _: &Validation<'_>) -> Result<Vec<Cause>, ApiError> {
        Ok(fields::expect_all(obj, &[(&["spec"], "object"), (&["status"], "object")]))
    }

    fn canonicalize(&self, _: &ResourceType, _: &Registry, obj: &mut Value) {
        if obj["status"]["phase"].is_null()
            && let Some(m) = obj.as_object_mut()
        {
            m.insert("status".into(), json!({"phase": "Active"}));
        }
    }

    /// Everything in the namespace goes with it.
    fn dependents(&self, store: &Store, registry: &Registry, gone: &Value) -> Vec<Dependent> {
        let ns = crate::object::name(gone);
        let mut keys: Vec<_> =
            registry.all().iter().filter(|t| t.namespaced).map(|t| t.storage_key()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .flat_map(|k| {
                let names: Vec<_> = store.iter(&k, ns).map(|((n, o), _)| (n.clone(), o.clone())).collect();
                names.into_iter().map(move |(n, o)| (k.clone(), n, o))
            })
            .collect()
    }
}

pub static SECRET: Rules = Rules { check: validate_secret, ..Rules::NONE };

fn validate_secret(obj: &mut Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let types =
        fields::expect_all(obj, &[(&["data"], "object"), (&["stringData"], "object"), (&["type"], "string")]);
    if !types.is_empty() {
        return types;
    }
    // stringData is write-only: it lands in data, base64-encoded.
    if let Some(Value::Object(string_data)) = obj.as_object_mut().and_then(|m| m.remove("stringData")) {
        match fields::object_at(obj, &["data"]) {
            Ok(data) => {
                for (k, v) in string_data {
                    match v.as_str() {
                        Some(text) => {
                            let encoded = base64::engine::general_purpose::STANDARD.encode(text);
                            data.insert(k, Value::String(encoded));
                        }
                        None => causes.push(fields::wrong_type(&format!("stringData[{k}]"), &v, "string")),
                    }
                }
            }
            Err(cause) => causes.push(cause),
        }
    }
    if let Some(map) = obj["data"].as_object() {
        for (k, v) in map {
            let ok = v.as_str().is_some_and(|s| base64::engine::general_purpose::STANDARD.decode(s).is_ok());
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
    causes
}

pub static CONFIG_MAP: Rules = Rules { check: |obj, _| validate_config_map(obj), ..Rules::NONE };

fn validate_config_map(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for field in ["data", "binaryData"] {
        if let Some(map) = obj[field].as_object() {
            for (k, v) in map {
                if !v.is_string() {
                    causes.push(fields::not_a_string(&format!("{field}[{k}]")));
                }
            }
        } else if !obj[field].is_null() {
            causes.push(fields::not_a_string_map(field));
        }
    }
    causes
}

pub static SERVICE: Rules =
    Rules { name_rule: NameRule::Label, check: |obj, _| validate_service(obj), ..Rules::NONE };

fn validate_service(obj: &mut Value) -> Vec<Cause> {
    let mut causes = Vec::new();
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
    causes
}

pub static SERVICE_ACCOUNT: Rules = Rules {
    check: |obj, _| fields::expect_all(obj, &[(&["secrets"], "array"), (&["imagePullSecrets"], "array")]),
    ..Rules::NONE
};

pub static EVENT: Rules = Rules {
    check: |obj, _| fields::expect_all(obj, &[(&["involvedObject"], "object"), (&["source"], "object")]),
    ..Rules::NONE
};
