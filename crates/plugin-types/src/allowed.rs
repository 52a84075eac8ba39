//! `spec.allowedResources`: what a plugin's pages may ask kube-api-proxy for.

use serde::{Deserialize, Serialize};

use crate::serde_util::null_default;

/// One entry of a definition's `spec.allowedResources`. Missing parts are
/// empty: an empty group is the core group, an empty resource matches no
/// request, and the linter reports both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedResource {
    /// The API group; empty for the core group.
    #[serde(default, deserialize_with = "null_default")]
    pub group: String,
    /// The API version, e.g. `v1`; empty or `*` for any.
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    /// The plural resource name, e.g. `certificates`, or `certificates/status`
    /// for a subresource; `*` for any.
    #[serde(default, deserialize_with = "null_default")]
    pub resource: String,
    /// The request verbs (`get`, `list`, `watch`, `create`, …); `*` for any.
    #[serde(default, deserialize_with = "null_default")]
    pub verbs: Vec<String>,
}

/// A request on a Kubernetes resource, as [`AllowedResource::admits`] judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceRequest<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    /// Empty for the resource itself.
    pub subresource: &'a str,
    pub verb: &'a str,
}

impl AllowedResource {
    /// Whether this entry admits `r`. A subresource needs an entry of its own
    /// (`certificates/status`): a plugin allowed to read certificates is not
    /// thereby allowed to write their status.
    pub fn admits(&self, r: &ResourceRequest<'_>) -> bool {
        let resource_matches = if self.resource == "*" {
            true
        } else if r.subresource.is_empty() {
            self.resource == r.resource
        } else {
            self.resource.split_once('/') == Some((r.resource, r.subresource))
        };
        self.group == r.group
            && (self.version.is_empty() || self.version == "*" || self.version == r.version)
            && resource_matches
            && self.verbs.iter().any(|v| v == r.verb || v == "*")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r<'a>(verb: &'a str, resource: &'a str, subresource: &'a str) -> ResourceRequest<'a> {
        ResourceRequest { group: "cert-manager.io", version: "v1", resource, subresource, verb }
    }

    #[test]
    fn admits_exact_entries_and_wildcards() {
        let a = AllowedResource {
            group: "cert-manager.io".into(),
            version: "v1".into(),
            resource: "certificates".into(),
            verbs: vec!["get".into(), "list".into()],
        };
        assert!(a.admits(&r("list", "certificates", "")));
        assert!(!a.admits(&r("create", "certificates", "")));
        assert!(!a.admits(&r("get", "certificates", "status")), "a subresource needs its own entry");
        assert!(!a.admits(&r("get", "issuers", "")));
        assert!(!a.admits(&ResourceRequest { group: "", ..r("get", "certificates", "") }));
        assert!(!a.admits(&ResourceRequest { version: "v2", ..r("get", "certificates", "") }));

        let status = AllowedResource { resource: "certificates/status".into(), ..a.clone() };
        assert!(status.admits(&r("get", "certificates", "status")));
        assert!(!status.admits(&r("get", "certificates", "")));

        let any = AllowedResource {
            version: "*".into(),
            resource: "*".into(),
            verbs: vec!["*".into()],
            ..a.clone()
        };
        assert!(any.admits(&ResourceRequest { version: "v9", ..r("delete", "issuers", "status") }));
        let unversioned = AllowedResource { version: String::new(), ..a };
        assert!(unversioned.admits(&ResourceRequest { version: "v2", ..r("get", "certificates", "") }));
    }

    #[test]
    fn missing_parts_are_empty_and_match_nothing() {
        let a: AllowedResource =
            serde_json::from_value(serde_json::json!({"group": null, "verbs": ["get"]})).unwrap();
        assert_eq!(a, AllowedResource { verbs: vec!["get".into()], ..AllowedResource::default() });
        assert!(!a.admits(&ResourceRequest {
            group: "",
            version: "v1",
            resource: "events",
            subresource: "",
            verb: "get"
        }));
    }
}
