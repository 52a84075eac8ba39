//! The kinds the cluster serves: the built-in ones and every version of every
//! established CRD, with what discovery, tables and validation need to know.

use std::collections::HashMap;
use std::sync::Arc;

use fundament_jsonpath::{CompiledColumn, PrinterColumn};
use fundament_schema::Validator;
use serde_json::Value;

/// Built-in kinds with behaviour of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Namespace,
    ServiceAccount,
    Secret,
    ConfigMap,
    Service,
    Event,
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
    CustomResourceDefinition,
    SubjectAccessReview,
    SelfSubjectAccessReview,
    SelfSubjectRulesReview,
    SelfSubjectReview,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
}

impl Builtin {
    /// Reviews are answered, never stored.
    pub fn is_review(self) -> bool {
        matches!(
            self,
            Self::SubjectAccessReview
                | Self::SelfSubjectAccessReview
                | Self::SelfSubjectRulesReview
                | Self::SelfSubjectReview
        )
    }

    pub fn is_rbac(self) -> bool {
        matches!(self, Self::Role | Self::ClusterRole | Self::RoleBinding | Self::ClusterRoleBinding)
    }
}

/// A CRD version's schema and printer columns, compiled once.
#[derive(Clone)]
pub struct CrdVersion {
    pub crd_name: String,
    pub validator: Option<Arc<Validator>>,
    pub columns: Vec<CompiledColumn>,
    /// The raw `openAPIV3Schema`, for OpenAPI documents and `kubectl explain`.
    pub schema: Option<Value>,
    pub storage: bool,
}

/// One group/version/resource.
#[derive(Clone)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<&'static str>,
    pub status_subresource: bool,
    pub builtin: Option<Builtin>,
    pub crd: Option<CrdVersion>,
}

impl std::fmt::Debug for ResourceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.group, self.version, self.plural)
    }
}

const ALL_VERBS: &[&str] =
    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

impl ResourceType {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// Where objects of every version of this resource are kept.
    pub fn storage_key(&self) -> StorageKey {
        StorageKey { group: self.group.clone(), resource: self.plural.clone() }
    }

    fn builtin(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        short: &[&str],
        builtin: Builtin,
    ) -> Self {
        let verbs = if builtin.is_review() { vec!["create"] } else { ALL_VERBS.to_vec() };
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            namespaced,
            short_names: short.iter().map(|s| s.to_string()).collect(),
            // As on a real cluster, `kubectl get all` means workloads and services only.
            categories: if builtin == Builtin::Service { vec!["all".into()] } else { vec![] },
            verbs,
            status_subresource: matches!(
                builtin,
                Builtin::Namespace
                    | Builtin::Service
                    | Builtin::CustomResourceDefinition
                    | Builtin::ValidatingAdmissionPolicy
            ),
            builtin: Some(builtin),
            crd: None,
        }
    }
}

/// Objects of one resource, whatever version they are read at.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct StorageKey {
    pub group: String,
    pub resource: String,
}

/// The built-in resources, in discovery order.
pub fn builtins() -> Vec<ResourceType> {
    use Builtin::*;
    let mut list = vec![
        ResourceType::builtin("", "v1", "Namespace", "namespaces", false, &["ns"], Namespace),
        ResourceType::builtin("", "v1", "ServiceAccount", "serviceaccounts", true, &["sa"], ServiceAccount),
        ResourceType::builtin("", "v1", "Secret", "secrets", true, &[], Secret),
        ResourceType::builtin("", "v1", "ConfigMap", "configmaps", true, &["cm"], ConfigMap),
        ResourceType::builtin("", "v1", "Service", "services", true, &["svc"], Service),
        ResourceType::builtin("", "v1", "Event", "events", true, &["ev"], Event),
        ResourceType::builtin("rbac.authorization.k8s.io", "v1", "Role", "roles", true, &[], Role),
        ResourceType::builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            &[],
            ClusterRole,
        ),
        ResourceType::builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            &[],
            RoleBinding,
        ),
        ResourceType::builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            &[],
            ClusterRoleBinding,
        ),
        ResourceType::builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            &["crd", "crds"],
            CustomResourceDefinition,
        ),
        ResourceType::builtin(
            "authorization.k8s.io",
            "v1",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
            &[],
            SubjectAccessReview,
        ),
        ResourceType::builtin(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
            &[],
            SelfSubjectAccessReview,
        ),
        ResourceType::builtin(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            false,
            &[],
            SelfSubjectRulesReview,
        ),
        ResourceType::builtin(
            "authentication.k8s.io",
            "v1",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
            &[],
            SelfSubjectReview,
        ),
        ResourceType::builtin(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            false,
            &[],
            ValidatingAdmissionPolicy,
        ),
        ResourceType::builtin(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            false,
            &[],
            ValidatingAdmissionPolicyBinding,
        ),
    ];
    for rt in &mut list {
        if matches!(
            rt.builtin,
            Some(CustomResourceDefinition | ValidatingAdmissionPolicy | ValidatingAdmissionPolicyBinding)
        ) {
            rt.categories = vec!["api-extensions".into()];
        }
    }
    list
}

/// Why a CRD cannot be served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct CrdError {
    pub field: String,
    pub message: String,
}

fn crd_error(field: &str, message: impl Into<String>) -> CrdError {
    CrdError { field: field.into(), message: message.into() }
}

/// The resource types a CRD object describes: one per served version.
pub fn from_crd(crd: &Value) -> Result<Vec<ResourceType>, Vec<CrdError>> {
    let mut errors = Vec::new();
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default().to_string();
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    if group.is_empty() {
        errors.push(crd_error("spec.group", "Required value"));
    }
    use fundament_kube_core::validation::{dns1035_label_errors, dns1123_subdomain_errors};
    // kube-apiserver's name rules: these names go into every request path of the kind.
    if !group.is_empty() {
        let mut problems = dns1123_subdomain_errors(&group);
        if !group.contains('.') {
            problems.push("should be a domain with at least one dot".into());
        }
        if !problems.is_empty() {
            errors
                .push(crd_error("spec.group", format!("Invalid value: \"{group}\": {}", problems.join(","))));
        }
    }
    if plural.is_empty() {
        errors.push(crd_error("spec.names.plural", "Required value"));
    } else if let problems = dns1035_label_errors(&plural)
        && !problems.is_empty()
    {
        errors.push(crd_error(
            "spec.names.plural",
            format!("Invalid value: \"{plural}\": {}", problems.join(",")),
        ));
    }
    if kind.is_empty() {
        errors.push(crd_error("spec.names.kind", "Required value"));
    }
    // kube-apiserver serves its built-in kinds before any CRD, so a CRD of the same group and
    // resource never reaches its objects there. Here a CRD would share their storage (and take
    // them along when it is deleted) and its version would be looked up in their place: refused.
    if !group.is_empty() && !plural.is_empty() && builtin_resource(&group, &plural) {
        errors.push(crd_error(
            "spec.names.plural",
            format!(
                "Invalid value: \"{plural}\": {} is a built-in resource of the API server; a \
                 CustomResourceDefinition cannot define it",
                crate::status::group_resource(&group, &plural)
            ),
        ));
    }
    let expected = format!("{plural}.{group}");
    let name = crate::object::name(crd);
    if !plural.is_empty() && !group.is_empty() && name != expected {
        errors.push(crd_error(
            "metadata.name",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        Some(other) => {
            errors.push(crd_error(
                "spec.scope",
                format!("Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\""),
            ));
            false
        }
        None => {
            errors.push(crd_error("spec.scope", "Required value"));
            false
        }
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        errors.push(crd_error(
            "spec.versions",
            "Invalid value: \"null\": must have exactly one version marked as storage version",
        ));
    }
    if versions.iter().filter(|v| v["storage"].as_bool() == Some(true)).count() != 1 && !versions.is_empty() {
        errors.push(crd_error(
            "spec.versions",
            "Invalid value: []apiextensions.CustomResourceDefinitionVersion: must have exactly one version marked as storage version",
        ));
    }
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let version = v["name"].as_str().unwrap_or_default().to_string();
        if version.is_empty() {
            errors.push(crd_error(&format!("spec.versions[{i}].name"), "Required value"));
            continue;
        }
        let problems = dns1035_label_errors(&version);
        if !problems.is_empty() {
            errors.push(crd_error(
                &format!("spec.versions[{i}].name"),
                format!("Invalid value: \"{version}\": {}", problems.join(",")),
            ));
            continue;
        }
        let schema = v["schema"]["openAPIV3Schema"].clone();
        let validator = if schema.is_null() {
            None
        } else {
            match Validator::compile(&schema) {
                Ok(validator) => Some(Arc::new(validator)),
                Err(errs) => {
                    for e in errs {
                        errors.push(crd_error(
                            &format!("spec.versions[{i}].schema.openAPIV3Schema{}", prefixed(&e.field)),
                            e.message_without_field(),
                        ));
                    }
                    None
                }
            }
        };
        let mut columns = Vec::new();
        let printer: Vec<PrinterColumn> = match serde_json::from_value(v["additionalPrinterColumns"].clone())
        {
            Ok(Some(cols)) => cols,
            Ok(None) => fundament_jsonpath::default_columns(),
            Err(e) => {
                errors.push(crd_error(
                    &format!("spec.versions[{i}].additionalPrinterColumns"),
                    format!("Invalid value: {e}"),
                ));
                Vec::new()
            }
        };
        let printer = if printer.is_empty() { fundament_jsonpath::default_columns() } else { printer };
        for (j, col) in printer.iter().enumerate() {
            // kube-apiserver's CRD validation: a column type outside these is refused.
            if !["boolean", "date", "integer", "number", "string"].contains(&col.type_name.as_str()) {
                errors.push(crd_error(
                    &format!("spec.versions[{i}].additionalPrinterColumns[{j}].type"),
                    format!(
                        "Invalid value: \"{}\": must be one of boolean,date,integer,number,string",
                        col.type_name
                    ),
                ));
                continue;
            }
            match col.compile() {
                Ok(c) => columns.push(c),
                Err(e) => errors.push(crd_error(
                    &format!("spec.versions[{i}].additionalPrinterColumns[{j}].JSONPath"),
                    format!("Invalid value: \"{}\": {e}", col.json_path),
                )),
            }
        }
        if v["served"].as_bool() != Some(true) {
            continue;
        }
        // kube-apiserver shows every column; a Table of this cluster the first
        // MAX_COLUMNS, each evaluated on every object (a CRD may come from a hostile plugin).
        columns.truncate(fundament_jsonpath::MAX_COLUMNS);
        out.push(ResourceType {
            group: group.clone(),
            version,
            kind: kind.clone(),
            list_kind: names["listKind"].as_str().map(String::from).unwrap_or_else(|| format!("{kind}List")),
            plural: plural.clone(),
            singular: names["singular"].as_str().map(String::from).unwrap_or_else(|| kind.to_lowercase()),
            namespaced,
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            verbs: ALL_VERBS.to_vec(),
            status_subresource: v["subresources"]["status"].is_object(),
            builtin: None,
            crd: Some(CrdVersion {
                crd_name: name.to_string(),
                validator,
                columns,
                schema: if schema.is_null() { None } else { Some(schema) },
                storage: v["storage"].as_bool() == Some(true),
            }),
        });
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// Whether `group`/`plural` is a built-in resource, in any version.
fn builtin_resource(group: &str, plural: &str) -> bool {
    builtins().iter().any(|t| t.group == group && t.plural == plural)
}

fn prefixed(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else if field.starts_with('[') {
        field.to_string()
    } else {
        format!(".{field}")
    }
}

/// Every served resource, indexed for the lookups each request makes.
#[derive(Default, Clone)]
pub struct Registry {
    types: Vec<Arc<ResourceType>>,
    by_gvr: HashMap<(String, String, String), Arc<ResourceType>>,
}

impl Registry {
    /// The registry of `types`. A built-in resource is never shadowed: a type
    /// of a CRD with the group and resource of a built-in one (which
    /// [`from_crd`] refuses, but a state file from before could hold) is
    /// dropped, as kube-apiserver serves its own kinds first.
    pub fn new(types: Vec<ResourceType>) -> Self {
        let builtin: std::collections::HashSet<(String, String)> = types
            .iter()
            .filter(|t| t.builtin.is_some())
            .map(|t| (t.group.clone(), t.plural.clone()))
            .collect();
        let shadows =
            |t: &ResourceType| t.builtin.is_none() && builtin.contains(&(t.group.clone(), t.plural.clone()));
        let types: Vec<Arc<ResourceType>> = types.into_iter().filter(|t| !shadows(t)).map(Arc::new).collect();
        let by_gvr = types
            .iter()
            .map(|t| ((t.group.clone(), t.version.clone(), t.plural.clone()), Arc::clone(t)))
            .collect();
        Self { types, by_gvr }
    }

    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<ResourceType>> {
        self.by_gvr.get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// The type of objects written as `apiVersion` + `kind`.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<&Arc<ResourceType>> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.types.iter().find(|t| t.group == group && t.version == version && t.kind == kind)
    }

    pub fn all(&self) -> &[Arc<ResourceType>] {
        &self.types
    }

    /// Is this group/version served at all (for discovery 404s)?
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.types.iter().any(|t| t.group == group && t.version == version)
    }

    /// The groups in discovery order, each with its versions (preferred first).
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for t in &self.types {
            match groups.iter_mut().find(|(g, _)| *g == t.group) {
                Some((_, versions)) => {
                    if !versions.contains(&t.version) {
                        versions.push(t.version.clone());
                    }
                }
                None => groups.push((t.group.clone(), vec![t.version.clone()])),
            }
        }
        for (_, versions) in &mut groups {
            versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        }
        groups
    }

    /// The storage version's type of a resource (for the kind of stored objects).
    pub fn storage_type(&self, key: &StorageKey) -> Option<&Arc<ResourceType>> {
        let mut candidates = self.types.iter().filter(|t| t.group == key.group && t.plural == key.resource);
        let all: Vec<&Arc<ResourceType>> = candidates.by_ref().collect();
        all.iter()
            .find(|t| t.crd.as_ref().is_some_and(|c| c.storage))
            .copied()
            .or_else(|| all.first().copied())
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
pub fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else { return (0, 0, 0) };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u32>() else { return (0, 0, 0) };
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    let (stage, num) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        return (0, 0, 0);
    };
    (stage, major, num.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_sort_like_kubernetes() {
        let mut v = vec!["v1alpha1", "v1", "v2beta1", "v1beta2", "foo"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(v, ["v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]);
    }

    #[test]
    fn a_crd_gives_one_type_per_served_version() {
        let crd = json!({
            "metadata": {"name": "things.x.io"},
            "spec": {"group": "x.io", "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing", "shortNames": ["th"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                    {"name": "v1beta1", "served": true, "storage": false},
                    {"name": "v1alpha1", "served": false, "storage": false}]}
        });
        let types = from_crd(&crd).unwrap();
        assert_eq!(types.len(), 2);
        assert!(types[0].status_subresource && !types[1].status_subresource);
        assert_eq!(types[0].list_kind, "ThingList");
        assert_eq!(types[0].crd.as_ref().unwrap().columns.len(), 1, "Age by default");
    }

    #[test]
    fn a_crd_cannot_define_a_built_in_resource() {
        for (group, plural, kind) in [
            ("rbac.authorization.k8s.io", "clusterroles", "ClusterRole"),
            ("rbac.authorization.k8s.io", "rolebindings", "RoleBinding"),
            ("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition"),
            ("admissionregistration.k8s.io", "validatingadmissionpolicies", "ValidatingAdmissionPolicy"),
        ] {
            // A version the built-in resource does not have would still share its storage.
            let crd = json!({"metadata": {"name": format!("{plural}.{group}")},
                "spec": {"group": group, "scope": "Cluster", "names": {"plural": plural, "kind": kind},
                         "versions": [{"name": "v2", "served": true, "storage": true}]}});
            let errors = from_crd(&crd).unwrap_err();
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].field, "spec.names.plural");
            assert!(errors[0].message.contains("is a built-in resource"), "{}", errors[0].message);
        }
        // The same group with a resource of its own is not a built-in.
        let crd = json!({"metadata": {"name": "extras.rbac.authorization.k8s.io"},
            "spec": {"group": "rbac.authorization.k8s.io", "scope": "Cluster",
                     "names": {"plural": "extras", "kind": "Extra"},
                     "versions": [{"name": "v1", "served": true, "storage": true}]}});
        assert!(from_crd(&crd).is_ok());
    }

    #[test]
    fn a_built_in_resource_is_never_shadowed_at_lookup() {
        let mut impostor = builtins().into_iter().find(|t| t.kind == "ClusterRole").unwrap();
        impostor.builtin = None;
        impostor.crd = Some(CrdVersion {
            crd_name: "clusterroles.rbac.authorization.k8s.io".into(),
            validator: None,
            columns: Vec::new(),
            schema: None,
            storage: true,
        });
        let mut other_version = impostor.clone();
        other_version.version = "v2".into();
        let mut types = builtins();
        types.extend([impostor, other_version]);
        let registry = Registry::new(types);
        let found = registry.get("rbac.authorization.k8s.io", "v1", "clusterroles").unwrap();
        assert_eq!(found.builtin, Some(Builtin::ClusterRole));
        assert!(registry.get("rbac.authorization.k8s.io", "v2", "clusterroles").is_none());
        let key = StorageKey { group: "rbac.authorization.k8s.io".into(), resource: "clusterroles".into() };
        assert_eq!(registry.storage_type(&key).unwrap().builtin, Some(Builtin::ClusterRole));
        assert_eq!(registry.all().len(), builtins().len());
    }

    #[test]
    fn a_crd_named_wrong_is_refused() {
        let crd = json!({"metadata": {"name": "x"}, "spec": {"group": "x.io", "scope": "Global",
            "names": {"plural": "things", "kind": "Thing"}, "versions": []}});
        let errors = from_crd(&crd).unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert!(
            fields.contains(&"metadata.name")
                && fields.contains(&"spec.scope")
                && fields.contains(&"spec.versions")
        );
    }
}
