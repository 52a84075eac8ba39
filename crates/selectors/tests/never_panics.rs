//! Fuzz targets: label and field selectors come from `?labelSelector=` and
//! `?fieldSelector=` of any client. Parsing arbitrary and selector-like text
//! answers a value or an error, never a panic; what parses prints back to
//! the same selector, and matching any labels or fields never panics.

use std::collections::BTreeMap;

use fundament_selectors::{FieldSelector, LabelSelector};
use proptest::prelude::*;

/// Text built from the selector grammar's pieces, so most cases get past the first token.
fn selector_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z0-9]{0,4}",
        "[a-z]{1,3}\\.[a-z]{1,3}/[a-z]{1,4}",
        Just("=".to_owned()),
        Just("==".to_owned()),
        Just("!=".to_owned()),
        Just("!".to_owned()),
        Just(" in ".to_owned()),
        Just(" notin ".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just(",".to_owned()),
        Just(">".to_owned()),
        Just("<".to_owned()),
        Just(" ".to_owned()),
        Just("-".to_owned()),
        Just("metadata.name".to_owned()),
        "[0-9]{1,20}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map("[a-z]{1,3}", prop_oneof!["[a-z0-9]{0,3}", "-?[0-9]{1,20}"], 0..4)
}

proptest! {
    #![proptest_config(fundament_fuzzing::config(1024))]

    #[test]
    fn label_selectors_parse_or_refuse(text in prop_oneof![any::<String>(), selector_like()], labels in labels()) {
        if let Ok(selector) = LabelSelector::parse(&text) {
            let printed = selector.to_string();
            let again = LabelSelector::parse(&printed);
            prop_assert_eq!(again.as_ref(), Ok(&selector), "{:?} printed as {:?}", text, printed);
            let _ = selector.matches(&labels);
        }
    }

    #[test]
    fn field_selectors_parse_or_refuse(text in prop_oneof![any::<String>(), selector_like()], labels in labels()) {
        if let Ok(selector) = FieldSelector::parse(&text) {
            let _ = selector.check_supported(&["metadata.name", "metadata.namespace"]);
            let _ = selector.matches(|field| labels.get(field).cloned());
            for requirement in selector.requirements() {
                prop_assert!(!requirement.field.is_empty(), "{:?} parsed to an empty field name", text);
            }
        }
    }
}
