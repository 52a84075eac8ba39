//! Property test: compiling, validating, defaulting and pruning never panic, whatever
//! the schema and the object.

use fundament_schema::Validator;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Arbitrary JSON, biased towards the keys and values schemas use so that generated
/// schemas reach deep into the compiler.
fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("type".to_owned()),
        Just("properties".to_owned()),
        Just("items".to_owned()),
        Just("required".to_owned()),
        Just("enum".to_owned()),
        Just("default".to_owned()),
        Just("nullable".to_owned()),
        Just("pattern".to_owned()),
        Just("format".to_owned()),
        Just("minimum".to_owned()),
        Just("maxLength".to_owned()),
        Just("maxItems".to_owned()),
        Just("additionalProperties".to_owned()),
        Just("anyOf".to_owned()),
        Just("x-kubernetes-preserve-unknown-fields".to_owned()),
        Just("x-kubernetes-int-or-string".to_owned()),
        Just("x-kubernetes-embedded-resource".to_owned()),
        Just("x-kubernetes-list-type".to_owned()),
        Just("x-kubernetes-list-map-keys".to_owned()),
        Just("x-kubernetes-validations".to_owned()),
        Just("rule".to_owned()),
        Just("fieldPath".to_owned()),
        Just("metadata".to_owned()),
        Just("spec".to_owned()),
        "[a-z]{1,3}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("object"),
            Just("array"),
            Just("string"),
            Just("integer"),
            Just("number"),
            Just("boolean"),
            Just("map"),
            Just("set"),
            Just("date-time"),
            Just("byte"),
            Just("self == oldSelf"),
            Just("self.a == 1"),
            Just("size(self) > 0"),
            Just(".a"),
            Just("[a-"),
        ]
        .prop_map(|s| Value::String(s.to_owned())),
        "\\PC{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// Structural schemas that mostly compile, so values are checked against real ones.
fn arb_schema() -> impl Strategy<Value = Value> {
    let name = prop_oneof![Just("a"), Just("b"), Just("c"), Just("metadata")];
    let rule = prop_oneof![
        Just("self == self"),
        Just("self == oldSelf"),
        Just("size(self) >= 0"),
        Just("has(self.a) || true"),
        Just("type(self) == int"),
        Just("self.a == 1"),
    ];
    let rules = prop::option::of(prop::collection::vec(rule, 1..3)).prop_map(|r| {
        r.map(|r| Value::from(r.into_iter().map(|rule| json!({"rule": rule})).collect::<Vec<_>>()))
    });
    let leaf = prop_oneof![
        (
            prop::option::of(0i64..5),
            prop::option::of(prop_oneof![Just("^[a-z]*$"), Just("\\d"), Just("(")]),
            prop::option::of(prop_oneof![Just("date-time"), Just("byte"), Just("uuid")]),
            any::<bool>()
        )
            .prop_map(|(max, pattern, format, nullable)| {
                let mut s = json!({"type": "string", "nullable": nullable});
                if let Some(m) = max {
                    s["maxLength"] = json!(m);
                }
                if let Some(p) = pattern {
                    s["pattern"] = json!(p);
                }
                if let Some(f) = format {
                    s["format"] = json!(f);
                }
                s
            }),
        (prop::option::of(-5i64..5), prop::option::of(-5i64..5), any::<bool>()).prop_map(
            |(min, default, excl)| {
                let mut s = json!({"type": "integer", "exclusiveMinimum": excl});
                if let Some(m) = min {
                    s["minimum"] = json!(m);
                }
                if let Some(d) = default {
                    s["default"] = json!(d);
                }
                s
            }
        ),
        Just(json!({"type": "number", "multipleOf": 0.5, "maximum": 10})),
        Just(json!({"type": "boolean", "enum": [true]})),
        Just(json!({"x-kubernetes-int-or-string": true})),
        Just(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
        ),
    ];
    leaf.prop_recursive(4, 32, 4, move |inner| {
        prop_oneof![
            (prop::collection::btree_map(name.clone(), inner.clone(), 0..4), any::<bool>(), rules.clone(),
             prop::collection::vec(name.clone(), 0..2))
                .prop_map(|(props, preserve, rules, required)| {
                    let mut s = json!({"type": "object", "properties": props, "required": required});
                    if preserve { s["x-kubernetes-preserve-unknown-fields"] = json!(true); }
                    if let Some(r) = rules { s["x-kubernetes-validations"] = r; }
                    s
                }),
            (inner.clone(), prop_oneof![Just("atomic"), Just("set")], prop::option::of(0i64..4)).prop_map(
                |(items, list_type, max)| {
                    let mut s = json!({"type": "array", "items": items, "x-kubernetes-list-type": list_type});
                    if let Some(m) = max { s["maxItems"] = json!(m); }
                    s
                }
            ),
            (inner.clone(), rules.clone()).prop_map(|(items, rules)| {
                let mut s = json!({"type": "object", "additionalProperties": items});
                if let Some(r) = rules { s["x-kubernetes-validations"] = r; }
                s
            }),
            inner.prop_map(|item| json!({
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["a"],
                "items": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}, "b": item},
                          "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]},
            })),
        ]
    })
}

/// Prunes, defaults and validates; pruning and defaulting are idempotent.
fn exercise(v: &Validator, obj: &Value, old: &Value) {
    let mut obj = obj.clone();
    let _ = v.prune(&mut obj);
    assert_eq!(v.prune(&mut obj), Vec::<String>::new(), "pruning twice prunes nothing more");
    v.apply_defaults(&mut obj);
    let once = obj.clone();
    v.apply_defaults(&mut obj);
    assert_eq!(obj, once, "defaulting twice changes nothing more");
    for e in v.validate(&obj, None) {
        let _ = (e.to_string(), e.reason(), e.message_without_field());
    }
    let _ = v.validate(&obj, Some(old));
}

proptest! {
    #![proptest_config(fundament_fuzzing::config(512))]

    #[test]
    fn arbitrary_schemas_and_values(schema in arb_json(), obj in arb_json(), old in arb_json()) {
        if let Ok(v) = Validator::compile(&schema) {
            exercise(&v, &obj, &old);
        }
    }

    #[test]
    fn generated_schemas_and_values(spec in arb_schema(), obj in arb_json(), old in arb_json()) {
        let schema = json!({"type": "object", "properties": {"spec": spec}});
        if let Ok(v) = Validator::compile(&schema) {
            let wrap = |spec: Value| json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": spec});
            exercise(&v, &wrap(obj.clone()), &wrap(old));
            exercise(&v, &wrap(obj.clone()), &wrap(obj));
        }
    }

    #[test]
    fn arbitrary_values_against_a_rich_schema(spec in arb_json(), old_spec in arb_json()) {
        let v = Validator::compile(&json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.name.size() < 100"}],
            "properties": {"spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}, {"rule": "!has(self.a) || self.a != 'x'"}],
                "properties": {
                    "a": {"type": "string", "maxLength": 3, "pattern": "^[a-z]*$", "format": "date-time"},
                    "n": {"type": "number", "minimum": 0, "multipleOf": 0.5},
                    "list": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                        "items": {"type": "object", "required": ["k"], "properties": {
                            "k": {"type": "string"}, "v": {"type": "integer", "default": 1},
                        }, "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}]}},
                    "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "map": {"type": "object", "additionalProperties": {"type": "string", "enum": ["a", "b"]}},
                    "ios": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{"rule": "self == self"}]},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true},
                },
            }},
        }))
        .expect("schema compiles");
        let obj = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": spec});
        let old = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": old_spec});
        exercise(&v, &obj, &old);
    }
}
