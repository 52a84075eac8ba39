//! Authorization through a whole policy built from Kubernetes JSON.

use fundament_rbac::{Attributes, Decision, Policy, UserInfo, subject_access_review_status};
use serde_json::{Value, json};

fn policy(objects: &[Value]) -> Policy {
    let (policy, errors) = Policy::from_objects(objects);
    assert_eq!(errors, vec![], "test objects must all be valid");
    policy
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules})
}

fn role(namespace: &str, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": namespace}, "rules": rules})
}

fn cluster_binding(name: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
           "subjects": subjects})
}

fn binding(namespace: &str, name: &str, kind: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": namespace},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": subjects})
}

fn user(name: &str) -> Value {
    json!([{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}])
}

fn group(name: &str) -> Value {
    json!([{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}])
}

/// A ServiceAccount subject, without a namespace when `namespace` is empty.
fn service_account(name: &str, namespace: &str) -> Value {
    let mut subject = json!({"kind": "ServiceAccount", "name": name});
    if !namespace.is_empty() {
        subject["namespace"] = json!(namespace);
    }
    json!([subject])
}

fn alice() -> UserInfo {
    UserInfo::new("alice", ["devs", "system:authenticated"])
}

fn res<'a>(
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    namespace: &'a str,
    name: &'a str,
) -> Attributes<'a> {
    Attributes::Resource { verb, api_group: group, resource, subresource: "", name, namespace }
}

fn sub<'a>(verb: &'a str, resource: &'a str, subresource: &'a str, namespace: &'a str) -> Attributes<'a> {
    Attributes::Resource { verb, api_group: "", resource, subresource, name: "p", namespace }
}

fn allowed(policy: &Policy, user: &UserInfo, attrs: Attributes<'_>) -> bool {
    policy.authorize(user, &attrs).allowed
}

#[test]
fn empty_policy_denies_with_empty_reason() {
    let d = Policy::default().authorize(&alice(), &res("get", "", "pods", "default", "p"));
    assert_eq!(d, Decision { allowed: false, reason: String::new() });
    assert_eq!(subject_access_review_status(&d), json!({"allowed": false}));
}

#[test]
fn cluster_role_binding_grants_everywhere_with_reason() {
    let p = policy(&[
        cluster_role(
            "pod-reader",
            json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]),
        ),
        cluster_binding("read-pods", "pod-reader", user("alice")),
    ]);
    let d = p.authorize(&alice(), &res("get", "", "pods", "any", "p"));
    assert!(d.allowed);
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by ClusterRoleBinding "read-pods" of ClusterRole "pod-reader" to User "alice""#
    );
    assert!(allowed(&p, &alice(), res("list", "", "pods", "", "")), "all-namespace list");
    assert!(!allowed(&p, &alice(), res("delete", "", "pods", "any", "p")));
    assert!(!allowed(&p, &alice(), res("get", "apps", "pods", "any", "p")), "wrong group");
    assert!(!allowed(&p, &alice(), res("get", "", "secrets", "any", "s")));
    assert!(!allowed(&p, &UserInfo::new("bob", ["devs"]), res("get", "", "pods", "any", "p")));
}

#[test]
fn wildcards() {
    let p = policy(&[
        cluster_role(
            "all-verbs",
            json!([{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}]),
        ),
        cluster_role("all-groups", json!([{"apiGroups": ["*"], "resources": ["widgets"], "verbs": ["get"]}])),
        cluster_role(
            "all-resources",
            json!([{"apiGroups": ["batch"], "resources": ["*"], "verbs": ["list"]}]),
        ),
        cluster_binding("a", "all-verbs", user("alice")),
        cluster_binding("b", "all-groups", user("alice")),
        cluster_binding("c", "all-resources", user("alice")),
    ]);
    let a = alice();
    assert!(allowed(&p, &a, res("deletecollection", "apps", "deployments", "n", "")));
    assert!(allowed(&p, &a, res("escalate", "apps", "deployments", "n", "d")), "custom verbs are verbs");
    assert!(!allowed(&p, &a, res("get", "apps", "replicasets", "n", "r")));
    assert!(allowed(&p, &a, res("get", "example.com", "widgets", "", "w")));
    assert!(allowed(&p, &a, res("get", "", "widgets", "n", "w")));
    assert!(allowed(&p, &a, res("list", "batch", "jobs", "n", "")));
    assert!(!allowed(&p, &a, sub("list", "jobs", "status", "n")), "core group is not batch");
    let job_status = Attributes::Resource {
        verb: "list",
        api_group: "batch",
        resource: "jobs",
        subresource: "status",
        name: "",
        namespace: "n",
    };
    assert!(allowed(&p, &a, job_status), "`*` covers subresources");
}

#[test]
fn subresources() {
    let p = policy(&[
        cluster_role("logs", json!([{"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}])),
        cluster_role(
            "status",
            json!([{"apiGroups": ["", "apps"], "resources": ["*/status"], "verbs": ["update"]}]),
        ),
        cluster_role("pods-star", json!([{"apiGroups": [""], "resources": ["pods/*"], "verbs": ["create"]}])),
        cluster_binding("a", "logs", user("alice")),
        cluster_binding("b", "status", user("alice")),
        cluster_binding("c", "pods-star", user("alice")),
    ]);
    let a = alice();
    assert!(allowed(&p, &a, sub("get", "pods", "log", "n")));
    assert!(!allowed(&p, &a, sub("get", "pods", "", "n")), "pods/log does not grant pods");
    assert!(!allowed(&p, &a, sub("get", "pods", "exec", "n")));
    assert!(allowed(&p, &a, sub("update", "pods", "status", "n")));
    assert!(allowed(&p, &a, sub("update", "nodes", "status", "")));
    assert!(!allowed(&p, &a, sub("update", "pods", "", "n")), "*/status does not grant the resource");
    // As in Kubernetes, `pods/*` is no wildcard over subresources.
    assert!(!allowed(&p, &a, sub("create", "pods", "exec", "n")));
    assert!(!allowed(&p, &a, sub("create", "pods", "", "n")));
}

#[test]
fn resource_names_grant_get_but_not_list_or_create() {
    let p = policy(&[
        role(
            "team",
            "one-cm",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"],
                                        "verbs": ["get", "list", "watch", "create", "update", "delete"]}]),
        ),
        binding("team", "b", "Role", "one-cm", user("alice")),
    ]);
    let a = alice();
    assert!(allowed(&p, &a, res("get", "", "configmaps", "team", "settings")));
    assert!(allowed(&p, &a, res("update", "", "configmaps", "team", "settings")));
    assert!(allowed(&p, &a, res("watch", "", "configmaps", "team", "settings")), "a watch of one object");
    assert!(!allowed(&p, &a, res("get", "", "configmaps", "team", "other")));
    assert!(!allowed(&p, &a, res("list", "", "configmaps", "team", "")));
    assert!(!allowed(&p, &a, res("create", "", "configmaps", "team", "")));
}

#[test]
fn role_binding_to_cluster_role_is_limited_to_its_namespace() {
    let p = policy(&[
        cluster_role(
            "view",
            json!([{"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["get", "list"]}]),
        ),
        binding("team-a", "viewers", "ClusterRole", "view", group("devs")),
    ]);
    let a = alice();
    let d = p.authorize(&a, &res("list", "apps", "deployments", "team-a", ""));
    assert!(d.allowed);
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by RoleBinding "viewers/team-a" of ClusterRole "view" to Group "devs""#
    );
    assert!(!allowed(&p, &a, res("list", "apps", "deployments", "team-b", "")));
    assert!(!allowed(&p, &a, res("list", "apps", "deployments", "", "")), "not across all namespaces");
}

#[test]
fn role_binding_to_role_of_its_own_namespace_only() {
    let p = policy(&[
        role("team-a", "editor", json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}])),
        role("team-b", "other", json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}])),
        binding("team-a", "edit", "Role", "editor", user("alice")),
        // A RoleBinding cannot reach a Role of another namespace: `other` is looked up in team-a.
        binding("team-a", "cross", "Role", "other", user("alice")),
    ]);
    let a = alice();
    let d = p.authorize(&a, &res("delete", "", "pods", "team-a", "p"));
    assert_eq!(d.reason, r#"RBAC: allowed by RoleBinding "edit/team-a" of Role "editor" to User "alice""#);
    assert!(!allowed(&p, &a, res("delete", "", "pods", "team-b", "p")));
}

#[test]
fn role_binding_never_grants_cluster_scoped_or_non_resource() {
    let p = policy(&[
        cluster_role(
            "admin-ish",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]}
            ]),
        ),
        binding("team", "b", "ClusterRole", "admin-ish", user("alice")),
    ]);
    let a = alice();
    assert!(allowed(&p, &a, res("delete", "", "secrets", "team", "s")));
    assert!(!allowed(&p, &a, res("get", "", "nodes", "", "node-1")));
    assert!(!allowed(&p, &a, res("list", "", "namespaces", "", "")));
    assert!(!allowed(&p, &a, res("create", "rbac.authorization.k8s.io", "clusterroles", "", "")));
    assert!(!allowed(&p, &a, Attributes::NonResource { verb: "get", path: "/healthz" }));
}

#[test]
fn service_account_subjects() {
    let sa = UserInfo::new(
        "system:serviceaccount:ci:robot",
        ["system:serviceaccounts", "system:serviceaccounts:ci"],
    );
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
    let p =
        policy(&[cluster_role("r", rules), cluster_binding("sa-ns", "r", service_account("robot", "ci"))]);
    let d = p.authorize(&sa, &res("get", "", "pods", "anywhere", "p"));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by ClusterRoleBinding "sa-ns" of ClusterRole "r" to ServiceAccount "robot/ci""#
    );
    assert!(!allowed(
        &p,
        &UserInfo::new("system:serviceaccount:dev:robot", ["system:serviceaccounts"]),
        res("get", "", "pods", "x", "p")
    ));
    assert!(!allowed(&p, &UserInfo::new("robot", Vec::<String>::new()), res("get", "", "pods", "x", "p")));

    // Without a namespace, a ClusterRoleBinding's ServiceAccount subject matches nobody.
    let p = policy(&[
        cluster_role("r", json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])),
        cluster_binding("sa", "r", service_account("robot", "")),
    ]);
    assert!(!allowed(&p, &sa, res("get", "", "pods", "ci", "p")));
}

#[test]
fn role_binding_service_account_without_namespace_means_the_binding_namespace() {
    // Kubernetes' appliesToUser defaults the subject's namespace to the RoleBinding's.
    let sa = UserInfo::new("system:serviceaccount:ci:robot", ["system:serviceaccounts"]);
    let p = policy(&[
        cluster_role("r", json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])),
        binding("ci", "local", "ClusterRole", "r", service_account("robot", "")),
        binding("dev", "elsewhere", "ClusterRole", "r", service_account("robot", "")),
        binding("prod", "cross", "ClusterRole", "r", service_account("robot", "ci")),
    ]);
    let d = p.authorize(&sa, &res("get", "", "pods", "ci", "p"));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by RoleBinding "local/ci" of ClusterRole "r" to ServiceAccount "robot/ci""#
    );
    assert!(!allowed(&p, &sa, res("get", "", "pods", "dev", "p")), "dev's binding means dev's robot");
    assert!(allowed(&p, &sa, res("get", "", "pods", "prod", "p")), "an explicit namespace reaches across");
}

#[test]
fn groups_including_system_authenticated() {
    let p = policy(&[
        cluster_role(
            "basic",
            json!([{"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]}]),
        ),
        cluster_binding("system:basic-user", "basic", group("system:authenticated")),
    ]);
    let review = res("create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "");
    let d = p.authorize(&alice(), &review);
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "basic" to Group "system:authenticated""#
    );
    assert!(!allowed(&p, &UserInfo::new("system:anonymous", ["system:unauthenticated"]), review));
    assert!(
        !allowed(&p, &UserInfo::new("system:authenticated", Vec::<String>::new()), review),
        "a group, not a user name"
    );
}

#[test]
fn reason_names_the_first_matching_subject_of_the_binding() {
    let p = policy(&[
        cluster_role("r", json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])),
        cluster_binding(
            "b",
            "r",
            json!([
                {"kind": "User", "name": "bob"},
                {"kind": "Group", "name": "devs"},
                {"kind": "User", "name": "alice"}
            ]),
        ),
    ]);
    let d = p.authorize(&alice(), &res("get", "", "pods", "n", "p"));
    assert_eq!(d.reason, r#"RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "devs""#);
}

#[test]
fn cluster_role_bindings_are_checked_before_role_bindings() {
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
    let p = policy(&[
        cluster_role("r", rules.clone()),
        role("n", "r", rules),
        binding("n", "a-local", "Role", "r", user("alice")),
        cluster_binding("z-global", "r", user("alice")),
    ]);
    let d = p.authorize(&alice(), &res("get", "", "pods", "n", "p"));
    assert!(d.reason.contains("ClusterRoleBinding \"z-global\""), "{}", d.reason);
}

#[test]
fn non_resource_urls() {
    let p = policy(&[
        cluster_role(
            "probes",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/apis/*"], "verbs": ["get"]}]),
        ),
        cluster_binding("probes", "probes", group("system:authenticated")),
    ]);
    let a = alice();
    let nr = |verb, path| Attributes::NonResource { verb, path };
    assert!(allowed(&p, &a, nr("get", "/healthz")));
    assert!(!allowed(&p, &a, nr("get", "/healthz/etcd")));
    assert!(allowed(&p, &a, nr("get", "/apis/apps")));
    assert!(!allowed(&p, &a, nr("get", "/api")));
    assert!(!allowed(&p, &a, nr("post", "/healthz")));
    assert!(!allowed(&p, &a, res("get", "", "healthz", "", "")), "URL rules never grant resources");

    let p = policy(&[
        cluster_role("all-urls", json!([{"nonResourceURLs": ["*"], "verbs": ["get"]}])),
        cluster_binding("b", "all-urls", user("alice")),
    ]);
    assert!(allowed(&p, &a, nr("get", "/metrics")));
    assert!(allowed(&p, &a, nr("get", "/")));
}

#[test]
fn aggregation() {
    let p = policy(&[
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "monitoring"},
               "aggregationRule": {"clusterRoleSelectors": [
                   {"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}},
                   {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["metrics"]}]}
               ]},
               // Stale stored rules: the controller replaces them with the aggregate.
               "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "monitoring-endpoints", "labels": {"rbac.example.com/aggregate-to-monitoring": "true"}},
               "rules": [{"apiGroups": [""], "resources": ["services", "endpoints", "pods"], "verbs": ["get", "list", "watch"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "metrics", "labels": {"tier": "metrics"}},
               "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "unrelated", "labels": {"tier": "web"}},
               "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]}),
        cluster_binding("mon", "monitoring", user("alice")),
    ]);
    let a = alice();
    let d = p.authorize(&a, &res("watch", "", "endpoints", "n", ""));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by ClusterRoleBinding "mon" of ClusterRole "monitoring" to User "alice""#
    );
    assert!(allowed(&p, &a, Attributes::NonResource { verb: "get", path: "/metrics" }));
    assert!(!allowed(&p, &a, res("get", "", "nodes", "", "n1")), "unmatched role");
    assert!(!allowed(&p, &a, res("get", "", "secrets", "n", "s")), "stored rules are replaced");
    assert_eq!(p.cluster_role_rules("monitoring").map(<[_]>::len), Some(2));
    assert_eq!(p.cluster_role_rules("nope"), None);
}

#[test]
fn nested_aggregation_reaches_a_fixpoint() {
    let agg = |name: &str, labels: Value, selector: Value| {
        json!({"kind": "ClusterRole", "metadata": {"name": name, "labels": labels},
               "aggregationRule": {"clusterRoleSelectors": [selector]}})
    };
    let p = policy(&[
        // admin ⊇ edit ⊇ view, each by label, as the default roles are built; plus a cycle back to admin.
        agg("admin", json!({"to-view": "true"}), json!({"matchLabels": {"to-admin": "true"}})),
        agg("edit", json!({"to-admin": "true"}), json!({"matchLabels": {"to-edit": "true"}})),
        agg("view", json!({"to-edit": "true"}), json!({"matchLabels": {"to-view": "true"}})),
        json!({"kind": "ClusterRole", "metadata": {"name": "pods", "labels": {"to-view": "true"}},
               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        json!({"kind": "ClusterRole", "metadata": {"name": "deploys", "labels": {"to-edit": "true"}},
               "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["update"]}]}),
        cluster_binding("b", "admin", user("alice")),
    ]);
    let a = alice();
    assert!(allowed(&p, &a, res("get", "", "pods", "n", "p")));
    assert!(allowed(&p, &a, res("update", "apps", "deployments", "n", "d")));
    assert_eq!(
        p.cluster_role_rules("view").map(<[_]>::len),
        Some(2),
        "the cycle brings edit's rules into view"
    );
}

#[test]
fn plugin_serve_verb_with_resource_names() {
    let p = policy(&[
        cluster_role(
            "serve-billing",
            json!([{"apiGroups": ["console.fundament.io"], "resources": ["pluginregistrations"],
                                               "resourceNames": ["billing"], "verbs": ["serve"]}]),
        ),
        cluster_role("everything", json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])),
        cluster_binding("devs-billing", "serve-billing", group("devs")),
        cluster_binding("root", "everything", user("root")),
    ]);
    let serve = |name| Attributes::Resource {
        verb: "serve",
        api_group: "console.fundament.io",
        resource: "pluginregistrations",
        subresource: "",
        name,
        namespace: "",
    };
    let a = alice();
    assert!(allowed(&p, &a, serve("billing")));
    assert!(!allowed(&p, &a, serve("payroll")));
    assert!(!allowed(&p, &a, serve("")), "no name, no grant from a named rule");
    assert!(!allowed(&p, &a, res("get", "console.fundament.io", "pluginregistrations", "", "billing")));
    let root = UserInfo::new("root", Vec::<String>::new());
    assert!(allowed(&p, &root, serve("payroll")), "`*` verbs include serve");
    assert!(allowed(&p, &root, serve("")));
}

#[test]
fn missing_roles_grant_nothing() {
    let p = policy(&[
        cluster_binding("dangling", "does-not-exist", user("alice")),
        binding("n", "dangling-role", "Role", "nope", user("alice")),
        binding("n", "dangling-cluster-role", "ClusterRole", "nope", user("alice")),
        // A ClusterRoleBinding cannot use a Role.
        role("n", "r", json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "to-role"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}, "subjects": user("alice")}),
    ]);
    assert!(!allowed(&p, &alice(), res("get", "", "pods", "n", "p")));
    assert_eq!(p.rules_for(&alice(), "n"), (vec![], vec![]));
}

#[test]
fn from_objects_skips_other_kinds_and_reports_bad_objects() {
    let (p, errors) = Policy::from_objects(&[
        cluster_role("r", json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])),
        cluster_binding("b", "r", user("alice")),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "n"}}),
        json!({"apiVersion": "example.com/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "fake"},
               "roleRef": {"kind": "ClusterRole", "name": "r"}, "subjects": user("mallory")}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "no-ns"},
               "roleRef": {"kind": "ClusterRole", "name": "r"}, "subjects": user("mallory")}),
    ]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(allowed(&p, &alice(), res("get", "", "pods", "n", "p")));
    assert!(!allowed(&p, &UserInfo::new("mallory", Vec::<String>::new()), res("get", "", "pods", "n", "p")));
}

/// Kubernetes' `Covers`: each rule broken down into verb, group, resource and name, a wildcard
/// covered only by a wildcard, a namespace's RoleBindings only in that namespace.
#[test]
fn a_user_covers_only_the_rules_they_hold() {
    let p = policy(&[
        cluster_role(
            "reader",
            json!([{"apiGroups": [""], "resources": ["configmaps", "pods/log"], "verbs": ["get", "list"]}]),
        ),
        cluster_binding("reader", "reader", user("ann")),
        role("team", "team-all", json!([{"apiGroups": ["apps"], "resources": ["*"], "verbs": ["*"]}])),
        binding("team", "team-all", "Role", "team-all", user("ann")),
    ]);
    let ann = UserInfo::new("ann", Vec::<String>::new());
    let rules = |v: Value| -> Vec<fundament_rbac::PolicyRule> { serde_json::from_value(v).unwrap() };
    let held = rules(json!([
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["a"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["list"]},
    ]));
    assert!(p.uncovered(&ann, "", &held).is_empty());
    let not_held = rules(json!([
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["*"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
        {"nonResourceURLs": ["/healthz"], "verbs": ["get"]},
    ]));
    assert_eq!(p.uncovered(&ann, "", &not_held).len(), 5);
    // In `team`, the Role's wildcards cover apps' resources and verbs, wildcards included.
    let in_team = rules(json!([{"apiGroups": ["apps"], "resources": ["*"], "verbs": ["*"]}]));
    assert!(p.uncovered(&ann, "team", &in_team).is_empty());
    assert_eq!(p.uncovered(&ann, "other", &in_team).len(), 1);
}
