//! Which requests a policy's `matchConstraints` (or a binding's `matchResources`)
//! select, as kube-apiserver's admission matcher decides it: namespace and object
//! selectors, then `excludeResourceRules`, then `resourceRules`, with
//! `matchPolicy: Equivalent` also matching the other served versions of a resource.

use std::collections::BTreeMap;

use fundament_rbac::LabelSelector;
use serde_json::Value;

use super::Attributes;
use super::policy::{MatchResources, Rule};
use crate::resource::Registry;

fn labels(obj: Option<&Value>) -> Option<BTreeMap<String, String>> {
    let obj = obj.filter(|o| o.is_object())?;
    Some(crate::object::string_map(&obj["metadata"]["labels"]))
}

fn selects(selector: &Option<LabelSelector>) -> Option<&LabelSelector> {
    selector.as_ref().filter(|s| !s.match_labels.is_empty() || !s.match_expressions.is_empty())
}

/// Whether `m` selects the request. `namespace` is the request's Namespace object,
/// if it has one and it exists.
pub fn matches(
    m: &MatchResources,
    a: &Attributes<'_>,
    namespace: Option<&Value>,
    registry: &Registry,
) -> bool {
    namespace_matches(m, a, namespace)
        && object_matches(m, a)
        && !rules_match(&m.exclude_resource_rules, m, a, registry)
        && (m.resource_rules.is_empty() || rules_match(&m.resource_rules, m, a, registry))
}

fn is_namespace(a: &Attributes<'_>) -> bool {
    a.rt.group.is_empty() && a.rt.plural == "namespaces"
}

fn namespace_matches(m: &MatchResources, a: &Attributes<'_>, namespace: Option<&Value>) -> bool {
    // Cluster-scoped requests, but for Namespaces themselves, are never exempted.
    if a.namespace.is_empty() && !is_namespace(a) {
        return true;
    }
    let Some(selector) = selects(&m.namespace_selector) else { return true };
    let ns_labels = if is_namespace(a) { labels(a.object.or(a.old_object)) } else { labels(namespace) };
    // A namespace being deleted or not found is not selected.
    ns_labels.is_some_and(|l| selector.matches(&l))
}

fn object_matches(m: &MatchResources, a: &Attributes<'_>) -> bool {
    let Some(selector) = selects(&m.object_selector) else { return true };
    [a.object, a.old_object].into_iter().any(|o| labels(o).is_some_and(|l| selector.matches(&l)))
}

fn listed(values: &[String], value: &str) -> bool {
    values.iter().any(|v| v == "*" || v == value)
}

fn rule_matches(rule: &Rule, a: &Attributes<'_>, version: &str) -> bool {
    let scope = match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Namespaced") => !is_namespace(a) && !a.namespace.is_empty(),
        Some("Cluster") => is_namespace(a) || a.namespace.is_empty(),
        Some(_) => false,
    };
    let resource = rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r, ""));
        (res == "*" || res == a.rt.plural) && (sub == "*" || sub == a.subresource)
    });
    scope
        && listed(&rule.operations, a.operation.as_str())
        && listed(&rule.api_groups, &a.rt.group)
        && listed(&rule.api_versions, version)
        && resource
        && (rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == a.name))
}

fn rules_match(rules: &[Rule], m: &MatchResources, a: &Attributes<'_>, registry: &Registry) -> bool {
    if rules.iter().any(|r| rule_matches(r, a, &a.rt.version)) {
        return true;
    }
    if m.match_policy.as_deref() == Some("Exact") {
        return false;
    }
    // Equivalent: the same objects served at another version.
    registry
        .all()
        .iter()
        .filter(|t| t.group == a.rt.group && t.plural == a.rt.plural && t.version != a.rt.version)
        .any(|t| rules.iter().any(|r| rule_matches(r, a, &t.version)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Operation;
    use crate::authn::User;
    use crate::resource::{ResourceType, builtins, from_crd};
    use serde_json::json;

    fn grants() -> (Registry, std::sync::Arc<ResourceType>) {
        let crd = json!({"metadata": {"name": "grants.plugins.camunda.io"}, "spec": {"group": "plugins.camunda.io",
            "scope": "Namespaced", "names": {"plural": "grants", "kind": "Grant"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true, "subresources": {"status": {}}},
                         {"name": "v1beta1", "served": true, "storage": false}]}});
        let mut types = builtins();
        types.extend(from_crd(&crd).unwrap());
        let registry = Registry::new(types);
        let rt = registry.get("plugins.camunda.io", "v1alpha1", "grants").unwrap().clone();
        (registry, rt)
    }

    fn rules(yaml: &str) -> MatchResources {
        serde_json::from_value(serde_yaml::from_str::<Value>(yaml).unwrap()).unwrap()
    }

    fn attrs<'a>(
        rt: &'a ResourceType,
        op: Operation,
        sub: &'a str,
        obj: &'a Value,
        user: &'a User,
    ) -> Attributes<'a> {
        Attributes {
            operation: op,
            rt,
            subresource: sub,
            namespace: "ns",
            name: "g",
            object: Some(obj),
            old_object: None,
            user,
            dry_run: false,
        }
    }

    #[test]
    fn rules_match_resources_subresources_operations_and_scope() {
        let (registry, rt) = grants();
        let user = User::system();
        let obj = json!({"metadata": {"name": "g", "namespace": "ns", "labels": {"team": "blue"}}});
        let m = |yaml: &str, op: Operation, sub: &str| {
            matches(&rules(yaml), &attrs(&rt, op, sub, &obj, &user), None, &registry)
        };
        let grants = "resourceRules: [{apiGroups: [plugins.camunda.io], apiVersions: [v1alpha1], operations: [CREATE], resources: [grants]}]";
        assert!(m(grants, Operation::Create, ""));
        assert!(!m(grants, Operation::Update, ""), "operation not listed");
        assert!(!m(grants, Operation::Create, "status"), "a rule for grants does not cover grants/status");
        let status = "resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: [grants/status]}]";
        assert!(m(status, Operation::Update, "status") && !m(status, Operation::Update, ""));
        let all =
            "resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*']}]";
        assert!(
            m(all, Operation::Delete, "") && !m(all, Operation::Update, "status"),
            "* is resources, not subresources"
        );
        let all_sub =
            "resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*/*']}]";
        assert!(m(all_sub, Operation::Update, "status"));
        let cluster = "resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'], scope: Cluster}]";
        assert!(!m(cluster, Operation::Create, ""), "grants are namespaced");
        let named = "resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'], resourceNames: [other]}]";
        assert!(!m(named, Operation::Create, ""));
        let excluded = format!(
            "{all}\nexcludeResourceRules: [{{apiGroups: ['*'], apiVersions: ['*'], operations: [CREATE], resources: [grants]}}]"
        );
        assert!(!m(&excluded, Operation::Create, "") && m(&excluded, Operation::Update, ""));
        // Equivalent (the default) matches the same objects served at another version.
        let beta = "resourceRules: [{apiGroups: ['*'], apiVersions: [v1beta1], operations: ['*'], resources: [grants]}]";
        assert!(m(beta, Operation::Create, ""));
        assert!(!m(&format!("{beta}\nmatchPolicy: Exact"), Operation::Create, ""));
        // Object selectors look at the labels.
        assert!(m(&format!("{all}\nobjectSelector: {{matchLabels: {{team: blue}}}}"), Operation::Create, ""));
        assert!(!m(&format!("{all}\nobjectSelector: {{matchLabels: {{team: red}}}}"), Operation::Create, ""));
        // A namespace selector needs the namespace, here absent.
        assert!(!m(
            &format!("{all}\nnamespaceSelector: {{matchLabels: {{env: prod}}}}"),
            Operation::Create,
            ""
        ));
    }
}
