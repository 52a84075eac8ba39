//! The model behind the generated create and edit forms of a custom resource:
//! fields from the CRD's `openAPIV3Schema`, the values the user typed, the
//! object sent to the API server, and the server's refusal mapped back onto
//! the fields. Plain data and functions, no Leptos: the server renders the form
//! and checks a submit with the same code that the browser runs while typing.
//!
//! # Paths
//!
//! Every input is named by its JSON path (docs/architecture.md, "Schema-driven views"), and the
//! same path keys [`FormValues`] and [`FieldError`]:
//!
//! - object properties join with `.`: `metadata.name`, `spec.cluster.name`;
//!   a property name that is not a plain word (it holds `.`, `[`, `]`, a quote
//!   or a space) is written `["a.b"]`, JSON-quoted;
//! - array items take their index: `spec.rules[0].name`, `spec.hosts[2]`;
//! - map entries (`additionalProperties`) are numbered like array items, with
//!   the key and the value as two inputs: `spec.labels[0].key` and
//!   `spec.labels[0].value` (an object value continues as
//!   `spec.limits[0].value.cpu`). A map entry has no stable JSON path while its
//!   key is being typed, so it gets a position instead.
//!
//! A [`Field`]'s own `path` is a template with `[*]` for the index
//! (`spec.rules[*].name`); the concrete paths come from [`child_path`],
//! [`item_path`], [`entry_key_path`] and [`entry_value_path`] while the UI
//! descends the tree. Kubernetes reports map keys as `spec.labels[app]`;
//! [`FormSpec::locate`] turns such a path into the entry's position.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// Deeper objects, arrays and maps become one [`Kind::Raw`] field: a schema
/// from a cluster is not trusted to keep the form (and the recursion) small.
pub const MAX_DEPTH: usize = 12;

/// At most this many fields under `spec`; an object whose properties would go
/// beyond it becomes [`Kind::Raw`], so a huge schema still gives a usable form.
pub const MAX_FIELDS: usize = 500;

/// At most this many inputs in one form, counted as the form draws them: each scalar input,
/// each group of an object, array or map, each array item and map entry (its box and remove
/// button), and a map entry's key. Array items multiply what their item schema holds (500 items
/// of 19 items of 450 strings are 4.3 million inputs), and their counts come from the edited
/// object, the schema's `minItems` and defaults (a CRD may come from a hostile plugin), or the
/// browser: a form past this is refused before it is filled or drawn, and the object is for the
/// YAML tab. Ten times the fields one schema gives ([`MAX_FIELDS`]), so a real form with a few
/// dozen items fits; each input is a few hundred bytes of HTML and its help text.
pub const MAX_INPUTS: usize = 5_000;

/// At most this many bytes of text in one form, counted as the form draws them: for each input
/// its path (written [`PATH_COPIES`] times: id, name, `data-path`, the label's `for`), label,
/// help text, placeholder (the schema's `default`), choices (each written twice, as value and
/// text) and value. The input count alone does not bound the page: a CRD's 1 MB string
/// `default` or property name, or 256 choices of 256 bytes, is drawn again in each of
/// [`MAX_INPUTS`] inputs (gigabytes). A real form, even of 5,000 inputs with the longest help
/// text ([`MAX_DESCRIPTION`]), stays well under it; the generated table's cells have the same
/// bound.
pub const MAX_FORM_TEXT: usize = 16 * 1024 * 1024;

/// How often a scalar input's path is written in the form's HTML.
const PATH_COPIES: usize = 4;

/// A form that would draw more than [`MAX_INPUTS`] inputs or [`MAX_FORM_TEXT`] bytes of text:
/// the object is for the YAML tab.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", limit.message())]
pub struct TooManyInputs {
    /// Where the count passed the limit: the innermost array or map around the input that
    /// passed it, or a top-level field (`spec`) when no array or map is around it.
    pub path: String,
    /// Which limit it passed.
    pub limit: FormLimit,
}

/// The limits of a form's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormLimit {
    /// [`MAX_INPUTS`].
    Inputs,
    /// [`MAX_FORM_TEXT`].
    Text,
}

impl FormLimit {
    fn message(self) -> String {
        match self {
            FormLimit::Inputs => format!(
                "This object has more items than a form takes ({MAX_INPUTS} inputs in all): edit it in the YAML tab."
            ),
            FormLimit::Text => format!(
                "This object's form would hold more text than a form takes ({} MiB, counting what its schema repeats in every item): edit it in the YAML tab.",
                MAX_FORM_TEXT >> 20
            ),
        }
    }
}
/// How much of a schema's description a field shows (its help, with every item).
pub const MAX_DESCRIPTION: usize = 1_000;
/// An enum of at most this many values, each at most [`MAX_CHOICE_LEN`] bytes, is a choice.
pub const MAX_CHOICES: usize = 256;
pub const MAX_CHOICE_LEN: usize = 256;

/// The message of a required field left empty, on the client as on the server
/// (the server's `Required value` is rewritten to it).
pub const REQUIRED: &str = "is required";

/// The whole form: `metadata.name`, `metadata.namespace` for namespaced kinds,
/// then `spec` (usually an [`Kind::Object`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormSpec {
    pub fields: Vec<Field>,
}

/// One input, or one group of inputs (objects, arrays, maps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The property name, the key of this field in its parent object. Empty for
    /// array items; `value` for map values.
    pub name: String,
    /// The template path (see the module docs): `[*]` stands for an index.
    pub path: String,
    /// The property name in words: `secretName` is "Secret name".
    pub label: String,
    /// The schema's description, to show as help text.
    pub description: Option<String>,
    /// Listed in the parent's `required`. Array items and map values are always
    /// required: an entry the user added but left empty is a mistake, and
    /// dropping it would shift the indices the server reports back.
    pub required: bool,
    /// The schema says it cannot change (`x-kubernetes-validations` rule
    /// `self == oldSelf`, and `metadata.name` / `metadata.namespace`), so an
    /// edit form shows it read-only instead of letting the server refuse it.
    pub immutable: bool,
    pub kind: Kind,
    /// The schema's `default`; the server applies it to an omitted field, so
    /// the UI may show it as a placeholder too.
    pub default: Option<Value>,
    pub constraints: Constraints,
}

/// What input a field needs, and how its text becomes JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Kind {
    Text,
    Integer,
    Number,
    /// Tri-state text: `true`, `false`, or empty (left to the server). Render it
    /// as a select: an unchecked checkbox submits nothing, so it could not tell
    /// "false" from "not set". `on` (a checked checkbox) also reads as true.
    Boolean,
    /// A string with a fixed set of values. Empty until the user picks one,
    /// unless the schema has a default.
    Enum(Vec<String>),
    /// An RFC 3339 time (`format: date-time`), checked on the client.
    DateTime,
    /// Properties of an object, required ones first, then by name.
    Object(Vec<Field>),
    /// The item of an array.
    Array(Box<Field>),
    /// The value of a map (`additionalProperties`); keys are typed as text.
    Map(Box<Field>),
    /// JSON text: objects that keep unknown fields, schema-less objects,
    /// unknown types, and what went past [`MAX_DEPTH`] or [`MAX_FIELDS`]. JSON
    /// is also YAML, and the crate has no YAML parser.
    Raw,
}

/// The schema's limits. Only some are checked on the client (lengths, bounds,
/// item counts, enum values, date-times, int32); `pattern` is a Go RE2
/// expression that the browser's regex engine may read differently, so it is
/// shown as a hint and left to the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    pub pattern: Option<String>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: bool,
    pub exclusive_maximum: bool,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub format: Option<String>,
    pub nullable: bool,
    /// `x-kubernetes-int-or-string`: a [`Kind::Text`] whose whole numbers are
    /// sent as numbers (`maxUnavailable: 1` vs `"25%"`).
    pub int_or_string: bool,
    /// For [`Kind::Raw`]: the schema's `type` when it has one (`object`,
    /// `array`), which the typed JSON must match.
    pub raw_type: Option<String>,
}

/// A message for one input (or for the group of an object, array or map),
/// keyed by its concrete path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        FieldError { path: path.to_string(), message: message.into() }
    }
}

// ---------------------------------------------------------------------------
// Paths

/// The path of property `name` of the object at `parent`.
pub fn child_path(parent: &str, name: &str) -> String {
    if is_plain_name(name) {
        format!("{parent}.{name}")
    } else {
        format!("{parent}[{}]", Value::String(name.to_string()))
    }
}

/// The path of item `index` of the array at `array`.
pub fn item_path(array: &str, index: usize) -> String {
    format!("{array}[{index}]")
}

/// The path of the key input of entry `index` of the map at `map`.
pub fn entry_key_path(map: &str, index: usize) -> String {
    format!("{map}[{index}].key")
}

/// The path of the value of entry `index` of the map at `map`.
pub fn entry_value_path(map: &str, index: usize) -> String {
    format!("{map}[{index}].value")
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| matches!(c, '.' | '[' | ']' | '"' | '\'') || c.is_whitespace())
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Name(String),
    Index(usize),
}

/// Reads our paths and the server's: `spec.a[0].b`, `.spec.a`, `spec[a]`,
/// `spec['a.b']`, `spec["a"]`. `None` when a bracket is not closed.
fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let chars: Vec<char> = path.trim().chars().collect();
    let mut segments = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => i += 1,
            '[' => {
                i += 1;
                let quote = chars.get(i).copied().filter(|c| *c == '"' || *c == '\'');
                let mut text = String::new();
                if let Some(quote) = quote {
                    i += 1;
                    loop {
                        match chars.get(i) {
                            None => return None,
                            Some('\\') => {
                                text.push(*chars.get(i + 1)?);
                                i += 2;
                            }
                            Some(c) if *c == quote => {
                                i += 1;
                                break;
                            }
                            Some(c) => {
                                text.push(*c);
                                i += 1;
                            }
                        }
                    }
                    if chars.get(i) != Some(&']') {
                        return None;
                    }
                    segments.push(Segment::Name(text));
                } else {
                    while chars.get(i)? != &']' {
                        text.push(chars[i]);
                        i += 1;
                    }
                    match text.parse::<usize>() {
                        Ok(index) if text.bytes().all(|b| b.is_ascii_digit()) => {
                            segments.push(Segment::Index(index))
                        }
                        _ => segments.push(Segment::Name(text)),
                    }
                }
                i += 1; // the ']'
            }
            _ => {
                let mut text = String::new();
                while let Some(c) = chars.get(i).filter(|c| **c != '.' && **c != '[') {
                    text.push(*c);
                    i += 1;
                }
                segments.push(Segment::Name(text));
            }
        }
    }
    Some(segments)
}

fn render_path(segments: &[Segment]) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Index(index) => out = item_path(&out, *index),
            Segment::Name(name) if out.is_empty() && is_plain_name(name) => out.push_str(name),
            Segment::Name(name) => out = child_path(&out, name),
        }
    }
    out
}

/// `spec.rules[3].name` → `spec.rules[*].name`.
fn template_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after.as_bytes().get(digits) == Some(&b']') {
            out.push_str("[*]");
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------
// Labels

/// Words that are spelled in capitals in a label, whatever their case in the
/// property name (`awsRegion` is "AWS region").
const ACRONYMS: &[&str] = &[
    "acl", "api", "arn", "aws", "ca", "cidr", "cpu", "crd", "csi", "dns", "fqdn", "gcp", "gpu", "grpc",
    "http", "https", "iam", "id", "ip", "json", "jwt", "kms", "oidc", "pem", "pvc", "rbac", "s3", "sql",
    "ssh", "ssl", "tcp", "tls", "ttl", "udp", "uid", "uri", "url", "uuid", "vm", "vpc", "xml", "yaml",
];

/// A label for a property name: camelCase, snake_case and kebab-case split
/// into words, acronyms in capitals, the first letter capitalised:
/// `secretName` → "Secret name", `awsIAMRole` → "AWS IAM role".
pub fn label_for(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for part in name.split(|c: char| c == '_' || c == '-' || c == '.' || c.is_whitespace()) {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            let boundary = c.is_uppercase()
                && match prev {
                    Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                    // The end of an acronym: the `R` of `IAMRole`.
                    Some(p) if p.is_uppercase() => next.is_some_and(char::is_lowercase),
                    _ => false,
                };
            if boundary && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            word.push(c);
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    let mut label = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            label.push(' ');
        }
        let lower = word.to_lowercase();
        let all_caps = word.chars().count() > 1 && !word.chars().any(char::is_lowercase);
        if ACRONYMS.contains(&lower.as_str()) || all_caps {
            label.push_str(&word.to_uppercase());
        } else if i == 0 {
            let mut chars = lower.chars();
            if let Some(first) = chars.next() {
                label.extend(first.to_uppercase());
                label.push_str(chars.as_str());
            }
        } else {
            label.push_str(&lower);
        }
    }
    label
}

// ---------------------------------------------------------------------------
// Building the form

/// The form of a custom resource from its CRD version's `openAPIV3Schema`.
///
/// `status`, `apiVersion`, `kind` and the rest of `metadata` are left out: the
/// server or the console sets them. Never panics, whatever the schema holds.
pub fn form_for(schema: &Value, namespaced: bool) -> FormSpec {
    let meta_name = schema.pointer("/properties/metadata/properties/name");
    let name_description = meta_name.and_then(|s| text_of(s, "description")).unwrap_or_else(|| {
        let scope = if namespaced { "namespace" } else { "cluster" };
        format!(
            "Unique in the {scope}: lowercase letters, digits, '-' and '.', starting and ending with a letter \
             or digit."
        )
    });
    let mut fields = vec![Field {
        name: "name".to_string(),
        path: "metadata.name".to_string(),
        label: "Name".to_string(),
        description: Some(name_description),
        required: true,
        immutable: true,
        kind: Kind::Text,
        default: None,
        constraints: Constraints {
            max_length: Some(
                meta_name.and_then(|s| s.get("maxLength")).and_then(Value::as_u64).unwrap_or(253),
            ),
            ..Constraints::default()
        },
    }];
    if namespaced {
        fields.push(Field {
            name: "namespace".to_string(),
            path: "metadata.namespace".to_string(),
            label: "Namespace".to_string(),
            description: Some("The namespace that the object lives in.".to_string()),
            required: true,
            immutable: true,
            kind: Kind::Text,
            default: None,
            constraints: Constraints { max_length: Some(63), ..Constraints::default() },
        });
    }
    if let Some(spec) = schema.pointer("/properties/spec") {
        let required = required_names(schema).contains(&"spec");
        let mut builder = Builder { budget: MAX_FIELDS - 1 };
        fields.push(builder.field("spec", "spec".to_string(), spec, required, 1));
    }
    FormSpec { fields }
}

struct Builder {
    /// Fields still allowed; a field is paid for when its parent reserves it.
    budget: usize,
}

impl Builder {
    fn field(&mut self, name: &str, path: String, schema: &Value, required: bool, depth: usize) -> Field {
        let mut constraints = Constraints {
            pattern: text_of(schema, "pattern"),
            min_length: schema.get("minLength").and_then(Value::as_u64),
            max_length: schema.get("maxLength").and_then(Value::as_u64),
            minimum: schema.get("minimum").and_then(Value::as_f64),
            maximum: schema.get("maximum").and_then(Value::as_f64),
            exclusive_minimum: flag(schema, "exclusiveMinimum"),
            exclusive_maximum: flag(schema, "exclusiveMaximum"),
            min_items: schema.get("minItems").and_then(Value::as_u64),
            max_items: schema.get("maxItems").and_then(Value::as_u64),
            format: text_of(schema, "format"),
            nullable: flag(schema, "nullable"),
            int_or_string: flag(schema, "x-kubernetes-int-or-string"),
            raw_type: None,
        };
        let label = if path.ends_with("[*].value") && name == "value" {
            "Value".to_string()
        } else {
            label_for(name)
        };
        let kind = self.kind(&path, &label, schema, depth, &mut constraints);
        if kind == Kind::Raw {
            constraints.raw_type = text_of(schema, "type");
        }
        let immutable =
            schema.get("x-kubernetes-validations").and_then(Value::as_array).is_some_and(|rules| {
                rules.iter().any(|rule| {
                    let rule: String =
                        rule.get("rule").and_then(Value::as_str).unwrap_or("").split_whitespace().collect();
                    rule == "self==oldSelf" || rule == "oldSelf==self"
                })
            });
        Field {
            name: name.to_string(),
            label,
            path,
            // Shown with every item of an array or map: a hostile CRD's megabyte of text would
            // be repeated for each.
            description: text_of(schema, "description").map(|d| shortened(&d, MAX_DESCRIPTION)),
            required,
            immutable,
            kind,
            default: schema.get("default").cloned(),
            constraints,
        }
    }

    /// `label` is the field's own: an array's items carry it too, so each item
    /// can be announced as "Rules 2" rather than nothing.
    fn kind(
        &mut self,
        path: &str,
        label: &str,
        schema: &Value,
        depth: usize,
        constraints: &mut Constraints,
    ) -> Kind {
        if constraints.int_or_string {
            return Kind::Text;
        }
        if flag(schema, "x-kubernetes-preserve-unknown-fields")
            || flag(schema, "x-kubernetes-embedded-resource")
        {
            return Kind::Raw;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => {
                let values: Vec<String> = schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|values| values.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                    .unwrap_or_default();
                // A choice of at most MAX_CHOICES short values; past that, a text input (the
                // server still checks the value), not a list repeated for every item.
                let choosable =
                    values.len() <= MAX_CHOICES && values.iter().all(|v| v.len() <= MAX_CHOICE_LEN);
                if !values.is_empty() && choosable {
                    Kind::Enum(values)
                } else if constraints.format.as_deref() == Some("date-time") {
                    Kind::DateTime
                } else {
                    Kind::Text
                }
            }
            Some("integer") => Kind::Integer,
            Some("number") => Kind::Number,
            Some("boolean") => Kind::Boolean,
            Some("object") if depth < MAX_DEPTH => {
                if let Some(properties) = schema.get("properties").and_then(Value::as_object)
                    && !properties.is_empty()
                {
                    if properties.len() > self.budget {
                        return Kind::Raw;
                    }
                    self.budget -= properties.len();
                    let required = required_names(schema);
                    let mut children: Vec<Field> = properties
                        .iter()
                        .map(|(name, child)| {
                            let is_required = required.contains(&name.as_str());
                            self.field(name, child_path(path, name), child, is_required, depth + 1)
                        })
                        .collect();
                    // The API server sorts properties by name, so the schema's order is lost;
                    // what the user must fill in comes first.
                    children.sort_by(|a, b| b.required.cmp(&a.required).then_with(|| a.name.cmp(&b.name)));
                    Kind::Object(children)
                } else if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object())
                    && self.budget > 0
                {
                    self.budget -= 1;
                    let value_path = format!("{path}[*].value");
                    Kind::Map(Box::new(self.field("value", value_path, values, true, depth + 1)))
                } else {
                    Kind::Raw
                }
            }
            Some("array") if depth < MAX_DEPTH => match schema.get("items").filter(|v| v.is_object()) {
                Some(items) if self.budget > 0 => {
                    self.budget -= 1;
                    let mut item = self.field("", format!("{path}[*]"), items, true, depth + 1);
                    item.label = label.to_string();
                    Kind::Array(Box::new(item))
                }
                _ => Kind::Raw,
            },
            _ => Kind::Raw,
        }
    }
}

/// `text` cut to `max` characters, an ellipsis marking the cut.
pub(crate) fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn text_of(schema: &Value, key: &str) -> Option<String> {
    schema.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl FormSpec {
    /// The field whose template matches a concrete path (`spec.rules[2].name`
    /// finds `spec.rules[*].name`).
    pub fn field(&self, path: &str) -> Option<&Field> {
        fn find<'a>(fields: &'a [Field], template: &str) -> Option<&'a Field> {
            fields.iter().find_map(|field| {
                if field.path == template {
                    return Some(field);
                }
                match &field.kind {
                    Kind::Object(children) => find(children, template),
                    Kind::Array(inner) | Kind::Map(inner) => find(std::slice::from_ref(inner), template),
                    _ => None,
                }
            })
        }
        find(&self.fields, &template_of(path))
    }

    /// The form path nearest to a path the server reported: the deepest field
    /// of the form on its way. A cause on `spec.fragment.Effect`, where
    /// `spec.fragment` is a [`Kind::Raw`] field, lands on `spec.fragment`;
    /// `spec.labels[app]` lands on the value of the entry whose key is `app`.
    /// The second part is what was left over (`Effect`), empty on an exact hit.
    /// `None` when not even the first step is in the form (`metadata.labels`).
    pub fn locate(&self, path: &str, values: &FormValues) -> Option<(String, String)> {
        let segments = parse_path(path)?;
        let (first, rest) = segments.split_first()?;
        let top = match first {
            Segment::Name(name) if name == "metadata" => {
                let Some(Segment::Name(child)) = rest.first() else { return None };
                let field = self.fields.iter().find(|f| f.path == child_path("metadata", child))?;
                return Some((field.path.clone(), render_path(&rest[1..])));
            }
            Segment::Name(name) => self.fields.iter().find(|f| f.path == *name)?,
            Segment::Index(_) => return None,
        };
        let (found, used) = walk(top, top.path.clone(), rest, values);
        Some((found, render_path(&rest[used..])))
    }

    /// Puts the server's field errors onto the form: each lands on its
    /// [`locate`](Self::locate)d field, prefixed with the part of its path
    /// that the form has no input for. Errors outside the form come back as
    /// general messages (`metadata.labels: …`), so none is lost.
    pub fn place(&self, errors: Vec<FieldError>, values: &FormValues) -> (Vec<FieldError>, Vec<String>) {
        let mut placed = Vec::new();
        let mut general = Vec::new();
        for error in errors {
            match self.locate(&error.path, values) {
                Some((path, rest)) if rest.is_empty() => placed.push(FieldError { path, ..error }),
                Some((path, rest)) => {
                    placed.push(FieldError { path, message: format!("{rest}: {}", error.message) })
                }
                None => general.push(format!("{}: {}", error.path, error.message)),
            }
        }
        (placed, general)
    }
}

/// Follows `rest` down from `field` (at concrete `path`); returns the deepest
/// path reached and how many segments it used.
fn walk(field: &Field, path: String, rest: &[Segment], values: &FormValues) -> (String, usize) {
    let Some(next) = rest.first() else { return (path, 0) };
    let (child, child_path_) = match (&field.kind, next) {
        (Kind::Object(children), Segment::Name(name)) => match children.iter().find(|c| c.name == *name) {
            Some(child) => (child, child_path(&path, name)),
            None => return (path, 0),
        },
        (Kind::Array(item), Segment::Index(index)) if *index < values.len(&path) => {
            (item.as_ref(), item_path(&path, *index))
        }
        (Kind::Map(value), key) => {
            let key = match key {
                Segment::Name(name) => name.clone(),
                Segment::Index(index) => index.to_string(),
            };
            match (0..values.len(&path)).find(|i| values.get(&entry_key_path(&path, *i)) == key) {
                Some(i) => (value.as_ref(), entry_value_path(&path, i)),
                None => return (path, 0),
            }
        }
        _ => return (path, 0),
    };
    let (found, used) = walk(child, child_path_, &rest[1..], values);
    (found, used + 1)
}

// ---------------------------------------------------------------------------
// Values

/// What the form holds: the text of each input by path, how many items each
/// array and map has, and which optional objects, arrays and maps exist even
/// when empty (they came from the edited object or a schema default, and
/// dropping them would change the object behind the user's back).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FormValues {
    values: BTreeMap<String, String>,
    lengths: BTreeMap<String, usize>,
    present: BTreeSet<String>,
}

impl FormValues {
    /// A create form: the schema's defaults filled in, required arrays given
    /// their `minItems` items, everything else empty. Refused when the form would draw more
    /// than [`MAX_INPUTS`] inputs (the filling stops there).
    pub fn defaults(spec: &FormSpec) -> Result<Self, TooManyInputs> {
        let mut values = FormValues::default();
        let mut budget = InputBudget::new();
        for field in &spec.fields {
            values.fill_default(field, &field.path, &field.path, &mut budget);
        }
        budget.spent()?;
        values.check_inputs(spec)?;
        Ok(values)
    }

    /// An edit form: the values of an existing object. Defaults are not added:
    /// [`assemble`] then gives back the object's `spec` unchanged. Refused when the form would
    /// draw more than [`MAX_INPUTS`] inputs (the filling stops there).
    pub fn from_object(spec: &FormSpec, object: &Value) -> Result<Self, TooManyInputs> {
        let mut values = FormValues::default();
        let mut budget = InputBudget::new();
        for field in &spec.fields {
            match object.pointer(&pointer_of(&field.path)) {
                Some(value) => {
                    values.fill(field, &field.path, &field.path, value, Absent::Empty, &mut budget)
                }
                None => {
                    budget.pay_field(field, &field.path, &field.path);
                }
            }
        }
        budget.spent()?;
        values.check_inputs(spec)?;
        Ok(values)
    }

    /// The values of a form posted without JavaScript: its `(name, value)`
    /// pairs. Array and map sizes follow from the highest index seen.
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut values = FormValues::default();
        for (key, value) in pairs {
            let key = key.into();
            let mut from = 0;
            while let Some(open) = key[from..].find('[').map(|o| o + from) {
                let after = &key[open + 1..];
                let digits = after.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0
                    && after.as_bytes().get(digits) == Some(&b']')
                    && let Ok(index) = after[..digits].parse::<usize>()
                {
                    let length = values.lengths.entry(key[..open].to_string()).or_insert(0);
                    *length = (*length).max(index + 1);
                }
                from = open + 1;
            }
            values.values.insert(key, value.into());
        }
        values
    }

    /// Takes from `drawn`, the values the form was drawn with, which optional objects, arrays
    /// and maps exist even when empty: a form posted without JavaScript carries only its inputs'
    /// text ([`FormValues::from_pairs`]), and an edit must not drop an empty part of the object
    /// the user did not touch.
    pub fn keep_presence_of(&mut self, drawn: &FormValues) {
        self.present = drawn.present.clone();
    }

    /// The text at `path`; empty when unset.
    pub fn get(&self, path: &str) -> &str {
        self.values.get(path).map_or("", String::as_str)
    }

    pub fn set(&mut self, path: impl Into<String>, value: impl Into<String>) {
        self.values.insert(path.into(), value.into());
    }

    /// Refuses values for which the form would draw more than [`MAX_INPUTS`] inputs. The
    /// item counts may come from the browser (up to 2⁶⁴, or the highest index of a form posted
    /// without JavaScript): the count stops at the limit, so it costs at most that many steps.
    pub fn check_inputs(&self, spec: &FormSpec) -> Result<(), TooManyInputs> {
        let mut budget = InputBudget::new();
        for field in &spec.fields {
            if !self.count_inputs(field, &field.path, &field.path, &mut budget) {
                break;
            }
        }
        budget.spent()
    }

    /// Pays for the inputs the form draws for `field` at `path`, as `field_view` in `form.rs`
    /// draws them: every property of an object, every item of an array and map. `list` is the
    /// innermost array or map around it (where a refusal is shown). False once the budget is
    /// spent.
    fn count_inputs(&self, field: &Field, path: &str, list: &str, budget: &mut InputBudget) -> bool {
        if !(budget.pay_field(field, path, list) && budget.pay_text(self.get(path).len(), list)) {
            return false;
        }
        match &field.kind {
            Kind::Object(children) => children
                .iter()
                .all(|child| self.count_inputs(child, &child_path(path, &child.name), list, budget)),
            Kind::Array(item) => (0..self.len(path)).all(|index| {
                budget.pay(ITEM_INPUTS, path)
                    && self.count_inputs(item, &item_path(path, index), path, budget)
            }),
            Kind::Map(value) => (0..self.len(path)).all(|index| {
                budget.pay(ENTRY_INPUTS, path)
                    && budget.pay_text(key_text(path, index, self.get(&entry_key_path(path, index))), path)
                    && self.count_inputs(value, &entry_value_path(path, index), path, budget)
            }),
            _ => true,
        }
    }

    /// The number of items of the array (or entries of the map) at `path`.
    pub fn len(&self, path: &str) -> usize {
        self.lengths.get(path).copied().unwrap_or(0)
    }

    /// Appends an item to the array or map at concrete `path`, filled with the
    /// item schema's defaults; returns its index.
    /// Refused, leaving the form as it was, when the form with the new item (and the items
    /// its schema's `minItems` require in it) would draw more than [`MAX_INPUTS`] inputs: each
    /// click would otherwise add up to that many.
    pub fn add_item(&mut self, spec: &FormSpec, path: &str) -> Result<usize, TooManyInputs> {
        let mut added = self.clone();
        let index = added.len(path);
        added.lengths.insert(path.to_string(), index + 1);
        // The item's defaults alone are bounded by their own budget; the whole form's by the
        // check below.
        let mut budget = InputBudget::new();
        match spec.field(path).map(|f| &f.kind) {
            Some(Kind::Array(item)) => added.fill_default(item, &item_path(path, index), path, &mut budget),
            Some(Kind::Map(value)) => {
                added.fill_default(value, &entry_value_path(path, index), path, &mut budget)
            }
            _ => {}
        }
        budget.spent()?;
        added.check_inputs(spec)?;
        *self = added;
        Ok(index)
    }

    /// Removes item `index` of the array or map at `path`; later items move up
    /// one, so `spec.rules[2].name` becomes `spec.rules[1].name`.
    pub fn remove_item(&mut self, path: &str, index: usize) {
        use std::mem::take;
        let length = self.len(path);
        if index >= length {
            return;
        }
        // Some(None): inside the removed item. Some(Some(key)): renumbered.
        let rekey = |key: &str| -> Option<Option<String>> {
            let after = key.strip_prefix(path)?.strip_prefix('[')?;
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let rest = after.get(digits..)?.strip_prefix(']')?;
            if digits == 0 || !(rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')) {
                return None;
            }
            let item: usize = after[..digits].parse().ok()?;
            match item.cmp(&index) {
                std::cmp::Ordering::Less => None,
                std::cmp::Ordering::Equal => Some(None),
                std::cmp::Ordering::Greater => Some(Some(format!("{path}[{}]{rest}", item - 1))),
            }
        };
        // Where a key goes: dropped with its item, renumbered, or kept as it is.
        let moved = |key: String| match rekey(&key) {
            Some(new_key) => new_key,
            None => Some(key),
        };
        self.values = take(&mut self.values).into_iter().filter_map(|(k, v)| Some((moved(k)?, v))).collect();
        self.lengths =
            take(&mut self.lengths).into_iter().filter_map(|(k, n)| Some((moved(k)?, n))).collect();
        self.present = take(&mut self.present).into_iter().filter_map(moved).collect();
        self.lengths.insert(path.to_string(), length - 1);
    }

    fn present(&self, path: &str) -> bool {
        self.present.contains(path)
    }

    /// Fills the defaults of `field` at `path`: its schema `default`, or for an object its
    /// properties' defaults, for a required array its `minItems` items. Every input is paid for
    /// from `budget` and the filling stops when it is spent: `minItems` of nested arrays
    /// multiply (500 items of 500 items of …), and a CRD may come from a hostile plugin. `list`
    /// is the innermost array or map around it.
    fn fill_default(&mut self, field: &Field, path: &str, list: &str, budget: &mut InputBudget) {
        if let Some(default) = &field.default {
            self.fill(field, path, list, default, Absent::Defaults, budget);
            return;
        }
        if !budget.pay_field(field, path, list) {
            return;
        }
        match &field.kind {
            Kind::Object(children) => {
                for child in children {
                    self.fill_default(child, &child_path(path, &child.name), list, budget);
                }
            }
            Kind::Array(item) if field.required => {
                let wanted =
                    field.constraints.min_items.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
                let mut count = 0;
                while count < wanted && budget.pay(ITEM_INPUTS, path) {
                    self.fill_default(item, &item_path(path, count), path, budget);
                    count += 1;
                }
                if count > 0 {
                    self.lengths.insert(path.to_string(), count);
                }
            }
            _ => {}
        }
    }

    /// Fills the inputs of `field` at `path` from JSON; `absent` says what becomes of the
    /// properties the JSON leaves out. Every input is paid for from `budget`, an object's
    /// properties whether the JSON has them or not (the form draws them all), and the filling
    /// stops when it is spent: 10,000 items of `{}` are 30 KB of JSON, and with a wide item
    /// schema millions of inputs.
    fn fill(
        &mut self,
        field: &Field,
        path: &str,
        list: &str,
        value: &Value,
        absent: Absent,
        budget: &mut InputBudget,
    ) {
        if !budget.pay_field(field, path, list) {
            return;
        }
        match (&field.kind, value) {
            (_, Value::Null) => {}
            (Kind::Object(children), Value::Object(object)) => {
                self.present.insert(path.to_string());
                for child in children {
                    let at = child_path(path, &child.name);
                    match (object.get(&child.name), absent) {
                        (Some(value), _) => self.fill(child, &at, list, value, absent, budget),
                        (None, Absent::Defaults) => self.fill_default(child, &at, list, budget),
                        (None, Absent::Empty) => {
                            budget.pay_field(child, &at, list);
                        }
                    }
                }
            }
            (Kind::Array(item), Value::Array(items)) => {
                self.present.insert(path.to_string());
                let mut count = 0;
                for value in items {
                    if !budget.pay(ITEM_INPUTS, path) {
                        break;
                    }
                    self.fill(item, &item_path(path, count), path, value, absent, budget);
                    count += 1;
                }
                self.lengths.insert(path.to_string(), count);
            }
            (Kind::Map(item), Value::Object(entries)) => {
                self.present.insert(path.to_string());
                let mut count = 0;
                for (key, value) in entries {
                    if !(budget.pay(ENTRY_INPUTS, path) && budget.pay_text(key_text(path, count, key), path))
                    {
                        break;
                    }
                    self.set(entry_key_path(path, count), key.clone());
                    self.fill(item, &entry_value_path(path, count), path, value, absent, budget);
                    count += 1;
                }
                self.lengths.insert(path.to_string(), count);
            }
            (Kind::Object(_) | Kind::Array(_) | Kind::Map(_), _) => {}
            (kind, value) => {
                let text = match (kind, value) {
                    (Kind::Raw, value) => serde_json::to_string_pretty(value).unwrap_or_default(),
                    (_, Value::String(text)) => text.clone(),
                    (_, value) => value.to_string(),
                };
                if budget.pay_text(text.len(), list) {
                    self.set(path, text);
                }
            }
        }
    }
}

/// What a fill does with an object's properties that its JSON leaves out.
#[derive(Debug, Clone, Copy)]
enum Absent {
    /// Leaves them empty: an edited object is shown as it is.
    Empty,
    /// Fills their defaults: a schema default of `{}` still gets its properties' defaults.
    Defaults,
}

/// What the form draws for an array item besides the item's own inputs: its box with the
/// remove button.
const ITEM_INPUTS: usize = 1;
/// What the form draws for a map entry besides its value's inputs: its box with the remove
/// button, and the key input.
const ENTRY_INPUTS: usize = 2;

/// The inputs and the text a form may still draw, of [`MAX_INPUTS`] and [`MAX_FORM_TEXT`],
/// paid for as a fill or a count walks the form: both walks pay the same for the same input.
struct InputBudget {
    left: usize,
    text_left: usize,
    /// Where the budget ran out, and which of it, once it has.
    passed: Option<(String, FormLimit)>,
}

impl InputBudget {
    fn new() -> Self {
        InputBudget { left: MAX_INPUTS, text_left: MAX_FORM_TEXT, passed: None }
    }

    /// Pays for `inputs` drawn in the array or map at `list`; false once the budget is spent,
    /// and from then on.
    fn pay(&mut self, inputs: usize, list: &str) -> bool {
        self.take(inputs, FormLimit::Inputs, list)
    }

    /// Pays for `bytes` of text drawn in the array or map at `list`; false once the budget is
    /// spent, and from then on.
    fn pay_text(&mut self, bytes: usize, list: &str) -> bool {
        self.take(bytes, FormLimit::Text, list)
    }

    /// Pays for drawing `field` at `path` (one input, and the text it repeats in every place
    /// it is drawn: [`drawn_text`]), its value not counted.
    fn pay_field(&mut self, field: &Field, path: &str, list: &str) -> bool {
        self.pay(1, list) && self.pay_text(drawn_text(field, path), list)
    }

    fn take(&mut self, amount: usize, limit: FormLimit, list: &str) -> bool {
        if self.passed.is_some() {
            return false;
        }
        let left = match limit {
            FormLimit::Inputs => &mut self.left,
            FormLimit::Text => &mut self.text_left,
        };
        match left.checked_sub(amount) {
            Some(rest) => {
                *left = rest;
                true
            }
            None => {
                self.passed = Some((list.to_string(), limit));
                false
            }
        }
    }

    /// Whether everything paid for fitted.
    fn spent(self) -> Result<(), TooManyInputs> {
        match self.passed {
            Some((path, limit)) => Err(TooManyInputs { path, limit }),
            None => Ok(()),
        }
    }
}

/// The bytes of text the form draws for the key input of entry `index` of the map at `path`.
fn key_text(path: &str, index: usize, key: &str) -> usize {
    PATH_COPIES * entry_key_path(path, index).len() + key.len()
}

/// The bytes of text the form draws for `field` at `path` besides its value: the path
/// ([`PATH_COPIES`] times), label, help text, choices (value and text) and the placeholder
/// its `default` gives. As `form.rs` draws it; a group (object, array, map) draws fewer copies,
/// and is counted as an input all the same.
fn drawn_text(field: &Field, path: &str) -> usize {
    let choices = match &field.kind {
        Kind::Enum(options) => 2 * options.iter().map(String::len).sum::<usize>(),
        _ => 0,
    };
    let placeholder = match &field.default {
        None => 0,
        Some(Value::String(text)) => text.len(),
        // Bounded by the CRD's own size; paid each time it is drawn, so the budget stops
        // the repetition.
        Some(other) => other.to_string().len(),
    };
    PATH_COPIES * path.len()
        + field.label.len()
        + field.description.as_ref().map_or(0, String::len)
        + choices
        + placeholder
}

/// `metadata.name` → `/metadata/name` (top-level fields only, which are plain).
fn pointer_of(path: &str) -> String {
    format!("/{}", path.replace('.', "/"))
}

// ---------------------------------------------------------------------------
// Assembling the object

/// The object to send: `apiVersion`, `kind`, `metadata` (name, namespace) and
/// `spec`, or every problem the client can see, in form order.
///
/// Empty optional inputs are left out, so the server applies its defaults. An
/// optional object is left out when nothing in it differs from its defaults,
/// unless the edited object had it; then its required fields are not asked
/// for either (an optional section the user did not touch is not an error).
/// For an update, merge the result into the original with [`merge_update`].
pub fn assemble(
    spec: &FormSpec,
    values: &FormValues,
    api_version: &str,
    kind: &str,
) -> Result<Value, Vec<FieldError>> {
    values.check_inputs(spec).map_err(|too_many| {
        let message =
            format!("has more items than a form takes ({MAX_INPUTS} inputs in all): edit it in the YAML tab");
        vec![FieldError::new(&too_many.path, message)]
    })?;
    let mut errors = Vec::new();
    let mut metadata = Map::new();
    let mut object = Map::new();
    object.insert("apiVersion".to_string(), Value::String(api_version.to_string()));
    object.insert("kind".to_string(), Value::String(kind.to_string()));
    for field in &spec.fields {
        if let Some(name) = field.path.strip_prefix("metadata.") {
            if let Some(value) = check_name(field, values, &mut errors) {
                metadata.insert(name.to_string(), Value::String(value));
            }
        } else if let Some(value) = build(field, &field.path, field.required, values, &mut errors) {
            object.insert(field.name.clone(), value);
        }
    }
    object.insert("metadata".to_string(), Value::Object(metadata));
    if errors.is_empty() { Ok(Value::Object(object)) } else { Err(errors) }
}

/// The object for an update (PUT): the original with the assembled `spec`.
/// Everything else the form does not show (labels, annotations,
/// `resourceVersion` for the conflict check, `status`) stays as it was; a
/// Grant, for one, is refused without its registration label.
pub fn merge_update(original: &Value, assembled: &Value) -> Value {
    let mut object = original.clone();
    if let Some(map) = object.as_object_mut() {
        match assembled.get("spec") {
            Some(spec) => {
                map.insert("spec".to_string(), spec.clone());
            }
            None => {
                map.remove("spec");
            }
        }
    }
    object
}

fn check_name(field: &Field, values: &FormValues, errors: &mut Vec<FieldError>) -> Option<String> {
    let value = values.get(&field.path);
    let path = field.path.as_str();
    let max = field.constraints.max_length.unwrap_or(253) as usize;
    let message = if value.is_empty() {
        REQUIRED.to_string()
    } else if value.chars().count() > max {
        format!("must be no more than {max} characters")
    } else if path == "metadata.namespace" && !crate::plugins::model::is_dns1123_label(value) {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start \
         and end with an alphanumeric character"
            .to_string()
    } else if path == "metadata.name" && !crate::plugins::model::is_dns1123_subdomain(value) {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and \
         must start and end with an alphanumeric character"
            .to_string()
    } else {
        return Some(value.to_string());
    };
    errors.push(FieldError::new(path, message));
    None
}

/// The JSON of `field` at `path`, or `None` to leave it out.
fn build(
    field: &Field,
    path: &str,
    required: bool,
    values: &FormValues,
    errors: &mut Vec<FieldError>,
) -> Option<Value> {
    match &field.kind {
        Kind::Object(children) => {
            let mut local = Vec::new();
            let mut object = Map::new();
            for child in children {
                let at = child_path(path, &child.name);
                if let Some(value) = build(child, &at, child.required, values, &mut local) {
                    object.insert(child.name.clone(), value);
                }
            }
            if required {
                errors.extend(local);
                return Some(Value::Object(object));
            }
            let only_required = local.iter().all(|e| e.message == REQUIRED);
            let touched =
                !only_required || (has_input(field, path, values) && !default_only(field, path, &object));
            if touched {
                errors.extend(local);
                Some(Value::Object(object))
            } else if values.present(path) && local.is_empty() {
                Some(Value::Object(object))
            } else {
                None
            }
        }
        Kind::Array(item) => {
            let count = values.len(path);
            if count == 0 && !required && !values.present(path) {
                return None;
            }
            let items: Vec<Value> = (0..count)
                .filter_map(|index| build(item, &item_path(path, index), true, values, errors))
                .collect();
            check_count(field, path, count, "item", errors);
            Some(Value::Array(items))
        }
        Kind::Map(value) => {
            let count = values.len(path);
            let mut entries = Map::new();
            for index in 0..count {
                let key_path = entry_key_path(path, index);
                let value_path = entry_value_path(path, index);
                let key = values.get(&key_path);
                let blank = !has_input(value, &value_path, values);
                if key.is_empty() {
                    if !blank {
                        errors.push(FieldError::new(&key_path, REQUIRED));
                    }
                    continue;
                }
                if entries.contains_key(key) {
                    errors.push(FieldError::new(&key_path, "is already a key of an entry above"));
                    continue;
                }
                // An empty string is a real map value (a label without value).
                let built = if blank && value.kind == Kind::Text {
                    Some(Value::String(String::new()))
                } else {
                    build(value, &value_path, true, values, errors)
                };
                if let Some(built) = built {
                    entries.insert(key.to_string(), built);
                }
            }
            if entries.is_empty() && !required && !values.present(path) {
                return None;
            }
            check_count(field, path, entries.len(), "entry", errors);
            Some(Value::Object(entries))
        }
        _ => match scalar(field, required, values.get(path)) {
            Ok(value) => value,
            Err(message) => {
                errors.push(FieldError::new(path, message));
                None
            }
        },
    }
}

/// Whether an optional object holds only what its defaults would give, so the
/// user did not mean to set it.
fn default_only(field: &Field, path: &str, object: &Map<String, Value>) -> bool {
    let mut defaults = FormValues::default();
    // Defaults cut at the input limit differ from any object, so the object counts as touched;
    // [`assemble`] has refused a form past the limit before this is reached.
    defaults.fill_default(field, path, path, &mut InputBudget::new());
    let mut ignored = Vec::new();
    match build(field, path, true, &defaults, &mut ignored) {
        Some(Value::Object(expected)) => expected == *object,
        _ => false,
    }
}

/// Whether anything was typed at or under `path`.
fn has_input(field: &Field, path: &str, values: &FormValues) -> bool {
    match &field.kind {
        Kind::Object(children) => children.iter().any(|c| has_input(c, &child_path(path, &c.name), values)),
        Kind::Array(_) | Kind::Map(_) => values.len(path) > 0,
        _ => !values.get(path).trim().is_empty(),
    }
}

fn check_count(field: &Field, path: &str, count: usize, noun: &str, errors: &mut Vec<FieldError>) {
    let count = count as u64;
    if let Some(min) = field.constraints.min_items.filter(|min| count < *min) {
        errors.push(FieldError::new(path, format!("must have at least {}", plural(min, noun))));
    } else if let Some(max) = field.constraints.max_items.filter(|max| count > *max) {
        errors.push(FieldError::new(path, format!("must have at most {}", plural(max, noun))));
    }
}

fn plural(count: u64, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "entry") => format!("{count} entries"),
        _ => format!("{count} {noun}s"),
    }
}

/// The JSON of a scalar field from the text typed into it: `Ok(None)` to
/// leave it out, `Err` with what is wrong with it.
fn scalar(field: &Field, required: bool, text: &str) -> Result<Option<Value>, String> {
    let c = &field.constraints;
    let trimmed = text.trim();
    let blank = match field.kind {
        Kind::Text | Kind::Enum(_) => text.is_empty(),
        _ => trimmed.is_empty(),
    };
    if blank {
        return if required { Err(REQUIRED.to_string()) } else { Ok(None) };
    }
    let result = match &field.kind {
        Kind::Text if let (true, Ok(n)) = (c.int_or_string, trimmed.parse::<i64>()) => Ok(Value::from(n)),
        Kind::Text => {
            let length = text.chars().count() as u64;
            if let Some(min) = c.min_length.filter(|min| length < *min) {
                Err(format!("must be at least {}", plural(min, "character")))
            } else if let Some(max) = c.max_length.filter(|max| length > *max) {
                Err(format!("must be no more than {}", plural(max, "character")))
            } else {
                Ok(Value::String(text.to_string()))
            }
        }
        Kind::Enum(allowed) => {
            if allowed.iter().any(|a| a == text) {
                Ok(Value::String(text.to_string()))
            } else {
                Err(format!("must be one of: {}", allowed.join(", ")))
            }
        }
        Kind::DateTime => {
            if is_rfc3339(trimmed) {
                Ok(Value::String(trimmed.to_string()))
            } else {
                Err("must be a date and time like 2026-03-01T09:50:00Z".to_string())
            }
        }
        Kind::Integer => match trimmed.parse::<i64>() {
            // Digits past what a 64-bit integer holds: the API server would refuse it too.
            Err(e)
                if matches!(
                    e.kind(),
                    std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
                ) =>
            {
                Err(format!("must be between {} and {}", i64::MIN, i64::MAX))
            }
            Err(_) => Err("must be a whole number".to_string()),
            Ok(n) if c.format.as_deref() == Some("int32") && i32::try_from(n).is_err() => {
                Err(format!("must be between {} and {}", i32::MIN, i32::MAX))
            }
            Ok(n) => check_bounds(c, n as f64).map(|()| Value::from(n)),
        },
        Kind::Number => match trimmed.parse::<i64>() {
            Ok(n) => check_bounds(c, n as f64).map(|()| Value::from(n)),
            Err(_) => match trimmed.parse::<f64>().ok().and_then(|f| Number::from_f64(f).map(|n| (f, n))) {
                Some((f, n)) => check_bounds(c, f).map(|()| Value::Number(n)),
                None => Err("must be a number".to_string()),
            },
        },
        Kind::Boolean => match trimmed {
            "true" | "on" => Ok(Value::Bool(true)),
            "false" | "off" => Ok(Value::Bool(false)),
            _ => Err("must be true or false".to_string()),
        },
        Kind::Raw => match serde_json::from_str::<Value>(trimmed) {
            Err(e) => Err(format!("must be valid JSON: {e}")),
            Ok(value) => match c.raw_type.as_deref() {
                Some("object") if !value.is_object() => Err("must be a JSON object, in { }".to_string()),
                Some("array") if !value.is_array() => Err("must be a JSON array, in [ ]".to_string()),
                _ => Ok(value),
            },
        },
        Kind::Object(_) | Kind::Array(_) | Kind::Map(_) => return Ok(None),
    };
    result.map(Some)
}

fn check_bounds(c: &Constraints, n: f64) -> Result<(), String> {
    match (c.minimum, c.maximum) {
        (Some(min), _) if c.exclusive_minimum && n <= min => Err(format!("must be greater than {min}")),
        (Some(min), _) if n < min => Err(format!("must be at least {min}")),
        (_, Some(max)) if c.exclusive_maximum && n >= max => Err(format!("must be less than {max}")),
        (_, Some(max)) if n > max => Err(format!("must be at most {max}")),
        _ => Ok(()),
    }
}

/// `2026-03-01T09:50:00Z`, `2026-03-01T09:50:00.5+01:00`: what the API server
/// accepts for `format: date-time`.
fn is_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits =
        |range: std::ops::Range<usize>| b.get(range).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let number = |range: std::ops::Range<usize>| -> u32 {
        b[range].iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'))
    };
    if !(b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19))
    {
        return false;
    }
    let (month, day, hour, minute, second) =
        (number(5..7), number(8..10), number(11..13), number(14..16), number(17..19));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if b[i] == b'.' {
        let fraction = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
        if fraction == 0 {
            return false;
        }
        i += 1 + fraction;
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len()
                && digits(i + 1..i + 3)
                && b[i + 3] == b':'
                && digits(i + 4..i + 6)
                && number(i + 1..i + 3) <= 23
                && number(i + 4..i + 6) <= 59
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Server errors

/// The field errors and the general message of a refused write, from the
/// Kubernetes `Status` in the response body.
///
/// Causes with a `field` become [`FieldError`]s, with the path in this
/// module's form (`.spec.cluster` → `spec.cluster`, `spec['a']` → `spec.a`)
/// and the message without the repeated value (`Invalid value: "object": `)
/// or path (`spec.x in body `), so it reads next to its input. Run them
/// through [`FormSpec::place`] to land them on inputs that exist. The general
/// message is the causes without a field, or, for anything but 422 Invalid,
/// the status's message; `AlreadyExists` goes to `metadata.name`.
pub fn errors_from_status(status: &Value) -> (Vec<FieldError>, Option<String>) {
    if let Value::String(text) = status {
        let text = text.trim();
        return (
            Vec::new(),
            Some(if text.is_empty() { "The request failed.".to_string() } else { text.to_string() }),
        );
    }
    let code = status.get("code").and_then(Value::as_u64);
    let reason = status.get("reason").and_then(Value::as_str).unwrap_or("");
    let message = status.get("message").and_then(Value::as_str).map(str::trim).filter(|m| !m.is_empty());
    let mut fields = Vec::new();
    let mut general = Vec::new();
    let causes = status.pointer("/details/causes").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for cause in causes {
        let text = cause.get("message").and_then(Value::as_str).unwrap_or("").trim();
        match cause.get("field").and_then(Value::as_str).map(str::trim).filter(|f| !f.is_empty()) {
            Some(field) => {
                let path = parse_path(field)
                    .map(|segments| render_path(&segments))
                    .unwrap_or_else(|| field.trim_start_matches('.').to_string());
                fields.push(FieldError { message: tidy_cause(text, field, &path), path });
            }
            None if !text.is_empty() => general.push(text.to_string()),
            None => {}
        }
    }
    if reason == "AlreadyExists" {
        let text = message.map_or_else(|| "already exists".to_string(), str::to_string);
        fields.push(FieldError::new("metadata.name", text));
        return (fields, None);
    }
    let invalid = code == Some(422) || reason == "Invalid";
    let general = if invalid && (!fields.is_empty() || !general.is_empty()) {
        (!general.is_empty()).then(|| general.join("\n"))
    } else {
        Some(match (message, code) {
            (Some(message), _) => message.to_string(),
            (None, _) if !general.is_empty() => general.join("\n"),
            (None, Some(code)) => format!("The request failed (HTTP {code})."),
            (None, None) => "The request failed.".to_string(),
        })
    };
    (fields, general)
}

/// A cause's message as it reads next to its input.
fn tidy_cause(message: &str, field: &str, path: &str) -> String {
    let mut text = message.trim();
    for prefix in [field, path] {
        if let Some(rest) = text.strip_prefix(prefix).and_then(|r| r.strip_prefix(": ")) {
            text = rest;
        }
    }
    if text == "Required value" {
        return REQUIRED.to_string();
    }
    if let Some(rest) = text.strip_prefix("Required value: ") {
        text = rest;
    } else if let Some(rest) = text.strip_prefix("Forbidden: ") {
        text = rest;
    } else if let Some(rest) = text.strip_prefix("Invalid value: ").and_then(skip_value) {
        text = rest;
    }
    for prefix in [field.trim_start_matches('.'), path] {
        if let Some(rest) = text.strip_prefix(prefix).and_then(|r| r.strip_prefix(" in body ")) {
            text = rest;
        }
    }
    if text.is_empty() { "is invalid".to_string() } else { text.to_string() }
}

/// After `Invalid value: `: skips the value (`"text"`, `64`, `"object"`) and
/// the `: ` after it.
fn skip_value(text: &str) -> Option<&str> {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut escaped = false;
        for (i, c) in quoted.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => return quoted[i + 1..].strip_prefix(": ").filter(|r| !r.is_empty()),
                _ => {}
            }
        }
        None
    } else {
        text.split_once(": ").map(|(_, rest)| rest).filter(|r| !r.is_empty())
    }
}

#[cfg(test)]
#[path = "schema_form_tests.rs"]
mod tests;
