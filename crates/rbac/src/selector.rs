//! The label selectors of `aggregationRule.clusterRoleSelectors`.
//!
//! Only equality on a ClusterRole's labels is needed here, so this is a small
//! structural matcher over `metav1.LabelSelector`, not the string selector
//! syntax of `kubectl -l`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::objects::nullable;

/// `metav1.LabelSelector`: every `matchLabels` pair and every expression must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// `key: value` pairs that must all be present.
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements that must all hold.
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One `matchExpressions` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// How the label's value relates to `values`.
    pub operator: LabelSelectorOperator,
    /// Values for `In` / `NotIn`; must be empty for `Exists` / `DoesNotExist`.
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// The operators `metav1.LabelSelectorRequirement` allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LabelSelectorOperator {
    /// The label is present and its value is one of `values`.
    In,
    /// The label is absent, or its value is none of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl LabelSelector {
    /// Whether `labels` satisfy the selector. An empty selector matches
    /// everything, as `metav1.LabelSelectorAsSelector` makes it.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|req| req.matches(labels))
    }

    /// The checks `LabelSelectorAsSelector` makes: a selector failing them
    /// makes the aggregation controller give up on the ClusterRole.
    pub fn validate(&self) -> Result<(), String> {
        for req in &self.match_expressions {
            if req.key.is_empty() {
                return Err("matchExpressions key must not be empty".to_owned());
            }
            match req.operator {
                LabelSelectorOperator::In | LabelSelectorOperator::NotIn if req.values.is_empty() => {
                    return Err(format!("{:?} on {:?} needs at least one value", req.operator, req.key));
                }
                LabelSelectorOperator::Exists | LabelSelectorOperator::DoesNotExist
                    if !req.values.is_empty() =>
                {
                    return Err(format!("{:?} on {:?} takes no values", req.operator, req.key));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl LabelSelectorRequirement {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            LabelSelectorOperator::In => value.is_some_and(|v| self.values.contains(v)),
            LabelSelectorOperator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            LabelSelectorOperator::Exists => value.is_some(),
            LabelSelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn expr(key: &str, operator: LabelSelectorOperator, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_expressions: vec![LabelSelectorRequirement {
                key: key.to_owned(),
                operator,
                values: values.iter().map(|v| (*v).to_owned()).collect(),
            }],
            ..LabelSelector::default()
        }
    }

    #[test]
    fn empty_selector_matches_everything() {
        assert!(LabelSelector::default().matches(&labels(&[])));
        assert!(LabelSelector::default().matches(&labels(&[("a", "b")])));
    }

    #[test]
    fn match_labels_need_equal_values() {
        let sel = LabelSelector { match_labels: labels(&[("agg", "true")]), ..LabelSelector::default() };
        assert!(sel.matches(&labels(&[("agg", "true"), ("x", "y")])));
        assert!(!sel.matches(&labels(&[("agg", "false")])));
        assert!(!sel.matches(&labels(&[])));
    }

    #[test]
    fn operators() {
        use LabelSelectorOperator::*;
        let l = labels(&[("tier", "web")]);
        assert!(expr("tier", In, &["web", "db"]).matches(&l));
        assert!(!expr("tier", In, &["db"]).matches(&l));
        assert!(!expr("other", In, &["web"]).matches(&l));
        assert!(expr("tier", NotIn, &["db"]).matches(&l));
        assert!(!expr("tier", NotIn, &["web"]).matches(&l));
        assert!(expr("other", NotIn, &["web"]).matches(&l), "NotIn matches an absent label");
        assert!(expr("tier", Exists, &[]).matches(&l));
        assert!(!expr("other", Exists, &[]).matches(&l));
        assert!(expr("other", DoesNotExist, &[]).matches(&l));
        assert!(!expr("tier", DoesNotExist, &[]).matches(&l));
    }

    #[test]
    fn validation_follows_label_selector_as_selector() {
        use LabelSelectorOperator::*;
        assert!(expr("k", In, &[]).validate().is_err());
        assert!(expr("k", NotIn, &[]).validate().is_err());
        assert!(expr("k", Exists, &["v"]).validate().is_err());
        assert!(expr("", Exists, &[]).validate().is_err());
        assert!(expr("k", In, &["v"]).validate().is_ok());
        assert!(expr("k", DoesNotExist, &[]).validate().is_ok());
    }

    #[test]
    fn deserializes_kubernetes_json() {
        let sel: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"a": "b"},
            "matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["x"]}, {"key": "e", "operator": "Exists"}]
        }))
        .unwrap();
        assert_eq!(sel.match_expressions[0].operator, LabelSelectorOperator::NotIn);
        assert_eq!(sel.match_expressions[1].values, Vec::<String>::new());
        assert!(
            serde_json::from_value::<LabelSelector>(serde_json::json!({
                "matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1"]}]
            }))
            .is_err()
        );
    }
}
