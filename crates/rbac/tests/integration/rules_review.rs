//! `Policy::rules_for`, the source of SelfSubjectRulesReview (`kubectl auth can-i --list`).

use fundament_rbac::{NonResourceRule, Policy, ResourceRule, UserInfo, subject_rules_review_status};
use serde_json::json;

fn strs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn lists_cluster_then_namespace_rules_in_review_shape() {
    let (p, errors) = Policy::from_objects(&[
        json!({"kind": "ClusterRole", "metadata": {"name": "basic"}, "rules": [
            {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"], "verbs": ["create"]},
            {"nonResourceURLs": ["/api", "/api/*"], "verbs": ["get"]}
        ]}),
        json!({"kind": "ClusterRole", "metadata": {"name": "mixed"}, "rules": [
            {"apiGroups": [""], "resources": ["pods"], "nonResourceURLs": ["/version"], "verbs": ["get"]}
        ]}),
        json!({"kind": "Role", "metadata": {"name": "cm", "namespace": "team"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["get"]}
        ]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "basic"},
               "roleRef": {"kind": "ClusterRole", "name": "basic"},
               "subjects": [{"kind": "Group", "name": "system:authenticated"}]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "mixed"},
               "roleRef": {"kind": "ClusterRole", "name": "mixed"}, "subjects": [{"kind": "User", "name": "alice"}]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "not-alice"},
               "roleRef": {"kind": "ClusterRole", "name": "mixed"}, "subjects": [{"kind": "User", "name": "bob"}]}),
        json!({"kind": "RoleBinding", "metadata": {"name": "cm", "namespace": "team"},
               "roleRef": {"kind": "Role", "name": "cm"},
               "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "system:authenticated"}]}),
    ]);
    assert_eq!(errors, vec![]);
    let alice = UserInfo::new("alice", ["system:authenticated"]);

    let (resource, non_resource) = p.rules_for(&alice, "team");
    assert_eq!(
        resource,
        vec![
            ResourceRule {
                verbs: strs(&["create"]),
                api_groups: strs(&["authorization.k8s.io"]),
                resources: strs(&["selfsubjectrulesreviews"]),
                resource_names: vec![],
            },
            ResourceRule {
                verbs: strs(&["get"]),
                api_groups: strs(&[""]),
                resources: strs(&["pods"]),
                resource_names: vec![]
            },
            ResourceRule {
                verbs: strs(&["get"]),
                api_groups: strs(&[""]),
                resources: strs(&["configmaps"]),
                resource_names: strs(&["settings"]),
            },
        ],
        "the RoleBinding matching twice is listed once"
    );
    assert_eq!(
        non_resource,
        vec![
            NonResourceRule { verbs: strs(&["get"]), non_resource_urls: strs(&["/api", "/api/*"]) },
            NonResourceRule { verbs: strs(&["get"]), non_resource_urls: strs(&["/version"]) },
        ]
    );

    let (resource, _) = p.rules_for(&alice, "other");
    assert_eq!(resource.len(), 2, "another namespace: cluster-wide rules only");
    let (resource, _) = p.rules_for(&alice, "");
    assert_eq!(resource.len(), 2);

    let status = subject_rules_review_status(&p.rules_for(&alice, "team").0, &p.rules_for(&alice, "team").1);
    assert_eq!(
        status["resourceRules"][2],
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"]})
    );
    assert_eq!(status["nonResourceRules"][1], json!({"verbs": ["get"], "nonResourceURLs": ["/version"]}));
    assert_eq!(status["incomplete"], json!(false));

    let nobody = UserInfo::new("nobody", Vec::<String>::new());
    assert_eq!(p.rules_for(&nobody, "team"), (vec![], vec![]));
}
