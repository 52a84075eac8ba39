//! The compiled form of a structural schema: parsed once per CRD version so that
//! defaulting, pruning and validation walk plain Rust data, with regexes and CEL
//! programs ready to run.

use crate::rules::Rule;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The `type` of a schema node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchemaType {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl SchemaType {
    pub(crate) fn parse(s: &str) -> Option<SchemaType> {
        Some(match s {
            "object" => SchemaType::Object,
            "array" => SchemaType::Array,
            "string" => SchemaType::String,
            "integer" => SchemaType::Integer,
            "number" => SchemaType::Number,
            "boolean" => SchemaType::Boolean,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            SchemaType::Object => "object",
            SchemaType::Array => "array",
            SchemaType::String => "string",
            SchemaType::Integer => "integer",
            SchemaType::Number => "number",
            SchemaType::Boolean => "boolean",
        }
    }
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ListType {
    #[default]
    Atomic,
    Set,
    Map,
}

/// A `pattern`, kept with its source for the error message.
#[derive(Debug)]
pub(crate) struct Pattern {
    pub(crate) source: String,
    pub(crate) regex: Regex,
}

/// One node of a structural schema.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub(crate) ty: Option<SchemaType>,
    pub(crate) nullable: bool,
    pub(crate) format: Option<String>,
    pub(crate) properties: BTreeMap<String, Node>,
    /// `additionalProperties`: a schema, or an empty node for `true`.
    pub(crate) additional: Option<Box<Node>>,
    pub(crate) items: Option<Box<Node>>,
    pub(crate) required: Vec<String>,
    pub(crate) enumeration: Option<Vec<Value>>,
    pub(crate) pattern: Option<Pattern>,
    pub(crate) maximum: Option<f64>,
    pub(crate) exclusive_maximum: bool,
    pub(crate) minimum: Option<f64>,
    pub(crate) exclusive_minimum: bool,
    pub(crate) multiple_of: Option<f64>,
    pub(crate) max_length: Option<i64>,
    pub(crate) min_length: Option<i64>,
    pub(crate) max_items: Option<i64>,
    pub(crate) min_items: Option<i64>,
    pub(crate) max_properties: Option<i64>,
    pub(crate) min_properties: Option<i64>,
    pub(crate) default: Option<Value>,
    pub(crate) preserve_unknown: bool,
    pub(crate) int_or_string: bool,
    pub(crate) embedded: bool,
    pub(crate) list_type: ListType,
    pub(crate) map_keys: Vec<String>,
    pub(crate) all_of: Vec<Node>,
    pub(crate) any_of: Vec<Node>,
    pub(crate) one_of: Vec<Node>,
    pub(crate) not: Option<Box<Node>>,
    pub(crate) rules: Vec<Rule>,
    /// Whether this node or one below has CEL rules: walks skip subtrees without.
    pub(crate) has_rules: bool,
    /// Whether this node or one below has rules that read `oldSelf`.
    pub(crate) has_old_self_rules: bool,
    /// Whether this node or one below sets a default.
    pub(crate) has_defaults: bool,
}

impl Node {
    /// The schema of the value under `key` of an object at this node.
    pub(crate) fn child(&self, key: &str) -> Option<&Node> {
        self.properties.get(key).or(self.additional.as_deref())
    }

    /// Calls `f` with each entry of `map` the schema describes, with its schema and
    /// whether it is a map key (additionalProperties) rather than a property: declared
    /// properties by name, then map keys by name, so that errors come in the same order
    /// whatever order the object's fields were written in.
    pub(crate) fn for_each_child<'a>(
        &'a self,
        map: &'a Map<String, Value>,
        mut f: impl FnMut(&'a str, &'a Value, &'a Node, bool),
    ) {
        for (k, prop) in &self.properties {
            if let Some(v) = map.get(k) {
                f(k, v, prop, false);
            }
        }
        if let Some(add) = self.additional.as_deref() {
            let mut keys: Vec<&String> = map.keys().filter(|k| !self.properties.contains_key(*k)).collect();
            keys.sort_unstable();
            for k in keys {
                f(k, &map[k], add, true);
            }
        }
    }

    /// The type name CEL errors print as their bad value (`"object"`, or `""` for an
    /// untyped node such as int-or-string).
    pub(crate) fn type_name(&self) -> &'static str {
        self.ty.map_or("", SchemaType::name)
    }
}
