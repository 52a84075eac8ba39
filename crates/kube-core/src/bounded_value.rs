//! A `serde_json::Value` read from any serde format, holding at most a given number of values.
//!
//! A YAML alias repeats its anchored value wherever it appears: about 100 KB of
//! `a: &a [0, 0, …]` and `b: [*a, *a, …]` expand to hundreds of millions of values, many
//! gigabytes, from a body well within every size limit. serde_yaml's own guard counts alias
//! jumps, not what each jump replays, so it never fires on that shape. Read through
//! [`value_within`], a document that holds more values than its budget is refused as the count
//! passes it, before the memory is spent. A document without aliases holds at most about two
//! values per byte ([`budget_for`]), so the budget never refuses one.

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

    #[test]
    fn every_document_without_aliases_fits_its_budget() {
        for text in ["a:", "-", "[]", "{}", "a:\nb:\nc:\n", "- - - -\n", "[[],[],[]]", "{a: {b: {c: }}}", "x"]
        {
            assert!(yaml(text, RepeatedKeys::Refuse).is_ok(), "{text:?}");
        }
    }
}
