//! Structural defaulting, as kube-apiserver applies it to custom resources read from a
//! request or from storage (`structuraldefaulting.Default`), together with the pruning
//! of nulls that comes with it (`PruneNonNullableNullsWithoutDefaults`): a `null` where
//! the schema is not nullable is replaced by the default if there is one, dropped
//! otherwise.

use crate::schema::Node;
use serde_json::Value;

/// Applies the defaults of `node` and below to `x`. `resource` marks the root of a
/// resource, whose `metadata` is the server's business.
pub(crate) fn apply(node: &Node, x: &mut Value, resource: bool) {
    match x {
        Value::Object(map) => {
            // Nulls the schema doesn't allow and can't default go first.
            map.retain(|k, v| {
                if !v.is_null() || (resource && k == "metadata") {
                    return true;
                }
                match node.properties.get(k).or(node.additional.as_deref()) {
                    Some(child) => child.nullable || child.default.is_some(),
                    None => true,
                }
            });
            for (k, prop) in &node.properties {
                let Some(default) = &prop.default else { continue };
                if resource && k == "metadata" {
                    continue;
                }
                match map.get_mut(k) {
                    None => {
                        map.insert(k.clone(), default.clone());
                    }
                    Some(v) if v.is_null() && !prop.nullable => *v = default.clone(),
                    Some(_) => {}
                }
            }
            for (k, v) in map.iter_mut() {
                if resource && k == "metadata" {
                    continue;
                }
                if let Some(prop) = node.properties.get(k) {
                    apply(prop, v, prop.embedded);
                } else if let Some(add) = node.additional.as_deref() {
                    if v.is_null()
                        && !add.nullable
                        && let Some(d) = &add.default
                    {
                        *v = d.clone();
                    }
                    apply(add, v, add.embedded);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_node) = node.items.as_deref() else { return };
            for item in items.iter_mut() {
                if item.is_null()
                    && !item_node.nullable
                    && let Some(d) = &item_node.default
                {
                    *item = d.clone();
                }
                apply(item_node, item, item_node.embedded);
            }
        }
        _ => {}
    }
}
