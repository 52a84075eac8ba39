//! A `serde_json::Value` read from any serde format, holding at most a given number of values.
//!
//! A YAML alias repeats its anchored value wherever it appears: about 100 KB of
//! `a: &a [0, 0, …]` and `b: [*a, *a, …]` expand to hundreds of millions of values, many
//! gigabytes, from a body well within every size limit. serde_yaml's own guard counts alias
//! jumps, not what each jump replays, so it never fires on that shape. Read through
//! [`value_within`], a document that holds more values than its budget is refused as the count
//! passes it, before the memory is spent. A document without aliases holds at most about two
//! values per byte ([`budget_for`]), so the budget never refuses one.
//!
//! With the `yaml` feature, [`yaml_documents`] and [`yaml_document`] read a whole YAML text
//! that way: its nesting checked first, all its documents sharing the text's one budget. The
//! feature keeps serde_yaml out of the browser bundle, which uses this crate but reads no YAML.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// What to do with a key that a mapping holds twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepeatedKeys {
    /// The last one counts (what serde_json and kube-apiserver's default do).
    LastWins,
    /// The document is refused (what kubectl does): a second `spec:` is never silently dropped.
    Refuse,
}

/// The budget for a text of `len` bytes: room for any document without aliases
/// (`a:` is two bytes and three values: the mapping, its key and a null).
pub fn budget_for(len: usize) -> usize {
    len.saturating_mul(2).saturating_add(16)
}

/// How deep YAML flow collections may nest: serde_yaml's own recursion limit.
pub const MAX_YAML_NESTING: usize = 128;

/// Whether `text`'s flow collections (`[`, `{`) nest deeper than serde_yaml reads. Checked
/// before parsing: libyaml's scanner takes time quadratic in that depth (a 200 KB body of
/// 100,000 `[` once cost 48 s of CPU before being refused). Brackets inside strings count
/// too: balanced ones rise and fall, so only text nested as deep is refused.
pub fn yaml_nests_too_deep(text: &[u8]) -> bool {
    let mut depth = 0usize;
    for byte in text {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_YAML_NESTING {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// How many values `value` holds, counted as [`value_within`] counts them: every scalar,
/// sequence, mapping and key one. Lets several documents of one text share one budget.
pub fn values_in(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(values_in).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(|v| 1 + values_in(v)).sum::<usize>(),
        _ => 1,
    }
}

/// The value `deserializer` holds, if it holds at most `max_values` values (every scalar,
/// sequence, mapping and key counts one).
pub fn value_within<'de, D: Deserializer<'de>>(
    deserializer: D,
    max_values: usize,
    repeated_keys: RepeatedKeys,
) -> Result<Value, D::Error> {
    let left = Cell::new(max_values);
    Seed { left: &left, max_values, repeated_keys }.deserialize(deserializer)
}

/// Why a YAML text was refused by [`yaml_documents`] or [`yaml_document`].
#[cfg(any(feature = "yaml", test))]
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The text nests deeper than [`MAX_YAML_NESTING`]: refused before any of it is parsed.
    #[error("collections nest deeper than {MAX_YAML_NESTING} levels")]
    NestsTooDeep,
    /// Document `index` (empty documents counted) is not YAML, or holds more values than the
    /// text's budget has left. Shown as serde_yaml's own message alone: every caller puts its
    /// own prefix before it and words which document failed its own way ([`YamlError::index`]).
    /// Not a `source` for the same reason: a report of the chain would repeat the message.
    #[error("{error}")]
    Document { index: usize, error: serde_yaml::Error },
}

#[cfg(any(feature = "yaml", test))]
impl YamlError {
    /// The document that failed; the first (0) when the text as a whole was refused, as
    /// messages that name a document name it then.
    pub fn index(&self) -> usize {
        match self {
            YamlError::NestsTooDeep => 0,
            YamlError::Document { index, .. } => *index,
        }
    }
}

/// The documents of the multi-document YAML `text`, each with its index in the text, read one
/// at a time: empty (null) documents are skipped but counted, so an index is the one an editor
/// shows. All documents share the text's one budget ([`budget_for`]): each within its own
/// bytes' budget, a file of many could still expand without bound. The first error ends the
/// iteration; `NestsTooDeep` comes before any document.
///
/// An iterator rather than a list: a caller that judges each document as it comes (the
/// installer) reports a bad first document before a later one that is not YAML, as it did
/// when it read them itself, and parses nothing past the document it refuses.
#[cfg(any(feature = "yaml", test))]
pub fn yaml_documents(text: &str, repeated_keys: RepeatedKeys) -> YamlDocuments<'_> {
    let progress = if yaml_nests_too_deep(text.as_bytes()) {
        Progress::NestsTooDeep
    } else {
        Progress::Reading(serde_yaml::Deserializer::from_str(text))
    };
    YamlDocuments { progress, next_index: 0, left: budget_for(text.len()), repeated_keys }
}

/// The one document of the YAML `text`, bounded as [`yaml_documents`] bounds each. A second
/// document is refused (serde_yaml's "more than one document"); an empty text is null. For a
/// text that is one document by contract: a request body, a plugin definition.
#[cfg(any(feature = "yaml", test))]
pub fn yaml_document(text: &[u8], repeated_keys: RepeatedKeys) -> Result<Value, YamlError> {
    if yaml_nests_too_deep(text) {
        return Err(YamlError::NestsTooDeep);
    }
    // The deserializer used whole, not iterated: that is what refuses a second document.
    let document = serde_yaml::Deserializer::from_slice(text);
    value_within(document, budget_for(text.len()), repeated_keys)
        .map_err(|error| YamlError::Document { index: 0, error })
}

/// The iterator of [`yaml_documents`]: `(index, value)` of each document that is not null.
#[cfg(any(feature = "yaml", test))]
pub struct YamlDocuments<'a> {
    progress: Progress<'a>,
    next_index: usize,
    /// What is left of the text's budget after the documents read so far.
    left: usize,
    repeated_keys: RepeatedKeys,
}

#[cfg(any(feature = "yaml", test))]
enum Progress<'a> {
    NestsTooDeep,
    Reading(serde_yaml::Deserializer<'a>),
    /// Every document read, or an error given: serde_yaml's own iterator repeats a parse error
    /// without end, so this one stops at the first.
    Done,
}

#[cfg(any(feature = "yaml", test))]
impl Iterator for YamlDocuments<'_> {
    type Item = Result<(usize, Value), YamlError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut documents = match std::mem::replace(&mut self.progress, Progress::Done) {
            Progress::NestsTooDeep => return Some(Err(YamlError::NestsTooDeep)),
            Progress::Done => return None,
            Progress::Reading(documents) => documents,
        };
        for document in documents.by_ref() {
            let index = self.next_index;
            self.next_index += 1;
            let value = match value_within(document, self.left, self.repeated_keys) {
                Ok(value) => value,
                Err(error) => return Some(Err(YamlError::Document { index, error })),
            };
            // A null document costs its one value too, as it did when each caller counted.
            self.left = self.left.saturating_sub(values_in(&value));
            if !value.is_null() {
                self.progress = Progress::Reading(documents);
                return Some(Ok((index, value)));
            }
        }
        None
    }
}

#[cfg(any(feature = "yaml", test))]
impl std::iter::FusedIterator for YamlDocuments<'_> {}

#[derive(Clone, Copy)]
struct Seed<'a> {
    left: &'a Cell<usize>,
    max_values: usize,
    repeated_keys: RepeatedKeys,
}

impl Seed<'_> {
    fn take<E: Error>(self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => Err(E::custom(format!(
                "the document holds more than {} values (aliases repeat what they name)",
                self.max_values
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: Error>(self, v: bool) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<Value, E> {
        self.take()?;
        // As serde_json's own Value: a number JSON cannot hold (NaN, infinity) is null.
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<Value, E> {
        self.take()?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: Error>(self, v: String) -> Result<Value, E> {
        self.take()?;
        Ok(Value::String(v))
    }

    fn visit_none<E: Error>(self) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Null)
    }

    fn visit_unit<E: Error>(self) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut entries = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.take()?;
            let value = map.next_value_seed(self)?;
            if entries.insert(key.clone(), value).is_some() && self.repeated_keys == RepeatedKeys::Refuse {
                return Err(A::Error::custom(format!("the key {key:?} appears twice in one mapping")));
            }
        }
        Ok(Value::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str, repeated_keys: RepeatedKeys) -> Result<Value, serde_yaml::Error> {
        value_within(serde_yaml::Deserializer::from_str(text), budget_for(text.len()), repeated_keys)
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let text = "a: 1\nb: [true, null, 2.5, -3, x]\nc:\n  d: ~\n  e: .nan\nf: 18446744073709551615\n";
        let expected: Value = serde_yaml::from_str(text).unwrap();
        assert_eq!(yaml(text, RepeatedKeys::Refuse).unwrap(), expected);
        let json = r#"{"a":[1,{"b":"c"}],"d":null}"#;
        let read = value_within(&mut serde_json::Deserializer::from_str(json), 100, RepeatedKeys::LastWins);
        assert_eq!(read.unwrap(), serde_json::from_str::<Value>(json).unwrap());
        // A small alias is fine.
        assert_eq!(
            yaml("a: &x [1, 2]\nb: *x\n", RepeatedKeys::Refuse).unwrap()["b"],
            serde_json::json!([1, 2])
        );
    }

    #[test]
    fn an_alias_bomb_is_refused_before_it_expands() {
        // 20,000 zeros named once, repeated 10,000 times: 200 million values from 80 KB.
        let text = format!("a: &a [{}]\nb: [{}]\n", "0,".repeat(20_000), "*a,".repeat(10_000));
        let started = std::time::Instant::now();
        let error = yaml(&text, RepeatedKeys::LastWins).unwrap_err().to_string();
        assert!(error.contains("more than") && error.contains("aliases"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "refused as it passed the budget");
    }

    #[test]
    fn repeated_keys_are_refused_or_the_last_wins() {
        let text = "spec:\n  a: 1\nspec:\n  b: 2\n";
        let error = yaml(text, RepeatedKeys::Refuse).unwrap_err().to_string();
        assert!(error.contains("\"spec\" appears twice"), "{error}");
        assert_eq!(yaml(text, RepeatedKeys::LastWins).unwrap(), serde_json::json!({"spec": {"b": 2}}));
    }

    #[test]
    fn values_are_counted_as_the_reader_counts_them() {
        let text = "a: [1, {b: null}]\nc: x\n";
        let value = yaml(text, RepeatedKeys::Refuse).unwrap();
        let counted = values_in(&value);
        // The map, a, the list, 1, the inner map, b, null, c, x.
        assert_eq!(counted, 9);
        let document = serde_yaml::Deserializer::from_str(text);
        assert!(value_within(document, counted, RepeatedKeys::Refuse).is_ok());
        let document = serde_yaml::Deserializer::from_str(text);
        assert!(value_within(document, counted - 1, RepeatedKeys::Refuse).is_err());
        assert!(!yaml_nests_too_deep(b"a: [[[]]]") && yaml_nests_too_deep("[".repeat(129).as_bytes()));
    }

    fn documents(text: &str) -> Vec<Result<(usize, Value), String>> {
        yaml_documents(text, RepeatedKeys::Refuse)
            .map(|d| d.map_err(|e| format!("{}: {e}", e.index())))
            .collect()
    }

    #[test]
    fn documents_keep_their_index_and_nulls_are_skipped_but_counted() {
        let text = "a: 1\n---\n---\n~\n---\nb: [x]\n...\n";
        let read: Vec<(usize, Value)> = documents(text).into_iter().map(Result::unwrap).collect();
        assert_eq!(read, [(0, serde_json::json!({"a": 1})), (3, serde_json::json!({"b": ["x"]}))]);
        assert!(documents("").is_empty() && documents("---\n").is_empty() && documents("~").is_empty());
        // What serde_yaml reads document by document, unbounded.
        let text = "- 1\n---\nx: &a {y: z}\nw: *a\n";
        let expected: Vec<Value> = serde_yaml::Deserializer::from_str(text)
            .map(|d| <Value as serde::Deserialize>::deserialize(d).unwrap())
            .collect();
        let read: Vec<Value> = documents(text).into_iter().map(|d| d.unwrap().1).collect();
        assert_eq!(read, expected);
    }

    #[test]
    fn documents_share_one_budget() {
        // The second document fits the text's whole budget, not what the first left of it.
        let first = format!("[{}]", "0,".repeat(100));
        let second = format!("a: &a [{}]\nb: [{}]\n", "0,".repeat(10), "*a,".repeat(90));
        let text = format!("{first}\n---\n{second}");
        let budget = budget_for(text.len());
        let alone = value_within(serde_yaml::Deserializer::from_str(&second), budget, RepeatedKeys::Refuse);
        assert!(values_in(&alone.unwrap()) + 101 > budget);
        let read = documents(&text);
        assert_eq!(read.len(), 2, "the first document, then the error, then nothing");
        assert_eq!(read[0].as_ref().unwrap().0, 0);
        let error = read[1].clone().unwrap_err();
        assert!(
            error.starts_with("1: ") && error.contains("holds more than") && error.contains("aliases"),
            "{error}"
        );
    }

    #[test]
    fn documents_are_read_one_at_a_time_and_the_first_error_ends_them() {
        let mut read = yaml_documents("a: 1\n---\n: : :\n---\nb: 2\n", RepeatedKeys::LastWins);
        assert_eq!(read.next().unwrap().unwrap(), (0, serde_json::json!({"a": 1})));
        let error = read.next().unwrap().unwrap_err();
        assert!(matches!(error, YamlError::Document { index: 1, .. }), "{error:?}");
        assert!(read.next().is_none() && read.next().is_none());
        // The key rule is the caller's.
        let text = "a: 1\na: 2\n";
        assert!(documents(text)[0].as_ref().unwrap_err().contains("\"a\" appears twice"));
        let last = yaml_documents(text, RepeatedKeys::LastWins).next().unwrap().unwrap();
        assert_eq!(last, (0, serde_json::json!({"a": 2})));
    }

    #[test]
    fn a_text_that_nests_too_deep_is_refused_before_any_document() {
        let text = format!("a: 1\n---\n{}", "[".repeat(200));
        assert_eq!(documents(&text), [Err("0: collections nest deeper than 128 levels".to_string())]);
        let error = yaml_document(text.as_bytes(), RepeatedKeys::LastWins).unwrap_err();
        assert!(matches!(error, YamlError::NestsTooDeep) && error.index() == 0, "{error:?}");
    }

    #[test]
    fn one_document_is_read_as_serde_yaml_reads_one() {
        let read = yaml_document(b"a: [1, {b: null}]\n", RepeatedKeys::Refuse).unwrap();
        assert_eq!(read, serde_json::json!({"a": [1, {"b": null}]}));
        assert_eq!(yaml_document(b"", RepeatedKeys::Refuse).unwrap(), Value::Null);
        for text in [&b"a: 1\n---\nb: 2\n"[..], b": : :", b"a: \xff\n"] {
            let ours = yaml_document(text, RepeatedKeys::Refuse).unwrap_err();
            // The same message serde_yaml gives: callers show it to users.
            let theirs = serde_yaml::from_slice::<Value>(text).unwrap_err();
            assert_eq!((ours.index(), ours.to_string()), (0, theirs.to_string()));
        }
        let error = yaml_document(b"a: 1\na: 2\n", RepeatedKeys::Refuse).unwrap_err().to_string();
        assert!(error.contains("\"a\" appears twice"), "{error}");
    }

    #[test]
    fn every_document_without_aliases_fits_its_budget() {
        for text in ["a:", "-", "[]", "{}", "a:\nb:\nc:\n", "- - - -\n", "[[],[],[]]", "{a: {b: {c: }}}", "x"]
        {
            assert!(yaml(text, RepeatedKeys::Refuse).is_ok(), "{text:?}");
        }
    }
}
