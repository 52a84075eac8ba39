//! OpenAPI keywords, each with the message kube-apiserver v1.32 prints.

use crate::common;

use common::{compile, create_errors, spec_schema, update_errors, widget};
use fundament_schema::{BadValue, ErrorType};
use serde_json::json;

#[test]
fn required() {
    let v = compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "required": ["secretName"], "properties": {"secretName": {"type": "string"}}}},
    }));
    let errors = v.validate(&widget(json!({})), None);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].to_string(), "spec.secretName: Required value");
    assert_eq!(errors[0].reason(), "FieldValueRequired");
    assert_eq!(errors[0].field, "spec.secretName");
    assert_eq!(errors[0].message_without_field(), "Required value");
    assert!(create_errors(&v, &widget(json!({"secretName": "s"}))).is_empty());
}

#[test]
fn enumeration() {
    let v = compile(spec_schema(json!({
        "format": {"type": "string", "enum": ["aws-iam-statement"]},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "level": {"type": "integer", "enum": [1, 2]},
    })));
    let errors = v.validate(&widget(json!({"format": "x"})), None);
    assert_eq!(
        errors[0].to_string(),
        r#"spec.format: Unsupported value: "x": supported values: "aws-iam-statement""#
    );
    assert_eq!(errors[0].reason(), "FieldValueNotSupported");
    assert_eq!(
        errors[0].message_without_field(),
        r#"Unsupported value: "x": supported values: "aws-iam-statement""#
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"mode": "c", "level": 3}))),
        [
            r#"spec.level: Unsupported value: 3: supported values: "1", "2""#,
            r#"spec.mode: Unsupported value: "c": supported values: "a", "b""#,
        ]
    );
    // Numbers match by value, whether written as integers or not.
    assert!(create_errors(&v, &widget(json!({"mode": "b", "level": 2.0}))).is_empty());
}

#[test]
fn type_mismatch() {
    let v = compile(spec_schema(json!({
        "replicas": {"type": "integer"},
        "name": {"type": "string"},
        "ratio": {"type": "number"},
        "on": {"type": "boolean"},
        "list": {"type": "array", "items": {"type": "string"}},
    })));
    let errors = v.validate(&widget(json!({"replicas": "string"})), None);
    assert_eq!(
        errors[0].to_string(),
        r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
    );
    assert_eq!(errors[0].reason(), "FieldValueTypeInvalid");
    assert_eq!(
        create_errors(
            &v,
            &widget(json!({"replicas": 1.5, "name": 3, "ratio": "x", "on": "yes", "list": {}}))
        ),
        [
            r#"spec.list: Invalid value: "object": spec.list in body must be of type array: "object""#,
            r#"spec.name: Invalid value: "integer": spec.name in body must be of type string: "integer""#,
            r#"spec.on: Invalid value: "string": spec.on in body must be of type boolean: "string""#,
            r#"spec.ratio: Invalid value: "string": spec.ratio in body must be of type number: "string""#,
            r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
        ]
    );
    // An integral float is an integer; an integer is a number.
    assert!(create_errors(&v, &widget(json!({"replicas": 2.0, "ratio": 3}))).is_empty());
}

#[test]
fn null_on_non_nullable() {
    let v = compile(spec_schema(json!({
        "x": {"type": "string"},
        "y": {"type": "string", "nullable": true},
    })));
    assert_eq!(
        create_errors(&v, &widget(json!({"x": null, "y": null}))),
        [r#"spec.x: Invalid value: "null": spec.x in body must be of type string: "null""#]
    );
}

#[test]
fn pattern() {
    let v = compile(spec_schema(json!({"x": {"type": "string", "pattern": "^[a-z]+$"}})));
    assert_eq!(
        create_errors(&v, &widget(json!({"x": "ABC"}))),
        [r#"spec.x: Invalid value: "ABC": spec.x in body should match '^[a-z]+$'"#]
    );
    assert!(create_errors(&v, &widget(json!({"x": "abc"}))).is_empty());
}

#[test]
fn minimum_and_maximum() {
    let v = compile(spec_schema(json!({
        "x": {"type": "integer", "minimum": 1, "maximum": 10},
        "y": {"type": "number", "minimum": 1, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true},
        "z": {"type": "number", "maximum": 1.5},
    })));
    assert_eq!(
        create_errors(&v, &widget(json!({"x": 0}))),
        ["spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"x": 11}))),
        ["spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10"]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"y": 1, "z": 2.25}))),
        [
            "spec.y: Invalid value: 1: spec.y in body should be greater than 1",
            "spec.z: Invalid value: 2.25: spec.z in body should be less than or equal to 1.5",
        ]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"y": 10}))),
        ["spec.y: Invalid value: 10: spec.y in body should be less than 10"]
    );
    assert!(create_errors(&v, &widget(json!({"x": 1, "y": 5.5}))).is_empty());
}

#[test]
fn multiple_of() {
    let v = compile(spec_schema(json!({"x": {"type": "integer", "multipleOf": 5}})));
    assert_eq!(
        create_errors(&v, &widget(json!({"x": 7}))),
        ["spec.x: Invalid value: 7: spec.x in body should be a multiple of 5"]
    );
    assert!(create_errors(&v, &widget(json!({"x": 10}))).is_empty());
}

#[test]
fn string_lengths() {
    let v = compile(spec_schema(json!({
        "x": {"type": "string", "maxLength": 10, "minLength": 1, "pattern": "^a"},
        "one": {"type": "string", "maxLength": 1},
    })));
    let errors = v.validate(&widget(json!({"x": "bbbbbbbbbbbb"})), None);
    // maxLength wins over pattern: kube-openapi stops at the first string error.
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].to_string(), "spec.x: Too long: may not be more than 10 bytes");
    assert_eq!(errors[0].reason(), "FieldValueTooLong");
    assert_eq!(
        create_errors(&v, &widget(json!({"x": ""}))),
        [r#"spec.x: Invalid value: "": spec.x in body should be at least 1 chars long"#]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"one": "ab"}))),
        ["spec.one: Too long: may not be more than 1 byte"]
    );
    // Lengths count characters, not bytes.
    assert!(create_errors(&v, &widget(json!({"x": "aéééééééé"}))).is_empty());
}

#[test]
fn item_counts() {
    let v = compile(spec_schema(json!({
        "x": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
    })));
    let errors = v.validate(&widget(json!({"x": [1, 2, 3, 4, 5]})), None);
    assert_eq!(errors[0].to_string(), "spec.x: Too many: 5: must have at most 3 items");
    assert_eq!(errors[0].reason(), "FieldValueTooMany");
    assert_eq!(
        create_errors(&v, &widget(json!({"x": []}))),
        ["spec.x: Invalid value: 0: spec.x in body should have at least 1 items"]
    );
}

#[test]
fn property_counts() {
    let v = compile(spec_schema(json!({
        "labels": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1, "maxProperties": 2},
    })));
    assert_eq!(
        create_errors(&v, &widget(json!({"labels": {"a": "1", "b": "2", "c": "3"}}))),
        ["spec.labels: Too many: 3: must have at most 2 items"]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"labels": {}}))),
        ["spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"]
    );
}

#[test]
fn paths_of_items_and_map_values() {
    let v = compile(spec_schema(json!({
        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 2}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}},
    })));
    assert_eq!(
        create_errors(
            &v,
            &widget(json!({"items": [{"name": "ok"}, {"name": "long"}], "labels": {"key": "long"}}))
        ),
        [
            "spec.items[1].name: Too long: may not be more than 2 bytes",
            "spec.labels[key]: Too long: may not be more than 2 bytes",
        ]
    );
}

#[test]
fn all_errors_are_reported() {
    let v = compile(json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string"},
                "c": {"type": "integer", "maximum": 1},
                "d": {"type": "string", "enum": ["x"]},
            },
        }},
    }));
    assert_eq!(
        create_errors(&v, &widget(json!({"c": 2, "d": "y"}))),
        [
            "spec.c: Invalid value: 2: spec.c in body should be less than or equal to 1",
            r#"spec.d: Unsupported value: "y": supported values: "x""#,
            "spec.a: Required value",
            "spec.b: Required value",
        ]
    );
}

#[test]
fn formats() {
    let v = compile(spec_schema(json!({
        "at": {"type": "string", "format": "date-time"},
        "data": {"type": "string", "format": "byte"},
        "count": {"type": "integer", "format": "int32"},
        "anything": {"type": "string", "format": "no-such-format"},
    })));
    assert_eq!(
        create_errors(
            &v,
            &widget(json!({"at": "yesterday", "data": "not base64!", "anything": "x", "count": 5}))
        ),
        [
            r#"spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday""#,
            r#"spec.data: Invalid value: "not base64!": spec.data in body must be of type byte: "not base64!""#,
        ]
    );
    let errors = v.validate(&widget(json!({"at": "nope"})), None);
    assert_eq!(errors[0].reason(), "FieldValueTypeInvalid");
    assert!(create_errors(&v, &widget(json!({"at": "2024-05-01T10:00:00Z", "data": "aGVsbG8="}))).is_empty());
}

#[test]
fn int_or_string() {
    let v = compile(spec_schema(json!({
        "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": "^[a-z]+$"},
    })));
    assert!(create_errors(&v, &widget(json!({"port": 8080}))).is_empty());
    assert!(create_errors(&v, &widget(json!({"port": "http"}))).is_empty());
    let errors = create_errors(&v, &widget(json!({"port": true})));
    assert_eq!(errors[0], r#"<nil>: Invalid value: "": spec.port must validate at least one schema (anyOf)"#);
}

#[test]
fn one_of_and_not() {
    let v = compile(spec_schema(json!({
        "source": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        "name": {"type": "string", "not": {"enum": ["forbidden"]}},
    })));
    assert!(create_errors(&v, &widget(json!({"source": {"a": "x"}}))).is_empty());
    assert_eq!(
        create_errors(&v, &widget(json!({"source": {"a": "x", "b": "y"}}))),
        [
            r#"<nil>: Invalid value: "": spec.source must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"source": {}}))),
        [
            r#"<nil>: Invalid value: "": spec.source must validate one and only one schema (oneOf). Found none valid"#,
            "spec.source.a: Required value",
        ]
    );
    assert_eq!(
        create_errors(&v, &widget(json!({"name": "forbidden"}))),
        [r#"<nil>: Invalid value: "": spec.name must not validate the schema (not)"#]
    );
}

#[test]
fn list_type_set_and_map() {
    let v = compile(spec_schema(json!({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
        },
    })));
    let errors = v.validate(
        &widget(json!({
            "tags": ["a", "b", "a", "a"],
            "ports": [{"name": "http", "port": 80}, {"name": "http", "port": 8080}],
        })),
        None,
    );
    assert_eq!(
        errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#,
            r#"spec.tags[2]: Duplicate value: "a""#,
        ]
    );
    assert!(
        errors.iter().all(|e| e.error_type == ErrorType::Duplicate && e.reason() == "FieldValueDuplicate")
    );
}

#[test]
fn embedded_resources() {
    let v = compile(spec_schema(json!({
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
    })));
    assert_eq!(
        create_errors(&v, &widget(json!({"template": {"metadata": {}}}))),
        [
            "spec.template.apiVersion: Required value: must not be empty",
            "spec.template.kind: Required value: must not be empty"
        ]
    );
    assert!(
        create_errors(&v, &widget(json!({"template": {"apiVersion": "v1", "kind": "ConfigMap"}}))).is_empty()
    );
    let errors =
        create_errors(&v, &widget(json!({"template": {"apiVersion": "a/b/c", "kind": "Config_Map"}})));
    assert_eq!(
        errors[0],
        r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#
    );
    assert!(errors[1].starts_with(r#"spec.template.kind: Invalid value: "Config_Map": may have mixed case, but should otherwise match: a DNS-1035 label"#));
}

#[test]
fn metadata_name_constraints_of_the_schema_apply() {
    let v = compile(json!({
        "type": "object",
        "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}},
    }));
    let mut obj = widget(json!({}));
    obj["metadata"] = json!({"name": "much-too-long", "labels": {"a": "b"}});
    assert_eq!(create_errors(&v, &obj), ["metadata.name: Too long: may not be more than 5 bytes"]);
}

#[test]
fn ratcheting_keeps_unchanged_errors() {
    let v = compile(spec_schema(json!({
        "x": {"type": "string", "pattern": "^[a-z]+$"},
        "y": {"type": "string", "maxLength": 3},
    })));
    let old = widget(json!({"x": "BAD", "y": "ok"}));
    // x is unchanged: its old error is tolerated; y changed and is checked.
    assert_eq!(
        update_errors(&v, &widget(json!({"x": "BAD", "y": "long"})), &old),
        ["spec.y: Too long: may not be more than 3 bytes"]
    );
    assert_eq!(
        update_errors(&v, &widget(json!({"x": "WORSE", "y": "ok"})), &old),
        [r#"spec.x: Invalid value: "WORSE": spec.x in body should match '^[a-z]+$'"#]
    );
}

#[test]
fn bad_values_print_like_go() {
    let e = fundament_schema::FieldError::invalid("spec.x", BadValue::Json(json!(1e6)), "d");
    assert_eq!(e.to_string(), "spec.x: Invalid value: 1e+06: d");
    let e = fundament_schema::FieldError::invalid("spec.x", BadValue::Json(json!([1, "a"])), "d");
    assert_eq!(e.to_string(), r#"spec.x: Invalid value: []interface {}{1, "a"}: d"#);
}
