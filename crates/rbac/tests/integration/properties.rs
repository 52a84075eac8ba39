//! Properties over generated policies and requests.

use fundament_rbac::{
    Attributes, ClusterRole, ClusterRoleBinding, Policy, PolicyRule, Role, RoleBinding, RoleRef, Subject,
    UserInfo,
};
use proptest::prelude::*;

/// One of a few values: small alphabets per field, so generated rules,
/// subjects and requests actually meet (about half the requests are allowed).
fn one_of(values: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(values).prop_map(str::to_owned)
}

fn some_of(values: &'static [&'static str], min: usize, max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(one_of(values), min..=max)
}

const VERBS: &[&str] = &["*", "*", "get", "serve"];
const GROUPS: &[&str] = &["*", "", "apps"];
const RESOURCES: &[&str] = &["*", "*", "pods", "pods/log", "*/log", "pods/*", "nodes"];
const NAMES: &[&str] = &["", "a"];
const URLS: &[&str] = &["*", "*", "/a", "/a/*", "/a*"];

fn rule() -> impl Strategy<Value = PolicyRule> {
    (
        some_of(VERBS, 1, 2),
        some_of(GROUPS, 1, 2),
        some_of(RESOURCES, 1, 2),
        some_of(NAMES, 0, 1),
        some_of(URLS, 0, 2),
    )
        .prop_map(|(verbs, api_groups, resources, resource_names, urls)| PolicyRule {
            verbs,
            api_groups,
            resources,
            resource_names,
            non_resource_urls: urls,
        })
}

fn name() -> impl Strategy<Value = String> {
    one_of(&["", "a", "b"])
}

fn subject() -> impl Strategy<Value = Subject> {
    (one_of(&["User", "Group", "ServiceAccount", "ServiceAccount", "Other"]), one_of(&["a", "b"]), name())
        .prop_map(|(kind, name, namespace)| Subject { kind, api_group: String::new(), name, namespace })
}

fn role_ref() -> impl Strategy<Value = RoleRef> {
    (one_of(&["Role", "ClusterRole", "ClusterRole", "Bogus"]), one_of(&["a", "b"]))
        .prop_map(|(kind, name)| RoleRef { api_group: String::new(), kind, name })
}

#[derive(Debug, Clone)]
struct Objects {
    roles: Vec<Role>,
    cluster_roles: Vec<ClusterRole>,
    role_bindings: Vec<RoleBinding>,
    cluster_role_bindings: Vec<ClusterRoleBinding>,
}

fn objects() -> impl Strategy<Value = Objects> {
    let rules = || prop::collection::vec(rule(), 1..4);
    let subjects = || prop::collection::vec(subject(), 1..4);
    let role_name = || one_of(&["a", "b"]);
    let namespace = || one_of(&["a", "b"]);
    (
        prop::collection::vec((role_name(), namespace(), rules()), 0..5).prop_map(|v| {
            v.into_iter().map(|(name, namespace, rules)| Role { name, namespace, rules }).collect()
        }),
        prop::collection::vec((role_name(), rules()), 1..3).prop_map(|v| {
            v.into_iter().map(|(name, rules)| ClusterRole { name, rules, ..ClusterRole::default() }).collect()
        }),
        prop::collection::vec((name(), namespace(), subjects(), role_ref()), 0..8).prop_map(|v| {
            v.into_iter()
                .map(|(name, namespace, subjects, role_ref)| RoleBinding {
                    name,
                    namespace,
                    subjects,
                    role_ref,
                })
                .collect()
        }),
        prop::collection::vec((name(), subjects(), role_ref()), 0..6).prop_map(|v| {
            v.into_iter()
                .map(|(name, subjects, role_ref)| ClusterRoleBinding { name, subjects, role_ref })
                .collect()
        }),
    )
        .prop_map(|(roles, cluster_roles, role_bindings, cluster_role_bindings)| Objects {
            roles,
            cluster_roles,
            role_bindings,
            cluster_role_bindings,
        })
}

fn user() -> impl Strategy<Value = UserInfo> {
    let user_name = one_of(&[
        "a",
        "b",
        "system:serviceaccount:a:a",
        "system:serviceaccount:a:b",
        "system:serviceaccount:b:a",
        "system:serviceaccount::a",
    ]);
    (user_name, some_of(&["a", "b", "c"], 0, 2)).prop_map(|(n, groups)| UserInfo::new(n, groups))
}

#[derive(Debug, Clone)]
enum Request {
    Resource([String; 6]),
    NonResource(String, String),
}

impl Request {
    fn attrs(&self) -> Attributes<'_> {
        match self {
            Self::Resource([verb, api_group, resource, subresource, name, namespace]) => {
                Attributes::Resource { verb, api_group, resource, subresource, name, namespace }
            }
            Self::NonResource(verb, path) => Attributes::NonResource { verb, path },
        }
    }
}

fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        (
            one_of(&["get", "serve", "list"]),
            one_of(&["", "apps"]),
            one_of(&["pods", "nodes"]),
            one_of(&["", "log", "*"]),
            one_of(&["", "a", "b"]),
            name()
        )
            .prop_map(|(a, b, c, d, e, f)| Request::Resource([a, b, c, d, e, f])),
        (one_of(&["get", "serve"]), one_of(&["", "/a", "/a/b", "/b"]))
            .prop_map(|(verb, path)| Request::NonResource(verb, path)),
    ]
}

/// The Kubernetes algorithm without any index: scan every binding.
fn reference_allows(o: &Objects, user: &UserInfo, attrs: &Attributes<'_>) -> bool {
    let cluster_rules = |name: &str| o.cluster_roles.iter().rev().find(|r| r.name == name).map(|r| &r.rules);
    let grants =
        |rules: Option<&Vec<PolicyRule>>| rules.is_some_and(|rules| rules.iter().any(|r| r.allows(attrs)));
    let by_cluster = o.cluster_role_bindings.iter().any(|b| {
        b.subjects.iter().any(|s| s.applies_to(user, ""))
            && b.role_ref.kind == "ClusterRole"
            && grants(cluster_rules(&b.role_ref.name))
    });
    let namespace = attrs.namespace();
    let by_namespace = !namespace.is_empty()
        && o.role_bindings.iter().filter(|b| b.namespace == namespace).any(|b| {
            let rules = match b.role_ref.kind.as_str() {
                "ClusterRole" => cluster_rules(&b.role_ref.name),
                "Role" => o
                    .roles
                    .iter()
                    .rev()
                    .find(|r| r.namespace == namespace && r.name == b.role_ref.name)
                    .map(|r| &r.rules),
                _ => None,
            };
            b.subjects.iter().any(|s| s.applies_to(user, &b.namespace)) && grants(rules)
        });
    by_cluster || by_namespace
}

fn build(o: &Objects) -> Policy {
    Policy::new(
        o.roles.clone(),
        o.cluster_roles.clone(),
        o.role_bindings.clone(),
        o.cluster_role_bindings.clone(),
    )
}

/// Guards the generators: a differential property over requests that are all
/// denied proves nothing, and tightening an alphabet can silently get there.
#[test]
fn generated_cases_include_allows_and_denials() {
    use proptest::{strategy::ValueTree, test_runner::TestRunner};
    let mut runner = TestRunner::deterministic();
    let mut allowed = 0;
    for _ in 0..1000 {
        let o = objects().new_tree(&mut runner).unwrap().current();
        let user = user().new_tree(&mut runner).unwrap().current();
        let req = request().new_tree(&mut runner).unwrap().current();
        allowed += usize::from(build(&o).authorize(&user, &req.attrs()).allowed);
    }
    assert!((50..=950).contains(&allowed), "{allowed} of 1000 generated requests allowed");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn authorize_agrees_with_a_full_scan(o in objects(), user in user(), req in request()) {
        let policy = build(&o);
        let attrs = req.attrs();
        let decision = policy.authorize(&user, &attrs);
        prop_assert_eq!(decision.allowed, reference_allows(&o, &user, &attrs));
        prop_assert_eq!(decision.allowed, !decision.reason.is_empty());
        if decision.allowed {
            prop_assert!(decision.reason.starts_with("RBAC: allowed by "));
        }
        // Whatever rules_for lists, it does not panic and only lists what the user has.
        let (resource, non_resource) = policy.rules_for(&user, attrs.namespace());
        prop_assert!(resource.iter().all(|r| !r.resources.is_empty()));
        prop_assert!(non_resource.iter().all(|r| !r.non_resource_urls.is_empty()));
    }

    #[test]
    fn cluster_admin_is_allowed_everything(mut o in objects(), groups in prop::collection::vec(name(), 0..3), req in request()) {
        o.cluster_roles.push(ClusterRole {
            name: "cluster-admin".to_owned(),
            rules: vec![
                PolicyRule {
                    verbs: vec!["*".into()],
                    api_groups: vec!["*".into()],
                    resources: vec!["*".into()],
                    ..PolicyRule::default()
                },
                PolicyRule { verbs: vec!["*".into()], non_resource_urls: vec!["*".into()], ..PolicyRule::default() },
            ],
            ..ClusterRole::default()
        });
        o.cluster_role_bindings.push(ClusterRoleBinding {
            name: "cluster-admin".to_owned(),
            subjects: vec![Subject { kind: "User".into(), name: "root".into(), ..Subject::default() }],
            role_ref: RoleRef { api_group: "rbac.authorization.k8s.io".into(), kind: "ClusterRole".into(), name: "cluster-admin".into() },
        });
        let root = UserInfo::new("root", groups);
        prop_assert!(build(&o).authorize(&root, &req.attrs()).allowed);
    }

    #[test]
    fn role_bindings_alone_never_grant_cluster_wide(mut o in objects(), user in user(), req in request()) {
        o.cluster_role_bindings.clear();
        let attrs = req.attrs();
        if attrs.namespace().is_empty() {
            prop_assert!(!build(&o).authorize(&user, &attrs).allowed);
        }
    }
}
