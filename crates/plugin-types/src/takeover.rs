//! Rules of a plugin's `permissions.rbac` that hand the plugin the cluster. The
//! rules become a ClusterRole bound to the plugin's ServiceAccount, whose token
//! the gateway holds and the plugin's pods carry; a rule on this list lets
//! whoever holds it act beyond every check of the console. The linter reports
//! them as errors, and installing refuses a definition with one (the installer
//! and the embedded cluster's controller build the ClusterRole through
//! [`crate::install::installation_objects`], which refuses it).

use crate::RbacRule;

/// Why a rule hands the plugin the cluster, in words for the plugin's author.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// `escalate`/`bind` on roles (or `*` on roles): grant itself any permission.
    Escalation,
    /// `impersonate`: act as any user, group or ServiceAccount.
    Impersonation,
    /// `create` on `serviceaccounts/token`: mint a token of any ServiceAccount.
    Tokens,
    /// `pods/exec` or `pods/attach`: run commands in any pod, with its credentials.
    Exec,
    /// `nodes/proxy`: the kubelet API of every node, which runs commands in pods.
    NodeProxy,
    /// Writes to `plugininstallations`: change or remove other plugins' installations.
    Installations,
    /// `approve` or `sign` on the built-in signers (`kubernetes.io/…`, or all of them): approve
    /// a client certificate for any user, `system:masters` included.
    Signing,
    /// Writes of pods or of what makes pods, cluster-wide: run a pod in any namespace,
    /// `kube-system` included, as any of its ServiceAccounts, or on any node's filesystem.
    Workloads,
    /// Writes of admission webhooks and policies, CRDs or aggregated APIs: see, change or answer
    /// every request of the cluster.
    ApiServer,
}

impl Takeover {
    pub fn reason(self) -> &'static str {
        match self {
            Takeover::Escalation => {
                "lets the plugin grant itself permissions it does not hold (cluster-admin in effect)"
            }
            Takeover::Impersonation => "lets the plugin act as any user, group or ServiceAccount",
            Takeover::Tokens => "lets the plugin mint a token of any ServiceAccount in the cluster",
            Takeover::Exec => {
                "lets the plugin run commands in any pod of the cluster, with that pod's credentials"
            }
            Takeover::NodeProxy => "reaches the kubelet of every node, which runs commands in any pod",
            Takeover::Installations => "lets the plugin change or remove the installations of every plugin",
            Takeover::Signing => {
                "lets the plugin approve or sign certificates of the cluster's own signers, for any user (system:masters included)"
            }
            Takeover::Workloads => {
                "lets the plugin run pods in any namespace (kube-system included) with that namespace's ServiceAccounts, or on a node's own disk"
            }
            Takeover::ApiServer => {
                "lets the plugin intercept, change or answer the cluster's API requests (admission webhooks and policies, CRDs, aggregated APIs)"
            }
        }
    }
}

impl std::fmt::Display for Takeover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const PLUGINS_GROUP: &str = "plugins.fundament.io";
const WRITE_VERBS: [&str; 6] = ["create", "update", "patch", "delete", "deletecollection", "*"];
/// The writes that make or change an object (`*` included, through `may`).
const MAKE_VERBS: [&str; 3] = ["create", "update", "patch"];

/// The first way `rule` hands the plugin the cluster, if it does.
pub fn takeover(rule: &RbacRule) -> Option<Takeover> {
    let in_group = |group: &str| rule.api_groups.iter().any(|g| g == "*" || g == group);
    let on = |resource: &str| rule.resources.iter().any(|r| r == "*" || r == resource);
    let may = |verb: &str| rule.verbs.iter().any(|v| v == "*" || v == verb);
    let may_any = |verbs: &[&str]| verbs.iter().any(|v| may(v));
    // `*` names every group, every resource of the groups (subresources included), every verb.
    if in_group(RBAC_GROUP) && (on("roles") || on("clusterroles")) && (may("escalate") || may("bind")) {
        return Some(Takeover::Escalation);
    }
    if in_group("") && on("serviceaccounts/token") && may("create") {
        return Some(Takeover::Tokens);
    }
    // An exec over a WebSocket is a GET: kube-apiserver before 1.30 checks `get` on it.
    if in_group("") && (on("pods/exec") || on("pods/attach")) && may_any(&["create", "get"]) {
        return Some(Takeover::Exec);
    }
    if in_group("") && on("nodes/proxy") && !rule.verbs.is_empty() {
        return Some(Takeover::NodeProxy);
    }
    let identities = (in_group("") && (on("users") || on("groups") || on("serviceaccounts")))
        || (in_group("authentication.k8s.io") && (on("uids") || on("userextras") || on("userextras/scopes")));
    if identities && may("impersonate") {
        return Some(Takeover::Impersonation);
    }
    if in_group(PLUGINS_GROUP) && on("plugininstallations") && may_any(&WRITE_VERBS) {
        return Some(Takeover::Installations);
    }
    // Its ClusterRole is bound cluster-wide, so a write of pods (or of what makes them) is one in
    // kube-system too, where a pod may mount the most powerful ServiceAccounts and host paths.
    let workloads = (in_group("")
        && ["pods", "replicationcontrollers", "persistentvolumes"].iter().any(|r| on(r)))
        || (in_group("apps")
            && ["deployments", "daemonsets", "statefulsets", "replicasets"].iter().any(|r| on(r)))
        || (in_group("batch") && ["jobs", "cronjobs"].iter().any(|r| on(r)));
    if workloads && may_any(&MAKE_VERBS) {
        return Some(Takeover::Workloads);
    }
    let api_server = (in_group("admissionregistration.k8s.io")
        && [
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
            "validatingadmissionpolicies",
            "validatingadmissionpolicybindings",
            "mutatingadmissionpolicies",
            "mutatingadmissionpolicybindings",
        ]
        .iter()
        .any(|r| on(r)))
        || (in_group("apiextensions.k8s.io") && on("customresourcedefinitions"))
        || (in_group("apiregistration.k8s.io") && on("apiservices"));
    if api_server && may_any(&MAKE_VERBS) {
        return Some(Takeover::ApiServer);
    }
    // A signer of its own (`example.com/issuer`) is the plugin's business; the cluster's own
    // (`kubernetes.io/kube-apiserver-client` issues client certificates) are not.
    let builtin_signers = rule.resource_names.is_empty()
        || rule.resource_names.iter().any(|n| n.contains('*') || n.starts_with("kubernetes.io/"));
    if in_group("certificates.k8s.io") && on("signers") && may_any(&["approve", "sign"]) && builtin_signers {
        return Some(Takeover::Signing);
    }
    None
}

/// A rule of a definition's `permissions.rbac` that hands the plugin the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedRule {
    /// Its index in `spec.permissions.rbac`.
    pub index: usize,
    pub takeover: Takeover,
}

/// `spec.permissions.rbac[<index>] <why>`.
impl std::fmt::Display for RefusedRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "spec.permissions.rbac[{}] {}", self.index, self.takeover)
    }
}

/// The first rule of `rules` that hands the plugin the cluster.
pub fn first_takeover(rules: &[RbacRule]) -> Option<RefusedRule> {
    rules
        .iter()
        .enumerate()
        .find_map(|(index, rule)| takeover(rule).map(|takeover| RefusedRule { index, takeover }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> RbacRule {
        let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect();
        RbacRule {
            api_groups: strings(groups),
            resources: strings(resources),
            verbs: strings(verbs),
            resource_names: Vec::new(),
        }
    }

    #[test]
    fn what_hands_over_the_cluster_is_named() {
        for (r, want) in [
            (rule(&["rbac.authorization.k8s.io"], &["clusterroles"], &["bind"]), Takeover::Escalation),
            (rule(&["*"], &["*"], &["*"]), Takeover::Escalation),
            (rule(&[""], &["*"], &["*"]), Takeover::Tokens),
            (rule(&[""], &["users", "groups"], &["impersonate"]), Takeover::Impersonation),
            (rule(&[""], &["serviceaccounts/token"], &["create"]), Takeover::Tokens),
            (rule(&[""], &["pods/exec"], &["get"]), Takeover::Exec),
            (rule(&[""], &["*"], &["create"]), Takeover::Tokens),
            (rule(&["*"], &["*"], &["get", "list", "watch"]), Takeover::Exec),
            (rule(&[""], &["nodes/proxy"], &["get"]), Takeover::NodeProxy),
            (rule(&["plugins.fundament.io"], &["plugininstallations"], &["patch"]), Takeover::Installations),
            (rule(&["certificates.k8s.io"], &["signers"], &["approve"]), Takeover::Signing),
            (rule(&["apps"], &["daemonsets"], &["create"]), Takeover::Workloads),
            (rule(&[""], &["pods"], &["create"]), Takeover::Workloads),
            (rule(&["batch"], &["cronjobs"], &["patch"]), Takeover::Workloads),
            (rule(&["apps"], &["*"], &["update"]), Takeover::Workloads),
            (rule(&[""], &["persistentvolumes"], &["create"]), Takeover::Workloads),
            (
                rule(&["admissionregistration.k8s.io"], &["mutatingwebhookconfigurations"], &["create"]),
                Takeover::ApiServer,
            ),
            (
                rule(&["apiextensions.k8s.io"], &["customresourcedefinitions"], &["update"]),
                Takeover::ApiServer,
            ),
            (rule(&["apiregistration.k8s.io"], &["*"], &["create"]), Takeover::ApiServer),
            (
                RbacRule {
                    resource_names: vec!["kubernetes.io/kube-apiserver-client".into()],
                    ..rule(&["certificates.k8s.io"], &["signers"], &["sign"])
                },
                Takeover::Signing,
            ),
        ] {
            assert_eq!(takeover(&r), Some(want), "{r:?}");
        }
    }

    #[test]
    fn a_plugins_own_kinds_events_and_reads_of_its_installation_are_fine() {
        for r in [
            rule(&["cert-manager.io"], &["certificates", "issuers"], &["*"]),
            rule(&[""], &["events"], &["get", "list", "watch"]),
            rule(&[""], &["secrets", "configmaps"], &["get", "list"]),
            rule(&["plugins.fundament.io"], &["plugininstallations"], &["get", "list", "watch"]),
            rule(&["rbac.authorization.k8s.io"], &["roles"], &["get", "list"]),
            rule(&["apps"], &["*"], &["get", "list", "watch", "delete"]),
            rule(&[""], &["pods", "pods/log"], &["get", "list", "watch"]),
            rule(&["apiextensions.k8s.io"], &["customresourcedefinitions"], &["get", "list", "watch"]),
            RbacRule {
                resource_names: vec!["example.com/issuer".into()],
                ..rule(&["certificates.k8s.io"], &["signers"], &["approve", "sign"])
            },
        ] {
            assert_eq!(takeover(&r), None, "{r:?}");
        }
    }
}
