//! `x-kubernetes-validations`: CEL rules, their messages, paths and reasons, and
//! transition rules.

use crate::common;

use common::{compile, create_errors, spec_schema, update_errors, widget};
use fundament_schema::{ErrorType, Validator};
use serde_json::{Value, json};

fn immutable_cluster() -> Validator {
    compile(spec_schema(json!({
        "cluster": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "x-kubernetes-validations": [{
                "rule": "self == oldSelf",
                "message": "cluster is immutable: delete the grant and create a new one",
            }],
        },
    })))
}

#[test]
fn transition_rule_on_an_object_field() {
    let v = immutable_cluster();
    let old = widget(json!({"cluster": {"name": "a"}}));
    assert!(create_errors(&v, &old).is_empty(), "create has no oldSelf: the rule is not evaluated");
    assert!(update_errors(&v, &old, &old).is_empty());
    let errors = v.validate(&widget(json!({"cluster": {"name": "b"}})), Some(&old));
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        r#"spec.cluster: Invalid value: "object": cluster is immutable: delete the grant and create a new one"#
    );
    assert_eq!(errors[0].reason(), "FieldValueInvalid");
    assert_eq!(errors[0].field, "spec.cluster");
    // Added on update: no old value at that path, so the rule isn't evaluated.
    assert!(update_errors(&v, &old, &widget(json!({}))).is_empty());
    assert!(v.has_transition_rules());
}

#[test]
fn root_rule_reads_metadata_name() {
    let v = compile(json!({
        "type": "object",
        "x-kubernetes-validations": [{
            "rule": "size(self.metadata.name) <= 63",
            "message": "metadata.name must be at most 63 characters, because it is used as a label value",
            "fieldPath": ".metadata.name",
        }],
        "properties": {"spec": {"type": "object"}},
    }));
    let mut obj = widget(json!({}));
    assert!(create_errors(&v, &obj).is_empty());
    obj["metadata"]["name"] = json!("x".repeat(64));
    let errors = v.validate(&obj, None);
    assert_eq!(
        errors[0].to_string(),
        r#"metadata.name: Invalid value: "object": metadata.name must be at most 63 characters, because it is used as a label value"#
    );
}

#[test]
fn root_rule_without_field_path_is_at_nil() {
    let v = compile(json!({
        "type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('w')"}],
        "properties": {"spec": {"type": "object"}},
    }));
    let mut obj = widget(json!({}));
    obj["metadata"]["name"] = json!("other");
    assert_eq!(
        create_errors(&v, &obj),
        [r#"<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith('w')"#]
    );
}

#[test]
fn rule_with_or_and_starts_with() {
    let v = compile(json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "properties": {"definitionHash": {"type": "string"}},
            "x-kubernetes-validations": [{
                "rule": "self.definitionHash == '' || self.definitionHash.startsWith('sha256:')",
                "message": "definitionHash must be empty or start with sha256:",
            }],
        }},
    }));
    assert!(create_errors(&v, &widget(json!({"definitionHash": ""}))).is_empty());
    assert!(create_errors(&v, &widget(json!({"definitionHash": "sha256:abc"}))).is_empty());
    assert_eq!(
        create_errors(&v, &widget(json!({"definitionHash": "md5:abc"}))),
        [r#"spec: Invalid value: "object": definitionHash must be empty or start with sha256:"#]
    );
    // An absent field is a runtime error, worded as Kubernetes words it.
    assert_eq!(
        create_errors(&v, &widget(json!({}))),
        [
            r#"spec: Invalid value: "object": no such key: definitionHash evaluating rule: definitionHash must be empty or start with sha256:"#
        ]
    );
}

#[test]
fn rules_on_absent_optional_fields_are_not_evaluated() {
    let v = compile(spec_schema(json!({
        "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() > 100"}]},
    })));
    assert!(create_errors(&v, &widget(json!({}))).is_empty());
    assert_eq!(
        create_errors(&v, &widget(json!({"name": "x"}))),
        [r#"spec.name: Invalid value: "string": failed rule: self.size() > 100"#]
    );
}

#[test]
fn message_expression_reason_and_field_path() {
    let v = compile(spec_schema(json!({
        "replicas": {"type": "integer"},
        "limits": {
            "type": "object",
            "properties": {"max": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.max < 10", "messageExpression": "'max is ' + string(self.max) + ', must be below 10'", "fieldPath": ".max"},
                {"rule": "self.max != 13", "reason": "FieldValueForbidden", "message": "unlucky"},
                {"rule": "self.max != 13", "reason": "FieldValueRequired", "message": "unlucky"},
                {"rule": "self.max != 13", "reason": "FieldValueDuplicate"},
            ],
        },
    })));
    let errors = v.validate(&widget(json!({"limits": {"max": 13}})), None);
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            r#"spec.limits.max: Invalid value: "object": max is 13, must be below 10"#,
            "spec.limits: Forbidden: unlucky",
            "spec.limits: Required value: unlucky",
            r#"spec.limits: Duplicate value: "object""#,
        ]
    );
    let types: Vec<ErrorType> = errors.iter().map(|e| e.error_type).collect();
    assert_eq!(types, [ErrorType::Invalid, ErrorType::Forbidden, ErrorType::Required, ErrorType::Duplicate]);
}

#[test]
fn message_expression_failure_falls_back_to_message() {
    let v = compile(spec_schema(json!({
        "x": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self < 5", "message": "too big", "messageExpression": "'' "},
        ]},
    })));
    // `'' ` compiles, but an empty message is not used.
    assert_eq!(create_errors(&v, &widget(json!({"x": 6}))), [r#"spec.x: Invalid value: "integer": too big"#]);
}

#[test]
fn common_functions() {
    let rules = [
        "size(self.items) == 3",
        "self.items.all(i, i.name.matches('^[a-z]+$'))",
        "self.items.exists(i, i.name == 'b')",
        "self.items.exists_one(i, i.name == 'c')",
        "self.items.map(i, i.name) == ['a', 'b', 'c']",
        "self.items.filter(i, i.weight > 1).size() == 2",
        "has(self.title) && !has(self.missing)",
        "self.title.endsWith('!') && self.title.contains('ll')",
        "'b' in self.items.map(i, i.name)",
        "int(self.ratio * 10.0) == 25 && double(self.count) == 4.0 && string(self.count) == '4'",
        "self.count > 3 ? true : false",
        "self.title + '?' == 'Hello!?'",
        "self.title.lowerAscii() == 'hello!' && self.title.upperAscii() == 'HELLO!'",
        "' x '.trim() == 'x' && 'a,b'.split(',') == ['a', 'b'] && ['a', 'b'].join('-') == 'a-b'",
        "self.labels.all(k, self.labels[k].startsWith('v'))",
        "self.items.map(i, i.weight).sum() == 6 && [3, 1].min() == 1 && [1, 2].isSorted()",
        "self.created < timestamp('2030-01-01T00:00:00Z')",
        "sets.contains(['a', 'b'], ['a']) && 'abc123'.find('[0-9]+') == '123'",
        "self.?missing.orValue('none') == 'none'",
        "type(self.count) == int && type(self.ratio) == double",
    ];
    let validations: Vec<Value> = rules.iter().map(|r| json!({"rule": r})).collect();
    let v = compile(json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": validations,
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "weight": {"type": "integer"},
                }}},
                "title": {"type": "string"},
                "missing": {"type": "string"},
                "ratio": {"type": "number"},
                "count": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "created": {"type": "string", "format": "date-time"},
            },
        }},
    }));
    let obj = widget(json!({
        "items": [{"name": "a", "weight": 1}, {"name": "b", "weight": 2}, {"name": "c", "weight": 3}],
        "title": "Hello!",
        "ratio": 2.5,
        "count": 4,
        "labels": {"x": "v1", "y": "v2"},
        "created": "2024-01-01T00:00:00Z",
    }));
    assert_eq!(create_errors(&v, &obj), Vec::<String>::new());
}

#[test]
fn numbers_are_doubles_even_when_integral() {
    let v = compile(spec_schema(json!({
        "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self == 2.0 && type(self) == double"}]},
    })));
    assert!(create_errors(&v, &widget(json!({"ratio": 2}))).is_empty());
}

#[test]
fn rules_in_list_items_and_map_values() {
    let v = compile(spec_schema(json!({
        "items": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "self.name != 'bad'", "message": "bad name"}],
        }},
        "labels": {"type": "object", "additionalProperties": {
            "type": "string",
            "x-kubernetes-validations": [{"rule": "self != 'bad'", "message": "bad label"}],
        }},
    })));
    assert_eq!(
        create_errors(
            &v,
            &widget(json!({"items": [{"name": "ok"}, {"name": "bad"}], "labels": {"a": "bad"}}))
        ),
        [
            r#"spec.items[1]: Invalid value: "object": bad name"#,
            r#"spec.labels[a]: Invalid value: "string": bad label"#
        ]
    );
}

#[test]
fn transition_rules_correlate_list_map_items_by_key() {
    let v = compile(spec_schema(json!({
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "port is immutable"}],
            },
        },
    })));
    let old = widget(json!({"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}));
    // Reordered and extended: items correlate by name, the new one has no old value.
    let new = widget(
        json!({"ports": [{"name": "c", "port": 3}, {"name": "b", "port": 2}, {"name": "a", "port": 1}]}),
    );
    assert!(update_errors(&v, &new, &old).is_empty());
    let new = widget(json!({"ports": [{"name": "b", "port": 5}, {"name": "a", "port": 1}]}));
    assert_eq!(
        update_errors(&v, &new, &old),
        [r#"spec.ports[0]: Invalid value: "object": port is immutable"#]
    );
}

#[test]
fn optional_old_self() {
    let v = compile(spec_schema(json!({
        "x": {
            "type": "string",
            "x-kubernetes-validations": [{
                "rule": "oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith('init-')",
                "message": "must start with init- and then never change",
                "optionalOldSelf": true,
            }],
        },
    })));
    assert!(create_errors(&v, &widget(json!({"x": "init-a"}))).is_empty());
    assert_eq!(
        create_errors(&v, &widget(json!({"x": "a"}))),
        [r#"spec.x: Invalid value: "string": must start with init- and then never change"#]
    );
    let old = widget(json!({"x": "init-a"}));
    assert!(update_errors(&v, &old, &old).is_empty());
    assert_eq!(update_errors(&v, &widget(json!({"x": "init-b"})), &old).len(), 1);
}

#[test]
fn unchanged_values_skip_rules_on_update() {
    let v = compile(spec_schema(json!({
        "x": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]},
        "y": {"type": "string"},
    })));
    let old = widget(json!({"x": "bad", "y": "1"}));
    // x is unchanged, so its (non-transition) rule is ratcheted.
    assert!(update_errors(&v, &widget(json!({"x": "bad", "y": "2"})), &old).is_empty());
    assert_eq!(update_errors(&v, &widget(json!({"x": "worse", "y": "1"})), &old).len(), 1);
}

#[test]
fn blocking_errors_skip_rules() {
    let v = compile(spec_schema(json!({
        "x": {"type": "string", "maxLength": 2, "x-kubernetes-validations": [{"rule": "self == 'ab'"}]},
    })));
    assert_eq!(
        create_errors(&v, &widget(json!({"x": "abc"}))),
        [
            "spec.x: Too long: may not be more than 2 bytes",
            r#"<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#,
        ]
    );
}

#[test]
fn runtime_errors() {
    let v = compile(spec_schema(json!({
        "n": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "10 / (self - self) == 1"},
            {"rule": "[1, 2][self] == 1", "message": "index"},
        ]},
    })));
    assert_eq!(
        create_errors(&v, &widget(json!({"n": 5}))),
        [
            r#"spec.n: Invalid value: "integer": division by zero evaluating rule: 10 / (self - self) == 1"#,
            r#"spec.n: Invalid value: "integer": index out of bounds: 5 evaluating rule: index"#,
        ]
    );
}

#[test]
fn int_or_string_is_dynamic() {
    let v = compile(spec_schema(json!({
        "port": {
            "x-kubernetes-int-or-string": true,
            "x-kubernetes-validations": [{"rule": "type(self) == int ? self > 0 : self.matches('^[a-z]+$')"}],
        },
    })));
    assert!(create_errors(&v, &widget(json!({"port": 80}))).is_empty());
    assert!(create_errors(&v, &widget(json!({"port": "http"}))).is_empty());
    assert_eq!(
        create_errors(&v, &widget(json!({"port": "HTTP"}))),
        [
            r#"spec.port: Invalid value: "": failed rule: type(self) == int ? self > 0 : self.matches('^[a-z]+$')"#
        ]
    );
}

#[test]
fn defaults_are_validated_by_rules_too() {
    let errors = Validator::compile(&spec_schema(json!({
        "x": {"type": "string", "default": "no", "x-kubernetes-validations": [{"rule": "self == 'yes'"}]},
    })))
    .unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        r#"openAPIV3Schema.properties[spec].properties[x].default: Invalid value: "string": failed rule: self == 'yes'"#
    );
}
