//! YAML editing of one object (the YAML tab of the generated form), as pure
//! functions the server functions in `api` call:
//!
//! - the edit buffer: the object without what the server owns (`status`,
//!   `metadata.managedFields`, `resourceVersion`, `uid`, `creationTimestamp`,
//!   `generation`, `selfLink`) — [`edit_buffer`];
//! - the object a save sends: the edit with those put back from the live object and
//!   the resourceVersion the edit was loaded at, so the API server refuses it with a
//!   409 when someone else changed the object meanwhile — [`restore`];
//! - the form's values written into the YAML without losing what the form does not
//!   show — [`keep_unknown`], and an edit re-applied onto a newer version — [`reapply`];
//! - a line diff for the review before saving and for a conflict — [`diff`].
//!
//! The YAML is parsed and written on the server only (`serde_yaml` is not in the
//! browser's bundle).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The metadata the server owns: left out of the edit buffer, and on save taken from
/// the live object (`resourceVersion` from the edit's own, see [`restore`]).
pub const SERVER_METADATA: [&str; 6] =
    ["managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"];

/// One line of a [`diff`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiffLine {
    Same(String),
    Added(String),
    Removed(String),
    /// This many unchanged lines, not shown.
    Skipped(usize),
}

/// A YAML text that does not parse: where (1-based; 0 when the parser names no place)
/// and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct YamlError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "YAML line {}, column {}: {}", self.line, self.column, self.message)
        } else {
            write!(f, "YAML: {}", self.message)
        }
    }
}

/// The object as the YAML tab edits it: without `status` and the server's metadata.
pub fn edit_buffer(object: &Value) -> Value {
    let mut buffer = object.clone();
    if let Some(map) = buffer.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in SERVER_METADATA {
                meta.remove(key);
            }
        }
    }
    buffer
}

fn text<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// The object to PUT for an edit of `live` loaded at `loaded_version`: the edit, with
/// its identity (apiVersion, kind, name, namespace) checked — an edit may leave them out
/// but not change them —, `status` and the server's metadata from `live`, and
/// `metadata.resourceVersion` the one the edit was loaded at, so the API server
/// answers 409 Conflict if the object changed since, instead of the save silently
/// overwriting that change. The message says what is wrong with the edit.
pub fn restore(edited: Value, live: &Value, loaded_version: &str) -> Result<Value, String> {
    let mut object = match edited {
        Value::Object(map) => map,
        other => return Err(format!("The YAML must be one object (a mapping), not {}.", type_name(&other))),
    };
    let mut meta = match object.remove("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(meta)) => meta,
        Some(_) => return Err("metadata must be a mapping.".to_owned()),
    };
    same_or_fill(&mut object, live.get("apiVersion"), "apiVersion", "apiVersion")?;
    same_or_fill(&mut object, live.get("kind"), "kind", "kind")?;
    let live_meta = |key: &str| live.get("metadata").and_then(|m| m.get(key));
    same_or_fill(&mut meta, live_meta("name"), "name", "metadata.name")?;
    same_or_fill(&mut meta, live_meta("namespace"), "namespace", "metadata.namespace")?;
    for key in SERVER_METADATA {
        match live_meta(key) {
            Some(v) if key != "resourceVersion" => meta.insert(key.to_owned(), v.clone()),
            _ => meta.remove(key),
        };
    }
    if !loaded_version.is_empty() {
        meta.insert("resourceVersion".to_owned(), Value::String(loaded_version.to_owned()));
    }
    object.insert("metadata".to_owned(), Value::Object(meta));
    match live.get("status") {
        Some(status) => object.insert("status".to_owned(), status.clone()),
        None => object.remove("status"),
    };
    Ok(Value::Object(object))
}

/// `map[key]` as `live` has it: filled in when absent, refused when different.
fn same_or_fill(
    map: &mut Map<String, Value>,
    live: Option<&Value>,
    key: &str,
    name: &str,
) -> Result<(), String> {
    let Some(live) = live else { return Ok(()) };
    match map.get(key) {
        None | Some(Value::Null) => {
            map.insert(key.to_owned(), live.clone());
            Ok(())
        }
        Some(v) if v == live => Ok(()),
        Some(v) => Err(format!("{name} cannot change here: it is {live}, the YAML says {v}.")),
    }
}

/// The object to POST for a YAML create: a mapping of the kind, without `status` and
/// the server's metadata (the API server sets them).
pub fn prepare_create(edited: Value, api_version: &str, kind: &str) -> Result<Value, String> {
    let live = serde_json::json!({ "apiVersion": api_version, "kind": kind });
    let object = restore(edited, &live, "")?;
    if text(&object, "/metadata/name").is_none_or(str::is_empty)
        && text(&object, "/metadata/generateName").is_none_or(str::is_empty)
    {
        return Err("metadata.name is required.".to_owned());
    }
    Ok(object)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "an empty document",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The form's `assembled` value over `base` (the YAML it was switched from): what the
/// form shows comes from the form, and keys of `base` that `schema` (an OpenAPI v3
/// schema) does not declare are kept, at every level the schema describes. So fields
/// the form has no input for survive a round trip through it.
pub fn keep_unknown(base: &Value, assembled: &Value, schema: &Value) -> Value {
    let (Some(base_map), Some(form_map)) = (base.as_object(), assembled.as_object()) else {
        return assembled.clone();
    };
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        // A free-form object is one input (JSON): the form has all of it.
        return assembled.clone();
    };
    let mut out = form_map.clone();
    for (key, value) in base_map {
        match (props.get(key), out.get_mut(key)) {
            (None, None) => {
                out.insert(key.clone(), value.clone());
            }
            (Some(field), Some(formed)) => *formed = keep_unknown(value, formed, field),
            _ => {}
        }
    }
    Value::Object(out)
}

/// The object a form shows as YAML and saves: its `assembled` values over `base` (the YAML
/// tab's text as parsed), with what the form has no input for kept ([`keep_unknown`]). The
/// metadata is the YAML's (annotations, owners, finalizers) with the form's name, namespace
/// and `labels` (none: no `labels` key, rather than an empty map).
pub fn form_over_yaml(
    base: &Value,
    assembled: &Value,
    labels: serde_json::Map<String, Value>,
    schema: &Value,
) -> Value {
    let mut object = keep_unknown(base, assembled, schema);
    let mut meta = base.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
    for key in ["name", "namespace"] {
        if let Some(v) = assembled.pointer(&format!("/metadata/{key}")) {
            meta.insert(key.into(), v.clone());
        }
    }
    set_labels(&mut meta, labels);
    object["metadata"] = Value::Object(meta);
    object
}

/// `metadata.labels` as the form gives them: none is no `labels` key, rather than an empty map.
pub fn set_labels(meta: &mut Map<String, Value>, labels: Map<String, Value>) {
    if labels.is_empty() {
        meta.remove("labels");
    } else {
        meta.insert("labels".into(), Value::Object(labels));
    }
}

/// An edit (`mine`, made from `base`) re-applied onto `theirs`, a newer version of
/// `base`: what the edit changed wins, everything else is `theirs`. Mappings merge key
/// by key; anything else the edit changed replaces theirs whole.
pub fn reapply(base: &Value, mine: &Value, theirs: &Value) -> Value {
    if mine == base {
        return theirs.clone();
    }
    if theirs == base {
        return mine.clone();
    }
    let (Value::Object(b), Value::Object(m), Value::Object(t)) = (base, mine, theirs) else {
        return mine.clone();
    };
    let mut out = Map::new();
    let keys = t.keys().chain(m.keys()).chain(b.keys());
    for key in keys {
        if out.contains_key(key) {
            continue;
        }
        let merged = match (b.get(key), m.get(key), t.get(key)) {
            (b, m, t) if m == b => t.cloned(),
            (b, m, t) if t == b => m.cloned(),
            (Some(b), Some(m), Some(t)) => Some(reapply(b, m, t)),
            (_, m, _) => m.cloned(),
        };
        if let Some(value) = merged {
            out.insert(key.clone(), value);
        }
    }
    Value::Object(out)
}

/// Lines compared one by one beyond this many cells (old × new lines that differ);
/// below it, a longest common subsequence.
const MAX_DIFF_CELLS: usize = 4_000_000;

/// The line diff from `old` to `new`, with `context` unchanged lines around each change
/// and the rest as [`DiffLine::Skipped`].
pub fn diff(old: &str, new: &str, context: usize) -> Vec<DiffLine> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut lines: Vec<DiffLine> = a[..prefix].iter().map(|l| DiffLine::Same((*l).to_owned())).collect();
    if am.len().saturating_mul(bm.len()) <= MAX_DIFF_CELLS {
        lines.extend(lcs_diff(am, bm));
    } else {
        lines.extend(am.iter().map(|l| DiffLine::Removed((*l).to_owned())));
        lines.extend(bm.iter().map(|l| DiffLine::Added((*l).to_owned())));
    }
    lines.extend(a[a.len() - suffix..].iter().map(|l| DiffLine::Same((*l).to_owned())));
    compact(lines, context)
}

fn lcs_diff(a: &[&str], b: &[&str]) -> Vec<DiffLine> {
    let (n, m) = (a.len(), b.len());
    // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lengths = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[at(i, j)] = if a[i] == b[j] {
                lengths[at(i + 1, j + 1)] + 1
            } else {
                lengths[at(i + 1, j)].max(lengths[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(DiffLine::Same(a[i].to_owned()));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lengths[at(i, j + 1)] >= lengths[at(i + 1, j)]) {
            out.push(DiffLine::Added(b[j].to_owned()));
            j += 1;
        } else {
            out.push(DiffLine::Removed(a[i].to_owned()));
            i += 1;
        }
    }
    // Removed before added within each run of changes, as diff tools show them.
    let mut start = 0;
    while start < out.len() {
        if matches!(out[start], DiffLine::Same(_)) {
            start += 1;
            continue;
        }
        let end =
            out[start..].iter().position(|l| matches!(l, DiffLine::Same(_))).map_or(out.len(), |p| start + p);
        out[start..end].sort_by_key(|l| matches!(l, DiffLine::Added(_)));
        start = end;
    }
    out
}

/// Unchanged lines further than `context` from a change become one [`DiffLine::Skipped`].
fn compact(lines: Vec<DiffLine>, context: usize) -> Vec<DiffLine> {
    let changed: Vec<usize> =
        lines.iter().enumerate().filter(|(_, l)| !matches!(l, DiffLine::Same(_))).map(|(i, _)| i).collect();
    let near = |i: usize| {
        let after = changed.partition_point(|&c| c < i);
        let next = changed.get(after).is_some_and(|&c| c - i <= context);
        let previous = after > 0 && i - changed[after - 1] <= context;
        next || previous
    };
    let mut out = Vec::new();
    let mut skipped = 0;
    for (i, line) in lines.into_iter().enumerate() {
        if matches!(line, DiffLine::Same(_)) && !near(i) {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            out.push(DiffLine::Skipped(skipped));
            skipped = 0;
        }
        out.push(line);
    }
    if skipped > 0 {
        out.push(DiffLine::Skipped(skipped));
    }
    out
}

/// How many lines a diff adds and removes.
pub fn counts(lines: &[DiffLine]) -> (usize, usize) {
    lines.iter().fold((0, 0), |(a, r), l| match l {
        DiffLine::Added(_) => (a + 1, r),
        DiffLine::Removed(_) => (a, r + 1),
        _ => (a, r),
    })
}

/// The largest YAML text the console parses (the YAML tab says so as the text grows past it).
pub const MAX_YAML_BYTES: usize = 512 * 1024;

/// How deep YAML flow collections may nest: serde_yaml's own limit, checked before
/// parsing (libyaml's scanner takes time quadratic in that depth).
#[cfg(feature = "ssr")]
const MAX_YAML_NESTING: usize = 128;

/// Parses the YAML tab's text into one object's JSON value.
#[cfg(feature = "ssr")]
pub fn parse_yaml(text: &str) -> Result<Value, YamlError> {
    let refuse = |message: String| YamlError { line: 0, column: 0, message };
    if text.len() > MAX_YAML_BYTES {
        return Err(refuse(format!("the text is longer than {} KiB", MAX_YAML_BYTES / 1024)));
    }
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_YAML_NESTING {
                    return Err(refuse(format!("collections nest deeper than {MAX_YAML_NESTING} levels")));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    // Bounded: a YAML alias repeats what it names, and ~100 KB of them expand to gigabytes;
    // a key given twice is refused, as kubectl does, never silently dropped.
    use fundament_kube_core::bounded_value::{self, RepeatedKeys};
    let document = serde_yaml::Deserializer::from_str(text);
    let budget = bounded_value::budget_for(text.len());
    bounded_value::value_within(document, budget, RepeatedKeys::Refuse).map_err(|e| {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        let mut message = e.to_string();
        // serde_yaml appends the place; the error carries it apart.
        if let Some(at) = message.find(&format!(" at line {line} column {column}")) {
            message.truncate(at);
        }
        YamlError { line, column, message }
    })
}

/// The object as YAML text.
#[cfg(feature = "ssr")]
pub fn to_yaml(value: &Value) -> String {
    // A JSON value always serialises.
    serde_yaml::to_string(value).unwrap_or_default()
}

#[cfg(test)]
#[path = "yaml_edit_tests.rs"]
mod tests;
