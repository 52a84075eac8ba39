//! What the clusterrole-aggregation controller would have written into each
//! aggregated ClusterRole: the embedded server runs no controllers, so the
//! policy computes it.

use crate::{ClusterRole, PolicyRule};

/// The effective rules of each ClusterRole, in input order.
///
/// A ClusterRole with a valid `aggregationRule` gets the union of the rules of
/// every other ClusterRole any selector matches, deduplicated, in the
/// controller's order (selectors in order, matched roles by name); its own
/// stored rules are replaced, as the controller replaces them. Aggregated
/// roles may aggregate each other, so this is the least fixpoint: start them
/// empty and recompute until nothing grows. Each pass only adds rules, so it
/// ends. A role with an invalid selector is left as stored, as the controller
/// gives up on it.
pub(crate) fn effective_rules(roles: &[ClusterRole]) -> Vec<Vec<PolicyRule>> {
    let mut by_name: Vec<usize> = (0..roles.len()).collect();
    by_name.sort_by(|&a, &b| roles[a].name.cmp(&roles[b].name));

    let sources: Vec<Option<Vec<usize>>> = roles
        .iter()
        .map(|role| {
            let rule = role.aggregation_rule.as_ref()?;
            if rule.cluster_role_selectors.iter().any(|s| s.validate().is_err()) {
                return None;
            }
            let matched = rule.cluster_role_selectors.iter().flat_map(|selector| {
                by_name
                    .iter()
                    .copied()
                    .filter(move |&j| roles[j].name != role.name && selector.matches(&roles[j].labels))
            });
            Some(matched.collect())
        })
        .collect();

    let mut rules: Vec<Vec<PolicyRule>> = roles
        .iter()
        .zip(&sources)
        .map(|(role, src)| if src.is_some() { Vec::new() } else { role.rules.clone() })
        .collect();

    loop {
        let mut grew = false;
        for (i, src) in sources.iter().enumerate() {
            let Some(src) = src else { continue };
            let mut merged: Vec<PolicyRule> = Vec::new();
            for rule in src.iter().flat_map(|&j| &rules[j]) {
                if !merged.contains(rule) {
                    merged.push(rule.clone());
                }
            }
            // Sets only grow from pass to pass, so equal sizes mean equal sets.
            grew |= merged.len() != rules[i].len();
            rules[i] = merged;
        }
        if !grew {
            return rules;
        }
    }
}
