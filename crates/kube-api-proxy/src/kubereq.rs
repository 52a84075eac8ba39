//! What a Kubernetes request asks for, as the gateway's checks need it:
//! group, version, namespace, resource, name, subresource and verb — taken
//! from [`RequestInfo`], the one reading of a request that the embedded
//! cluster shares (so the gateway judges exactly what the cluster serves).

use fundament_kube_core::{RequestInfo, ResourceTarget};

/// A resource request's SubjectAccessReview attributes: what it names, and the verb.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KubeRequest {
    pub target: ResourceTarget,
    pub verb: String,
}

impl KubeRequest {
    /// The parts `allowedResources` entries are matched on.
    pub fn as_resource_request(&self) -> fundament_plugin_types::ResourceRequest<'_> {
        let t = &self.target;
        fundament_plugin_types::ResourceRequest {
            group: &t.group,
            version: &t.version,
            resource: &t.resource,
            subresource: &t.subresource,
            verb: &self.verb,
        }
    }

    /// The resource request `info` describes; `None` for discovery, `/version`,
    /// `/openapi` and other non-resource paths.
    pub fn from_info(info: &RequestInfo) -> Option<KubeRequest> {
        info.is_resource_request.then(|| KubeRequest { target: info.target.clone(), verb: info.verb.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fundament_kube_core::Query;
    use http::Method;

    fn p(method: Method, path: &str, query: &str) -> Option<KubeRequest> {
        KubeRequest::from_info(&RequestInfo::parse(&method, path, &Query::parse(query)).unwrap())
    }

    #[test]
    fn resource_requests_only() {
        let r = p(Method::GET, "/api/v1/namespaces/default/pods/web-1/log", "").unwrap();
        assert_eq!(
            (r.target.namespace.as_str(), r.target.name.as_str(), r.target.subresource.as_str()),
            ("default", "web-1", "log")
        );
        assert_eq!(
            p(Method::GET, "/apis/cert-manager.io/v1/certificates", "wat%63h=1").unwrap().verb,
            "watch"
        );
        for non_resource in ["/api", "/api/v1", "/version", "/openapi/v3", "/apis/g/v1"] {
            assert_eq!(p(Method::GET, non_resource, ""), None, "{non_resource}");
        }
    }
}
