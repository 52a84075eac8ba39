//! Validation of an object against its schema, in kube-apiserver's order: OpenAPI
//! value validation (kube-openapi), embedded resources, list-type uniqueness, then the
//! CEL rules, which are skipped when an earlier error makes the object unfit for them.
//!
//! On update, errors are ratcheted as with the `CRDValidationRatcheting` feature
//! (on by default since 1.30): a value that equals its correlated old value reports no
//! OpenAPI errors and runs no rules but transition rules.

use crate::celpass::{CelPass, Values};
use crate::correlate::Correlation;
use crate::embedded;
use crate::env::CelEnv;
use crate::error::{BadValue, ErrorType, FieldError};
use crate::format;
use crate::gofmt;
use crate::listtype;
use crate::path::Path;
use crate::schema::{Node, SchemaType};
use serde_json::{Map, Value};

/// Validates `new` (and, on update, against `old`) with `node` as its schema.
/// `resource` marks the root of a resource.
pub(crate) fn validate_value(
    env: &CelEnv,
    node: &Node,
    new: &Value,
    old: Option<&Value>,
    resource: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let root = Path::Root;
    schema_node(node, new, old, &root, resource, &mut errors);
    embedded::validate(node, new, &root, resource, &mut errors);
    let old_lists_ok = old.is_none_or(|o| {
        let mut old_errors = Vec::new();
        listtype::validate(node, o, &root, &mut old_errors);
        old_errors.is_empty()
    });
    if old_lists_ok {
        listtype::validate(node, new, &root, &mut errors);
    }
    if node.has_rules {
        if errors.iter().any(is_blocking) {
            errors.push(FieldError::invalid(
                "<nil>",
                BadValue::Json(Value::Null),
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
        } else {
            let mut pass = CelPass { env, errors: &mut errors };
            pass.node(node, Values { value: new, val: None, old: old.map(|o| (o, None)) }, &root, resource);
        }
    }
    errors
}

/// `hasBlockingErr`: errors after which the apiserver doesn't run CEL rules.
fn is_blocking(e: &FieldError) -> bool {
    matches!(
        e.error_type,
        ErrorType::NotSupported
            | ErrorType::Required
            | ErrorType::TooLong
            | ErrorType::TooMany
            | ErrorType::TypeInvalid
    )
}

/// Go's `swag.IsFloat64AJSONInteger`.
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_992.0; // 2^53
    f.is_finite() && (-MAX..=MAX).contains(&f) && f.fract() == 0.0
}

fn type_matches(ty: SchemaType, v: &Value) -> bool {
    match (ty, v) {
        (SchemaType::Object, Value::Object(_))
        | (SchemaType::Array, Value::Array(_))
        | (SchemaType::String, Value::String(_))
        | (SchemaType::Boolean, Value::Bool(_))
        | (SchemaType::Number, Value::Number(_)) => true,
        (SchemaType::Integer, Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(is_json_integer)
        }
        _ => false,
    }
}

/// OpenAPI value validation of one node and, recursively, its children.
fn schema_node(
    node: &Node,
    value: &Value,
    old: Option<&Value>,
    path: &Path<'_>,
    resource: bool,
    errors: &mut Vec<FieldError>,
) {
    if old == Some(value) {
        // Ratcheting: an unchanged value keeps whatever errors it had.
        return;
    }
    let name = || path.render();
    if value.is_null() {
        if let Some(ty) = node.ty
            && !node.nullable
        {
            errors.push(FieldError::type_invalid(
                path.field(),
                BadValue::string("null"),
                format!("{} in body must be of type {}: \"null\"", name(), ty.name()),
            ));
        }
        if !node.nullable {
            enumeration(node, value, path, errors);
        }
        return;
    }
    if let Some(ty) = node.ty
        && !type_matches(ty, value)
    {
        let found = gofmt::json_type_name(value);
        errors.push(FieldError::type_invalid(
            path.field(),
            BadValue::string(found),
            format!("{} in body must be of type {}: {}", name(), ty.name(), gofmt::quote(found)),
        ));
    }
    junctors(node, value, path, errors);
    match value {
        Value::String(s) => string(node, s, path, errors),
        Value::Number(n) => number(node, n.as_f64().unwrap_or(f64::NAN), path, errors),
        Value::Array(items) => array(node, items, old, path, errors),
        _ => {}
    }
    enumeration(node, value, path, errors);
    if let Value::Object(map) = value {
        object(node, map, old.and_then(Value::as_object), path, resource, errors);
    }
}

/// Errors of validating `value` against a junctor branch alone.
fn branch(node: &Node, value: &Value, path: &Path<'_>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    schema_node(node, value, None, path, false, &mut errors);
    errors
}

fn composite(detail: String) -> FieldError {
    // kube-openapi reports these as plain errors, which the apiserver puts at the
    // root with an empty value.
    FieldError::invalid("<nil>", BadValue::string(""), detail)
}

fn junctors(node: &Node, value: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    if !node.all_of.is_empty() {
        let mut validated = 0;
        for b in &node.all_of {
            let r = branch(b, value, path);
            if r.is_empty() {
                validated += 1;
            }
            errors.extend(r);
        }
        if validated != node.all_of.len() {
            let extra = if validated == 0 { ". None validated" } else { "" };
            errors.push(composite(format!("{} must validate all the schemas (allOf){extra}", path.render())));
        }
    }
    if !node.any_of.is_empty() {
        let mut best: Option<Vec<FieldError>> = None;
        let mut ok = false;
        for b in &node.any_of {
            let r = branch(b, value, path);
            if r.is_empty() {
                ok = true;
                break;
            }
            if best.as_ref().is_none_or(|best| r.len() < best.len()) {
                best = Some(r);
            }
        }
        if !ok {
            errors.push(composite(format!("{} must validate at least one schema (anyOf)", path.render())));
            errors.extend(best.unwrap_or_default());
        }
    }
    if !node.one_of.is_empty() {
        let mut best: Option<Vec<FieldError>> = None;
        let mut validated = 0;
        for b in &node.one_of {
            let r = branch(b, value, path);
            if r.is_empty() {
                validated += 1;
            } else if validated == 0 && best.as_ref().is_none_or(|best| r.len() < best.len()) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let extra = if validated == 0 {
                "Found none valid".to_owned()
            } else {
                format!("Found {validated} valid alternatives")
            };
            errors.push(composite(format!(
                "{} must validate one and only one schema (oneOf). {extra}",
                path.render()
            )));
            if validated == 0 {
                errors.extend(best.unwrap_or_default());
            }
        }
    }
    if let Some(not) = &node.not
        && branch(not, value, path).is_empty()
    {
        errors.push(composite(format!("{} must not validate the schema (not)", path.render())));
    }
}

fn string(node: &Node, s: &str, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    // kube-openapi stops at the first of maxLength, minLength, pattern.
    let needs_len = node.max_length.is_some() || node.min_length.is_some();
    let len = if needs_len { s.chars().count() as i64 } else { 0 };
    if let Some(max) = node.max_length
        && len > max
    {
        errors.push(FieldError::too_long(path.field(), BadValue::string(s), max));
    } else if let Some(min) = node.min_length
        && len < min
    {
        errors.push(FieldError::invalid(
            path.field(),
            BadValue::string(s),
            format!("{} in body should be at least {min} chars long", path.render()),
        ));
    } else if let Some(p) = &node.pattern
        && !p.regex.is_match(s)
    {
        errors.push(FieldError::invalid(
            path.field(),
            BadValue::string(s),
            format!("{} in body should match '{}'", path.render(), p.source),
        ));
    }
    if let Some(f) = &node.format
        && format::is_known(f)
        && !format::validates(f, s)
    {
        errors.push(FieldError::type_invalid(
            path.field(),
            BadValue::string(s),
            format!("{} in body must be of type {f}: {}", path.render(), gofmt::quote(s)),
        ));
    }
}

fn number(node: &Node, data: f64, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    let bad = || BadValue::Json(serde_json::Number::from_f64(data).map_or(Value::Null, Value::Number));
    if let Some(factor) = node.multiple_of {
        let mult = if factor < 1.0 { 1.0 / factor * data } else { data / factor };
        if !is_json_integer(mult) {
            errors.push(FieldError::invalid(
                path.field(),
                bad(),
                format!("{} in body should be a multiple of {}", path.render(), gofmt::float(factor)),
            ));
        }
    }
    let bounds = [
        (node.minimum, node.exclusive_minimum, Bound::Minimum),
        (node.maximum, node.exclusive_maximum, Bound::Maximum),
    ];
    for (limit, exclusive, bound) in bounds {
        let Some(limit) = limit else { continue };
        if bound.fails(data, limit, exclusive) {
            errors.push(FieldError::invalid(
                path.field(),
                bad(),
                format!(
                    "{} in body should be {} {}",
                    path.render(),
                    bound.relation(exclusive),
                    gofmt::float(limit)
                ),
            ));
        }
    }
}

/// `minimum` or `maximum`, each with its `exclusive…` flag.
#[derive(Clone, Copy)]
enum Bound {
    Minimum,
    Maximum,
}

impl Bound {
    /// Whether `data` is outside the bound: beyond `limit`, or on it when the bound is exclusive.
    fn fails(self, data: f64, limit: f64, exclusive: bool) -> bool {
        let beyond = match self {
            Bound::Minimum => data < limit,
            Bound::Maximum => data > limit,
        };
        beyond || (exclusive && data == limit)
    }

    /// What the value should be to the limit, as kube-openapi words it.
    fn relation(self, exclusive: bool) -> &'static str {
        match (self, exclusive) {
            (Bound::Minimum, true) => "greater than",
            (Bound::Minimum, false) => "greater than or equal to",
            (Bound::Maximum, true) => "less than",
            (Bound::Maximum, false) => "less than or equal to",
        }
    }
}

fn array(node: &Node, items: &[Value], old: Option<&Value>, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    if let Some(item_node) = node.items.as_deref() {
        let correlate = Correlation::new(node, old);
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            schema_node(item_node, item, correlate.old_item(node, item), &p, item_node.embedded, errors);
        }
    }
    errors.extend(size_errors(items.len(), node.min_items, node.max_items, "items", path));
}

/// `minItems`/`maxItems` or `minProperties`/`maxProperties`: the errors of a `size` below
/// `min` or above `max`, in that order; `unit` names what is counted.
fn size_errors(
    size: usize,
    min: Option<i64>,
    max: Option<i64>,
    unit: &str,
    path: &Path<'_>,
) -> Vec<FieldError> {
    let size = size as i64;
    let mut errors = Vec::new();
    if let Some(min) = min
        && size < min
    {
        errors.push(FieldError::invalid(
            path.field(),
            BadValue::int(size),
            format!("{} in body should have at least {min} {unit}", path.render()),
        ));
    }
    if let Some(max) = max
        && size > max
    {
        errors.push(FieldError::too_many(path.field(), size, max));
    }
    errors
}

fn enumeration(node: &Node, value: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    let Some(allowed) = &node.enumeration else { return };
    if allowed.is_empty() || allowed.iter().any(|a| enum_equal(a, value)) {
        return;
    }
    let supported: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    errors.push(FieldError::not_supported(path.field(), BadValue::Json(value.clone()), &supported));
}

/// Enum membership as kube-openapi decides it: numbers compare by value (Go converts
/// int64 and float64 into each other), everything else by deep equality; `null`
/// matches nothing.
fn enum_equal(allowed: &Value, value: &Value) -> bool {
    match (allowed, value) {
        (_, Value::Null) | (Value::Null, _) => false,
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
        _ => allowed == value,
    }
}

fn object(
    node: &Node,
    map: &Map<String, Value>,
    old: Option<&Map<String, Value>>,
    path: &Path<'_>,
    resource: bool,
    errors: &mut Vec<FieldError>,
) {
    // A size error is the only one of the object: its fields are not looked at.
    if let Some(error) = size_errors(map.len(), node.min_properties, node.max_properties, "properties", path)
        .into_iter()
        .next()
    {
        errors.push(error);
        return;
    }
    node.for_each_child(map, |k, v, child, is_key| {
        let old_v = old.and_then(|o| o.get(k));
        if resource && k == "metadata" && !is_key {
            metadata(child, v, old_v, path, errors);
        } else if is_key {
            schema_node(child, v, old_v, &path.key(k), child.embedded, errors);
        } else {
            schema_node(child, v, old_v, &path.child(k), child.embedded, errors);
        }
    });
    for r in &node.required {
        if !map.contains_key(r) {
            errors.push(FieldError::required(path.child(r).field(), ""));
        }
    }
}

/// The `metadata` of a resource: the server validates it as ObjectMeta; the schema
/// may only constrain `name` and `generateName`.
fn metadata(meta_node: &Node, v: &Value, old: Option<&Value>, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    let Some(meta) = v.as_object() else { return };
    let meta_path = path.child("metadata");
    for key in ["name", "generateName"] {
        if let (Some(n), Some(value)) = (meta_node.properties.get(key), meta.get(key)) {
            let old_value = old.and_then(|o| o.get(key));
            schema_node(n, value, old_value, &meta_path.child(key), false, errors);
        }
    }
}
