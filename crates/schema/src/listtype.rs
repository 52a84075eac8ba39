//! `x-kubernetes-list-type: set` and `map` uniqueness (`structurallisttype`).

use crate::error::{BadValue, FieldError};
use crate::path::Path;
use crate::schema::{ListType, Node};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Appends the duplicate errors of the set and map lists in `x`.
pub(crate) fn validate(node: &Node, x: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    match x {
        Value::Object(map) => {
            node.for_each_child(map, |k, v, child, _| {
                // The apiserver names map values as children here, not as keys.
                if v.is_array() || v.is_object() {
                    validate(child, v, &path.child(k), errors);
                }
            });
        }
        Value::Array(items) => {
            match node.list_type {
                ListType::Set => set(items, path, errors),
                ListType::Map => list_map(node, items, path, errors),
                ListType::Atomic => {}
            }
            if let Some(item_node) = node.items.as_deref() {
                for (i, item) in items.iter().enumerate() {
                    if item.is_array() || item.is_object() {
                        validate(item_node, item, &path.index(i), errors);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Each repeated value is reported once, at its second occurrence.
fn set(items: &[Value], path: &Path<'_>, errors: &mut Vec<FieldError>) {
    if items.len() <= 1 {
        return;
    }
    let mut seen: HashMap<String, u32> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = serde_json::to_string(item).unwrap_or_default();
        let times = seen.entry(key).or_insert(0);
        *times += 1;
        if *times == 2 {
            errors.push(FieldError::duplicate(path.index(i).field(), BadValue::Json(item.clone())));
        }
    }
}

fn list_map(node: &Node, items: &[Value], path: &Path<'_>, errors: &mut Vec<FieldError>) {
    for (i, item) in items.iter().enumerate() {
        if !item.is_null() && !item.is_object() {
            errors.push(FieldError::invalid(
                path.index(i).field(),
                BadValue::Json(item.clone()),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if items.len() <= 1 {
        return;
    }
    let item_node = node.items.as_deref();
    let mut seen: HashMap<String, u32> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let obj = item.as_object();
        let mut key_map = Map::new();
        let mut key = Vec::with_capacity(node.map_keys.len());
        for k in &node.map_keys {
            let v = obj
                .and_then(|o| o.get(k))
                .or_else(|| item_node.and_then(|n| n.properties.get(k)).and_then(|p| p.default.as_ref()));
            if let Some(v) = v {
                key_map.insert(k.clone(), v.clone());
            }
            key.push(v.cloned());
        }
        let key = serde_json::to_string(&key).unwrap_or_default();
        let times = seen.entry(key).or_insert(0);
        *times += 1;
        if *times == 2 {
            errors.push(FieldError::duplicate(path.index(i).field(), BadValue::Json(Value::Object(key_map))));
        }
    }
}
