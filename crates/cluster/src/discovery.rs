//! Discovery documents: `/api`, `/apis`, `/apis/<group>`, the resource lists
//! of each group version, and `/version`.

use serde_json::{Value, json};

use crate::resource::{Builtin, Registry};

pub const KUBE_VERSION: &str = "v1.32.0";

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": format!("{KUBE_VERSION}+fundament"),
        "gitCommit": "fundament-embedded-cluster",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "n/a (Rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

pub fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> =
        registry.groups().iter().filter(|(g, _)| !g.is_empty()).map(|(g, vs)| group_json(g, vs)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let groups = registry.groups();
    let (_, versions) = groups.iter().find(|(g, _)| g == name && !g.is_empty())?;
    let mut doc = group_json(name, versions);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

pub fn resources(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    if !registry.has_group_version(group, version) {
        return None;
    }
    let mut list = Vec::new();
    for rt in registry.all().iter().filter(|t| t.group == group && t.version == version) {
        let mut entry = json!({
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": rt.verbs,
        });
        if !rt.short_names.is_empty() {
            entry["shortNames"] = json!(rt.short_names);
        }
        if !rt.categories.is_empty() {
            entry["categories"] = json!(rt.categories);
        }
        list.push(entry);
        if rt.status_subresource {
            list.push(json!({"name": format!("{}/status", rt.plural), "singularName": "", "namespaced": rt.namespaced,
                "kind": rt.kind, "verbs": ["get", "patch", "update"]}));
        }
        match rt.builtin {
            Some(Builtin::ServiceAccount) => {
                list.push(json!({"name": "serviceaccounts/token", "singularName": "",
                "namespaced": true, "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest",
                "verbs": ["create"]}))
            }
            Some(Builtin::Service) => list
                .push(json!({"name": "services/proxy", "singularName": "", "namespaced": true,
                "kind": "ServiceProxyOptions", "verbs": ["create", "delete", "get", "patch", "update"]})),
            _ => {}
        }
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list}),
    )
}
