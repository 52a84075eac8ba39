//! `spec.guides`: what the console tells users about a kind's conditions,
//! labels and refused writes. A row the console cannot match is advice that
//! never shows, so every part is required and every key must be unique.

use std::collections::BTreeSet;

use fundament_kube_core::validation::qualified_name_errors;
use fundament_plugin_types::KindGuide;
use fundament_plugin_types::outline::Entries;

use super::Finding;
use crate::path;

pub(super) fn check(guides: &Entries<KindGuide>, kinds: Option<&BTreeSet<String>>, out: &mut Vec<Finding>) {
    // Guides of the wrong shape were reported by the schema check.
    for (kind, guide) in guides.entries() {
        let at = path::field("spec.guides", kind);
        if let Some(kinds) = kinds
            && !kinds.contains(kind)
        {
            out.push(Finding::error(
                &at,
                format!("no CRD in spec.crds has kind {kind:?}, so the console never shows this guide"),
            ));
        }
        check_guide(&at, guide, out);
    }
}

fn check_guide(at: &str, guide: &KindGuide, out: &mut Vec<Finding>) {
    let required = |out: &mut Vec<Finding>, at: &str, key: &str, value: &str| {
        if value.trim().is_empty() {
            out.push(Finding::error(
                path::field(at, key),
                format!("{key} is required and must not be empty"),
            ));
        }
    };

    let labels_at = path::field(at, "labels");
    for (i, label) in guide.labels.iter().enumerate() {
        let at = path::index(&labels_at, i);
        if label.key.is_empty() {
            required(out, &at, "key", &label.key);
        } else if let Some(problem) = qualified_name_errors(&label.key).first() {
            out.push(Finding::error(
                path::field(&at, "key"),
                format!("{:?} is not a label key: {problem}", label.key),
            ));
        } else if guide.labels[..i].iter().any(|l| l.key == label.key) {
            out.push(Finding::error(
                path::field(&at, "key"),
                format!("label {:?} is listed twice", label.key),
            ));
        }
        required(out, &at, "description", &label.description);
    }

    let conditions_at = path::field(at, "conditions");
    for (i, row) in guide.conditions.iter().enumerate() {
        let at = path::index(&conditions_at, i);
        required(out, &at, "type", &row.condition_type);
        required(out, &at, "reason", &row.reason);
        required(out, &at, "meaning", &row.meaning);
        required(out, &at, "whatToDo", &row.what_to_do);
        let same = |r: &&fundament_plugin_types::ConditionAdvice| {
            (&r.condition_type, &r.reason) == (&row.condition_type, &row.reason)
        };
        if !row.reason.is_empty() && guide.conditions[..i].iter().any(|r| same(&r)) {
            out.push(Finding::error(
                at,
                format!(
                    "condition {} with reason {} is listed twice; the console shows only the first",
                    row.condition_type, row.reason
                ),
            ));
        }
    }

    let summaries_at = path::field(at, "summaries");
    for (i, summary) in guide.summaries.iter().enumerate() {
        let at = path::index(&summaries_at, i);
        required(out, &at, "type", &summary.condition_type);
        if guide.summaries[..i].iter().any(|s| s.condition_type == summary.condition_type) {
            out.push(Finding::error(
                path::field(&at, "type"),
                format!("summary {:?} is listed twice", summary.condition_type),
            ));
        }
        let of_at = path::field(&at, "of");
        if summary.of.is_empty() {
            out.push(Finding::error(&of_at, "of is required: the conditions this one summarises"));
        }
        for (j, source) in summary.of.iter().enumerate() {
            let source_at = path::index(&of_at, j);
            if *source == summary.condition_type {
                out.push(Finding::error(source_at, format!("{source:?} cannot summarise itself")));
            } else if !guide.conditions.iter().any(|r| r.condition_type == *source) {
                out.push(Finding::warning(
                    source_at,
                    format!("no row of conditions has type {source:?}, so its reasons resolve to nothing"),
                ));
            }
        }
    }

    let refusals_at = path::field(at, "refusals");
    for (i, refusal) in guide.refusals.iter().enumerate() {
        let at = path::index(&refusals_at, i);
        let contains_at = path::field(&at, "contains");
        if refusal.contains.is_empty() {
            out.push(Finding::error(
                &contains_at,
                "contains is required: the fixed pieces of the API server's message, in order",
            ));
        }
        for (j, piece) in refusal.contains.iter().enumerate() {
            if piece.trim().is_empty() {
                out.push(Finding::error(
                    path::index(&contains_at, j),
                    "a piece must not be empty: it would match every message",
                ));
            }
        }
        required(out, &at, "whatToDo", &refusal.what_to_do);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn run(guides: Value, kinds: &[&str]) -> Vec<Finding> {
        let kinds: BTreeSet<String> = kinds.iter().map(|k| (*k).to_owned()).collect();
        let mut out = Vec::new();
        check(&serde_json::from_value(guides).unwrap(), Some(&kinds), &mut out);
        out
    }

    #[test]
    fn a_complete_guide_is_clean() {
        let guide = json!({"Grant": {
            "labels": [{"key": "x.io/a", "description": "A."}],
            "conditions": [
                {"type": "Applied", "reason": "Healthy", "meaning": "Done.", "whatToDo": "Nothing."},
                {"type": "Ready", "reason": "Healthy", "meaning": "Done.", "whatToDo": "Nothing."}
            ],
            "summaries": [{"type": "Ready", "of": ["Applied"]}],
            "refusals": [{"contains": ["the requester ", " may not "], "whatToDo": "Ask."}]
        }});
        assert_eq!(run(guide, &["Grant"]), vec![]);
    }

    #[test]
    fn every_part_is_required_unique_and_meaningful() {
        let at = "spec.guides.Grant";
        let guide = json!({"Grant": {
            "labels": [{"key": "x.io/a", "description": "A."}, {"key": "x.io/a", "description": ""}, {"key": "a b"}],
            "conditions": [
                {"type": "Applied", "reason": "Healthy", "meaning": "Done.", "whatToDo": "Nothing."},
                {"type": "Applied", "reason": "Healthy", "meaning": "Again.", "whatToDo": " "}
            ],
            "summaries": [{"type": "Ready", "of": ["Ready", "Checked"]}, {"type": "Ready"}],
            "refusals": [{"contains": [], "whatToDo": "Ask."}, {"contains": ["x", ""], "whatToDo": "Ask."}]
        }});
        let found: Vec<(String, String)> =
            run(guide, &["Grant"]).into_iter().map(|f| (f.path, f.message)).collect();
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                format!("{at}.labels[1].key"),
                format!("{at}.labels[1].description"),
                format!("{at}.labels[2].key"),
                format!("{at}.labels[2].description"),
                format!("{at}.conditions[1].whatToDo"),
                format!("{at}.conditions[1]"),
                format!("{at}.summaries[0].of[0]"),
                format!("{at}.summaries[0].of[1]"),
                format!("{at}.summaries[1].type"),
                format!("{at}.summaries[1].of"),
                format!("{at}.refusals[0].contains"),
                format!("{at}.refusals[1].contains[1]"),
            ]
        );
        assert_eq!(found[0].1, "label \"x.io/a\" is listed twice");
        assert!(found[2].1.starts_with("\"a b\" is not a label key: "), "{}", found[2].1);
        assert_eq!(
            found[5].1,
            "condition Applied with reason Healthy is listed twice; the console shows only the first"
        );
        assert_eq!(found[6].1, "\"Ready\" cannot summarise itself");
        assert_eq!(
            found[7].1,
            "no row of conditions has type \"Checked\", so its reasons resolve to nothing"
        );
    }

    #[test]
    fn a_guide_names_a_kind_of_the_plugin() {
        let found = run(json!({"Gadget": {}}), &["Grant"]);
        assert_eq!(
            found,
            vec![Finding::error(
                "spec.guides.Gadget",
                "no CRD in spec.crds has kind \"Gadget\", so the console never shows this guide"
            )]
        );
        // Unknown kinds (a CRD file is missing) are not guessed at.
        let mut out = Vec::new();
        check(&serde_json::from_value(json!({"Gadget": {}})).unwrap(), None, &mut out);
        assert_eq!(out, vec![]);
    }
}
