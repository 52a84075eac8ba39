//! Helpers shared by the integration tests.
#![allow(dead_code)]

use fundament_schema::{FieldError, Validator};
use serde_json::{Value, json};

/// Compiles a schema that must compile.
pub fn compile(schema: Value) -> Validator {
    match Validator::compile(&schema) {
        Ok(v) => v,
        Err(errors) => panic!("schema did not compile: {:#?}", strings(&errors)),
    }
}

/// A root schema whose `spec` has the given properties.
pub fn spec_schema(properties: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": properties},
        },
    })
}

/// An object of kind Widget with the given spec.
pub fn widget(spec: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
    })
}

pub fn strings(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

/// The errors of validating `obj` on create, as `field: message` lines.
pub fn create_errors(v: &Validator, obj: &Value) -> Vec<String> {
    strings(&v.validate(obj, None))
}

/// The errors of validating `obj` as an update of `old`.
pub fn update_errors(v: &Validator, obj: &Value, old: &Value) -> Vec<String> {
    strings(&v.validate(obj, Some(old)))
}
