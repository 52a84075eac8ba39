//! Evaluation, as client-go's `JSONPath.FindResults` with
//! `AllowMissingKeys(true)` (what the API server uses for printer columns):
//! missing keys give no results, while type errors (indexing a non-array,
//! comparing a string with a number, an index out of range) fail the whole
//! evaluation, which the API server shows as an empty cell.
//!
//! Unlike client-go, an evaluation produces at most [`MAX_RESULTS`] values in all its steps:
//! printer columns come from CRDs that plugins ship, and a union or a recursive descent
//! repeated in one path multiplies its results (`[0,0,…][0,0,…]…`, `..a..a..a`) into billions.

use serde_json::Value;

use crate::parse::{Filter, Node, Param};

/// Why an evaluation failed. Messages follow client-go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// An index, slice or filter was applied to something that is not an array.
    #[error("{0} is not array or slice")]
    NotArray(&'static str),
    /// A filter was applied to something that is not an array.
    #[error("{0} is not array or slice and cannot be filtered")]
    NotFilterable(&'static str),
    /// An index past either end of the array.
    #[error("array index out of bounds: index {index}, length {length}")]
    OutOfBounds {
        /// The offending index, after counting negative ones from the end.
        index: i64,
        /// The array's length.
        length: usize,
    },
    /// A slice whose start is after its end.
    #[error("starting index {start} is greater than ending index {end}")]
    StartAfterEnd {
        /// The start.
        start: i64,
        /// The end.
        end: i64,
    },
    /// A slice step of zero or less.
    #[error("step must be > 0")]
    StepNotPositive,
    /// One side of a filter comparison gave several values.
    #[error("can only compare one element at a time")]
    CompareMany,
    /// A comparison of different types (string with number, …).
    #[error("incompatible types for comparison")]
    IncompatibleTypes,
    /// A comparison involving null, an object or an array (or `<` on booleans).
    #[error("invalid type for comparison")]
    InvalidComparisonType,
    /// A filter operator other than `== != < <= > >=`.
    #[error("unrecognized filter operator {0}")]
    UnknownOperator(String),
    /// A bare word that is not `true`/`false`/`range`.
    #[error("unrecognized identifier {0}")]
    UnknownIdentifier(String),
    /// `end` outside a `range` block.
    #[error("not in range, nothing to end")]
    EndOutsideRange,
    /// The evaluation produced more values, in all its steps, than [`MAX_RESULTS`] or what
    /// was left of its [`Budget`].
    #[error("the path produces too many values (at most {MAX_RESULTS} per evaluation)")]
    TooManyResults,
}

/// How many values an evaluation may produce in all its steps together. A printer column's
/// path on one object needs a few; the bound keeps a hostile one's cost at milliseconds.
pub const MAX_RESULTS: usize = 10_000;

/// A value produced by evaluation: a part of the document, or something that
/// is not (a literal of the path, one byte of a string).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Item<'a, 'p> {
    /// A value in the document.
    Doc(&'a Value),
    /// A byte of a string, produced by `*` / `[*]`-less wildcards over strings
    /// (Go indexes strings by byte).
    Byte(u8),
    /// A quoted literal.
    Text(&'p [u8]),
    /// An integer literal (Go `int`, not the `int64` of JSON numbers).
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
}

/// An error, with the values Go's evaluator returns alongside it (an
/// existence filter still counts them).
struct Failure<'a, 'p> {
    partial: Vec<Item<'a, 'p>>,
    error: EvalError,
}

type Outcome<'a, 'p> = Result<Vec<Item<'a, 'p>>, Failure<'a, 'p>>;

fn fail<'a, 'p>(partial: Vec<Item<'a, 'p>>, error: EvalError) -> Outcome<'a, 'p> {
    Err(Failure { partial, error })
}

/// Evaluates a parsed path against `root`.
pub(crate) fn evaluate<'a, 'p>(nodes: &'p [Node], root: &'a Value) -> Result<Vec<Item<'a, 'p>>, EvalError> {
    evaluate_within(nodes, root, &mut Budget::new(MAX_RESULTS))
}

/// [`evaluate`], producing at most what is left of `budget` (and [`MAX_RESULTS`]); what it
/// produced is taken from the budget, whether it succeeds or not.
pub(crate) fn evaluate_within<'a, 'p>(
    nodes: &'p [Node],
    root: &'a Value,
    budget: &mut Budget,
) -> Result<Vec<Item<'a, 'p>>, EvalError> {
    let mut evaluator = Evaluator { saw_range: false, produced: 0, limit: budget.left.min(MAX_RESULTS) };
    let items = evaluator.list(nodes, vec![Item::Doc(root)]).map_err(|f| f.error);
    budget.left = budget.left.saturating_sub(evaluator.produced);
    // A `range` keyword turns the expression into a loop over the rest of the
    // template, which in a single expression is empty: no results.
    Ok(if evaluator.saw_range { Vec::new() } else { items? })
}

/// Values that evaluations may produce together, e.g. every cell of a table: a path that is
/// cheap on one object can be costly on ten thousand of them. Optionally also the text that
/// `string` cells print ([`Budget::with_text`]): one value can print as megabytes (`.` is the
/// whole object).
#[derive(Debug, Clone)]
pub struct Budget {
    left: usize,
    /// Bytes that `string` cells may still print, all together.
    text_left: usize,
    /// Characters that one `string` cell prints at most.
    cell_chars: usize,
}

impl Budget {
    /// A budget of `values` values. The text of `string` cells is not bounded: they are the
    /// API server's, byte for byte, as kubectl compares them.
    pub fn new(values: usize) -> Budget {
        Budget { left: values, text_left: usize::MAX, cell_chars: usize::MAX }
    }

    /// This budget, also bounding the text of `string` cells: each is cut to `cell_chars`
    /// characters (the last an ellipsis, `…`), its printing stopped there, and the cells print
    /// about `bytes` bytes in all (the cell that passes it is the last). For showing a table:
    /// a cut cell is no longer the API server's.
    pub fn with_text(self, bytes: usize, cell_chars: usize) -> Budget {
        Budget { text_left: bytes, cell_chars, ..self }
    }

    /// Whether it is spent: evaluations within it now fail with [`EvalError::TooManyResults`],
    /// or `string` cells print nothing more.
    pub fn is_spent(&self) -> bool {
        self.left == 0 || self.text_left == 0
    }

    /// How many characters the next `string` cell may print: `None` once the text is spent.
    pub(crate) fn cell_chars(&self) -> Option<usize> {
        (self.text_left > 0).then_some(self.cell_chars)
    }

    /// Takes the `bytes` a cell printed from the text that is left.
    pub(crate) fn printed(&mut self, bytes: usize) {
        self.text_left = self.text_left.saturating_sub(bytes);
    }
}

struct Evaluator {
    saw_range: bool,
    /// Values produced so far, in every step.
    produced: usize,
    /// How many it may produce ([`MAX_RESULTS`], or less of a [`Budget`]).
    limit: usize,
}

impl Evaluator {
    /// Counts `n` more values, before they are made: past [`MAX_RESULTS`] the evaluation fails.
    fn produce(&mut self, n: usize) -> Result<(), EvalError> {
        self.produced = self.produced.saturating_add(n);
        if self.produced > self.limit { Err(EvalError::TooManyResults) } else { Ok(()) }
    }

    fn list<'a, 'p>(&mut self, nodes: &'p [Node], input: Vec<Item<'a, 'p>>) -> Outcome<'a, 'p> {
        let mut current = input;
        for node in nodes {
            current = self.node(node, current)?;
        }
        Ok(current)
    }

    fn node<'a, 'p>(&mut self, node: &'p Node, input: Vec<Item<'a, 'p>>) -> Outcome<'a, 'p> {
        // Each step makes at most as many values as it has input, except the ones counted as
        // they go (wildcards, recursive descent, unions, slices).
        if let Err(error) = self.produce(input.len()) {
            return fail(Vec::new(), error);
        }
        match node {
            Node::Field(name) => Ok(field(name, &input)),
            Node::Array(params) => {
                let windows = array_windows(params, &input);
                match self.produce(windows) {
                    Ok(()) => array(params, input),
                    Err(error) => fail(Vec::new(), error),
                }
            }
            Node::Filter(filter) => self.filter(filter, input),
            Node::Wildcard => match self.produce(input.iter().map(child_count).sum()) {
                Ok(()) => Ok(input.iter().flat_map(children).collect()),
                Err(error) => fail(Vec::new(), error),
            },
            Node::Recursive => {
                let mut result = Vec::new();
                match recursive(&input, &mut result, &mut |n| self.produce(n)) {
                    Ok(()) => Ok(result),
                    Err(error) => fail(Vec::new(), error),
                }
            }
            Node::Union(parts) => {
                let mut result = Vec::new();
                for part in parts {
                    match self.list(part, input.clone()) {
                        Ok(items) => match self.produce(items.len()) {
                            Ok(()) => result.extend(items),
                            Err(error) => return fail(Vec::new(), error),
                        },
                        Err(f) => return fail(input, f.error),
                    }
                }
                Ok(result)
            }
            Node::Text(text) => Ok(vec![Item::Text(text)]),
            Node::Int(i) => Ok(vec![Item::Int(*i); input.len()]),
            Node::Float(f) => Ok(vec![Item::Float(*f); input.len()]),
            Node::Bool(b) => Ok(vec![Item::Bool(*b); input.len()]),
            Node::Identifier(word) => match word.as_str() {
                "range" => {
                    self.saw_range = true;
                    Ok(input)
                }
                "end" => fail(Vec::new(), EvalError::EndOutsideRange),
                _ => fail(input, EvalError::UnknownIdentifier(word.clone())),
            },
        }
    }

    fn filter<'a, 'p>(&mut self, filter: &'p Filter, input: Vec<Item<'a, 'p>>) -> Outcome<'a, 'p> {
        let mut results = Vec::new();
        for item in &input {
            let elements = match item {
                Item::Doc(Value::Array(elements)) => elements,
                other => return fail(input.clone(), EvalError::NotFilterable(kind_name(other))),
            };
            for element in elements {
                let here = vec![Item::Doc(element)];
                let lefts = self.list(&filter.left, here.clone());
                let Some(op) = &filter.op else {
                    // Existence: anything at all, even a value returned with an error.
                    let found = match &lefts {
                        Ok(items) => !items.is_empty(),
                        Err(f) => !f.partial.is_empty(),
                    };
                    if found {
                        results.push(Item::Doc(element));
                    }
                    continue;
                };
                let left = match lefts {
                    Err(f) => return fail(input.clone(), f.error),
                    Ok(items) => match items.as_slice() {
                        [] => continue,
                        [one] => *one,
                        _ => return fail(input.clone(), EvalError::CompareMany),
                    },
                };
                let right = match self.list(&filter.right, here) {
                    Err(f) => return fail(input.clone(), f.error),
                    Ok(items) => match items.as_slice() {
                        [] => continue,
                        [one] => *one,
                        _ => return fail(input.clone(), EvalError::CompareMany),
                    },
                };
                let pass = match op.as_str() {
                    "<" => less(left, right),
                    ">" => less_equal(left, right).map(|le| !le),
                    "==" => equal(left, right),
                    "!=" => equal(left, right).map(|eq| !eq),
                    "<=" => less_equal(left, right),
                    ">=" => less(left, right).map(|lt| !lt),
                    other => Err(EvalError::UnknownOperator(other.to_owned())),
                };
                match pass {
                    Ok(true) => results.push(Item::Doc(element)),
                    Ok(false) => {}
                    Err(error) => return fail(results, error),
                }
            }
        }
        Ok(results)
    }
}

/// `.name`: the key's value in each object; nothing for anything else.
fn field<'a, 'p>(name: &str, input: &[Item<'a, 'p>]) -> Vec<Item<'a, 'p>> {
    input
        .iter()
        .filter_map(|item| match item {
            Item::Doc(Value::Object(map)) => map.get(name).map(Item::Doc),
            _ => None,
        })
        .collect()
}

/// `[i]` / `[a:b:c]`, with client-go's bounds rules: negative indexes count
/// from the end, out-of-range indexes are errors, an empty range ends the
/// evaluation of this step early.
fn array<'a, 'p>(params: &[Param; 3], input: Vec<Item<'a, 'p>>) -> Outcome<'a, 'p> {
    let mut result = Vec::new();
    for item in &input {
        let elements = match item {
            Item::Doc(Value::Null) => continue,
            Item::Doc(Value::Array(elements)) => elements,
            other => return fail(input.clone(), EvalError::NotArray(kind_name(other))),
        };
        let length = i64::try_from(elements.len()).unwrap_or(i64::MAX);
        let mut start = if params[0].known { params[0].value } else { 0 };
        if start < 0 {
            start = start.wrapping_add(length);
        }
        let mut end = if params[1].known { params[1].value } else { length };
        if end < 0 || (end == 0 && params[1].derived) {
            end = end.wrapping_add(length);
        }
        if start == end {
            // Zero elements requested: client-go returns what it has so far.
            return Ok(result);
        }
        if start >= length || start < 0 {
            return fail(input.clone(), EvalError::OutOfBounds { index: start, length: elements.len() });
        }
        if end > length || end < 0 {
            return fail(
                input.clone(),
                EvalError::OutOfBounds { index: end.wrapping_sub(1), length: elements.len() },
            );
        }
        if start > end {
            return fail(input.clone(), EvalError::StartAfterEnd { start, end });
        }
        let step = if params[2].known {
            if params[2].value <= 0 {
                return fail(input.clone(), EvalError::StepNotPositive);
            }
            usize::try_from(params[2].value).unwrap_or(usize::MAX)
        } else {
            1
        };
        // Both bounds are within 0..=length here.
        let window = elements.get(start as usize..end as usize).unwrap_or_default();
        result.extend(window.iter().step_by(step).map(Item::Doc));
    }
    Ok(result)
}

/// What a wildcard yields for one value: object values, array elements,
/// string bytes.
fn children<'a, 'p>(item: &Item<'a, 'p>) -> Vec<Item<'a, 'p>> {
    match item {
        Item::Doc(Value::Object(map)) => map.values().map(Item::Doc).collect(),
        Item::Doc(Value::Array(elements)) => elements.iter().map(Item::Doc).collect(),
        Item::Doc(Value::String(s)) => s.bytes().map(Item::Byte).collect(),
        Item::Text(text) => text.iter().copied().map(Item::Byte).collect(),
        _ => Vec::new(),
    }
}

/// How many values [`children`] yields for `item`, without making them.
fn child_count(item: &Item<'_, '_>) -> usize {
    match item {
        Item::Doc(Value::Object(map)) => map.len(),
        Item::Doc(Value::Array(elements)) => elements.len(),
        Item::Doc(Value::String(s)) => s.len(),
        Item::Text(text) => text.len(),
        _ => 0,
    }
}

/// An upper bound of how many values `[…]` takes from `input` (the whole of each array).
fn array_windows(params: &[Param; 3], input: &[Item<'_, '_>]) -> usize {
    let step = if params[2].known { usize::try_from(params[2].value).unwrap_or(1).max(1) } else { 1 };
    input
        .iter()
        .map(|item| match item {
            Item::Doc(Value::Array(elements)) => elements.len().div_ceil(step),
            _ => 0,
        })
        .sum()
}

/// `..`: every value that has children (non-empty objects, arrays and
/// strings), in pre-order, into `result`. Leaves are not included; the next
/// step picks from the containers. Each value is counted (`produce`) as it is
/// added, so a descent past the bound stops there.
fn recursive<'a, 'p>(
    input: &[Item<'a, 'p>],
    result: &mut Vec<Item<'a, 'p>>,
    produce: &mut impl FnMut(usize) -> Result<(), EvalError>,
) -> Result<(), EvalError> {
    for item in input {
        match item {
            Item::Doc(Value::Object(map)) if !map.is_empty() => {
                produce(1)?;
                result.push(*item);
                let values: Vec<_> = map.values().map(Item::Doc).collect();
                recursive(&values, result, produce)?;
            }
            Item::Doc(Value::Array(elements)) if !elements.is_empty() => {
                produce(1)?;
                result.push(*item);
                let elements: Vec<_> = elements.iter().map(Item::Doc).collect();
                recursive(&elements, result, produce)?;
            }
            // Strings count as containers of bytes; bytes have no children.
            Item::Doc(Value::String(s)) if !s.is_empty() => {
                produce(1)?;
                result.push(*item);
            }
            Item::Text(text) if !text.is_empty() => {
                produce(1)?;
                result.push(*item);
            }
            _ => {}
        }
    }
    Ok(())
}

/// A Go type name for messages.
fn kind_name(item: &Item<'_, '_>) -> &'static str {
    match item {
        Item::Doc(Value::Null) => "null",
        Item::Doc(Value::Bool(_)) | Item::Bool(_) => "bool",
        Item::Doc(Value::Number(n)) if n.is_i64() => "int64",
        Item::Doc(Value::Number(_)) | Item::Float(_) => "float64",
        Item::Doc(Value::String(_)) | Item::Text(_) => "string",
        Item::Doc(Value::Array(_)) => "[]interface {}",
        Item::Doc(Value::Object(_)) => "map[string]interface {}",
        Item::Byte(_) => "uint8",
        Item::Int(_) => "int",
    }
}

/// The comparable kinds of Go's `text/template` comparisons.
enum Kind<'x> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'x [u8]),
}

fn kind<'x>(item: &'x Item<'_, '_>) -> Result<Kind<'x>, EvalError> {
    Ok(match item {
        Item::Doc(Value::Bool(b)) | Item::Bool(b) => Kind::Bool(*b),
        // The API server decodes integral JSON numbers that fit to int64, others to float64.
        Item::Doc(Value::Number(n)) => match n.as_i64() {
            Some(i) => Kind::Int(i),
            None => Kind::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Item::Doc(Value::String(s)) => Kind::Str(s.as_bytes()),
        Item::Text(t) => Kind::Str(t),
        Item::Int(i) => Kind::Int(*i),
        Item::Float(f) => Kind::Float(*f),
        Item::Byte(b) => Kind::Uint(u64::from(*b)),
        Item::Doc(Value::Null | Value::Array(_) | Value::Object(_)) => {
            return Err(EvalError::InvalidComparisonType);
        }
    })
}

/// Go's `template.Equal`.
fn equal(a: Item<'_, '_>, b: Item<'_, '_>) -> Result<bool, EvalError> {
    Ok(match (kind(&a)?, kind(&b)?) {
        (Kind::Bool(x), Kind::Bool(y)) => x == y,
        (Kind::Int(x), Kind::Int(y)) => x == y,
        (Kind::Uint(x), Kind::Uint(y)) => x == y,
        (Kind::Float(x), Kind::Float(y)) => x == y,
        (Kind::Str(x), Kind::Str(y)) => x == y,
        (Kind::Int(x), Kind::Uint(y)) => u64::try_from(x).is_ok_and(|x| x == y),
        (Kind::Uint(x), Kind::Int(y)) => u64::try_from(y).is_ok_and(|y| x == y),
        _ => return Err(EvalError::IncompatibleTypes),
    })
}

/// Go's `template.Less`.
fn less(a: Item<'_, '_>, b: Item<'_, '_>) -> Result<bool, EvalError> {
    Ok(match (kind(&a)?, kind(&b)?) {
        (Kind::Bool(_), Kind::Bool(_)) => return Err(EvalError::InvalidComparisonType),
        (Kind::Int(x), Kind::Int(y)) => x < y,
        (Kind::Uint(x), Kind::Uint(y)) => x < y,
        (Kind::Float(x), Kind::Float(y)) => x < y,
        (Kind::Str(x), Kind::Str(y)) => x < y,
        (Kind::Int(x), Kind::Uint(y)) => u64::try_from(x).map_or(true, |x| x < y),
        (Kind::Uint(x), Kind::Int(y)) => u64::try_from(y).is_ok_and(|y| x < y),
        _ => return Err(EvalError::IncompatibleTypes),
    })
}

/// Go's `template.LessEqual`: less, else equal.
fn less_equal(a: Item<'_, '_>, b: Item<'_, '_>) -> Result<bool, EvalError> {
    Ok(less(a, b)? || equal(a, b)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::parse::parse_wrapped;

    fn run(path: &str, doc: &Value) -> Result<Vec<Value>, EvalError> {
        let nodes = parse_wrapped(path, 0).unwrap_or_else(|e| panic!("{path}: {e}"));
        let items = evaluate(&nodes, doc)?;
        Ok(items
            .into_iter()
            .map(|i| match i {
                Item::Doc(v) => v.clone(),
                Item::Byte(b) => json!(format!("byte {b}")),
                Item::Text(t) => json!(String::from_utf8_lossy(t)),
                Item::Int(i) => json!(i),
                Item::Float(f) => json!(f),
                Item::Bool(b) => json!(b),
            })
            .collect())
    }

    fn ok(path: &str, doc: &Value) -> Vec<Value> {
        run(path, doc).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn store() -> Value {
        json!({
            "items": [
                {"name": "a", "n": 1, "f": 1.5, "ok": true, "tags": ["x", "y"]},
                {"name": "b", "n": 2, "f": 2.5, "ok": false, "tags": []},
                {"name": "c", "n": 3, "f": 3.5, "ok": true}
            ],
            "labels": {"app.kubernetes.io/name": "web", "tier": "front"},
            "empty": [],
            "nothing": null,
            "text": "hi"
        })
    }

    #[test]
    fn fields_and_missing_keys() {
        let s = store();
        assert_eq!(ok(".text", &s), [json!("hi")]);
        assert_eq!(ok(".missing", &s), Vec::<Value>::new());
        assert_eq!(ok(".missing.deeper[0]", &s), Vec::<Value>::new());
        assert_eq!(ok(".text.length", &s), Vec::<Value>::new(), "fields of scalars are missing, not errors");
        assert_eq!(ok(".nothing", &s), [Value::Null]);
        assert_eq!(ok(".nothing.x", &s), Vec::<Value>::new());
        assert_eq!(ok(r".labels.app\.kubernetes\.io/name", &s), [json!("web")]);
        assert_eq!(ok("", &s), std::slice::from_ref(&s), "an empty path is the object itself");
    }

    #[test]
    fn indexes_and_slices() {
        let s = store();
        assert_eq!(ok(".items[0].name", &s), [json!("a")]);
        assert_eq!(ok(".items[-1].name", &s), [json!("c")]);
        assert_eq!(ok(".items[1:3].name", &s), [json!("b"), json!("c")]);
        assert_eq!(ok(".items[:2].name", &s), [json!("a"), json!("b")]);
        assert_eq!(ok(".items[-2:].name", &s), [json!("b"), json!("c")]);
        assert_eq!(ok(".items[::2].name", &s), [json!("a"), json!("c")]);
        assert_eq!(ok(".items[*].name", &s), [json!("a"), json!("b"), json!("c")]);
        assert_eq!(ok(".items[1:1]", &s), Vec::<Value>::new());
        assert_eq!(ok(".empty[*]", &s), Vec::<Value>::new());
        assert_eq!(ok(".nothing[0]", &s), Vec::<Value>::new(), "null is skipped");
        assert_eq!(run(".items[3]", &s), Err(EvalError::OutOfBounds { index: 3, length: 3 }));
        assert_eq!(run(".items[-4]", &s), Err(EvalError::OutOfBounds { index: -1, length: 3 }));
        assert_eq!(run(".empty[0]", &s), Err(EvalError::OutOfBounds { index: 0, length: 0 }));
        assert_eq!(run(".items[2:1]", &s), Err(EvalError::StartAfterEnd { start: 2, end: 1 }));
        assert_eq!(run(".items[0:2:0]", &s), Err(EvalError::StepNotPositive));
        assert_eq!(run(".text[0]", &s), Err(EvalError::NotArray("string")));
        assert_eq!(run(".labels[0]", &s), Err(EvalError::NotArray("map[string]interface {}")));
        // One element failing fails the whole path (the API server shows an empty cell).
        assert_eq!(run(".items[*].tags[0]", &s), Err(EvalError::OutOfBounds { index: 0, length: 0 }));
        assert_eq!(run(".items[0:1:9223372036854775807].name", &s), Ok(vec![json!("a")]));
    }

    #[test]
    fn wildcards_and_recursion() {
        let s = store();
        assert_eq!(ok(".labels.*", &s), [json!("web"), json!("front")]);
        assert_eq!(ok(".items[0].*", &s).len(), 5);
        assert_eq!(ok(".text.*", &s), [json!("byte 104"), json!("byte 105")], "Go iterates strings by byte");
        assert_eq!(ok("..name", &s), [json!("a"), json!("b"), json!("c")]);
        // `..` reaches both `tags` arrays; indexing the empty one fails the path.
        assert_eq!(run("..tags[0]", &s), Err(EvalError::OutOfBounds { index: 0, length: 0 }));
        let doc = json!({"a": {"name": 1, "b": [{"name": 2}]}, "name": 0});
        assert_eq!(ok("..name", &doc), [json!(0), json!(1), json!(2)]);
        assert_eq!(ok("..", &json!([1, [2]])), [json!([1, [2]]), json!([2])]);
    }

    #[test]
    fn unions() {
        let s = store();
        assert_eq!(ok(".items[0,2].name", &s), [json!("a"), json!("c")]);
        assert_eq!(ok(".items[0]['name','n']", &s), [json!("a"), json!(1)]);
        assert_eq!(ok(".items[0]['name', 'missing']", &s), [json!("a")]);
        assert_eq!(run(".items[0,5]", &s), Err(EvalError::OutOfBounds { index: 5, length: 3 }));
    }

    #[test]
    fn filters() {
        let s = store();
        assert_eq!(ok(".items[?(@.name == \"b\")].n", &s), [json!(2)]);
        assert_eq!(ok(".items[?(@.name=='b')].n", &s), [json!(2)]);
        assert_eq!(ok(".items[?(@.name != 'b')].n", &s), [json!(1), json!(3)]);
        assert_eq!(ok(".items[?(@.n > 1)].name", &s), [json!("b"), json!("c")]);
        assert_eq!(ok(".items[?(@.n >= 2)].name", &s), [json!("b"), json!("c")]);
        assert_eq!(ok(".items[?(@.n < 2)].name", &s), [json!("a")]);
        assert_eq!(ok(".items[?(@.n <= 2)].name", &s), [json!("a"), json!("b")]);
        assert_eq!(ok(".items[?(@.f > 2.0)].name", &s), [json!("b"), json!("c")]);
        assert_eq!(ok(".items[?(@.ok == true)].name", &s), [json!("a"), json!("c")]);
        assert_eq!(ok(".items[?(@.name < 'b')].name", &s), [json!("a")]);
        assert_eq!(ok(".items[?(@.tags)].name", &s), [json!("a"), json!("b")], "existence");
        assert_eq!(ok(".items[?(@.missing == 'x')].name", &s), Vec::<Value>::new(), "missing operands skip");
        assert_eq!(ok(".items[?(@.n == @.n)].name", &s).len(), 3);
        assert_eq!(ok(".items[*].tags[?(@ == 'y')]", &s), [json!("y")]);
        let nested = json!({"c": [{"s": {"t": "a"}, "v": 1}, {"s": {"t": "b"}, "v": 2}]});
        assert_eq!(ok(".c[?(@.s.t == 'b')].v", &nested), [json!(2)]);
    }

    #[test]
    fn filter_type_errors_fail_the_path() {
        let s = store();
        assert_eq!(run(".items[?(@.name == 1)]", &s), Err(EvalError::IncompatibleTypes));
        assert_eq!(run(".items[?(@.n == 1.0)]", &s), Err(EvalError::IncompatibleTypes), "int64 vs float64");
        assert_eq!(run(".items[?(@.f > 2)]", &s), Err(EvalError::IncompatibleTypes), "float64 vs int");
        assert_eq!(run(".items[?(@.ok < true)]", &s), Err(EvalError::InvalidComparisonType));
        assert_eq!(run(".items[?(@.tags == 'x')]", &s), Err(EvalError::InvalidComparisonType));
        assert_eq!(run(".items[?(@.tags[*] == 'x')]", &s), Err(EvalError::CompareMany));
        assert_eq!(run(".items[?(@.n <> 1)]", &s), Err(EvalError::UnknownOperator("<>".into())));
        assert_eq!(run(".labels[?(@.x)]", &s), Err(EvalError::NotFilterable("map[string]interface {}")));
        assert_eq!(run(".nothing[?(@.x)]", &s), Err(EvalError::NotFilterable("null")));
        // An empty array has nothing to compare: no error.
        assert_eq!(run(".empty[?(@.x == 1)]", &s), Ok(vec![]));
    }

    #[test]
    fn literals_and_identifiers() {
        let s = store();
        assert_eq!(ok("'lit'", &s), [json!("lit")]);
        assert_eq!(ok(".missing 'lit'", &s), [json!("lit")], "text ignores its input");
        assert_eq!(ok(".items[*] 5", &s), [json!(5), json!(5), json!(5)], "numbers repeat per input");
        assert_eq!(run(".items foo", &s), Err(EvalError::UnknownIdentifier("foo".into())));
        assert_eq!(run("end", &s), Err(EvalError::EndOutsideRange));
        assert_eq!(run("range .items", &s), Ok(vec![]));
        // An existence test counts the values returned with an error, as Go does.
        assert_eq!(ok(".items[?(@.name[0])].n", &s), [json!(1), json!(2), json!(3)]);
    }
}

#[cfg(test)]
mod bound_tests {
    use serde_json::{Value, json};

    use super::{EvalError, MAX_RESULTS};
    use crate::JsonPath;

    fn nested(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
        (0..depth).fold(leaf, |inner, _| wrap(inner))
    }

    #[test]
    fn unions_that_multiply_stop_at_the_bound_at_once() {
        let thirty = vec!["0"; 30].join(",");
        let path = JsonPath::parse_column(&format!(".x{}", format!("[{thirty}]").repeat(6))).unwrap();
        let doc = json!({"x": nested(6, json!(1), |v| json!([v]))});
        let started = std::time::Instant::now();
        assert_eq!(path.try_find(&doc), Err(EvalError::TooManyResults));
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
        // Two levels are 900 values: within the bound, as client-go gives them.
        let two = JsonPath::parse_column(&format!(".x{}", format!("[{thirty}]").repeat(2))).unwrap();
        assert_eq!(two.try_find(&json!({"x": [[1]]})).unwrap().len(), 900);
    }

    #[test]
    fn repeated_recursive_descent_stops_at_the_bound() {
        let doc = nested(120, json!({"leaf": true}), |v| json!({"a": v}));
        let path = JsonPath::parse_column(&"..a".repeat(8)).unwrap();
        let started = std::time::Instant::now();
        assert_eq!(path.try_find(&doc), Err(EvalError::TooManyResults));
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
        // One descent is fine.
        assert_eq!(JsonPath::parse_column("..leaf").unwrap().try_find(&doc).unwrap(), [&json!(true)]);
    }

    #[test]
    fn a_wildcard_or_a_slice_over_a_huge_array_is_refused_before_it_is_copied() {
        let big = json!({"x": vec![1; MAX_RESULTS + 1]});
        for path in [".x[*]", ".x[:]", ".x.*"] {
            let path = JsonPath::parse_column(path).unwrap();
            assert_eq!(path.try_find(&big), Err(EvalError::TooManyResults), "{path}");
        }
        let fine = json!({"x": vec![1; 100]});
        assert_eq!(JsonPath::parse_column(".x[*]").unwrap().try_find(&fine).unwrap().len(), 100);
        // A cell of such a column is empty, as for any failed evaluation.
        let column = JsonPath::parse_column(".x[*]").unwrap();
        let now = time::OffsetDateTime::UNIX_EPOCH;
        assert_eq!(crate::cell(&column, crate::ColumnType::String, &big, now), Value::Null);
    }
}
