//! What a Kubernetes request path asks for, as the gateway's checks need it:
//! group, version, namespace, resource, name, subresource and verb.

use http::Method;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KubeRequest {
    pub group: String,
    pub version: String,
    pub namespace: String,
    pub resource: String,
    pub name: String,
    pub subresource: String,
    pub verb: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a request on a Kubernetes resource: {0}")]
pub struct ParseError(pub String);

/// Reads `path` (e.g. `/apis/cert-manager.io/v1/namespaces/default/certificates`)
/// with the method and query. Discovery, `/version` and `/openapi` are not
/// resource requests and do not parse.
pub fn parse(method: &Method, path: &str, query: &str) -> Result<KubeRequest, ParseError> {
    let err = || ParseError(path.to_string());
    let trimmed = path.trim_matches('/');
    let parts: Vec<&str> = trimmed.split('/').collect();
    if parts.len() < 3 || parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
        return Err(err());
    }
    let (group, version, rest) = match parts[0] {
        "api" => (String::new(), parts[1].to_string(), &parts[2..]),
        "apis" if parts.len() >= 4 => (parts[1].to_string(), parts[2].to_string(), &parts[3..]),
        _ => return Err(err()),
    };
    let mut r = KubeRequest { group, version, ..Default::default() };
    let mut rest = rest;
    if rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"))
    {
        r.namespace = rest[1].to_string();
        rest = &rest[2..];
    }
    r.resource = rest.first().ok_or_else(err)?.to_string();
    r.name = rest.get(1).map(|s| s.to_string()).unwrap_or_default();
    r.subresource = rest.get(2).map(|s| s.to_string()).unwrap_or_default();
    if r.resource == "namespaces" && r.namespace.is_empty() && !r.name.is_empty() {
        // A namespace's own requests are in that namespace, for RBAC.
        r.namespace = r.name.clone();
    }
    let watch =
        query.split('&').filter_map(|kv| kv.split_once('=').or(Some((kv, "")))).find(|(k, _)| *k == "watch");
    let watching = watch.is_some_and(|(_, v)| v != "0" && !v.eq_ignore_ascii_case("false"));
    r.verb = match *method {
        Method::GET | Method::HEAD if watching => "watch".into(),
        Method::GET | Method::HEAD if r.name.is_empty() => "list".into(),
        Method::GET | Method::HEAD => "get".into(),
        Method::POST => "create".into(),
        Method::PUT => "update".into(),
        Method::PATCH => "patch".into(),
        Method::DELETE if r.name.is_empty() => "deletecollection".into(),
        Method::DELETE => "delete".into(),
        ref other => other.as_str().to_ascii_lowercase(),
    };
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(method: Method, path: &str, query: &str) -> KubeRequest {
        parse(&method, path, query).unwrap()
    }

    #[test]
    fn reads_the_upstream_examples() {
        let r = p(Method::GET, "/api/v1/namespaces/default/pods/web-1/log", "");
        assert_eq!(
            (
                r.namespace.as_str(),
                r.resource.as_str(),
                r.name.as_str(),
                r.subresource.as_str(),
                r.verb.as_str()
            ),
            ("default", "pods", "web-1", "log", "get")
        );
        let r = p(Method::GET, "/api/v1/namespaces/default", "");
        assert_eq!((r.resource.as_str(), r.name.as_str(), r.verb.as_str()), ("namespaces", "default", "get"));
        let r = p(Method::PUT, "/api/v1/namespaces/default/finalize", "");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), r.subresource.as_str(), r.verb.as_str()),
            ("namespaces", "default", "finalize", "update")
        );
        let r = p(Method::DELETE, "/apis/apps/v1/namespaces/default/deployments", "");
        assert_eq!(
            (r.group.as_str(), r.resource.as_str(), r.verb.as_str()),
            ("apps", "deployments", "deletecollection")
        );
        let r = p(Method::GET, "/apis/cert-manager.io/v1/certificates", "watch=true");
        assert_eq!(
            (r.group.as_str(), r.resource.as_str(), r.verb.as_str()),
            ("cert-manager.io", "certificates", "watch")
        );
        assert_eq!(p(Method::GET, "/api/v1/pods", "watch").verb, "watch");
        assert_eq!(p(Method::GET, "/api/v1/pods", "watch=false").verb, "list");
        assert_eq!(p(Method::GET, "/api/v1/pods", "watch=0").verb, "list");
        assert_eq!(p(Method::POST, "/api/v1/namespaces/x/configmaps", "").verb, "create");
        assert_eq!(p(Method::PATCH, "/api/v1/namespaces/x/configmaps/a", "").verb, "patch");
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_a_parse_has_resource_and_verb(
            path in "(/[a-z0-9.%-]{0,10}){0,8}/?",
            query in "[a-z=&0-9]{0,16}",
            m in 0usize..7,
        ) {
            let method = [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::HEAD, Method::OPTIONS][m].clone();
            if let Ok(r) = parse(&method, &path, &query) {
                proptest::prop_assert!(!r.resource.is_empty() && !r.verb.is_empty());
                proptest::prop_assert!(r.resource != ".." && r.namespace != "..");
            }
        }
    }

    #[test]
    fn refuses_non_resource_paths() {
        for bad in [
            "/foo",
            "/apis//v1/x",
            "/api",
            "/api/v1",
            "/version",
            "/openapi/v3",
            "/apis/g/v1",
            "/api/v1/../secrets",
        ] {
            assert!(parse(&Method::GET, bad, "").is_err(), "{bad}");
        }
    }
}
