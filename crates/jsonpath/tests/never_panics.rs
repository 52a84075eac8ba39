//! Parsing and evaluation take user input (CRDs, the console's path box):
//! whatever they are given, they must return, never panic.

use fundament_jsonpath::{ColumnType, JsonPath, age, cell, human_duration};
use proptest::prelude::*;
use serde_json::{Map, Value};
use time::{Duration, OffsetDateTime};

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z0-9.:TZ+-]{0,12}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{0,3}", inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Strings made of JSONPath fragments, so that most of them parse and the
/// evaluator is exercised too, plus some noise (drawn as often as any one fragment).
fn path_like() -> impl Strategy<Value = String> {
    const FRAGMENTS: &[&str] = &[
        ".a",
        ".b",
        ".*",
        "..",
        "..a",
        "[0]",
        "[-1]",
        "[*]",
        "[]",
        "[1:]",
        "[::2]",
        "[:-9223372036854775808]",
        "[9223372036854775807:]",
        "[0,1]",
        "['a','b.c']",
        "[?(@.a)]",
        "[?(@.a == 1)]",
        "[?(@.a != 'x')]",
        "[?(@.b < 1.5)]",
        "[?(@ >= true)]",
        "[?(@.a <> @.b)]",
        "[?(@[?(@.a)])]",
        " 'lit' ",
        " 7 ",
        " range ",
        " end ",
        "}{",
    ];
    let fragment = prop_oneof![
        FRAGMENTS.len() as u32 => prop::sample::select(FRAGMENTS).prop_map(str::to_owned),
        1 => "[\\[\\]().:,'\"?@=<>!*{}\\\\ a0-]{1,4}",
    ];
    prop::collection::vec(fragment, 0..8).prop_map(|parts| parts.concat())
}

fn now() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_700_000_000).expect("valid")
}

const TYPES: [ColumnType; 6] = [
    ColumnType::Integer,
    ColumnType::Number,
    ColumnType::String,
    ColumnType::Boolean,
    ColumnType::Date,
    ColumnType::Unknown,
];

proptest! {
    #![proptest_config(fundament_fuzzing::config(2000))]

    #[test]
    fn parse_never_panics(expr in any::<String>()) {
        let _ = JsonPath::parse(&expr);
        let _ = JsonPath::parse_column(&expr);
        let _ = JsonPath::parse(&format!("{{{expr}}}"));
    }

    #[test]
    fn find_and_cells_never_panic(expr in path_like(), doc in json()) {
        for path in [JsonPath::parse(&expr), JsonPath::parse_column(&expr)].into_iter().flatten() {
            let found = path.find(&doc);
            if let Ok(strict) = path.try_find(&doc) {
                prop_assert_eq!(&found, &strict);
            }
            let _ = path.render(&doc);
            for t in TYPES {
                let _ = cell(&path, t, &doc, now());
            }
        }
    }

    #[test]
    fn ages_never_panic(ts in any::<String>(), secs in any::<i64>(), nanos in any::<i32>()) {
        let _ = age(&ts, now());
        let _ = human_duration(Duration::seconds(secs).saturating_add(Duration::nanoseconds(i64::from(nanos))));
    }

    #[test]
    fn timestamp_like_ages_never_panic(ts in "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{1,2}:[0-9]{2}:[0-9]{2}([.,][0-9]{0,12})?(Z|[+-][0-9]{2}:[0-9]{2})") {
        let _ = age(&ts, now());
    }
}
