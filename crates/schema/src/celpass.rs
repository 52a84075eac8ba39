//! The walk that evaluates every CEL rule of an object.

use crate::celval;
use crate::correlate::Correlation;
use crate::env::CelEnv;
use crate::error::FieldError;
use crate::eval::{self, NodeEval};
use crate::path::Path;
use crate::schema::{ListType, Node};
use cel::common::value::Val;
use serde_json::Value;

/// The walk that runs CEL rules, the new value, its CEL value and the correlated old
/// ones going down together. CEL values are built at the topmost nodes that have rules
/// and shared with the nodes below, so parts of the object no rule sees are never
/// converted.
pub(crate) struct CelPass<'e> {
    pub(crate) env: &'e CelEnv,
    pub(crate) errors: &'e mut Vec<FieldError>,
}

/// A correlated old value and, once converted, its CEL value.
type Old<'v, 'c> = Option<(&'v Value, Option<&'c (dyn Val + 'v)>)>;

/// What goes down the walk together at one node.
#[derive(Clone, Copy)]
pub(crate) struct Values<'v, 'c> {
    /// The new value.
    pub(crate) value: &'v Value,
    /// Its CEL value, once a node above has built it.
    pub(crate) val: Option<&'c (dyn Val + 'v)>,
    /// The correlated old value, if any.
    pub(crate) old: Old<'v, 'c>,
}

impl CelPass<'_> {
    /// Runs the rules of `node` and of the nodes below it; `resource` is whether the value is
    /// an object root or an embedded resource.
    pub(crate) fn node(&mut self, node: &Node, values: Values<'_, '_>, path: &Path<'_>, resource: bool) {
        let Values { value, val, old } = values;
        // Rules only see non-null values, and only a non-null old value correlates.
        if value.is_null() || !node.has_rules {
            return;
        }
        let old = old.filter(|(o, _)| !o.is_null());
        let unchanged = old.is_some_and(|(o, _)| o == value);
        if unchanged && !node.has_old_self_rules {
            return;
        }
        let (owned, owned_old);
        let (val, old) = match val {
            Some(v) => (v, old),
            None if node.rules.is_empty() => {
                return self.children(node, Values { value, val: None, old }, path, resource);
            }
            None => {
                owned = celval::to_val(self.env, value, Some(node), resource);
                owned_old = match old {
                    Some((o, _)) if node.has_old_self_rules => {
                        Some(celval::to_val(self.env, o, Some(node), resource))
                    }
                    _ => None,
                };
                (owned.as_ref(), old.map(|(o, _)| (o, owned_old.as_deref())))
            }
        };
        if !node.rules.is_empty() {
            let at = NodeEval { node, path, this: val, old: old.and_then(|(_, v)| v), unchanged };
            eval::eval_rules(self.env, &at, self.errors);
        }
        self.children(node, Values { value, val: Some(val), old }, path, resource);
    }

    fn children(&mut self, node: &Node, values: Values<'_, '_>, path: &Path<'_>, resource: bool) {
        let Values { value, val, old } = values;
        match value {
            Value::Object(map) => node.for_each_child(map, |k, v, child, is_key| {
                if (resource && k == "metadata" && !is_key) || !child.has_rules {
                    return;
                }
                let child_val = match val {
                    Some(val) => match celval::field(val, k) {
                        Some(cv) => Some(cv),
                        None => return,
                    },
                    None => None,
                };
                let child_old = old.and_then(|(o, ov)| {
                    let o = o.get(k)?;
                    Some((o, ov.and_then(|ov| celval::field(ov, k))))
                });
                let p = if is_key { path.key(k) } else { path.child(k) };
                self.node(child, Values { value: v, val: child_val, old: child_old }, &p, child.embedded);
            }),
            Value::Array(items) => {
                let Some(item_node) = node.items.as_deref().filter(|i| i.has_rules) else { return };
                let correlation = Correlation::new(node, old.map(|(o, _)| o));
                for (i, item) in items.iter().enumerate() {
                    let item_val = match val {
                        Some(val) => match celval::item(val, i) {
                            Some(iv) => Some(iv),
                            None => continue,
                        },
                        None => None,
                    };
                    let item_old = if node.list_type == ListType::Map {
                        correlation.old_index(node, item).and_then(|j| {
                            let (o, ov) = old?;
                            Some((o.as_array()?.get(j)?, ov.and_then(|ov| celval::item(ov, j))))
                        })
                    } else {
                        None
                    };
                    let values = Values { value: item, val: item_val, old: item_old };
                    self.node(item_node, values, &path.index(i), item_node.embedded);
                }
            }
            _ => {}
        }
    }
}
