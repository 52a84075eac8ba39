//! Whether a rule grants a request, and whether a subject is the user: the
//! Kubernetes functions `RuleAllows` and `appliesToUser`, byte for byte.

use crate::{Attributes, PolicyRule, Subject, UserInfo, request::SERVICE_ACCOUNT_USERNAME_PREFIX};

/// The wildcard of verbs, API groups, resources and non-resource URLs.
const ALL: &str = "*";

impl PolicyRule {
    /// Whether this rule grants the request (Kubernetes' `RuleAllows`).
    ///
    /// Resource requests need the verb, API group, resource and name to
    /// match; non-resource requests the verb and path. A rule with both
    /// `resources` and `nonResourceURLs` serves each kind of request by its
    /// own field.
    pub fn allows(&self, attrs: &Attributes<'_>) -> bool {
        match *attrs {
            Attributes::Resource { verb, api_group, resource, subresource, name, .. } => {
                self.verb_matches(verb)
                    && self.api_group_matches(api_group)
                    && self.resource_matches(resource, subresource)
                    && self.resource_name_matches(name)
            }
            Attributes::NonResource { verb, path } => {
                self.verb_matches(verb) && self.non_resource_url_matches(path)
            }
        }
    }

    fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == ALL || v == verb)
    }

    fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == ALL || g == group)
    }

    /// `*` (subresources included), the exact `resource[/subresource]`, or
    /// `*/<subresource>`. Kubernetes has no `<resource>/*`: such an entry
    /// only matches a subresource literally called `*`.
    fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            if r == ALL {
                return true;
            }
            if subresource.is_empty() {
                return r == resource;
            }
            // `resource/subresource` compared without building it: this runs on every request.
            let exact = r.strip_prefix(resource).and_then(|rest| rest.strip_prefix('/')) == Some(subresource);
            exact || r.strip_prefix("*/") == Some(subresource)
        })
    }

    /// An empty list allows any name; otherwise the request's name must be
    /// listed, so requests without a name (list, create, deletecollection)
    /// are not granted by a rule with `resourceNames`.
    fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls
            .iter()
            .any(|u| u == ALL || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*'))))
    }
}

impl Subject {
    /// Whether this subject of a binding in `binding_namespace` (empty for a
    /// ClusterRoleBinding) is the user (Kubernetes' `appliesToUser`).
    ///
    /// A ServiceAccount subject without a namespace means the binding's own
    /// namespace, as Kubernetes defaults it; in a ClusterRoleBinding it
    /// matches nobody.
    pub fn applies_to(&self, user: &UserInfo, binding_namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.groups.contains(&self.name),
            "ServiceAccount" => {
                let namespace = self.service_account_namespace(binding_namespace);
                !namespace.is_empty()
                    && user
                        .name
                        .strip_prefix(SERVICE_ACCOUNT_USERNAME_PREFIX)
                        .and_then(|rest| rest.strip_prefix(namespace))
                        .and_then(|rest| rest.strip_prefix(':'))
                        == Some(self.name.as_str())
            }
            _ => false,
        }
    }

    /// The namespace a ServiceAccount subject refers to.
    pub(crate) fn service_account_namespace<'s>(&'s self, binding_namespace: &'s str) -> &'s str {
        if self.namespace.is_empty() { binding_namespace } else { &self.namespace }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        PolicyRule {
            verbs: strs(verbs),
            api_groups: strs(groups),
            resources: strs(resources),
            ..PolicyRule::default()
        }
    }

    fn res<'a>(
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        sub: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes::Resource { verb, api_group: group, resource, subresource: sub, name, namespace: "ns" }
    }

    #[test]
    fn resource_forms() {
        let pods = rule(&["get"], &[""], &["pods"]);
        assert!(pods.allows(&res("get", "", "pods", "", "p")));
        assert!(
            !pods.allows(&res("get", "", "pods", "log", "p")),
            "a resource does not cover its subresources"
        );
        assert!(!pods.allows(&res("get", "", "podsx", "", "p")));
        assert!(!pods.allows(&res("get", "", "pod", "", "p")));

        let log = rule(&["get"], &[""], &["pods/log"]);
        assert!(log.allows(&res("get", "", "pods", "log", "p")));
        assert!(!log.allows(&res("get", "", "pods", "", "p")));
        assert!(!log.allows(&res("get", "", "pods", "exec", "p")));
        assert!(!log.allows(&res("get", "", "pods", "lo", "p")));

        let any_scale = rule(&["get"], &["*"], &["*/scale"]);
        assert!(any_scale.allows(&res("get", "apps", "deployments", "scale", "d")));
        assert!(!any_scale.allows(&res("get", "apps", "deployments", "", "d")));
        assert!(!any_scale.allows(&res("get", "apps", "deployments", "status", "d")));

        let all = rule(&["get"], &["*"], &["*"]);
        assert!(all.allows(&res("get", "apps", "deployments", "", "d")));
        assert!(all.allows(&res("get", "", "pods", "log", "p")), "`*` covers subresources");

        // Kubernetes has no `<resource>/*` wildcard: only the literal subresource `*` matches.
        let pods_star = rule(&["get"], &[""], &["pods/*"]);
        assert!(!pods_star.allows(&res("get", "", "pods", "log", "p")));
        assert!(!pods_star.allows(&res("get", "", "pods", "", "p")));
        assert!(pods_star.allows(&res("get", "", "pods", "*", "p")));
    }

    #[test]
    fn verbs_and_groups() {
        let r = rule(&["get", "serve"], &["", "apps"], &["*"]);
        assert!(r.allows(&res("serve", "apps", "x", "", "")));
        assert!(!r.allows(&res("list", "", "x", "", "")));
        assert!(!r.allows(&res("get", "batch", "x", "", "")));
        let star = rule(&["*"], &["*"], &["*"]);
        assert!(star.allows(&res("serve", "plugins.example.com", "x", "", "")));
        assert!(!rule(&[], &["*"], &["*"]).allows(&res("get", "", "x", "", "")), "no verbs, no grant");
        assert!(!rule(&["*"], &[], &["*"]).allows(&res("get", "", "x", "", "")), "no groups, no grant");
    }

    #[test]
    fn resource_names() {
        let mut r = rule(&["get", "list"], &[""], &["configmaps"]);
        r.resource_names = strs(&["a"]);
        assert!(r.allows(&res("get", "", "configmaps", "", "a")));
        assert!(!r.allows(&res("get", "", "configmaps", "", "b")));
        assert!(!r.allows(&res("list", "", "configmaps", "", "")), "a named rule never grants a list");
    }

    #[test]
    fn non_resource_urls() {
        let r = PolicyRule {
            verbs: strs(&["get"]),
            non_resource_urls: strs(&["/healthz", "/apis/*"]),
            ..PolicyRule::default()
        };
        let nr = |path| Attributes::NonResource { verb: "get", path };
        assert!(r.allows(&nr("/healthz")));
        assert!(!r.allows(&nr("/healthz/ready")));
        assert!(r.allows(&nr("/apis/")));
        assert!(r.allows(&nr("/apis/apps/v1")));
        assert!(!r.allows(&nr("/apis")), "`/apis/*` is a prefix match on `/apis/`");
        assert!(!r.allows(&Attributes::NonResource { verb: "post", path: "/healthz" }));
        let all =
            PolicyRule { verbs: strs(&["*"]), non_resource_urls: strs(&["*"]), ..PolicyRule::default() };
        assert!(all.allows(&nr("/anything")));
        assert!(!all.allows(&res("get", "", "pods", "", "")), "URLs never grant resources");
        assert!(!rule(&["*"], &["*"], &["*"]).allows(&nr("/healthz")), "resources never grant URLs");
    }

    #[test]
    fn subjects() {
        let subject = |kind: &str, name: &str, namespace: &str| Subject {
            kind: kind.to_owned(),
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            ..Subject::default()
        };
        let alice = UserInfo::new("alice", ["devs", "system:authenticated"]);
        assert!(subject("User", "alice", "").applies_to(&alice, ""));
        assert!(!subject("User", "bob", "").applies_to(&alice, ""));
        assert!(subject("Group", "devs", "").applies_to(&alice, ""));
        assert!(!subject("Group", "alice", "").applies_to(&alice, ""));
        assert!(!subject("user", "alice", "").applies_to(&alice, ""), "kinds are case-sensitive");

        let sa = UserInfo::new("system:serviceaccount:ci:robot", ["system:serviceaccounts"]);
        assert!(subject("ServiceAccount", "robot", "ci").applies_to(&sa, ""));
        assert!(subject("ServiceAccount", "robot", "ci").applies_to(&sa, "other"));
        assert!(!subject("ServiceAccount", "robot", "dev").applies_to(&sa, ""));
        assert!(!subject("ServiceAccount", "robo", "ci").applies_to(&sa, ""));
        assert!(!subject("ServiceAccount", "robot", "").applies_to(&sa, ""), "no namespace to default to");
        assert!(subject("ServiceAccount", "robot", "").applies_to(&sa, "ci"), "defaults to the binding's");
        assert!(!subject("ServiceAccount", "robot", "").applies_to(&sa, "dev"));
        let colon = UserInfo::new("system:serviceaccount:c:i:robot", Vec::<String>::new());
        assert!(!subject("ServiceAccount", "robot", "c").applies_to(&colon, ""));
    }
}
