//! CEL values of JSON values, built as Kubernetes builds them (`UnstructuredToVal`):
//! integers as int, numbers as double, date-time strings as timestamps, durations as
//! durations, bytes as bytes, and root and embedded `metadata` cut down to `name` and
//! `generateName`. Strings borrow from the JSON rather than copying it.

use crate::env::CelEnv;
use crate::format;
use crate::schema::{Node, SchemaType};
use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString,
};
use cel::common::value::Val;
use serde_json::Value;
use std::collections::HashMap;

/// Builds the CEL value of `value` under the schema `node` (`None` where the schema says
/// nothing, e.g. preserved unknown fields, which convert by their JSON type).
/// `resource` marks the root of a resource, root or embedded, whose `metadata` CEL
/// sees as `name` and `generateName` only.
pub(crate) fn to_val<'v>(
    env: &CelEnv,
    value: &'v Value,
    node: Option<&Node>,
    resource: bool,
) -> Box<dyn Val + 'v> {
    let node = node.filter(|n| !n.int_or_string);
    match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => {
            let as_double = node.is_some_and(|n| n.ty == Some(SchemaType::Number));
            if let Some(i) = n.as_i64() {
                if as_double { Box::new(CelDouble::from(i as f64)) } else { Box::new(CelInt::from(i)) }
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                let integral = node.is_some_and(|n| n.ty == Some(SchemaType::Integer))
                    && f.fract() == 0.0
                    && f >= i64::MIN as f64
                    && f < i64::MAX as f64;
                if integral { Box::new(CelInt::from(f as i64)) } else { Box::new(CelDouble::from(f)) }
            }
        }
        Value::String(s) => string_val(env, s, node),
        Value::Array(items) => {
            let item_node = node.and_then(|n| n.items.as_deref());
            let embedded = item_node.is_some_and(|n| n.embedded);
            let list: Vec<Box<dyn Val + 'v>> =
                items.iter().map(|item| to_val(env, item, item_node, embedded)).collect();
            Box::new(CelList::from(list))
        }
        Value::Object(map) => {
            let mut out: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::with_capacity(map.len());
            for (k, v) in map {
                let val = if resource && k == "metadata" {
                    metadata_val(v)
                } else {
                    let child = node.and_then(|n| n.child(k));
                    to_val(env, v, child, child.is_some_and(|c| c.embedded))
                };
                out.insert(CelMapKey::String(CelString::from(k.as_str())), val);
            }
            Box::new(CelMap::from(out))
        }
    }
}

fn string_val<'v>(env: &CelEnv, s: &'v str, node: Option<&Node>) -> Box<dyn Val + 'v> {
    let format = node.filter(|n| n.ty == Some(SchemaType::String)).and_then(|n| n.format.as_deref());
    let converted = match format {
        Some("date-time") => env.convert(&env.timestamp, s),
        Some("date") if format::is_date(s) => env.convert(&env.timestamp, &format!("{s}T00:00:00Z")),
        Some("duration") => env.convert(&env.duration, s),
        Some("byte") => format::decode_base64(s).map(|b| Box::new(CelBytes::from(b)) as Box<dyn Val>),
        _ => None,
    };
    converted.unwrap_or_else(|| Box::new(CelString::from(s)))
}

/// `metadata` at a resource root, as CEL sees it: `name` and `generateName` only.
fn metadata_val(v: &Value) -> Box<dyn Val + '_> {
    let mut out: HashMap<CelMapKey<'_>, Box<dyn Val + '_>> = HashMap::new();
    if let Some(map) = v.as_object() {
        for key in ["name", "generateName"] {
            if let Some(Value::String(s)) = map.get(key) {
                out.insert(CelMapKey::String(CelString::from(key)), Box::new(CelString::from(s.as_str())));
            }
        }
    }
    Box::new(CelMap::from(out))
}

/// The CEL value of property `key` inside the CEL value of an object.
pub(crate) fn field<'b, 'v>(val: &'b (dyn Val + 'v), key: &'b str) -> Option<&'b (dyn Val + 'v)> {
    let map = val.downcast_ref::<CelMap>()?;
    map.inner().get(&CelMapKey::String(CelString::from(key))).map(|b| b.as_ref())
}

/// The CEL value of item `i` inside the CEL value of an array.
pub(crate) fn item<'b, 'v>(val: &'b (dyn Val + 'v), i: usize) -> Option<&'b (dyn Val + 'v)> {
    let list = val.downcast_ref::<CelList>()?;
    list.inner().get(i).map(|b| b.as_ref())
}
