//! What a Kubernetes request asks for, computed as kube-apiserver's
//! `RequestInfoFactory` computes it: from the method, the decoded path and
//! the query, the verb (`get`, `list`, `watch`, `create`, `update`, `patch`,
//! `delete`, `deletecollection`, or a special verb from the path), the API
//! group and version, namespace, resource, name and subresource.
//!
//! Path segments are percent-decoded once and refused when empty, `.` or
//! `..`, when they hold an encoded `/`, a control character or bytes that are
//! not UTF-8: no spelling of a path can name something else than it says.

use http::Method;

use crate::query::Query;

/// Verbs that come from the path (`/api/v1/watch/…`, `/api/v1/proxy/…`).
const SPECIAL_VERBS: &[&str] = &["proxy", "watch"];
/// Special verbs after which a third part is not a subresource.
const SPECIAL_VERBS_NO_SUBRESOURCES: &[&str] = &["proxy"];
/// `namespaces/<name>/<this>` is a subresource of the namespace, not a resource in it.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// What a resource request names: the API group and version, the namespace,
/// the resource, the object and its subresource, each empty where the request
/// names none. One type for every reader of a request: [`RequestInfo`], the
/// gateway's SubjectAccessReview attributes, the embedded cluster's routes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResourceTarget {
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub namespace: String,
    pub resource: String,
    pub name: String,
    pub subresource: String,
}

/// What a request asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestInfo {
    /// `/api/…` or `/apis/…` with a version and a resource: subject to RBAC as a resource.
    pub is_resource_request: bool,
    /// For a non-resource request, the lower-cased method; else the resource verb.
    pub verb: String,
    /// `api` or `apis` (empty for non-resource requests).
    pub api_prefix: String,
    /// What a resource request names (all empty for a non-resource request).
    /// Its fields read through: `info.namespace` is `info.target.namespace`.
    pub target: ResourceTarget,
    /// The decoded parts from the resource on: `resource/name/subresource/…`.
    pub parts: Vec<String>,
    /// The decoded path segments, all of them.
    pub segments: Vec<String>,
}

/// A path that no server may read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestInfoError {
    /// An empty, `.` or `..` segment, an encoded `/`, a control character, a bad escape.
    #[error("invalid path: empty, '.' or '..' segments, encoded '/' and control characters are not allowed")]
    BadSegment,
    /// `/api/v1/watch` and the like, with nothing after the special verb.
    #[error("unable to determine kind and namespace from the path")]
    NoResource,
}

impl RequestInfo {
    /// Reads a request. `path` is the raw (still percent-encoded) path.
    pub fn parse(method: &Method, path: &str, query: &Query) -> Result<RequestInfo, RequestInfoError> {
        let segments = decode_path(path)?;
        let mut info = RequestInfo {
            verb: method.as_str().to_ascii_lowercase(),
            segments: segments.clone(),
            ..RequestInfo::default()
        };
        let mut parts: &[String] = &segments;
        if parts.len() < 3 || !matches!(parts[0].as_str(), "api" | "apis") {
            return Ok(info);
        }
        info.api_prefix = parts[0].clone();
        parts = &parts[1..];
        if info.api_prefix == "apis" {
            if parts.len() < 3 {
                return Ok(info);
            }
            info.target.group = parts[0].clone();
            parts = &parts[1..];
        }
        info.is_resource_request = true;
        info.target.version = parts[0].clone();
        parts = &parts[1..];
        if SPECIAL_VERBS.contains(&parts[0].as_str()) {
            if parts.len() < 2 {
                return Err(RequestInfoError::NoResource);
            }
            info.verb = parts[0].clone();
            parts = &parts[1..];
        } else {
            info.verb = match *method {
                Method::POST => "create",
                Method::GET | Method::HEAD => "get",
                Method::PUT => "update",
                Method::PATCH => "patch",
                Method::DELETE => "delete",
                _ => "",
            }
            .to_string();
        }
        if parts[0] == "namespaces" && parts.len() > 1 {
            info.target.namespace = parts[1].clone();
            if parts.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&parts[2].as_str()) {
                parts = &parts[2..];
            }
        }
        info.parts = parts.to_vec();
        if parts.len() >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.contains(&info.verb.as_str()) {
            info.target.subresource = parts[2].clone();
        }
        if parts.len() >= 2 {
            info.target.name = parts[1].clone();
        }
        info.target.resource = parts[0].clone();
        if info.target.name.is_empty() && info.verb == "get" {
            info.verb = if query.flag("watch") { "watch" } else { "list" }.to_string();
            if let Some(name) = query.get("fieldSelector").and_then(exact_name) {
                info.target.name = name;
            }
        }
        if info.target.name.is_empty() && info.verb == "delete" {
            info.verb = "deletecollection".to_string();
        }
        Ok(info)
    }

    /// Whether the API server has a route for this method here. It has none for
    /// a POST to a named object (only subresources such as `token` or `eviction`
    /// take a POST by name): it answers 405, so nothing may be created under a
    /// name the checks never saw.
    pub fn method_allowed(&self, method: &Method) -> bool {
        !(self.is_resource_request
            && *method == Method::POST
            && self.subresource.is_empty()
            && self.parts.len() == 2
            && !SPECIAL_VERBS.contains(&self.verb.as_str()))
    }

    /// The path to forward: the decoded segments, percent-encoded again, so the
    /// server behind reads the segments that were judged.
    pub fn canonical_path(&self) -> String {
        let mut out = String::new();
        for segment in &self.segments {
            out.push('/');
            out.push_str(&encode_segment(segment));
        }
        if out.is_empty() { "/".to_string() } else { out }
    }
}

/// A request is read as what it names, as kube-apiserver's flat `RequestInfo`
/// is: `info.group`, `info.name`.
impl std::ops::Deref for RequestInfo {
    type Target = ResourceTarget;

    fn deref(&self) -> &ResourceTarget {
        &self.target
    }
}

/// One decoded segment, percent-encoded so that [`decode_segment`] reads it
/// back unchanged: unreserved characters, the sub-delimiters, ':' and '@'
/// stay; '%', '/', '?', '#', spaces and the rest are encoded.
pub fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b':' | b'@' | b'!' | b'$' | b'\'' | b'(' | b')')
            || matches!(b, b'*' | b'+' | b',' | b'=' | b'&' | b';')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The name a field selector pins a list or watch to: only when the whole selector is one
/// `metadata.name=<name>` or `metadata.name==<name>` term, and the name a valid path segment.
/// Anything else pins nothing, so the request is judged as a list or watch of every object,
/// which never admits more than the API server serves.
///
/// kube-apiserver reads a selector with Go's escapes (`\,`, `\=` and `\\` in values):
/// `metadata.namespace!=x\,metadata.name=allowed` is one term there, which every object
/// matches, while a split on every `,` reads a second term naming `allowed`; a user allowed to
/// list `allowed` only (RBAC's `resourceNames`) would be let through to list everything. So a
/// backslash anywhere, or a `,` (more than one term: the API server narrows some of those too,
/// but nothing needs it), means no narrowing. Nothing is trimmed either: Go reads
/// ` metadata.name=a` as a term on the field ` metadata.name`, which pins no name.
fn exact_name(selector: &str) -> Option<String> {
    if selector.contains(['\\', ',']) {
        return None;
    }
    let value = selector.strip_prefix("metadata.name")?;
    let value = value.strip_prefix("==").or_else(|| value.strip_prefix('='))?;
    let valid = !value.is_empty()
        && value != "."
        && value != ".."
        && !value.contains(['/', '%', '!', '='])
        && !value.chars().any(|c| c.is_whitespace() || c.is_control());
    valid.then(|| value.to_string())
}

/// The raw path's segments, each decoded once. A leading `/` is required, one
/// trailing `/` is allowed; `/` alone is no segment.
pub fn decode_path(path: &str) -> Result<Vec<String>, RequestInfoError> {
    let trimmed = path.strip_prefix('/').ok_or(RequestInfoError::BadSegment)?;
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    trimmed.split('/').map(decode_segment).collect()
}

/// One path segment, percent-decoded and checked.
pub fn decode_segment(segment: &str) -> Result<String, RequestInfoError> {
    if segment.is_empty() {
        return Err(RequestInfoError::BadSegment);
    }
    let out = percent_decode(segment).ok_or(RequestInfoError::BadSegment)?;
    let s = String::from_utf8(out).map_err(|_| RequestInfoError::BadSegment)?;
    if s == "." || s == ".." || s.contains('/') || s.chars().any(char::is_control) {
        return Err(RequestInfoError::BadSegment);
    }
    Ok(s)
}

/// `raw` with each `%XX` escape decoded, once; `None` when a `%` is not
/// followed by two hexadecimal digits. The bytes need not be UTF-8: what
/// they must be is the caller's rule.
pub fn percent_decode(raw: &str) -> Option<Vec<u8>> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, path: &str, query: &str) -> RequestInfo {
        RequestInfo::parse(&method, path, &Query::parse(query)).unwrap()
    }

    /// What a request names, as `verb,group,namespace,resource,name,subresource`.
    fn summary(r: &RequestInfo) -> String {
        [&r.verb, &r.group, &r.namespace, &r.resource, &r.name, &r.subresource].map(String::as_str).join(",")
    }

    /// Each request line (`GET /path?query`) reads as its [`summary`].
    fn assert_reads(cases: &[(&str, &str)]) {
        for (line, expected) in cases {
            let (method, target) = line.split_once(' ').unwrap();
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            assert_eq!(summary(&info(method, path, query)), *expected, "{line}");
        }
    }

    #[test]
    fn reads_the_api_servers_examples() {
        assert_reads(&[
            ("GET /api/v1/namespaces/default/pods/web-1/log", "get,,default,pods,web-1,log"),
            ("GET /api/v1/namespaces/default", "get,,default,namespaces,default,"),
            ("PUT /api/v1/namespaces/default/finalize", "update,,default,namespaces,default,finalize"),
            ("GET /api/v1/namespaces", "list,,,namespaces,,"),
            (
                "DELETE /apis/apps/v1/namespaces/default/deployments",
                "deletecollection,apps,default,deployments,,",
            ),
            ("GET /apis/cert-manager.io/v1/certificates?watch=true", "watch,cert-manager.io,,certificates,,"),
            ("POST /api/v1/namespaces/n/serviceaccounts/sa/token", "create,,n,serviceaccounts,sa,token"),
        ]);
    }

    #[test]
    fn watch_and_list_come_from_the_query_as_the_server_reads_it() {
        assert_eq!(info(Method::GET, "/api/v1/pods", "wat%63h=1").verb, "watch");
        assert_eq!(info(Method::GET, "/api/v1/pods", "watch=0&watch=1").verb, "list");
        assert_eq!(info(Method::GET, "/api/v1/pods", "watch").verb, "watch");
        assert_eq!(info(Method::GET, "/api/v1/pods", "watch=false").verb, "list");
        // A named GET is a get, whatever the query says.
        assert_eq!(info(Method::GET, "/api/v1/namespaces/n/pods/a", "watch=1").verb, "get");
        // A field selector on the name names the object, for resourceNames rules.
        let r = info(Method::GET, "/api/v1/namespaces/n/pods", "watch=1&fieldSelector=metadata.name%3Da");
        assert_eq!((r.verb.as_str(), r.name.as_str()), ("watch", "a"));
        let r = info(Method::GET, "/api/v1/pods", "fieldSelector=metadata.name%3D..");
        assert_eq!(r.name, "");
    }

    #[test]
    fn only_a_selector_of_one_unescaped_name_term_names_an_object() {
        let named = |selector: &str| {
            let query = format!("fieldSelector={selector}");
            info(Method::GET, "/api/v1/namespaces/n/configmaps", &query).target.name
        };
        assert_eq!(named("metadata.name%3Dallowed"), "allowed");
        assert_eq!(named("metadata.name%3D%3Dallowed"), "allowed");
        // One term on spec.color to the API server (`\,` escapes the comma): names nothing.
        assert_eq!(named("spec.color%3Dx%5C%2Cmetadata.name%3Dallowed"), "");
        assert_eq!(named("spec.color=x\\,metadata.name%3Dallowed"), "");
        assert_eq!(named("metadata.namespace!%3Dx%5C,metadata.name%3Dallowed"), "");
        // A backslash anywhere, even in the name's own term.
        assert_eq!(named("metadata.name%3Dallo%5Cwed"), "");
        assert_eq!(named("metadata.name%3Dallowed%5C"), "");
        // More than one term, even an innocent one, and an empty trailing one.
        assert_eq!(named("metadata.name%3Da,metadata.namespace%3Dn"), "");
        assert_eq!(named("metadata.namespace%3Dn,metadata.name%3Da"), "");
        assert_eq!(named("metadata.name%3Da,"), "");
        // Spaces are the field's or the value's own to Go, never trimmed away.
        assert_eq!(named("%20metadata.name%3Da"), "");
        assert_eq!(named("metadata.name%20%3Da"), "");
        assert_eq!(named("metadata.name%3Da%20"), "");
        // Not an equality on the name.
        assert_eq!(named("metadata.name!%3Da"), "");
        assert_eq!(named("metadata.names%3Da"), "");
        assert_eq!(named("metadata.name%3D"), "");
        assert_eq!(named("metadata.name%3D%3D%3Da"), "");
        // A named request keeps its own name, whatever the selector says.
        let r = info(Method::GET, "/api/v1/namespaces/n/configmaps/a", "fieldSelector=metadata.name%3Db");
        assert_eq!(r.name, "a");
    }

    #[test]
    fn special_verbs_come_from_the_path() {
        assert_reads(&[
            ("GET /api/v1/watch/namespaces/n/pods", "watch,,n,pods,,"),
            ("GET /api/v1/proxy/namespaces/n/services/s/x", "proxy,,n,services,s,"),
        ]);
        assert_eq!(
            RequestInfo::parse(&Method::GET, "/api/v1/watch", &Query::default()),
            Err(RequestInfoError::NoResource)
        );
    }

    #[test]
    fn non_resource_paths() {
        for path in ["/", "/version", "/api", "/api/v1", "/apis", "/apis/g", "/apis/g/v1", "/openapi/v2"] {
            let r = info(Method::GET, path, "");
            assert!(!r.is_resource_request, "{path}");
            assert_eq!(r.verb, "get");
        }
    }

    #[test]
    fn segments_are_decoded_once_and_checked() {
        let r = info(Method::GET, "/api/v1/namespaces/d%65fault/pods", "");
        assert_eq!(r.namespace, "default");
        assert_eq!(r.canonical_path(), "/api/v1/namespaces/default/pods");
        for bad in [
            "/api/v1/namespaces/../secrets",
            "/api/v1/namespaces/%2e%2e/secrets",
            "/api/v1/namespaces/%2E/secrets",
            "/api//v1/pods",
            "/api/v1/configmaps/a%2Fb",
            "/api/v1/configmaps/%zz",
            "/api/v1/configmaps/%00",
            "/api/v1/configmaps/%ff",
            "api/v1/pods",
        ] {
            assert_eq!(
                RequestInfo::parse(&Method::GET, bad, &Query::default()),
                Err(RequestInfoError::BadSegment),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_post_to_a_named_object_has_no_route() {
        let named = info(Method::POST, "/api/v1/namespaces/n/configmaps/a", "");
        assert!(!named.method_allowed(&Method::POST));
        let collection = info(Method::POST, "/api/v1/namespaces/n/configmaps", "");
        assert!(collection.method_allowed(&Method::POST));
        let token = info(Method::POST, "/api/v1/namespaces/n/serviceaccounts/sa/token", "");
        assert!(token.method_allowed(&Method::POST));
        let ns = info(Method::POST, "/api/v1/namespaces", "");
        assert!(ns.method_allowed(&Method::POST));
    }

    proptest::proptest! {
        #![proptest_config(fundament_fuzzing::config(512))]

        #[test]
        fn never_panics_and_never_yields_traversal(
            path in proptest::prop_oneof![4 => "(/[a-z0-9%.:_-]{0,12}){0,9}/?", 1 => proptest::prelude::any::<String>()],
            query in proptest::prop_oneof![4 => "[a-z%0-9=&;]{0,24}", 1 => proptest::prelude::any::<String>()],
            m in 0usize..7,
        ) {
            let method = [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::HEAD, Method::OPTIONS][m].clone();
            if let Ok(r) = RequestInfo::parse(&method, &path, &Query::parse(&query)) {
                for s in [&r.group, &r.version, &r.namespace, &r.resource, &r.name, &r.subresource] {
                    proptest::prop_assert!(s != "." && s != ".." && !s.contains('/'));
                }
                // The canonical path reads back as the same request.
                let again = RequestInfo::parse(&method, &r.canonical_path(), &Query::parse(&query)).unwrap();
                proptest::prop_assert_eq!(again, r);
            }
        }
    }
}
