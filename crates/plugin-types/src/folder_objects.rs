//! What a plugin folder may put on a cluster. Its `crds/`, `admission/` and
//! `fixtures/` are applied with the installer's identity (an admin kubeconfig
//! in sandbox mode, the cluster itself in the embedded cluster), so whatever
//! they hold is written with rights the plugin's author does not have: a
//! ClusterRoleBinding to `cluster-admin`, a DaemonSet in `kube-system`, a
//! webhook that sees every write, or a CRD that replaces a built-in kind would
//! hand the author the cluster. A folder is therefore held to an allow-list,
//! checked as a whole before anything of it is written (the installer and the
//! embedded cluster share [`first_refused`], `fundament plugin lint` reports
//! every one of [`refusals`]):
//!
//! - `crds/`: `apiextensions.k8s.io/v1` CustomResourceDefinitions outside the
//!   groups of Kubernetes and of the platform ([`reserved_group`]), listed in
//!   the definition's `spec.crds` when it lists any, without a conversion
//!   webhook;
//! - `admission/`: ValidatingAdmissionPolicies that judge only the kinds of
//!   the folder's own CRDs (and take parameters only of them), and bindings of
//!   the folder's own policies;
//! - `fixtures/`: objects of the kinds the folder's CRDs define, and Events.
//!
//! No document may carry a label or annotation of the platform's
//! (`fundament.io/…`, `plugins.fundament.io/…`): uninstall and the console
//! decide by them what the platform made and which project a namespace is in.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

/// The largest plugin-folder YAML file read (a definition, a CRD, a fixture file): far above any
/// real one. Every reader of a folder holds to it (`fundament_bounded_file::read`).
pub const MAX_FOLDER_YAML: u64 = 4 * 1024 * 1024;

/// The parts of a plugin folder that are applied to the cluster, in the order
/// they are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    Crds,
    Admission,
    Fixtures,
}

impl Part {
    /// Every part, in the order they are applied.
    pub const ALL: [Part; 3] = [Part::Crds, Part::Admission, Part::Fixtures];

    /// The part's directory in the plugin folder.
    pub fn dir(self) -> &'static str {
        match self {
            Part::Crds => "crds",
            Part::Admission => "admission",
            Part::Fixtures => "fixtures",
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/", self.dir())
    }
}

const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";
const ADMISSION_GROUP: &str = "admissionregistration.k8s.io";
const POLICY_KIND: &str = "ValidatingAdmissionPolicy";
const BINDING_KIND: &str = "ValidatingAdmissionPolicyBinding";

/// The label and annotation prefixes of the platform: `fundament.io/installed-by`
/// tells uninstall what to delete, `fundament.io/adopted-by` what to leave,
/// `fundament.io/project` which project a namespace belongs to, and the
/// `plugins.fundament.io/…` labels which installation an object is of.
const PLATFORM_PREFIXES: [&str; 2] = ["fundament.io/", "plugins.fundament.io/"];

/// Whether a CRD may not be defined in `group`: the empty group and groups
/// without a dot (`apps`, `batch`, `policy`: Kubernetes' own, and refused by
/// kube-apiserver anyway), Kubernetes' `k8s.io` and `kubernetes.io` and their
/// subdomains, and the platform's `fundament.io` and `plugins.fundament.io`.
/// A CRD there would replace or shadow kinds the cluster and the platform
/// rely on (RBAC, admission, PluginInstallations).
pub fn reserved_group(group: &str) -> bool {
    let group = group.to_ascii_lowercase();
    let under = |domain: &str| group == domain || group.ends_with(&format!(".{domain}"));
    !group.contains('.')
        || under("k8s.io")
        || under("kubernetes.io")
        || group == "fundament.io"
        || group == "plugins.fundament.io"
}

/// Why a document of a plugin folder is not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A kind its part may not hold.
    Kind { part: Part, api_version: String, kind: String },
    /// A CRD in a [`reserved_group`].
    ReservedGroup(String),
    /// A CRD the definition's `spec.crds` does not list (the definition lists some).
    Unlisted(String),
    /// A CRD whose versions a webhook converts.
    ConversionWebhook,
    /// A policy without `spec.matchConstraints.resourceRules`.
    NoResourceRules,
    /// A policy rule's group that is not a group of the folder's CRDs.
    ForeignGroup { field: String, group: String },
    /// A policy's `spec.paramKind` that is not a kind of the folder's CRDs.
    ForeignParamKind { api_version: String, kind: String },
    /// A binding of a policy the folder does not hold.
    ForeignPolicy(String),
    /// A label or annotation of the platform's.
    PlatformKey { field: &'static str, key: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Kind { part: Part::Crds, api_version, kind } => write!(
                f,
                "crds/ may hold only {CRD_API_VERSION} CustomResourceDefinitions, not {api_version} {kind}"
            ),
            Refusal::Kind { part: Part::Admission, api_version, kind } => write!(
                f,
                "admission/ may hold only {ADMISSION_GROUP} {POLICY_KIND} and {BINDING_KIND}, \
                 not {api_version} {kind}"
            ),
            Refusal::Kind { part: Part::Fixtures, api_version, kind } => write!(
                f,
                "fixtures/ may hold only objects of the kinds this plugin's crds/ define, and Events \
                 (v1 or events.k8s.io); {api_version} {kind} is neither, and would be written with the \
                 installer's (admin) rights"
            ),
            Refusal::ReservedGroup(group) => write!(
                f,
                "spec.group {group:?} is reserved (the core and dotless groups, k8s.io, kubernetes.io, \
                 fundament.io and plugins.fundament.io): a CRD there would replace or shadow kinds the \
                 cluster and the platform rely on"
            ),
            Refusal::Unlisted(name) => {
                write!(f, "the CRD {name:?} is not listed in the definition's spec.crds")
            }
            Refusal::ConversionWebhook => write!(
                f,
                "spec.conversion.strategy is Webhook: the API server would send every object of the \
                 kind to an address of the plugin's choosing"
            ),
            Refusal::NoResourceRules => write!(
                f,
                "spec.matchConstraints.resourceRules is missing or empty: a plugin's policy must name \
                 the kinds of its own CRDs it judges"
            ),
            Refusal::ForeignGroup { field, group } => write!(
                f,
                "{field} {group:?} is not a group of this plugin's CRDs: a plugin's policy may judge \
                 writes of its own kinds only"
            ),
            Refusal::ForeignParamKind { api_version, kind } => write!(
                f,
                "spec.paramKind {api_version} {kind} is not a kind of this plugin's CRDs: the policy \
                 would read objects of the cluster (Secrets, say) into its expressions and messages"
            ),
            Refusal::ForeignPolicy(policy) => write!(
                f,
                "spec.policyName {policy:?} is not a policy of this plugin's admission/: a plugin may \
                 bind its own policies only"
            ),
            Refusal::PlatformKey { field, key } => write!(
                f,
                "{field}[{key:?}]: labels and annotations under fundament.io/ and plugins.fundament.io/ \
                 are the platform's (uninstall, projects and installations go by them), never a plugin \
                 folder's"
            ),
        }
    }
}

/// A document of a plugin folder that is not applied, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {name}: {refusal}")]
pub struct RefusedObject {
    /// Its position in the documents given to [`first_refused`].
    pub position: usize,
    pub kind: String,
    pub name: String,
    pub refusal: Refusal,
}

/// The first document of a plugin folder that it may not put on a cluster
/// (the first of [`refusals`]). `None`: the folder may be applied.
pub fn first_refused(listed_crds: &[String], documents: &[(Part, &Value)]) -> Option<RefusedObject> {
    refusals(listed_crds, documents).next()
}

/// Every document of a plugin folder that it may not put on a cluster, in
/// the order given: the installer stops at the first, a linter names them
/// all. `documents` are every document of its `crds/`, `admission/` and
/// `fixtures/`, each with its part (together: a fixture's kind is allowed by
/// a CRD, a binding by a policy); `listed_crds` is the definition's
/// `spec.crds`.
pub fn refusals<'a>(
    listed_crds: &'a [String],
    documents: &'a [(Part, &'a Value)],
) -> impl Iterator<Item = RefusedObject> + 'a {
    let folder = Folder::of(documents);
    documents.iter().enumerate().filter_map(move |(position, (part, object))| {
        folder.refusal(listed_crds, *part, object).map(|refusal| RefusedObject {
            position,
            kind: text(&object["kind"]).to_string(),
            name: text(&object["metadata"]["name"]).to_string(),
            refusal,
        })
    })
}

/// What the folder's own documents define: its kinds and its policies.
struct Folder<'a> {
    /// (group, kind) of every CRD of `crds/`.
    kinds: BTreeSet<(&'a str, &'a str)>,
    /// The names of the policies of `admission/`.
    policies: BTreeSet<&'a str>,
}

impl<'a> Folder<'a> {
    fn of(documents: &[(Part, &'a Value)]) -> Folder<'a> {
        let mut folder = Folder { kinds: BTreeSet::new(), policies: BTreeSet::new() };
        for (part, object) in documents {
            match part {
                Part::Crds if is_crd(object) => {
                    let spec = &object["spec"];
                    folder.kinds.insert((text(&spec["group"]), text(&spec["names"]["kind"])));
                }
                Part::Admission if is_admission(object, POLICY_KIND) => {
                    folder.policies.insert(text(&object["metadata"]["name"]));
                }
                _ => {}
            }
        }
        folder
    }

    fn owns_group(&self, group: &str) -> bool {
        self.kinds.iter().any(|(g, _)| *g == group)
    }

    fn owns_kind(&self, api_version: &str, kind: &str) -> bool {
        self.kinds.contains(&(group_of(api_version), kind))
    }

    fn refusal(&self, listed_crds: &[String], part: Part, object: &Value) -> Option<Refusal> {
        if let Some(refusal) = platform_key(object) {
            return Some(refusal);
        }
        let (api_version, kind) = (text(&object["apiVersion"]), text(&object["kind"]));
        let wrong_kind =
            || Some(Refusal::Kind { part, api_version: api_version.to_string(), kind: kind.to_string() });
        match part {
            Part::Crds if is_crd(object) => crd_refusal(listed_crds, object),
            Part::Admission if is_admission(object, POLICY_KIND) => self.policy_refusal(object),
            Part::Admission if is_admission(object, BINDING_KIND) => {
                let policy = text(&object["spec"]["policyName"]);
                (!self.policies.contains(policy)).then(|| Refusal::ForeignPolicy(policy.to_string()))
            }
            Part::Fixtures if is_event(api_version, kind) || self.owns_kind(api_version, kind) => None,
            _ => wrong_kind(),
        }
    }

    /// A policy judges writes of the folder's own kinds only, and takes
    /// parameters of them only. Anything not in that shape is refused: what
    /// this check cannot read, it cannot vouch for.
    fn policy_refusal(&self, policy: &Value) -> Option<Refusal> {
        let spec = &policy["spec"];
        let rules = spec["matchConstraints"]["resourceRules"].as_array().filter(|r| !r.is_empty());
        let Some(rules) = rules else { return Some(Refusal::NoResourceRules) };
        for (i, rule) in rules.iter().enumerate() {
            let field = format!("spec.matchConstraints.resourceRules[{i}].apiGroups");
            let groups = rule["apiGroups"].as_array().filter(|g| !g.is_empty());
            let Some(groups) = groups else {
                return Some(Refusal::ForeignGroup { field, group: String::new() });
            };
            for (j, group) in groups.iter().enumerate() {
                let group = text(group);
                // `*` is every group, the core and RBAC included.
                if group == "*" || !self.owns_group(group) {
                    return Some(Refusal::ForeignGroup {
                        field: format!("{field}[{j}]"),
                        group: group.to_string(),
                    });
                }
            }
        }
        let param = &spec["paramKind"];
        if !param.is_null() {
            let (api_version, kind) = (text(&param["apiVersion"]), text(&param["kind"]));
            if !self.owns_kind(api_version, kind) {
                return Some(Refusal::ForeignParamKind {
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                });
            }
        }
        None
    }
}

fn crd_refusal(listed_crds: &[String], crd: &Value) -> Option<Refusal> {
    let spec = &crd["spec"];
    let group = text(&spec["group"]);
    if reserved_group(group) {
        return Some(Refusal::ReservedGroup(group.to_string()));
    }
    let name = text(&crd["metadata"]["name"]);
    if !listed_crds.is_empty() && !listed_crds.iter().any(|listed| listed == name) {
        return Some(Refusal::Unlisted(name.to_string()));
    }
    let strategy = &spec["conversion"]["strategy"];
    if !(strategy.is_null() || strategy == "None") {
        return Some(Refusal::ConversionWebhook);
    }
    None
}

/// The first label or annotation of the platform's on `object`.
fn platform_key(object: &Value) -> Option<Refusal> {
    for field in ["labels", "annotations"] {
        let keys = object["metadata"][field].as_object().into_iter().flat_map(|m| m.keys());
        for key in keys {
            if PLATFORM_PREFIXES.iter().any(|prefix| key.starts_with(prefix)) {
                let field = if field == "labels" { "metadata.labels" } else { "metadata.annotations" };
                return Some(Refusal::PlatformKey { field, key: key.clone() });
            }
        }
    }
    None
}

fn is_crd(object: &Value) -> bool {
    text(&object["apiVersion"]) == CRD_API_VERSION && text(&object["kind"]) == "CustomResourceDefinition"
}

fn is_admission(object: &Value, kind: &str) -> bool {
    group_of(text(&object["apiVersion"])) == ADMISSION_GROUP && text(&object["kind"]) == kind
}

fn is_event(api_version: &str, kind: &str) -> bool {
    kind == "Event" && (api_version == "v1" || group_of(api_version) == "events.k8s.io")
}

/// The group of an `apiVersion`: empty for the core group (`v1`).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// A string field, or `""` for anything else: a document of the wrong shape is
/// judged as one without the field.
fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(group: &str, plural: &str, kind: &str) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": format!("{plural}.{group}")},
               "spec": {"group": group, "scope": "Namespaced",
                        "names": {"plural": plural, "kind": kind},
                        "versions": [{"name": "v1", "served": true, "storage": true}]}})
    }

    fn object(api_version: &str, kind: &str, name: &str) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"}})
    }

    fn policy(name: &str, groups: Value) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
               "metadata": {"name": name},
               "spec": {"matchConstraints": {"resourceRules": [
                   {"apiGroups": groups, "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["*"]}]},
                        "validations": [{"expression": "true"}]}})
    }

    fn binding(name: &str, policy: &str) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": ["Deny"]}})
    }

    /// A folder with one CRD (widgets.example.io), a policy of it and its binding, a widget and
    /// two events; `extra` is added to it in `part`.
    fn folder_with(part: Part, extra: Value) -> Option<RefusedObject> {
        let docs = [
            (Part::Crds, crd("example.io", "widgets", "Widget")),
            (Part::Admission, policy("widget-rules", json!(["example.io"]))),
            (Part::Admission, binding("widget-rules", "widget-rules")),
            (Part::Fixtures, object("example.io/v1", "Widget", "w")),
            (Part::Fixtures, object("v1", "Event", "w.1")),
            (Part::Fixtures, object("events.k8s.io/v1", "Event", "w.2")),
            (part, extra),
        ];
        let docs: Vec<(Part, &Value)> = docs.iter().map(|(p, v)| (*p, v)).collect();
        first_refused(&[], &docs)
    }

    #[test]
    fn a_folder_of_its_own_kinds_policies_and_events_is_accepted() {
        assert_eq!(folder_with(Part::Fixtures, object("example.io/v1", "Widget", "w2")), None);
    }

    #[test]
    fn a_fixture_of_any_other_kind_is_refused() {
        for (api_version, kind) in [
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("rbac.authorization.k8s.io/v1", "ClusterRole"),
            ("rbac.authorization.k8s.io/v1", "RoleBinding"),
            ("v1", "Namespace"),
            ("v1", "ServiceAccount"),
            ("v1", "Secret"),
            ("v1", "ConfigMap"),
            ("v1", "Pod"),
            ("apps/v1", "DaemonSet"),
            ("apps/v1", "Deployment"),
            ("batch/v1", "Job"),
            ("plugins.fundament.io/v1", "PluginInstallation"),
            ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
            ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
            ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            ("certificates.k8s.io/v1", "CertificateSigningRequest"),
            // The folder's group, but a kind its CRDs do not define.
            ("example.io/v1", "Gadget"),
            ("events.k8s.io/v1", "EventList"),
        ] {
            let refused = folder_with(Part::Fixtures, object(api_version, kind, "x")).expect(kind);
            assert_eq!(refused.position, 6);
            assert_eq!(
                refused.refusal,
                Refusal::Kind { part: Part::Fixtures, api_version: api_version.into(), kind: kind.into() }
            );
            let message = refused.to_string();
            assert!(message.starts_with(&format!("{kind} x: fixtures/ may hold only")), "{message}");
        }
    }

    #[test]
    fn crds_and_admission_hold_their_own_kinds_only() {
        for (part, api_version, kind) in [
            (Part::Crds, "v1", "ConfigMap"),
            (Part::Crds, "apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"),
            (Part::Crds, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            (Part::Admission, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
            (Part::Admission, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
            (Part::Admission, "admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"),
            (Part::Admission, "example.io/v1", "Widget"),
        ] {
            let refused = folder_with(part, object(api_version, kind, "x")).expect(kind);
            assert_eq!(
                refused.refusal,
                Refusal::Kind { part, api_version: api_version.into(), kind: kind.into() },
                "{kind}"
            );
        }
    }

    #[test]
    fn a_crd_in_a_reserved_group_is_refused() {
        for group in [
            "",
            "apps",
            "batch",
            "k8s.io",
            "rbac.authorization.k8s.io",
            "admissionregistration.k8s.io",
            "apiextensions.k8s.io",
            "gateway.networking.k8s.io",
            "kubernetes.io",
            "metrics.kubernetes.io",
            "RBAC.Authorization.K8s.IO",
            "fundament.io",
            "plugins.fundament.io",
        ] {
            let refused = folder_with(Part::Crds, crd(group, "clusterroles", "ClusterRole")).expect(group);
            assert_eq!(refused.refusal, Refusal::ReservedGroup(group.into()));
        }
        for group in ["cert-manager.io", "demo.fundament.io", "x-k8s.io.example.com", "k8s.io.example.com"] {
            assert!(!reserved_group(group), "{group}");
        }
    }

    #[test]
    fn a_crd_must_be_listed_when_the_definition_lists_crds() {
        let (listed, other) =
            (crd("example.io", "widgets", "Widget"), crd("example.io", "gadgets", "Gadget"));
        let docs = [(Part::Crds, &listed), (Part::Crds, &other)];
        assert_eq!(first_refused(&[], &docs), None, "a definition that lists none");
        let refused = first_refused(&["widgets.example.io".into()], &docs).unwrap();
        assert_eq!((refused.position, refused.refusal), (1, Refusal::Unlisted("gadgets.example.io".into())));
    }

    #[test]
    fn every_refused_document_is_named_in_order_and_the_first_is_first_refused() {
        let (widget, gadget) =
            (crd("example.io", "widgets", "Widget"), crd("example.io", "gadgets", "Gadget"));
        let (secret, own) = (object("v1", "Secret", "s"), object("example.io/v1", "Widget", "w"));
        let docs =
            [(Part::Crds, &widget), (Part::Crds, &gadget), (Part::Fixtures, &own), (Part::Fixtures, &secret)];
        let listed = ["widgets.example.io".to_string()];
        let all: Vec<(usize, Refusal)> =
            refusals(&listed, &docs).map(|refused| (refused.position, refused.refusal)).collect();
        assert_eq!(
            all,
            [
                (1, Refusal::Unlisted("gadgets.example.io".into())),
                (3, Refusal::Kind { part: Part::Fixtures, api_version: "v1".into(), kind: "Secret".into() }),
            ]
        );
        assert_eq!(first_refused(&listed, &docs).map(|refused| refused.position), Some(1));
        assert_eq!(refusals(&[], &docs[..3]).count(), 0);
    }

    #[test]
    fn a_crd_converted_by_a_webhook_is_refused() {
        let mut webhook = crd("example.io", "gadgets", "Gadget");
        webhook["spec"]["conversion"] =
            json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://example.com/"}}});
        assert_eq!(folder_with(Part::Crds, webhook).unwrap().refusal, Refusal::ConversionWebhook);
        let mut none = crd("example.io", "gadgets", "Gadget");
        none["spec"]["conversion"] = json!({"strategy": "None"});
        assert_eq!(folder_with(Part::Crds, none), None);
    }

    #[test]
    fn a_policy_judges_the_folders_own_groups_only() {
        for (groups, field, group) in [
            (json!([""]), "[0]", ""),
            (json!(["*"]), "[0]", "*"),
            (json!(["example.io", "rbac.authorization.k8s.io"]), "[1]", "rbac.authorization.k8s.io"),
            (json!(["cert-manager.io"]), "[0]", "cert-manager.io"),
            (json!([]), "", ""),
        ] {
            let refused = folder_with(Part::Admission, policy("p", groups.clone())).expect("refused");
            assert_eq!(
                refused.refusal,
                Refusal::ForeignGroup {
                    field: format!("spec.matchConstraints.resourceRules[0].apiGroups{field}"),
                    group: group.into()
                },
                "{groups}"
            );
        }
        let mut no_rules = policy("p", json!(["example.io"]));
        no_rules["spec"]["matchConstraints"] = json!({});
        assert_eq!(folder_with(Part::Admission, no_rules).unwrap().refusal, Refusal::NoResourceRules);
    }

    #[test]
    fn a_policy_takes_parameters_of_the_folders_own_kinds_only() {
        let mut secrets = policy("p", json!(["example.io"]));
        secrets["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "Secret"});
        assert_eq!(
            folder_with(Part::Admission, secrets).unwrap().refusal,
            Refusal::ForeignParamKind { api_version: "v1".into(), kind: "Secret".into() }
        );
        let mut widgets = policy("p", json!(["example.io"]));
        widgets["spec"]["paramKind"] = json!({"apiVersion": "example.io/v1", "kind": "Widget"});
        assert_eq!(folder_with(Part::Admission, widgets), None);
    }

    #[test]
    fn a_binding_binds_the_folders_own_policies_only() {
        let refused = folder_with(Part::Admission, binding("b", "cluster-wide-deny")).unwrap();
        assert_eq!(refused.refusal, Refusal::ForeignPolicy("cluster-wide-deny".into()));
        assert!(refused.to_string().contains("\"cluster-wide-deny\" is not a policy of this plugin"));
    }

    #[test]
    fn the_platforms_labels_and_annotations_are_refused() {
        for (field, key) in [
            ("labels", "fundament.io/installed-by"),
            ("labels", "fundament.io/adopted-by"),
            ("annotations", "fundament.io/added-labels"),
            ("labels", "fundament.io/project"),
            ("labels", "plugins.fundament.io/installation-name"),
        ] {
            let mut widget = object("example.io/v1", "Widget", "w2");
            widget["metadata"][field] = json!({"app.kubernetes.io/name": "w", key: "x"});
            let refused = folder_with(Part::Fixtures, widget).expect(key);
            assert_eq!(
                refused.refusal,
                Refusal::PlatformKey {
                    field: if field == "labels" { "metadata.labels" } else { "metadata.annotations" },
                    key: key.into()
                }
            );
        }
        let mut own = object("example.io/v1", "Widget", "w2");
        own["metadata"]["labels"] = json!({"demo.fundament.io/owner": "x", "example.io/registration": "y"});
        assert_eq!(folder_with(Part::Fixtures, own), None);
    }

    #[test]
    fn documents_of_the_wrong_shape_are_refused_not_read_as_something_else() {
        assert!(folder_with(Part::Fixtures, json!("a string")).is_some());
        assert!(folder_with(Part::Fixtures, json!({"kind": "Widget", "metadata": {"name": "w"}})).is_some());
        let mut policy = policy("p", json!(["example.io"]));
        policy["spec"]["matchConstraints"]["resourceRules"] = json!("all");
        assert_eq!(folder_with(Part::Admission, policy).unwrap().refusal, Refusal::NoResourceRules);
    }
}
