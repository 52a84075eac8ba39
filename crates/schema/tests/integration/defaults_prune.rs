//! Structural defaulting and pruning.

use crate::common;

use common::{compile, spec_schema, widget};
use serde_json::json;

#[test]
fn defaults_apply_to_absent_fields_recursively() {
    let v = compile(spec_schema(json!({
        "replicas": {"type": "integer", "default": 1},
        "set": {"type": "integer", "default": 1},
        "strategy": {
            "type": "object",
            "default": {},
            "properties": {"type": {"type": "string", "default": "Rolling"}, "max": {"type": "integer"}},
        },
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "weight": {"type": "integer", "default": 10},
        }}},
        "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "on": {"type": "boolean", "default": true},
        }}},
    })));
    let mut obj = widget(json!({"set": 5, "items": [{}, {"weight": 2}], "labels": {"a": {}}}));
    v.apply_defaults(&mut obj);
    assert_eq!(
        obj["spec"],
        json!({
            "replicas": 1,
            "set": 5,
            "strategy": {"type": "Rolling"},
            "items": [{"weight": 10}, {"weight": 2}],
            "labels": {"a": {"on": true}},
        })
    );
    // Metadata is the server's.
    assert_eq!(obj["metadata"], json!({"name": "w"}));
}

#[test]
fn nulls_are_defaulted_or_dropped_unless_nullable() {
    let v = compile(spec_schema(json!({
        "foo": {"type": "string"},
        "bar": {"type": "string", "nullable": true},
        "baz": {"type": "string", "default": "b"},
        "list": {"type": "array", "items": {"type": "string", "default": "d"}},
    })));
    let mut obj = widget(json!({"foo": null, "bar": null, "baz": null, "list": [null, "x"]}));
    v.apply_defaults(&mut obj);
    assert_eq!(obj["spec"], json!({"bar": null, "baz": "b", "list": ["d", "x"]}));
}

#[test]
fn defaults_inside_a_missing_object_are_not_invented() {
    let v = compile(spec_schema(json!({
        "strategy": {"type": "object", "properties": {"type": {"type": "string", "default": "Rolling"}}},
    })));
    let mut obj = widget(json!({}));
    v.apply_defaults(&mut obj);
    assert_eq!(obj["spec"], json!({}));
}

#[test]
fn pruning_drops_unknown_fields_and_reports_them() {
    let v = compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "known": {"type": "string"},
            "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                "inner": {"type": "object", "properties": {"x": {"type": "string"}}},
            }},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
        }}},
    }));
    let mut obj = json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "labels": {"a": "b"}},
        "status": {"x": 1},
        "spec": {
            "known": "k",
            "foo": 1,
            "items": [{"name": "n", "bar": true}],
            "labels": {"l": {"a": "1", "b": "2"}},
            "free": {"anything": {"goes": 1}, "inner": {"x": "1", "y": "2"}},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "extra": 1},
        },
    });
    let pruned = v.prune(&mut obj);
    assert_eq!(
        pruned,
        [
            "spec.foo",
            "spec.free.inner.y",
            "spec.items[0].bar",
            "spec.labels.l.b",
            "spec.template.extra",
            "status",
        ]
    );
    assert_eq!(
        obj,
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "labels": {"a": "b"}},
            "spec": {
                "known": "k",
                "items": [{"name": "n"}],
                "labels": {"l": {"a": "1"}},
                "free": {"anything": {"goes": 1}, "inner": {"x": "1"}},
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
            },
        })
    );
}

#[test]
fn preserve_unknown_fields_at_the_root_keeps_everything() {
    let v = compile(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    let mut obj = widget(json!({"anything": [1, 2]}));
    let before = obj.clone();
    assert!(v.prune(&mut obj).is_empty());
    assert_eq!(obj, before);
}

#[test]
fn validator_is_shareable() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<fundament_schema::Validator>();
}
