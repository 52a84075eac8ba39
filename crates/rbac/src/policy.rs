//! The RBAC authorizer: every binding resolved to its rules once, when the
//! policy is built, and indexed by the user names and groups it grants to, so
//! a request only looks at the bindings that can apply to its user.

use std::collections::HashMap;

use serde_json::Value;

use crate::{
    Attributes, ClusterRole, ClusterRoleBinding, Decision, NonResourceRule, PolicyRule, RbacError,
    ResourceRule, Role, RoleBinding, RoleRef, Subject, UserInfo, aggregate, objects::is_rbac_api_version,
    request::service_account_username,
};

/// A snapshot of the cluster's RBAC objects, ready to authorize requests.
///
/// Immutable: the server builds a new one when an RBAC object changes, and
/// shares it (e.g. behind an `Arc`) between requests.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Effective rules of every ClusterRole (aggregation applied) and Role.
    rule_sets: Vec<Vec<PolicyRule>>,
    /// ClusterRole name to its entry in `rule_sets`.
    cluster_roles: HashMap<String, usize>,
    /// Role (namespace, name) to its entry in `rule_sets`.
    roles: HashMap<(String, String), usize>,
    /// ClusterRoleBindings.
    cluster: Scope,
    /// RoleBindings, by namespace.
    namespaces: HashMap<String, Scope>,
}

/// The bindings of one scope (cluster-wide, or one namespace) and their index.
#[derive(Clone, Debug, Default)]
struct Scope {
    /// Sorted by name, so that which binding a reason names is deterministic.
    bindings: Vec<Binding>,
    /// User name (service accounts as `system:serviceaccount:<ns>:<name>`) to bindings.
    by_user: HashMap<String, Vec<usize>>,
    /// Group name to bindings.
    by_group: HashMap<String, Vec<usize>>,
}

/// A binding with its role resolved.
#[derive(Clone, Debug)]
struct Binding {
    name: String,
    /// Empty for a ClusterRoleBinding.
    namespace: String,
    /// Entry in `rule_sets`; `None` when the role does not exist, which grants nothing.
    rules: Option<usize>,
    /// Each subject with the reason an allow through it gives, built once
    /// here rather than on every allowed request.
    subjects: Vec<(Subject, String)>,
}

impl Policy {
    /// Builds the policy: applies ClusterRole aggregation, resolves each
    /// binding's roleRef and indexes bindings by subject.
    ///
    /// A RoleBinding's `Role` is looked up in the binding's namespace; a
    /// ClusterRoleBinding can only use a ClusterRole. Duplicate names keep the
    /// last object.
    pub fn new(
        roles: impl IntoIterator<Item = Role>,
        cluster_roles: impl IntoIterator<Item = ClusterRole>,
        role_bindings: impl IntoIterator<Item = RoleBinding>,
        cluster_role_bindings: impl IntoIterator<Item = ClusterRoleBinding>,
    ) -> Self {
        let cluster_roles: Vec<ClusterRole> = cluster_roles.into_iter().collect();
        let mut rule_sets = aggregate::effective_rules(&cluster_roles);
        let cluster_role_index: HashMap<String, usize> =
            cluster_roles.into_iter().enumerate().map(|(i, r)| (r.name, i)).collect();
        let mut role_index: HashMap<(String, String), usize> = HashMap::new();
        for role in roles {
            role_index.insert((role.namespace, role.name), rule_sets.len());
            rule_sets.push(role.rules);
        }

        let resolve = |role_ref: &RoleRef, namespace: &str| match role_ref.kind.as_str() {
            "ClusterRole" => cluster_role_index.get(&role_ref.name).copied(),
            "Role" if !namespace.is_empty() => {
                role_index.get(&(namespace.to_owned(), role_ref.name.clone())).copied()
            }
            _ => None,
        };

        let cluster = cluster_role_bindings
            .into_iter()
            .map(|b| Binding::new(b.name, String::new(), resolve(&b.role_ref, ""), &b.role_ref, b.subjects))
            .collect();
        let mut namespaced: HashMap<String, Vec<Binding>> = HashMap::new();
        for b in role_bindings {
            let rules = resolve(&b.role_ref, &b.namespace);
            let binding = Binding::new(b.name, b.namespace.clone(), rules, &b.role_ref, b.subjects);
            namespaced.entry(b.namespace).or_default().push(binding);
        }

        Self {
            rule_sets,
            cluster_roles: cluster_role_index,
            roles: role_index,
            cluster: Scope::new(cluster),
            namespaces: namespaced.into_iter().map(|(ns, bindings)| (ns, Scope::new(bindings))).collect(),
        }
    }

    /// Builds the policy from the store's objects: Roles, ClusterRoles,
    /// RoleBindings and ClusterRoleBindings by `kind` (and an RBAC
    /// `apiVersion`); other objects are skipped. Objects that cannot be read
    /// are left out and returned, so the server can log them while the rest
    /// of the policy still applies.
    pub fn from_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> (Self, Vec<RbacError>) {
        let (mut roles, mut cluster_roles, mut role_bindings, mut cluster_role_bindings) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut errors = Vec::new();
        for object in objects {
            if !is_rbac_api_version(object.get("apiVersion").and_then(Value::as_str)) {
                continue;
            }
            let result = match object.get("kind").and_then(Value::as_str) {
                Some("Role") => Role::from_object(object).map(|r| roles.push(r)),
                Some("ClusterRole") => ClusterRole::from_object(object).map(|r| cluster_roles.push(r)),
                Some("RoleBinding") => RoleBinding::from_object(object).map(|b| role_bindings.push(b)),
                Some("ClusterRoleBinding") => {
                    ClusterRoleBinding::from_object(object).map(|b| cluster_role_bindings.push(b))
                }
                _ => Ok(()),
            };
            if let Err(e) = result {
                errors.push(e);
            }
        }
        (Self::new(roles, cluster_roles, role_bindings, cluster_role_bindings), errors)
    }

    /// Authorizes a request as the Kubernetes RBAC authorizer does.
    ///
    /// ClusterRoleBindings are checked first, then the RoleBindings of the
    /// request's namespace; there are none for cluster-scoped and
    /// non-resource requests, so a RoleBinding never grants those. The first
    /// rule that grants the request decides, and the reason names its
    /// binding, role and the first of the binding's subjects that is the user.
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes<'_>) -> Decision {
        let namespace = attrs.namespace();
        let scopes = std::iter::once(&self.cluster)
            .chain((!namespace.is_empty()).then(|| self.namespaces.get(namespace)).flatten());
        for scope in scopes {
            for binding in scope.candidates(user) {
                let Some(rules) = binding.rules.map(|i| &self.rule_sets[i]) else { continue };
                if rules.iter().any(|rule| rule.allows(attrs)) {
                    return Decision { allowed: true, reason: binding.reason_for(user) };
                }
            }
        }
        Decision::deny()
    }

    /// Every rule that applies to the user in `namespace` (empty: cluster-wide
    /// bindings only), split as a SelfSubjectRulesReview reports them.
    ///
    /// Like Kubernetes, rules are listed per binding, in binding order
    /// (ClusterRoleBindings, then RoleBindings, each by name) and not merged:
    /// `kubectl auth can-i --list` compacts them itself.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<ResourceRule>, Vec<NonResourceRule>) {
        let mut resource_rules = Vec::new();
        let mut non_resource_rules = Vec::new();
        let scopes = std::iter::once(&self.cluster)
            .chain((!namespace.is_empty()).then(|| self.namespaces.get(namespace)).flatten());
        for scope in scopes {
            let mut matched: Vec<usize> = scope.candidate_indexes(user).collect();
            matched.sort_unstable();
            matched.dedup();
            for rule in
                matched.into_iter().filter_map(|i| scope.bindings[i].rules).flat_map(|i| &self.rule_sets[i])
            {
                if !rule.resources.is_empty() {
                    resource_rules.push(ResourceRule::from(rule));
                }
                if !rule.non_resource_urls.is_empty() {
                    non_resource_rules.push(NonResourceRule::from(rule));
                }
            }
        }
        (resource_rules, non_resource_rules)
    }

    /// The rules a ClusterRole grants, aggregation applied: what the server
    /// can show as the ClusterRole's `rules`, as a real cluster's controller
    /// would have written them.
    pub fn cluster_role_rules(&self, name: &str) -> Option<&[PolicyRule]> {
        self.cluster_roles.get(name).map(|&i| self.rule_sets[i].as_slice())
    }

    /// The rules of the Role `name` in `namespace`.
    pub fn role_rules(&self, namespace: &str, name: &str) -> Option<&[PolicyRule]> {
        self.roles.get(&(namespace.to_owned(), name.to_owned())).map(|&i| self.rule_sets[i].as_slice())
    }

    /// The rules of `rules` the user does not hold in `namespace` (empty: cluster-wide), each
    /// broken down as Kubernetes' `Covers` does: every verb, API group, resource and name (or
    /// path) of a rule must be granted to the user, and a wildcard only by a wildcard. What
    /// kube-apiserver checks before a user may write a role or bind one.
    pub fn uncovered<'r>(
        &self,
        user: &UserInfo,
        namespace: &str,
        rules: &'r [PolicyRule],
    ) -> Vec<&'r PolicyRule> {
        rules.iter().filter(|rule| !self.covers(user, namespace, rule)).collect()
    }

    fn covers(&self, user: &UserInfo, namespace: &str, rule: &PolicyRule) -> bool {
        let names: Vec<&str> = if rule.resource_names.is_empty() {
            vec![""]
        } else {
            rule.resource_names.iter().map(String::as_str).collect()
        };
        let resources = rule.verbs.iter().all(|verb| {
            rule.api_groups.iter().all(|group| {
                rule.resources.iter().all(|resource| {
                    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
                    names.iter().all(|name| {
                        let attrs = Attributes::Resource {
                            verb,
                            api_group: group,
                            resource,
                            subresource,
                            name,
                            namespace,
                        };
                        self.authorize(user, &attrs).allowed
                    })
                })
            })
        });
        let paths = rule.verbs.iter().all(|verb| {
            rule.non_resource_urls.iter().all(|path| {
                namespace.is_empty() && self.authorize(user, &Attributes::NonResource { verb, path }).allowed
            })
        });
        resources && paths
    }
}

impl Scope {
    fn new(mut bindings: Vec<Binding>) -> Self {
        bindings.sort_by(|a, b| a.name.cmp(&b.name));
        let mut by_user: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_group: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, binding) in bindings.iter().enumerate() {
            if binding.rules.is_none() {
                continue;
            }
            for (subject, _) in &binding.subjects {
                let (index, key) = match subject.kind.as_str() {
                    "User" => (&mut by_user, subject.name.clone()),
                    "Group" => (&mut by_group, subject.name.clone()),
                    "ServiceAccount" => match subject.service_account_namespace(&binding.namespace) {
                        "" => continue,
                        namespace => (&mut by_user, service_account_username(namespace, &subject.name)),
                    },
                    _ => continue,
                };
                let list = index.entry(key).or_default();
                // Bindings are visited in order: a repeat can only be the last entry.
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        Self { bindings, by_user, by_group }
    }

    /// Indexes of the bindings that may apply to the user: those naming the
    /// user, then those naming each of the user's groups. A binding can come
    /// up more than once; checking it again is cheaper than deduplicating.
    fn candidate_indexes<'s>(&'s self, user: &'s UserInfo) -> impl Iterator<Item = usize> + 's {
        let by_name = self.by_user.get(user.name.as_str());
        let by_groups = user.groups.iter().filter_map(|g| self.by_group.get(g.as_str()));
        by_name.into_iter().chain(by_groups).flatten().copied()
    }

    fn candidates<'s>(&'s self, user: &'s UserInfo) -> impl Iterator<Item = &'s Binding> + 's {
        self.candidate_indexes(user).map(|i| &self.bindings[i])
    }
}

impl Binding {
    fn new(
        name: String,
        namespace: String,
        rules: Option<usize>,
        role_ref: &RoleRef,
        subjects: Vec<Subject>,
    ) -> Self {
        let source = if namespace.is_empty() {
            format!("ClusterRoleBinding {name:?}")
        } else {
            format!("RoleBinding {:?}", format!("{name}/{namespace}"))
        };
        let subjects = subjects
            .into_iter()
            .map(|subject| {
                let reason = format!(
                    "RBAC: allowed by {source} of {} {:?} to {}",
                    role_ref.kind,
                    role_ref.name,
                    describe_subject(&subject, &namespace)
                );
                (subject, reason)
            })
            .collect();
        Self { name, namespace, rules, subjects }
    }

    /// The reason for the first subject that is the user. The index only
    /// offered bindings with such a subject, so the fallback is unreachable.
    fn reason_for(&self, user: &UserInfo) -> String {
        self.subjects
            .iter()
            .find(|(subject, _)| subject.applies_to(user, &self.namespace))
            .map(|(_, reason)| reason.clone())
            .unwrap_or_default()
    }
}

/// `User "alice"`, `Group "devs"`, `ServiceAccount "robot/ci"`: Kubernetes'
/// `describeSubject`, which writes a service account as `<name>/<namespace>`.
fn describe_subject(subject: &Subject, binding_namespace: &str) -> String {
    match subject.kind.as_str() {
        "ServiceAccount" => format!(
            "{} {:?}",
            subject.kind,
            format!("{}/{}", subject.name, subject.service_account_namespace(binding_namespace))
        ),
        _ => format!("{} {:?}", subject.kind, subject.name),
    }
}
