//! What the console needs to know about a kind, from its CRD.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A kind as its CRD describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KindInfo {
    pub kind: String,
    pub plural: String,
    pub group: String,
    /// The storage version (else the first served one).
    pub version: String,
    pub namespaced: bool,
}

/// Reads a CustomResourceDefinition.
pub fn kind_info(crd: &Value) -> Option<KindInfo> {
    let spec = crd.get("spec")?;
    let names = spec.get("names")?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let versions = spec.get("versions").and_then(Value::as_array).cloned().unwrap_or_default();
    let version = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .or_else(|| versions.first())
        .map(|v| text(v, "name"))
        .unwrap_or_default();
    let info = KindInfo {
        kind: text(names, "kind"),
        plural: text(names, "plural"),
        group: text(spec, "group"),
        version,
        namespaced: spec.get("scope").and_then(Value::as_str) != Some("Cluster"),
    };
    // These go into request paths (`/apis/<group>/<version>/…/<plural>`). kube-apiserver
    // refuses a CRD whose names are not DNS names; the embedded cluster is more lenient, and a
    // CRD comes with a plugin: a version like `v1/namespaces/prod/x?` would redirect the
    // console's calls.
    let names_are_safe = fundament_kube_core::validation::is_dns1123_subdomain(&info.group)
        && fundament_kube_core::validation::is_dns1123_label(&info.version)
        && fundament_kube_core::validation::is_dns1123_label(&info.plural);
    (!info.kind.is_empty() && names_are_safe).then_some(info)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kind_info_takes_the_storage_version() {
        let crd = json!({"spec": {
            "group": "postgresql.cnpg.io", "scope": "Namespaced",
            "names": {"kind": "Database", "plural": "databases"},
            "versions": [{"name": "v1beta1", "storage": false}, {"name": "v1", "storage": true}]
        }});
        let info = kind_info(&crd).unwrap();
        assert_eq!((info.kind.as_str(), info.version.as_str(), info.namespaced), ("Database", "v1", true));
        assert!(kind_info(&json!({"spec": {"names": {}}})).is_none());
        let cluster = json!({"spec": {"group": "g", "scope": "Cluster", "names": {"kind": "K", "plural": "ks"}, "versions": [{"name": "v1"}]}});
        assert!(!kind_info(&cluster).unwrap().namespaced);
    }

    #[test]
    fn names_that_would_change_a_request_path_are_refused() {
        let crd = |group: &str, plural: &str, version: &str| json!({"spec": {"group": group, "names": {"kind": "K", "plural": plural}, "versions": [{"name": version, "storage": true}]}});
        assert!(kind_info(&crd("hostile.example.io", "loots", "v1")).is_some());
        for (group, plural, version) in [
            ("hostile.example.io", "loots", "v1/namespaces/prod/widgets/victim?x="),
            ("hostile.example.io", "loots/../../secrets", "v1"),
            ("hostile.example.io/../..", "loots", "v1"),
            ("hostile.example.io", "Loots", "v1"),
            ("", "loots", "v1"),
        ] {
            assert!(kind_info(&crd(group, plural, version)).is_none(), "{group} {plural} {version}");
        }
    }
}
