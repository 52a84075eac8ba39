//! Schemas and rules the apiserver refuses when the CRD is created.

use fundament_schema::Validator;
use serde_json::{Value, json};

fn compile_errors(schema: Value) -> Vec<String> {
    match Validator::compile(&schema) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

fn spec(properties: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}})
}

#[test]
fn unknown_type() {
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "foo"}}))),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string""#,
            "openAPIV3Schema.properties[spec].properties[x].type: Required value: must not be empty for specified object fields",
        ]
    );
}

#[test]
fn malformed_keywords() {
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "object", "required": "name"}}))),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].required: Invalid value: "string": must be of type array"#
        ]
    );
    let errors = compile_errors(spec(json!({"x": {"type": "string", "pattern": "[a-z"}})));
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with(
            r#"openAPIV3Schema.properties[spec].properties[x].pattern: Invalid value: "[a-z": must be a valid regular expression, but isn't: error parsing regexp: "#
        ),
        "{}",
        errors[0]
    );
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "string", "maxLength": -1}}))),
        [
            "openAPIV3Schema.properties[spec].properties[x].maxLength: Invalid value: -1: must be greater than or equal to 0"
        ]
    );
}

#[test]
fn structural_rules() {
    assert_eq!(
        compile_errors(json!({"type": "string"})),
        [r#"openAPIV3Schema.type: Invalid value: "string": must be object at the root"#]
    );
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "array"}}))),
        ["openAPIV3Schema.properties[spec].properties[x].items: Required value: must be specified"]
    );
    assert_eq!(
        compile_errors(spec(
            json!({"x": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}})
        )),
        [
            "openAPIV3Schema.properties[spec].properties[x].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
        ]
    );
    assert_eq!(
        compile_errors(spec(
            json!({"x": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}})
        )),
        [
            "openAPIV3Schema.properties[spec].properties[x].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
        ]
    );
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "object", "$ref": "#/definitions/x"}}))),
        ["openAPIV3Schema.properties[spec].properties[x].$ref: Forbidden: $ref is not supported"]
    );
}

#[test]
fn broken_rules() {
    let errors = compile_errors(spec(
        json!({"x": {"type": "string", "x-kubernetes-validations": [{"rule": "self =="}]}}),
    ));
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with(
            r#"openAPIV3Schema.properties[spec].properties[x].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self ==", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:8: Syntax error: "#
        ),
        "{}",
        errors[0]
    );
    assert!(errors[0].ends_with("\n | self ==\n | .......^"), "{}", errors[0]);

    assert_eq!(
        compile_errors(json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.b == 'x'"}]}},
        })),
        [
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self.b == 'x'\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b == 'x'\n | ....^"
        ]
    );
    let errors = compile_errors(spec(
        json!({"x": {"type": "string", "x-kubernetes-validations": [{"rule": "nope == 1"}]}}),
    ));
    assert!(errors[0].contains("undeclared reference to 'nope' (in container '')"), "{}", errors[0]);
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "string", "x-kubernetes-validations": [{"rule": ""}]}}))),
        [
            "openAPIV3Schema.properties[spec].properties[x].x-kubernetes-validations[0].rule: Required value: rule is not specified"
        ]
    );
}

#[test]
fn rule_metadata_checks() {
    assert_eq!(
        compile_errors(spec(
            json!({"x": {"type": "string", "x-kubernetes-validations": [{"rule": "true", "reason": "Nope"}]}})
        )),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#
        ]
    );
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "object", "properties": {"a": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "true", "fieldPath": ".b"}]}}))),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].x-kubernetes-validations[0].fieldPath: Invalid value: ".b": fieldPath must be a valid path: does not refer to a valid field"#
        ]
    );
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "array", "items": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}))),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within openAPIV3Schema.properties[spec].properties[x]"#
        ]
    );
    let errors = compile_errors(spec(
        json!({"x": {"type": "string", "x-kubernetes-validations": [{"rule": "self.matches('[')"}]}}),
    ));
    assert!(errors[0].contains("invalid regular expression"), "{}", errors[0]);
}

#[test]
fn rules_may_use_the_resource_metadata_and_declared_fields() {
    assert!(
        compile_errors(json!({
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.metadata.name.size() < 10 && self.metadata.generateName == '' && self.kind == 'W'"},
                {"rule": "self.spec.items.all(i, i.name != '') && self.spec.labels.all(k, k != '')"},
                {"rule": "self.spec.free.anything == 1 && [1].all(x, x == 1)"},
            ],
            "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            }}},
        }))
        .is_empty()
    );
    let errors = compile_errors(json!({
        "type": "object",
        "x-kubernetes-validations": [{"rule": "has(self.metadata.labels)"}],
    }));
    assert!(errors[0].contains("undefined field 'labels'"), "{}", errors[0]);
    let errors = compile_errors(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        }}},
        "x-kubernetes-validations": [{"rule": "self.spec.items.all(i, i.nam != '')"}],
    }));
    assert!(errors[0].contains("undefined field 'nam'"), "{}", errors[0]);
}

#[test]
fn defaults_must_validate_and_be_pruned() {
    assert_eq!(
        compile_errors(spec(json!({"x": {"type": "string", "pattern": "^[a-z]+$", "default": "ABC"}}))),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].default: Invalid value: "ABC":  in body should match '^[a-z]+$'"#
        ]
    );
    assert_eq!(
        compile_errors(spec(
            json!({"x": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}})
        )),
        [
            r#"openAPIV3Schema.properties[spec].properties[x].default: Invalid value: map[string]interface {}{"a":"x", "b":1}: must not have unknown fields"#
        ]
    );
}

#[test]
fn errors_can_be_put_under_the_crd_path() {
    let errors = Validator::compile(&json!({"type": "string"})).unwrap_err();
    assert_eq!(
        errors[0].clone().with_field_prefix("spec.versions[0].schema").field,
        "spec.versions[0].schema.openAPIV3Schema.type"
    );
}

#[test]
fn error_positions_count_characters() {
    let errors =
        compile_errors(spec(json!({"x": {"type": "object", "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "'éé' == self.nope"}]}})));
    assert!(
        errors[0].ends_with(
            "ERROR: <input>:1:13: undefined field 'nope'\n | 'éé' == self.nope\n | .．．.........^"
        ),
        "{}",
        errors[0]
    );
}
