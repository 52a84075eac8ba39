//! `spec.permissions.rbac`: the plugin's own half of every decision. The
//! controller turns these rules into a ClusterRole, so a malformed rule fails
//! the installation, and a too-broad one hands the plugin the cluster.

use fundament_plugin_types::RbacRule;
use fundament_plugin_types::outline::Items;

use super::Finding;
use crate::path;

/// The verbs the API server checks for resource requests.
const STANDARD_VERBS: [&str; 8] =
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];
/// Verbs with a special meaning in Kubernetes authorization.
const SPECIAL_VERBS: [&str; 7] = ["*", "bind", "escalate", "impersonate", "approve", "sign", "use"];
/// Verbs the API server checks without an object name, so `resourceNames`
/// cannot restrict them.
const NAMELESS_VERBS: [&str; 2] = ["create", "deletecollection"];
/// Verbs that take a name only through a `metadata.name` field selector.
const LIST_VERBS: [&str; 2] = ["list", "watch"];

pub(super) fn check(rules: &Items<RbacRule>, out: &mut Vec<Finding>) {
    // Rules of the wrong shape were reported by the schema check.
    for (i, rule) in rules.items() {
        check_rule(&path::index("spec.permissions.rbac", i), rule, out);
    }
}

fn check_rule(at: &str, rule: &RbacRule, out: &mut Vec<Finding>) {
    required_list(at, &rule.api_groups, "apiGroups", " (use \"\" for the core group)", out);
    let resources = required_list(at, &rule.resources, "resources", "", out);
    let verbs = required_list(at, &rule.verbs, "verbs", "", out);

    for (j, resource) in resources.iter().enumerate() {
        if resource.is_empty() || resource.chars().any(|c| c.is_whitespace() || c.is_ascii_uppercase()) {
            out.push(Finding::error(
                path::index(&path::field(at, "resources"), j),
                format!(
                    "{resource:?} is not a resource name: use the lower-case plural, e.g. \"certificates\""
                ),
            ));
        }
    }
    for (j, verb) in verbs.iter().enumerate() {
        let known = STANDARD_VERBS.contains(verb) || SPECIAL_VERBS.contains(verb);
        let custom = !verb.is_empty() && verb.chars().all(|c| c.is_ascii_lowercase());
        if !known && !custom {
            out.push(Finding::error(
                path::index(&path::field(at, "verbs"), j),
                format!(
                    "verb {verb:?} is not a Kubernetes verb: use one of {} or a custom lower-case word",
                    STANDARD_VERBS.join(", ")
                ),
            ));
        }
    }
    check_resource_names(at, rule, &verbs, out);
    check_takeover(at, rule, out);
}

/// The strings of a list of the rule; an error if the list is absent or empty,
/// which Kubernetes rejects (or, for apiGroups, silently reads as "core only").
fn required_list<'a>(
    at: &str,
    list: &'a [String],
    key: &str,
    hint: &str,
    out: &mut Vec<Finding>,
) -> Vec<&'a str> {
    if list.is_empty() {
        out.push(Finding::error(
            path::field(at, key),
            format!("{key} is required and must not be empty{hint}"),
        ));
    }
    list.iter().map(String::as_str).collect()
}

fn check_resource_names(at: &str, rule: &RbacRule, verbs: &[&str], out: &mut Vec<Finding>) {
    if rule.resource_names.is_empty() {
        return;
    }
    let names_at = path::field(at, "resourceNames");
    for (j, name) in rule.resource_names.iter().enumerate() {
        if name.is_empty() {
            out.push(Finding::error(path::index(&names_at, j), "resource names must not be empty"));
        }
    }
    for verb in verbs {
        if NAMELESS_VERBS.contains(verb) {
            out.push(Finding::error(
                names_at.clone(),
                format!(
                    "resourceNames cannot restrict {verb:?}: Kubernetes authorizes create and deletecollection \
                     without an object name, so this rule never allows them; move {verb:?} to a rule without \
                     resourceNames"
                ),
            ));
        } else if LIST_VERBS.contains(verb) {
            out.push(Finding::warning(
                names_at.clone(),
                format!(
                    "with resourceNames, {verb:?} is allowed only for requests with a metadata.name field \
                     selector; a plain {verb} is refused"
                ),
            ));
        }
    }
}

/// A rule that hands the plugin the cluster ([`fundament_plugin_types::takeover`]): installing
/// refuses it, so it is an error here too.
fn check_takeover(at: &str, rule: &RbacRule, out: &mut Vec<Finding>) {
    if let Some(takeover) = fundament_plugin_types::takeover(rule) {
        out.push(Finding::error(
            at,
            format!("{takeover}, so installing refuses it; ask for the specific resources and verbs the plugin needs"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::Severity;
    use serde_json::{Value, json};

    fn run(rule: Value) -> Vec<(Severity, String, String)> {
        let mut out = Vec::new();
        check(&serde_json::from_value(json!([rule])).unwrap(), &mut out);
        out.into_iter().map(|f| (f.severity, f.path, f.message)).collect()
    }

    const AT: &str = "spec.permissions.rbac[0]";

    #[test]
    fn a_least_privilege_rule_is_clean() {
        let rule = json!({"apiGroups": ["cert-manager.io"], "resources": ["certificates"], "verbs": ["get", "list"]});
        assert_eq!(run(rule), vec![]);
        let custom = json!({"apiGroups": ["x.io"], "resources": ["things"], "resourceNames": ["a"], "verbs": ["serve"]});
        assert_eq!(run(custom), vec![]);
    }

    #[test]
    fn groups_resources_and_verbs_are_required() {
        let found = run(json!({"apiGroups": [], "verbs": []}));
        assert_eq!(
            found,
            vec![
                (
                    Severity::Error,
                    format!("{AT}.apiGroups"),
                    "apiGroups is required and must not be empty (use \"\" for the core group)".into()
                ),
                (
                    Severity::Error,
                    format!("{AT}.resources"),
                    "resources is required and must not be empty".into()
                ),
                (Severity::Error, format!("{AT}.verbs"), "verbs is required and must not be empty".into()),
            ]
        );
    }

    #[test]
    fn verbs_are_known_or_custom_lower_case_words() {
        let found = run(
            json!({"apiGroups": [""], "resources": ["pods", ""], "verbs": ["get", "GET", "list,watch", "serve"]}),
        );
        let paths: Vec<&str> = found.iter().map(|(_, p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            vec![format!("{AT}.resources[1]"), format!("{AT}.verbs[1]"), format!("{AT}.verbs[2]")]
        );
        assert_eq!(
            found[1].2,
            "verb \"GET\" is not a Kubernetes verb: use one of get, list, watch, create, update, patch, delete, \
             deletecollection or a custom lower-case word"
        );
    }

    #[test]
    fn resource_names_only_with_verbs_that_take_names() {
        let found = run(json!({
            "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cfg"],
            "verbs": ["get", "create", "list"],
        }));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, Severity::Error);
        assert_eq!(found[0].1, format!("{AT}.resourceNames"));
        assert!(found[0].2.starts_with("resourceNames cannot restrict \"create\""), "{}", found[0].2);
        assert_eq!(found[1].0, Severity::Warning);
        assert!(found[1].2.contains("metadata.name field selector"), "{}", found[1].2);
    }

    #[test]
    fn a_rule_that_hands_over_the_cluster_is_an_error() {
        const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
        let error = |reason: &str| {
            vec![(
                Severity::Error,
                AT.to_string(),
                format!(
                    "{reason}, so installing refuses it; ask for the specific resources and verbs the plugin needs"
                ),
            )]
        };
        let escalation =
            "lets the plugin grant itself permissions it does not hold (cluster-admin in effect)";
        let roles = run(json!({"apiGroups": [RBAC_GROUP], "resources": ["clusterroles"], "verbs": ["bind"]}));
        assert_eq!(roles, error(escalation));
        let star = run(json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}));
        assert_eq!(star, error(escalation));
        let tokens =
            run(json!({"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}));
        assert_eq!(tokens, error("lets the plugin mint a token of any ServiceAccount in the cluster"));
        let harmless = run(json!({"apiGroups": [RBAC_GROUP], "resources": ["roles"], "verbs": ["get"]}));
        assert_eq!(harmless, vec![]);
        let own_kinds = run(json!({"apiGroups": ["x.io"], "resources": ["*"], "verbs": ["*"]}));
        assert_eq!(own_kinds, vec![]);
    }
}
