//! What the fuzz targets share. A fuzz target here is a property test that feeds a parser
//! of client bytes arbitrary input and checks it answers (an error or a value), never
//! panics. `scripts/test` runs each for the cases its test names; `scripts/fuzz` runs them
//! for longer, with a fresh seed per round, through [`config`].

use proptest::prelude::*;
use serde_json::Value;

/// Overrides the number of cases of every fuzz target (`scripts/fuzz` sets it).
pub const CASES_VARIABLE: &str = "FUNDAMENT_FUZZ_CASES";

/// A target's configuration: `cases` in the ordinary test run, or [`CASES_VARIABLE`]'s
/// number. The seed comes from `PROPTEST_RNG_SEED` when set (proptest reads it), so each
/// round of `scripts/fuzz` explores new inputs. A failure is kept in the test's
/// `proptest-regressions/` file and tried first on every later run.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases_from(std::env::var(CASES_VARIABLE).ok().as_deref(), cases),
        ..ProptestConfig::default()
    }
}

fn cases_from(variable: Option<&str>, default: u32) -> u32 {
    variable.and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

/// Any JSON value, nested up to four levels, with strings that include the empty string,
/// non-ASCII text and control characters, and numbers at the edges of i64, u64 and f64.
pub fn json() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        Just(Value::from(0)),
        Just(Value::from(i64::MIN)),
        Just(Value::from(u64::MAX)),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        text().prop_map(Value::String)
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Short strings, often empty, often ASCII, sometimes anything.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9._/-]{0,12}",
        1 => any::<String>(),
        1 => Just(String::new()),
    ]
}

/// `valid`, changed a little: bytes flipped, inserted, removed, cut short or repeated.
/// Finds what a parser does near inputs it accepts, where random bytes rarely get.
pub fn mutated(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = valid.len().max(1);
    let edit = prop_oneof![
        (0..len, any::<u8>()).prop_map(|(at, b)| Edit::Set(at, b)),
        (0..=len, any::<u8>()).prop_map(|(at, b)| Edit::Insert(at, b)),
        (0..len).prop_map(Edit::Remove),
        (0..=len).prop_map(Edit::Truncate),
        (0..len, 1..len.min(64) + 1).prop_map(|(at, n)| Edit::Repeat(at, n)),
    ];
    prop::collection::vec(edit, 1..5).prop_map(move |edits| {
        let mut bytes = valid.clone();
        for edit in edits {
            edit.apply(&mut bytes);
        }
        bytes
    })
}

#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
    Repeat(usize, usize),
}

impl Edit {
    fn apply(self, bytes: &mut Vec<u8>) {
        match self {
            Edit::Set(at, b) if at < bytes.len() => bytes[at] = b,
            Edit::Insert(at, b) => bytes.insert(at.min(bytes.len()), b),
            Edit::Remove(at) if at < bytes.len() => {
                bytes.remove(at);
            }
            Edit::Truncate(at) => bytes.truncate(at),
            Edit::Repeat(at, n) if at < bytes.len() => {
                let end = (at + n).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(end..end, copy);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_overrides_the_cases_only_when_it_is_a_positive_number() {
        assert_eq!(cases_from(None, 256), 256);
        assert_eq!(cases_from(Some("100000"), 256), 100_000);
        assert_eq!(cases_from(Some(" 7 "), 256), 7);
        assert_eq!(cases_from(Some("0"), 256), 256);
        assert_eq!(cases_from(Some("many"), 256), 256);
    }

    proptest! {
        #[test]
        fn mutations_stay_near_the_valid_input(bytes in mutated(b"0123456789".to_vec())) {
            // At most 4 edits, each adding at most 64 bytes.
            prop_assert!(bytes.len() <= 10 + 4 * 64);
        }
    }

    #[test]
    fn each_edit_does_what_it_says() {
        let run = |edit: Edit| {
            let mut b = b"abcd".to_vec();
            edit.apply(&mut b);
            String::from_utf8(b).unwrap()
        };
        assert_eq!(run(Edit::Set(1, b'x')), "axcd");
        assert_eq!(run(Edit::Insert(4, b'x')), "abcdx");
        assert_eq!(run(Edit::Remove(0)), "bcd");
        assert_eq!(run(Edit::Truncate(2)), "ab");
        assert_eq!(run(Edit::Repeat(1, 2)), "abcbcd");
        assert_eq!(run(Edit::Set(9, b'x')), "abcd");
    }
}
