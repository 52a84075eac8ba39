//! Pruning: dropping fields the schema doesn't declare, as kube-apiserver does before
//! storing a custom resource (`structuralpruning.Prune`).
//!
//! `x-kubernetes-preserve-unknown-fields` keeps the unknown fields of its object (the
//! known ones are still pruned inside). At the root and in embedded resources
//! `apiVersion`, `kind` and `metadata` are left alone: the server owns `metadata`.

use crate::schema::Node;
use serde_json::Value;

/// Prunes `obj` as the root of a resource; returns the dropped paths, sorted
/// (`spec.foo`, `spec.items[0].bar`).
pub(crate) fn prune_root(root: &Node, obj: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    let mut path = String::new();
    prune(Some(root), obj, true, &mut path, &mut Some(&mut pruned));
    pruned.sort();
    pruned
}

/// Prunes a value of `node` (not a resource root), e.g. a default.
pub(crate) fn prune_value(node: &Node, value: &mut Value) {
    let mut path = String::new();
    prune(Some(node), value, node.embedded, &mut path, &mut None);
}

/// `path` is the path of `x`, extended and restored as the walk goes down; `pruned`
/// collects dropped paths when the caller wants them.
fn prune(
    node: Option<&Node>,
    x: &mut Value,
    resource: bool,
    path: &mut String,
    pruned: &mut Option<&mut Vec<String>>,
) {
    if let Some(n) = node
        && n.preserve_unknown
    {
        return skip_prune(n, x, resource, path, pruned);
    }
    let len = path.len();
    match x {
        Value::Object(map) => {
            let Some(n) = node else {
                for k in map.keys() {
                    record(path, k, pruned);
                }
                map.clear();
                return;
            };
            map.retain(|k, v| {
                if resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    return true;
                }
                let child = n.properties.get(k).or(n.additional.as_deref());
                match child {
                    Some(c) => {
                        append_key(path, k);
                        prune(Some(c), v, c.embedded, path, pruned);
                        path.truncate(len);
                        true
                    }
                    None => {
                        record(path, k, pruned);
                        false
                    }
                }
            });
        }
        Value::Array(items) => {
            let item_node = node.and_then(|n| n.items.as_deref());
            for (i, item) in items.iter_mut().enumerate() {
                append_index(path, i);
                prune(item_node, item, item_node.is_some_and(|n| n.embedded), path, pruned);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are
/// pruned by their own schemas.
fn skip_prune(
    node: &Node,
    x: &mut Value,
    resource: bool,
    path: &mut String,
    pruned: &mut Option<&mut Vec<String>>,
) {
    let len = path.len();
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(c) = node.properties.get(k).or(node.additional.as_deref()) {
                    append_key(path, k);
                    prune(Some(c), v, c.embedded, path, pruned);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_node) = node.items.as_deref() {
                for (i, item) in items.iter_mut().enumerate() {
                    append_index(path, i);
                    skip_prune(item_node, item, item_node.embedded, path, pruned);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn append_key(path: &mut String, k: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(k);
}

fn append_index(path: &mut String, i: usize) {
    use std::fmt::Write;
    let _ = write!(path, "[{i}]");
}

fn record(path: &str, k: &str, pruned: &mut Option<&mut Vec<String>>) {
    if let Some(list) = pruned {
        let mut p = path.to_owned();
        append_key(&mut p, k);
        list.push(p);
    }
}
