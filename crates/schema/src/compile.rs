//! Parsing an `openAPIV3Schema` into [`Node`]s, refusing what kube-apiserver's CRD
//! validation refuses: unknown types, non-structural schemas, malformed keywords, bad
//! regexes, CEL rules that don't compile, and defaults that don't validate.
//!
//! Errors are reported at paths rooted at `openAPIV3Schema` (`properties[spec].type`),
//! as the apiserver words them under `spec.versions[i].schema`.

use crate::env::CelEnv;
use crate::error::{BadValue, FieldError};
use crate::gofmt;
use crate::pattern;
use crate::prune;
use crate::rules::{self, RuleSite};
use crate::schema::{ListType, Node, Pattern, SchemaType};
use crate::validate;
use serde_json::{Map, Value};

/// Where a node sits in the schema: the structural rules differ by position.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Field,
    Item,
    Additional,
    /// Inside `allOf`/`anyOf`/`oneOf`/`not`: value validations only.
    Junctor,
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    level: Level,
    /// The schema path of the nearest array above that is not a list-type map.
    uncorrelatable: Option<&'a str>,
}

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// Keywords a structural schema may not use.
const UNSUPPORTED: &[&str] = &["$ref", "patternProperties", "dependencies", "additionalItems", "definitions"];

pub(crate) struct Compiler<'e> {
    env: &'e CelEnv,
    errors: Vec<FieldError>,
}

impl<'e> Compiler<'e> {
    pub(crate) fn new(env: &'e CelEnv) -> Self {
        Compiler { env, errors: Vec::new() }
    }

    /// Compiles the root schema.
    pub(crate) fn compile(mut self, schema: &Value) -> Result<Node, Vec<FieldError>> {
        let root = self.node(schema, "openAPIV3Schema", Ctx { level: Level::Root, uncorrelatable: None });
        if self.errors.is_empty() { Ok(root) } else { Err(self.errors) }
    }

    fn type_error(&mut self, path: String, found: &Value, expected: &str) {
        self.errors.push(FieldError::type_invalid(
            path,
            BadValue::string(gofmt::json_type_name(found)),
            format!("must be of type {expected}"),
        ));
    }

    /// The keyword `key` of `obj` as `read` takes it. An absent or null keyword is `None`; one
    /// that `read` refuses is a type error naming `expected`, and `None` too.
    fn keyword<'v, T>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &str,
        expected: &str,
        read: impl FnOnce(&'v Value) -> Option<T>,
    ) -> Option<T> {
        let value = obj.get(key).filter(|v| !v.is_null())?;
        let read = read(value);
        if read.is_none() {
            self.type_error(format!("{path}.{key}"), value, expected);
        }
        read
    }

    fn bool_kw(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> bool {
        self.keyword(obj, key, path, "boolean", Value::as_bool).unwrap_or(false)
    }

    fn number_kw(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Option<f64> {
        self.keyword(obj, key, path, "number", Value::as_f64)
    }

    /// A non-negative integer (`maxLength`, `minItems`…).
    fn count_kw(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Option<i64> {
        let n = self.keyword(obj, key, path, "integer", Value::as_number)?;
        match n.as_i64() {
            Some(i) if i >= 0 => Some(i),
            Some(i) => {
                self.errors.push(FieldError::invalid(
                    format!("{path}.{key}"),
                    BadValue::int(i),
                    "must be greater than or equal to 0",
                ));
                None
            }
            None => {
                self.type_error(format!("{path}.{key}"), &Value::Number(n.clone()), "integer");
                None
            }
        }
    }

    fn string_kw(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Option<String> {
        self.keyword(obj, key, path, "string", Value::as_str).map(str::to_owned)
    }

    fn strings_kw(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Vec<String> {
        let Some(items) = self.keyword(obj, key, path, "array", Value::as_array) else { return Vec::new() };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => out.push(s.clone()),
                other => self.type_error(format!("{path}.{key}[{i}]"), other, "string"),
            }
        }
        out
    }

    fn junctor_list(&mut self, obj: &Map<String, Value>, key: &str, path: &str, ctx: Ctx<'_>) -> Vec<Node> {
        let Some(items) = self.keyword(obj, key, path, "array", Value::as_array) else { return Vec::new() };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                self.node(item, &format!("{path}.{key}[{i}]"), Ctx { level: Level::Junctor, ..ctx })
            })
            .collect()
    }

    fn node(&mut self, v: &Value, path: &str, ctx: Ctx<'_>) -> Node {
        let Some(obj) = v.as_object() else {
            self.type_error(path.to_owned(), v, "object");
            return Node::default();
        };
        let mut node = Node::default();
        let junctor = ctx.level == Level::Junctor;

        for key in UNSUPPORTED {
            if obj.contains_key(*key) {
                self.errors
                    .push(FieldError::forbidden(format!("{path}.{key}"), format!("{key} is not supported")));
            }
        }

        if let Some(t) = obj.get("type") {
            match t.as_str().map(|s| (s, SchemaType::parse(s))) {
                Some((_, Some(ty))) => node.ty = Some(ty),
                Some(("", None)) => {}
                Some((s, None)) => self.errors.push(FieldError::not_supported(
                    format!("{path}.type"),
                    BadValue::string(s),
                    TYPES,
                )),
                None if t.is_null() => {}
                None => self.type_error(format!("{path}.type"), t, "string"),
            }
        }
        node.nullable = self.bool_kw(obj, "nullable", path);
        node.int_or_string = self.bool_kw(obj, "x-kubernetes-int-or-string", path);
        node.embedded = self.bool_kw(obj, "x-kubernetes-embedded-resource", path);
        node.preserve_unknown = self.bool_kw(obj, "x-kubernetes-preserve-unknown-fields", path);
        if obj.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
            self.errors.push(FieldError::invalid(
                format!("{path}.x-kubernetes-preserve-unknown-fields"),
                BadValue::Json(Value::Bool(false)),
                "must be true or undefined",
            ));
        }
        node.format = self.string_kw(obj, "format", path).filter(|f| !f.is_empty());
        node.required = self.strings_kw(obj, "required", path);
        node.enumeration = self.keyword(obj, "enum", path, "array", Value::as_array).cloned();
        if let Some(src) = self.string_kw(obj, "pattern", path) {
            match pattern::compile(&src) {
                Ok(regex) => node.pattern = Some(Pattern { source: src, regex }),
                Err(e) => self.errors.push(FieldError::invalid(
                    format!("{path}.pattern"),
                    BadValue::string(src),
                    format!("must be a valid regular expression, but isn't: {e}"),
                )),
            }
        }
        node.maximum = self.number_kw(obj, "maximum", path);
        node.minimum = self.number_kw(obj, "minimum", path);
        node.exclusive_maximum = self.bool_kw(obj, "exclusiveMaximum", path);
        node.exclusive_minimum = self.bool_kw(obj, "exclusiveMinimum", path);
        node.multiple_of = self.number_kw(obj, "multipleOf", path);
        if let Some(m) = node.multiple_of
            && m <= 0.0
        {
            self.errors.push(FieldError::invalid(
                format!("{path}.multipleOf"),
                BadValue::Json(obj["multipleOf"].clone()),
                "must be greater than zero",
            ));
            node.multiple_of = None;
        }
        node.max_length = self.count_kw(obj, "maxLength", path);
        node.min_length = self.count_kw(obj, "minLength", path);
        node.max_items = self.count_kw(obj, "maxItems", path);
        node.min_items = self.count_kw(obj, "minItems", path);
        node.max_properties = self.count_kw(obj, "maxProperties", path);
        node.min_properties = self.count_kw(obj, "minProperties", path);
        if self.bool_kw(obj, "uniqueItems", path) {
            self.errors.push(FieldError::forbidden(
                format!("{path}.uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            ));
        }
        match self.string_kw(obj, "x-kubernetes-list-type", path).as_deref() {
            None | Some("atomic") => {}
            Some("set") => node.list_type = ListType::Set,
            Some("map") => node.list_type = ListType::Map,
            Some(other) => self.errors.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-list-type"),
                BadValue::string(other),
                &["atomic", "map", "set"],
            )),
        }
        node.map_keys = self.strings_kw(obj, "x-kubernetes-list-map-keys", path);

        // Children.
        let child_level = |level: Level| if junctor { Level::Junctor } else { level };
        if let Some(props) = obj.get("properties").filter(|p| !p.is_null()) {
            match props.as_object() {
                Some(props) => {
                    for (k, p) in props {
                        let child = self.node(
                            p,
                            &format!("{path}.properties[{k}]"),
                            Ctx { level: child_level(Level::Field), ..ctx },
                        );
                        node.properties.insert(k.clone(), child);
                    }
                }
                None => self.type_error(format!("{path}.properties"), props, "object"),
            }
        }
        match obj.get("additionalProperties") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => node.additional = Some(Box::default()),
            Some(a @ Value::Object(_)) => {
                let child = self.node(
                    a,
                    &format!("{path}.additionalProperties"),
                    Ctx { level: child_level(Level::Additional), ..ctx },
                );
                node.additional = Some(Box::new(child));
            }
            Some(other) => self.type_error(format!("{path}.additionalProperties"), other, "object"),
        }
        if node.additional.is_some() && !node.properties.is_empty() {
            self.errors.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        match obj.get("items") {
            None | Some(Value::Null) => {}
            Some(Value::Array(_)) => self.errors.push(FieldError::forbidden(
                format!("{path}.items"),
                "items must be a schema object and not an array",
            )),
            Some(items) => {
                let items_path = format!("{path}.items");
                let uncorrelatable =
                    if node.list_type == ListType::Map { ctx.uncorrelatable } else { Some(path) };
                let child =
                    self.node(items, &items_path, Ctx { level: child_level(Level::Item), uncorrelatable });
                node.items = Some(Box::new(child));
            }
        }
        node.all_of = self.junctor_list(obj, "allOf", path, ctx);
        node.any_of = self.junctor_list(obj, "anyOf", path, ctx);
        node.one_of = self.junctor_list(obj, "oneOf", path, ctx);
        if let Some(not) = obj.get("not").filter(|n| !n.is_null()) {
            node.not =
                Some(Box::new(self.node(not, &format!("{path}.not"), Ctx { level: Level::Junctor, ..ctx })));
        }
        // A null default is no default: the apiserver only applies non-null ones.
        node.default = obj.get("default").filter(|d| !d.is_null()).cloned();

        if !junctor {
            self.structural(&node, obj, path, ctx.level);
        }

        node.has_defaults = node.default.is_some()
            || node.properties.values().any(|p| p.has_defaults)
            || node.additional.as_ref().is_some_and(|a| a.has_defaults)
            || node.items.as_ref().is_some_and(|i| i.has_defaults);
        let children =
            || node.properties.values().chain(node.additional.as_deref()).chain(node.items.as_deref());
        let children_have_rules = children().any(|c| c.has_rules);
        let children_have_old_self = children().any(|c| c.has_old_self_rules);

        if !junctor && let Some(raw) = obj.get("x-kubernetes-validations").filter(|r| !r.is_null()) {
            let site = RuleSite {
                path,
                uncorrelatable: ctx.uncorrelatable,
                resource_root: ctx.level == Level::Root,
            };
            node.rules = rules::compile_rules(self.env, raw, &node, &site, &mut self.errors);
        }
        node.has_rules = !node.rules.is_empty() || children_have_rules;
        node.has_old_self_rules = node.rules.iter().any(|r| r.uses_old_self) || children_have_old_self;

        if !junctor && let Some(default) = &node.default {
            self.check_default(&node, default, path, ctx.level);
        }
        node
    }

    /// The structural-schema rules of the apiserver that concern one node.
    fn structural(&mut self, node: &Node, obj: &Map<String, Value>, path: &str, level: Level) {
        if node.ty.is_none() && !node.embedded && !node.int_or_string && !node.preserve_unknown {
            let detail = match level {
                Level::Root => "must not be empty at the root",
                Level::Item => "must not be empty for specified array items",
                Level::Additional => "must not be empty for specified additionalProperties",
                _ => "must not be empty for specified object fields",
            };
            self.errors.push(FieldError::required(format!("{path}.type"), detail));
        }
        if level == Level::Root
            && let Some(ty) = node.ty
            && ty != SchemaType::Object
        {
            self.errors.push(FieldError::invalid(
                format!("{path}.type"),
                BadValue::string(ty.name()),
                "must be object at the root",
            ));
        }
        if node.ty == Some(SchemaType::Array) && node.items.is_none() {
            self.errors.push(FieldError::required(format!("{path}.items"), "must be specified"));
        }
        if node.embedded && node.ty.is_some_and(|t| t != SchemaType::Object) {
            self.errors.push(FieldError::invalid(
                format!("{path}.type"),
                BadValue::string(node.type_name()),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
        if node.int_or_string
            && let Some(ty) = node.ty
        {
            self.errors.push(FieldError::invalid(
                format!("{path}.type"),
                BadValue::string(ty.name()),
                "must be empty if x-kubernetes-int-or-string is true",
            ));
        }
        if obj.contains_key("x-kubernetes-list-type") && node.ty != Some(SchemaType::Array) {
            self.errors.push(FieldError::invalid(
                format!("{path}.x-kubernetes-list-type"),
                BadValue::string(obj["x-kubernetes-list-type"].as_str().unwrap_or_default()),
                "must only be used if type is array",
            ));
        }
        if node.list_type == ListType::Map {
            self.list_map(node, path);
        } else if !node.map_keys.is_empty() {
            self.errors.push(FieldError::forbidden(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must be empty if x-kubernetes-list-type is not map",
            ));
        }
    }

    fn list_map(&mut self, node: &Node, path: &str) {
        if node.map_keys.is_empty() {
            self.errors.push(FieldError::required(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        let Some(items) = node.items.as_deref() else { return };
        if items.ty != Some(SchemaType::Object) {
            self.errors.push(FieldError::invalid(
                format!("{path}.items.type"),
                BadValue::string(items.type_name()),
                "must be object if parent array's x-kubernetes-list-type is map",
            ));
            return;
        }
        for key in &node.map_keys {
            match items.properties.get(key) {
                None => self.errors.push(FieldError::invalid(
                    format!("{path}.x-kubernetes-list-map-keys"),
                    BadValue::Json(Value::from(node.map_keys.clone())),
                    "entries must all be names of item properties",
                )),
                Some(p) => {
                    if matches!(p.ty, Some(SchemaType::Object | SchemaType::Array)) {
                        self.errors.push(FieldError::invalid(
                            format!("{path}.items.properties[{key}].type"),
                            BadValue::string(p.type_name()),
                            "must be a scalar type if parent array's x-kubernetes-list-type is map",
                        ));
                    }
                    if !items.required.contains(key) && p.default.is_none() {
                        self.errors.push(FieldError::required(
                            format!("{path}.items.required"),
                            format!("all map keys must be required or have a default value: {key}"),
                        ));
                    }
                }
            }
        }
    }

    /// A default must be pruned and must validate against its own schema, rules
    /// included.
    fn check_default(&mut self, node: &Node, default: &Value, path: &str, level: Level) {
        let at = format!("{path}.default");
        if level == Level::Root {
            self.errors.push(FieldError::forbidden(at, "must not be set at the root"));
            return;
        }
        let mut pruned = default.clone();
        prune::prune_value(node, &mut pruned);
        if &pruned != default {
            self.errors.push(FieldError::invalid(
                at.clone(),
                BadValue::Json(default.clone()),
                "must not have unknown fields",
            ));
        }
        for e in validate::validate_value(self.env, node, default, None, false) {
            self.errors.push(e.with_field_prefix(&at));
        }
    }
}
