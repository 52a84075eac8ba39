//! The request path, read as kube-apiserver's RequestInfo reads it: which API,
//! group, version, namespace, resource, name and subresource a URL names, and
//! which verb the method and query make of it.

use std::fmt;

/// What a request path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/version`, `/healthz`, `/openapi/v2`, discovery roots…: not a resource.
    NonResource(NonResource),
    Resource(ResourcePath),
}

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
    pub group: String,
    pub version: String,
    pub namespace: String,
    pub resource: String,
    pub name: String,
    pub subresource: String,
    /// What follows `proxy/` in a service proxy path (with its leading `/`).
    pub rest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the server could not find the requested resource")]
    NotFound,
    #[error("invalid path segment")]
    BadSegment,
}

impl fmt::Display for ResourcePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.group, self.version, self.resource)
    }
}

/// Reads a request path (without its query). Segments are percent-decoded;
/// empty, `.` and `..` segments and control characters are refused, so no
/// name can ever address something else than what it says.
pub fn parse(path: &str) -> Result<Target, PathError> {
    let trimmed = path.strip_prefix('/').ok_or(PathError::NotFound)?;
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Ok(Target::NonResource(NonResource::Other));
    }
    let raw: Vec<&str> = trimmed.split('/').collect();
    let mut parts = Vec::with_capacity(raw.len());
    for (i, segment) in raw.iter().enumerate() {
        // After `proxy` the rest is the backend's path: kept raw, checked there.
        if i > 0 && raw[i - 1] == "proxy" && is_proxy_prefix(&parts) {
            break;
        }
        parts.push(decode_segment(segment)?);
    }
    let parts_ref: Vec<&str> = parts.iter().map(String::as_str).collect();
    match parts_ref.as_slice() {
        ["version"] => Ok(Target::NonResource(NonResource::Version)),
        ["healthz" | "livez" | "readyz", ..] => Ok(Target::NonResource(NonResource::Health)),
        ["api"] => Ok(Target::NonResource(NonResource::CoreVersions)),
        ["apis"] => Ok(Target::NonResource(NonResource::Groups)),
        ["apis", group] => Ok(Target::NonResource(NonResource::Group(group.to_string()))),
        ["api", version] => Ok(Target::NonResource(NonResource::GroupVersion {
            group: String::new(),
            version: version.to_string(),
        })),
        ["apis", group, version] => Ok(Target::NonResource(NonResource::GroupVersion {
            group: group.to_string(),
            version: version.to_string(),
        })),
        ["openapi", "v2"] => Ok(Target::NonResource(NonResource::OpenApiV2)),
        ["openapi", "v3"] => Ok(Target::NonResource(NonResource::OpenApiV3Root)),
        ["openapi", "v3", "api", version] => Ok(Target::NonResource(NonResource::OpenApiV3 {
            group: String::new(),
            version: version.to_string(),
        })),
        ["openapi", "v3", "apis", group, version] => Ok(Target::NonResource(NonResource::OpenApiV3 {
            group: group.to_string(),
            version: version.to_string(),
        })),
        ["api", version, rest @ ..] => resource_path("", version, rest, &raw, 2),
        ["apis", group, version, rest @ ..] => resource_path(group, version, rest, &raw, 3),
        _ => Ok(Target::NonResource(NonResource::Other)),
    }
}

fn is_proxy_prefix(parts: &[String]) -> bool {
    // `…/services/<name>/proxy` or `…/pods/<name>/proxy`: the resource name sits two back.
    let n = parts.len();
    n >= 3 && parts[n - 1] == "proxy" && matches!(parts[n - 3].as_str(), "services" | "pods" | "nodes")
}

fn resource_path(
    group: &str,
    version: &str,
    rest: &[&str],
    raw: &[&str],
    prefix_len: usize,
) -> Result<Target, PathError> {
    let mut p = ResourcePath { group: group.to_string(), version: version.to_string(), ..Default::default() };
    let mut rest = rest;
    // The legacy `/watch/` prefix is not served: kubectl and client libraries use `?watch=true`.
    if rest.first() == Some(&"namespaces") && rest.len() >= 3 {
        p.namespace = rest[1].to_string();
        rest = &rest[2..];
    }
    match rest {
        [resource] => p.resource = resource.to_string(),
        [resource, name] => {
            p.resource = resource.to_string();
            p.name = name.to_string();
        }
        [resource, name, sub, ..] => {
            p.resource = resource.to_string();
            p.name = name.to_string();
            p.subresource = sub.to_string();
            if *sub == "proxy" {
                let consumed = prefix_len + (if p.namespace.is_empty() { 0 } else { 2 }) + 3;
                let tail: Vec<&str> = raw.iter().skip(consumed).copied().collect();
                p.rest = format!("/{}", tail.join("/"));
                if raw.len() <= consumed {
                    p.rest = "/".to_string();
                }
            } else if rest.len() > 3 {
                return Err(PathError::NotFound);
            }
        }
        _ => return Err(PathError::NotFound),
    }
    Ok(Target::Resource(p))
}

/// One segment, decoded by the rules every reader of a request shares (kube-core).
fn decode_segment(segment: &str) -> Result<String, PathError> {
    fundament_kube_core::request::decode_segment(segment).map_err(|_| PathError::BadSegment)
}

/// The verb a request means, as RBAC sees it.
pub fn verb(method: &http::Method, p: &ResourcePath, watch: bool) -> &'static str {
    use http::Method;
    if p.subresource == "proxy" {
        return match *method {
            Method::GET | Method::HEAD => "get",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "get",
        };
    }
    match *method {
        Method::GET | Method::HEAD if p.name.is_empty() => {
            if watch {
                "watch"
            } else {
                "list"
            }
        }
        // A named GET is a get whatever `watch` says, as kube-apiserver reads it: a single
        // object is watched through its collection with a `metadata.name` field selector.
        Method::GET | Method::HEAD => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if p.name.is_empty() => "deletecollection",
        Method::DELETE => "delete",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Ok(Target::Resource(p)) => p,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn reads_core_and_group_paths() {
        let p = res("/api/v1/namespaces/default/configmaps/x");
        assert_eq!(
            (p.group.as_str(), p.namespace.as_str(), p.resource.as_str(), p.name.as_str()),
            ("", "default", "configmaps", "x")
        );
        let p = res("/apis/cert-manager.io/v1/certificates");
        assert_eq!(
            (p.group.as_str(), p.version.as_str(), p.resource.as_str()),
            ("cert-manager.io", "v1", "certificates")
        );
        let p = res("/api/v1/namespaces/default");
        assert_eq!(
            (p.resource.as_str(), p.name.as_str(), p.namespace.as_str()),
            ("namespaces", "default", "")
        );
        let p = res("/api/v1/namespaces/n/serviceaccounts/sa/token");
        assert_eq!((p.name.as_str(), p.subresource.as_str()), ("sa", "token"));
        let p = res("/apis/x.io/v1/namespaces/n/things/a/status");
        assert_eq!(p.subresource, "status");
    }

    #[test]
    fn keeps_the_proxy_tail_raw() {
        let p = res("/api/v1/namespaces/plugin-x/services/plugin-x:8080/proxy/console/a%2Fb.html");
        assert_eq!(
            (p.name.as_str(), p.subresource.as_str(), p.rest.as_str()),
            ("plugin-x:8080", "proxy", "/console/a%2Fb.html")
        );
        let p = res("/api/v1/namespaces/n/services/s/proxy");
        assert_eq!(p.rest, "/");
    }

    #[test]
    fn refuses_traversal_and_empty_segments() {
        for bad in [
            "/api/v1/namespaces/../secrets",
            "/api/v1/namespaces/%2e%2e/secrets/x",
            "/api//v1",
            "/api/v1/configmaps/a%2Fb",
            "/api/v1/configmaps/%zz",
            "/api/v1/configmaps/%00",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("/api/v1/namespaces/n/configmaps/x/y/z"), Err(PathError::NotFound));
    }

    #[test]
    fn reads_discovery_and_openapi() {
        assert_eq!(
            parse("/apis/cert-manager.io").unwrap(),
            Target::NonResource(NonResource::Group("cert-manager.io".into()))
        );
        assert_eq!(
            parse("/openapi/v3/apis/cert-manager.io/v1").unwrap(),
            Target::NonResource(NonResource::OpenApiV3 {
                group: "cert-manager.io".into(),
                version: "v1".into()
            })
        );
        assert_eq!(parse("/version/").unwrap(), Target::NonResource(NonResource::Version));
    }

    #[test]
    fn verbs_follow_method_name_and_watch() {
        let list = res("/api/v1/configmaps");
        let one = res("/api/v1/namespaces/n/configmaps/x");
        assert_eq!(verb(&http::Method::GET, &list, false), "list");
        assert_eq!(verb(&http::Method::GET, &list, true), "watch");
        assert_eq!(verb(&http::Method::GET, &one, false), "get");
        assert_eq!(verb(&http::Method::GET, &one, true), "get");
        assert_eq!(verb(&http::Method::DELETE, &list, false), "deletecollection");
        assert_eq!(verb(&http::Method::PATCH, &one, false), "patch");
    }

    proptest! {
        #[test]
        fn never_panics_and_never_yields_traversal(path in "(/[a-z0-9%.:_-]{0,12}){0,9}/?") {
            if let Ok(Target::Resource(p)) = parse(&path) {
                for s in [&p.group, &p.version, &p.namespace, &p.resource, &p.name, &p.subresource] {
                    prop_assert!(s != "." && s != ".." && !s.contains('/'));
                }
            }
        }

        #[test]
        fn never_panics_on_any_text(path in ".{0,64}") {
            let _ = parse(&path);
        }
    }
}
