//! Where a request goes: resource requests as kube-core's RequestInfo reads them
//! (kube-apiserver's RequestInfoFactory), and the non-resource paths this
//! server serves (version, health, discovery, OpenAPI).

use std::fmt;

use fundament_kube_core::request::encode_segment;
use fundament_kube_core::{Query, RequestInfo, RequestInfoError, ResourceTarget};
use http::Method;

/// `/version`, `/healthz`, `/openapi/v2`, discovery roots…: not a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NonResource {
    Version,
    Health,
    /// `/api`: the core API versions.
    CoreVersions,
    /// `/apis`: every group.
    Groups,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`: the resources of a group version.
    GroupVersion {
        group: String,
        version: String,
    },
    OpenApiV2,
    OpenApiV3Root,
    /// `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`.
    OpenApiV3 {
        group: String,
        version: String,
    },
    Other,
}

/// `/api[s]/…/[namespaces/<ns>/]<resource>[/<name>[/<subresource>[/<rest>]]]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourcePath {
    /// The object or collection served; its fields read through (`path.namespace`).
    pub target: ResourceTarget,
    /// What follows `proxy/` in a service proxy path (with its leading `/`).
    pub rest: String,
}

/// A request that no route serves.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("the server could not find the requested resource")]
    NotFound,
    #[error("invalid path: empty, '.' or '..' segments, encoded '/' and control characters are not allowed")]
    BadSegment,
}

impl fmt::Display for ResourcePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.group, self.version, self.resource)
    }
}

/// A route is read as what it serves, as [`RequestInfo`] is.
impl std::ops::Deref for ResourcePath {
    type Target = ResourceTarget;

    fn deref(&self) -> &ResourceTarget {
        &self.target
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    NonResource(NonResource),
    Resource(Box<ResourceRoute>),
}

/// A resource request: what RBAC judges and what is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRoute {
    /// The request as kube-apiserver reads it: RBAC judges its verb,
    /// namespace (a Namespace's own name for requests on it) and name (also
    /// the one a `metadata.name` field selector pins a list or watch to).
    pub info: RequestInfo,
    /// The object or collection served (a Namespace has no namespace here).
    pub path: ResourcePath,
}

impl ResourceRoute {
    pub fn verb(&self) -> &str {
        &self.info.verb
    }
}

/// Routes a request by [`RequestInfo`], the reading every part of the
/// console shares (the gateway judges requests by it): decoded segments,
/// decoded query keys, the first of repeated parameters, `watch`'s boolean
/// rule. `raw_path` is the still percent-encoded path, without its query.
pub fn route(method: &Method, raw_path: &str, query: &Query) -> Result<Route, RouteError> {
    let info = RequestInfo::parse(method, raw_path, query).map_err(|e| match e {
        RequestInfoError::BadSegment => RouteError::BadSegment,
        RequestInfoError::NoResource => RouteError::NotFound,
    })?;
    if !info.is_resource_request {
        return Ok(Route::NonResource(non_resource(&info.segments)));
    }
    // The legacy `/watch/` and `/proxy/` path prefixes are not served: kubectl and
    // client libraries use `?watch=true` and the `proxy` subresource.
    let after_version = info.segments.get(if info.api_prefix == "api" { 2 } else { 3 });
    if after_version.is_some_and(|s| s == "watch" || s == "proxy") {
        return Err(RouteError::NotFound);
    }
    let parts = &info.parts;
    let proxy = info.subresource == "proxy";
    if parts.len() > 3 && !proxy {
        return Err(RouteError::NotFound);
    }
    let mut target = info.target.clone();
    // A Namespace is cluster-scoped: RequestInfo's namespace of a request on
    // it is the Namespace itself, for RBAC; the object has none.
    if info.group.is_empty() && info.resource == "namespaces" {
        // `/api/v1/namespaces/<a>/namespaces[/<b>]`: RBAC read it in namespace <a>, so a Role
        // there would have granted its verbs on every Namespace. kube-apiserver serves no such
        // path (404).
        if info.segments.get(4).is_some_and(|s| s == "namespaces") {
            return Err(RouteError::NotFound);
        }
        target.namespace.clear();
    }
    // The object the path names: a field selector's name narrows a list, it serves no object.
    target.name = parts.get(1).cloned().unwrap_or_default();
    let mut path = ResourcePath { target, rest: String::new() };
    if proxy {
        let mut rest: String = parts[3..].iter().map(|s| format!("/{}", encode_segment(s))).collect();
        // The backend's directories keep their trailing `/`.
        if rest.is_empty() || raw_path.ends_with('/') {
            rest.push('/');
        }
        path.rest = rest;
    }
    Ok(Route::Resource(Box::new(ResourceRoute { info, path })))
}

fn non_resource(segments: &[String]) -> NonResource {
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["version"] => NonResource::Version,
        ["healthz" | "livez" | "readyz", ..] => NonResource::Health,
        ["api"] => NonResource::CoreVersions,
        ["apis"] => NonResource::Groups,
        ["apis", group] => NonResource::Group(group.to_string()),
        ["api", version] => NonResource::GroupVersion { group: String::new(), version: version.to_string() },
        ["apis", group, version] => {
            NonResource::GroupVersion { group: group.to_string(), version: version.to_string() }
        }
        ["openapi", "v2"] => NonResource::OpenApiV2,
        ["openapi", "v3"] => NonResource::OpenApiV3Root,
        ["openapi", "v3", "api", version] => {
            NonResource::OpenApiV3 { group: String::new(), version: version.to_string() }
        }
        ["openapi", "v3", "apis", group, version] => {
            NonResource::OpenApiV3 { group: group.to_string(), version: version.to_string() }
        }
        _ => NonResource::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(method: Method, path: &str, query: &str) -> ResourceRoute {
        match route(&method, path, &Query::parse(query)) {
            Ok(Route::Resource(r)) => *r,
            other => panic!("{path}: {other:?}"),
        }
    }

    fn get(path: &str) -> ResourcePath {
        res(Method::GET, path, "").path
    }

    #[test]
    fn reads_core_and_group_paths() {
        let p = get("/api/v1/namespaces/default/configmaps/x");
        assert_eq!(
            (p.group.as_str(), p.namespace.as_str(), p.resource.as_str(), p.name.as_str()),
            ("", "default", "configmaps", "x")
        );
        let p = get("/apis/cert-manager.io/v1/certificates");
        assert_eq!(
            (p.group.as_str(), p.version.as_str(), p.resource.as_str()),
            ("cert-manager.io", "v1", "certificates")
        );
        let r = res(Method::GET, "/api/v1/namespaces/default", "");
        assert_eq!(
            (r.path.resource.as_str(), r.path.name.as_str(), r.path.namespace.as_str()),
            ("namespaces", "default", "")
        );
        assert_eq!(r.info.namespace, "default", "RBAC sees a Namespace in itself");
        let p = get("/api/v1/namespaces/n/serviceaccounts/sa/token");
        assert_eq!((p.name.as_str(), p.subresource.as_str()), ("sa", "token"));
        let p = get("/apis/x.io/v1/namespaces/n/things/a/status");
        assert_eq!(p.subresource, "status");
    }

    #[test]
    fn namespace_status_and_finalize_are_subresources_of_the_namespace() {
        for sub in ["status", "finalize"] {
            let r = res(Method::PUT, &format!("/api/v1/namespaces/team/{sub}"), "");
            assert_eq!(
                (r.verb(), r.path.resource.as_str(), r.path.name.as_str(), r.path.subresource.as_str()),
                ("update", "namespaces", "team", sub)
            );
            assert_eq!(r.path.namespace, "");
        }
    }

    #[test]
    fn namespaces_under_a_namespace_are_no_path() {
        // RBAC would read them in namespace `team`: a Role there would reach every Namespace.
        for path in ["/api/v1/namespaces/team/namespaces", "/api/v1/namespaces/team/namespaces/kube-system"] {
            assert!(
                matches!(route(&Method::GET, path, &Query::parse("")), Err(RouteError::NotFound)),
                "{path}"
            );
        }
        assert_eq!(get("/api/v1/namespaces/team").name, "team");
    }

    #[test]
    fn proxy_tails_are_decoded_checked_and_encoded_again() {
        let p = get("/api/v1/namespaces/plugin-x/services/plugin-x:8080/proxy/console/a%20b.html");
        assert_eq!(
            (p.name.as_str(), p.subresource.as_str(), p.rest.as_str()),
            ("plugin-x:8080", "proxy", "/console/a%20b.html")
        );
        assert_eq!(get("/api/v1/namespaces/n/services/s/proxy").rest, "/");
        assert_eq!(get("/api/v1/namespaces/n/services/s/proxy/").rest, "/");
        assert_eq!(get("/api/v1/namespaces/n/services/s/proxy/dir/").rest, "/dir/");
        assert_eq!(get("/api/v1/namespaces/n/services/s/proxy/%61").rest, "/a");
        for bad in [
            "/api/v1/namespaces/n/services/s/proxy/a%2Fb",
            "/api/v1/namespaces/n/services/s/proxy/../x",
            "/api/v1/namespaces/n/services/s/proxy/a//b",
        ] {
            assert_eq!(route(&Method::GET, bad, &Query::default()), Err(RouteError::BadSegment), "{bad}");
        }
    }

    #[test]
    fn refuses_traversal_empty_segments_and_unknown_shapes() {
        for bad in [
            "/api/v1/namespaces/../secrets",
            "/api/v1/namespaces/%2e%2e/secrets/x",
            "/api//v1",
            "/api/v1/configmaps/a%2Fb",
            "/api/v1/configmaps/%zz",
            "/api/v1/configmaps/%00",
        ] {
            assert_eq!(route(&Method::GET, bad, &Query::default()), Err(RouteError::BadSegment), "{bad}");
        }
        for missing in
            ["/api/v1/namespaces/n/configmaps/x/y/z", "/api/v1/watch/namespaces/n/pods", "/api/v1/watch"]
        {
            assert_eq!(
                route(&Method::GET, missing, &Query::default()),
                Err(RouteError::NotFound),
                "{missing}"
            );
        }
    }

    #[test]
    fn reads_discovery_and_openapi() {
        let nr = |path: &str| route(&Method::GET, path, &Query::default()).unwrap();
        assert_eq!(
            nr("/apis/cert-manager.io"),
            Route::NonResource(NonResource::Group("cert-manager.io".into()))
        );
        assert_eq!(
            nr("/openapi/v3/apis/cert-manager.io/v1"),
            Route::NonResource(NonResource::OpenApiV3 {
                group: "cert-manager.io".into(),
                version: "v1".into()
            })
        );
        assert_eq!(nr("/version/"), Route::NonResource(NonResource::Version));
        assert_eq!(nr("/ver%73ion"), Route::NonResource(NonResource::Version));
        assert_eq!(nr("/"), Route::NonResource(NonResource::Other));
    }

    #[test]
    fn verbs_follow_method_name_and_query() {
        let verb = |m: Method, path: &str, q: &str| res(m, path, q).info.verb;
        assert_eq!(verb(Method::GET, "/api/v1/configmaps", ""), "list");
        assert_eq!(verb(Method::GET, "/api/v1/configmaps", "watch=true"), "watch");
        assert_eq!(verb(Method::GET, "/api/v1/configmaps", "wat%63h=1"), "watch");
        assert_eq!(verb(Method::GET, "/api/v1/configmaps", "watch=false&watch=true"), "list");
        assert_eq!(verb(Method::GET, "/api/v1/namespaces/n/configmaps/x", "watch=1"), "get");
        assert_eq!(verb(Method::DELETE, "/api/v1/namespaces/n/configmaps", ""), "deletecollection");
        assert_eq!(verb(Method::PATCH, "/api/v1/namespaces/n/configmaps/x", ""), "patch");
        assert_eq!(verb(Method::OPTIONS, "/api/v1/namespaces/n/configmaps/x", ""), "");
        // A field selector on the name is the name RBAC judges; the list stays a list.
        let r = res(Method::GET, "/api/v1/namespaces/n/configmaps", "fieldSelector=metadata.name%3Da");
        assert_eq!((r.info.verb.as_str(), r.info.name.as_str(), r.path.name.as_str()), ("list", "a", ""));
    }
}
