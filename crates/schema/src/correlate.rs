//! Correlating new values with old ones on update, as Kubernetes does for ratcheting
//! and transition rules: through object properties and map keys, and through arrays
//! only by the keys of `x-kubernetes-list-type: map` (and by value for sets).

use crate::schema::{ListType, Node};
use serde_json::Value;
use std::collections::HashMap;

/// How the items of a new array find their old counterparts: by the map keys for
/// `x-kubernetes-list-type: map`, by value for `set`, not at all for atomic lists.
pub(crate) struct Correlation<'a> {
    old: Option<&'a [Value]>,
    by_key: HashMap<String, usize>,
}

impl<'a> Correlation<'a> {
    pub(crate) fn new(node: &Node, old: Option<&'a Value>) -> Self {
        let old = old.and_then(Value::as_array).map(Vec::as_slice);
        let mut by_key = HashMap::new();
        if node.list_type == ListType::Map
            && let Some(items) = old
        {
            for (i, item) in items.iter().enumerate() {
                if let Some(k) = map_key(node, item) {
                    by_key.entry(k).or_insert(i);
                }
            }
        }
        Correlation { old, by_key }
    }

    /// The index of the old item `item` correlates with.
    pub(crate) fn old_index(&self, node: &Node, item: &Value) -> Option<usize> {
        let old = self.old?;
        match node.list_type {
            ListType::Map => self.by_key.get(&map_key(node, item)?).copied(),
            ListType::Set => old.iter().position(|o| o == item),
            ListType::Atomic => None,
        }
    }

    pub(crate) fn old_item(&self, node: &Node, item: &Value) -> Option<&'a Value> {
        self.old_index(node, item).and_then(|i| self.old?.get(i))
    }
}

/// The key of a list-map item, serialized so keys compare and hash.
fn map_key(node: &Node, item: &Value) -> Option<String> {
    let obj = item.as_object()?;
    let keys: Vec<&Value> = node.map_keys.iter().map(|k| obj.get(k).unwrap_or(&Value::Null)).collect();
    serde_json::to_string(&keys).ok()
}
