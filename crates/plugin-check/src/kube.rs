//! The mock Kubernetes API the pages call (standing in for kube-api-proxy): it answers from the
//! plugin's fixtures, refuses what `spec.allowedResources` does not admit (as the gateway does)
//! and records every call. The PluginToken decides the scenario: `fc-happy-1` (the token of
//! `fundament:init`) is answered 401 so the SDK must ask for a refresh; in the `fail` scenario
//! every call is answered 403, to see whether the page handles `SdkError`s.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use fundament_plugin_types::ResourceRequest;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};

use crate::plugin::{PluginFolder, group_version};

/// One call a page made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub method: String,
    /// Path and query.
    pub target: String,
    pub verb: String,
    /// `group/version/resource`, e.g. `/v1/secrets` for core.
    pub resource: String,
    /// Whether `spec.allowedResources` admits it.
    pub admitted: bool,
}

/// A request's resource, from its path (`/clusters/<id>/api…` or `/clusters/<id>/apis…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub namespace: Option<&'a str>,
    pub resource: &'a str,
    pub name: Option<&'a str>,
    pub subresource: &'a str,
}

/// Parses the path of a Kubernetes call; `None` for anything else.
pub fn parse_path(path: &str) -> Option<Target<'_>> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match segs.as_slice() {
        ["clusters", _, "api", rest @ ..] => ("", rest),
        ["clusters", _, "apis", group, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (group, rest) = rest;
    let (version, rest) = rest.split_first()?;
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(*ns), rest),
        _ => (None, rest),
    };
    let (resource, rest) = rest.split_first()?;
    Some(Target {
        group,
        version,
        namespace,
        resource,
        name: rest.first().copied(),
        subresource: rest.get(1).copied().unwrap_or_default(),
    })
}

/// The Kubernetes verb of a request.
pub fn verb(method: &Method, has_name: bool, query: &str) -> &'static str {
    let watch = query.split('&').any(|p| p == "watch=1" || p == "watch=true");
    match *method {
        Method::GET if watch => "watch",
        Method::GET if has_name => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if has_name => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// What the mock answers, and the call to record (none for a preflight).
pub fn handle(
    plugin: &PluginFolder,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> (Response, Option<Call>) {
    let origin = headers.get(header::ORIGIN).cloned();
    let (response, call) = answer(plugin, method, path, query, headers, body);
    (with_cors(response, origin), call)
}

fn answer(
    plugin: &PluginFolder,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> (Response, Option<Call>) {
    if method == Method::OPTIONS {
        return (StatusCode::NO_CONTENT.into_response(), None);
    }
    let Some(t) = parse_path(path) else {
        return (status(404, "NotFound", &format!("{path} is not a Kubernetes API path")), None);
    };
    let verb = verb(method, t.name.is_some(), query);
    let request = ResourceRequest {
        group: t.group,
        version: t.version,
        resource: t.resource,
        subresource: t.subresource,
        verb,
    };
    let admitted = plugin.admits(&request);
    let sub = if t.subresource.is_empty() { String::new() } else { format!("/{}", t.subresource) };
    let call = Call {
        method: method.to_string(),
        target: if query.is_empty() { path.to_string() } else { format!("{path}?{query}") },
        verb: verb.to_string(),
        resource: format!("{}/{}/{}{sub}", t.group, t.version, t.resource),
        admitted,
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let response = if !token.starts_with("fc-") || token == "fc-happy-1" {
        status(401, "Unauthorized", "Unauthorized")
    } else if !admitted {
        status(403, "Forbidden", &format!("{verb} {} is not in the plugin's allowedResources", call.resource))
    } else if token.starts_with("fc-fail-") {
        status(
            403,
            "Forbidden",
            &format!("the check refuses every call in this run ({verb} {})", call.resource),
        )
    } else {
        serve(plugin, method, &t, verb, body)
    };
    (response, Some(call))
}

/// An admitted call in the happy scenario, from the fixtures.
fn serve(plugin: &PluginFolder, method: &Method, t: &Target<'_>, verb: &str, body: &Bytes) -> Response {
    let found = || {
        let name = t.name.unwrap_or_default();
        plugin.fixtures_of(t.group, t.resource, t.namespace).find(|o| o["metadata"]["name"] == name).cloned()
    };
    let not_found =
        || status(404, "NotFound", &format!("{} \"{}\" not found", t.resource, t.name.unwrap_or_default()));
    match verb {
        "list" => {
            let items: Vec<Value> = plugin.fixtures_of(t.group, t.resource, t.namespace).cloned().collect();
            let api_version =
                if t.group.is_empty() { t.version.to_string() } else { format!("{}/{}", t.group, t.version) };
            let kind = items.first().and_then(|o| o["kind"].as_str()).map(|k| format!("{k}List"));
            json_response(
                200,
                &json!({"apiVersion": api_version, "kind": kind.unwrap_or_else(|| "List".into()),
                        "metadata": {"resourceVersion": "1"}, "items": items}),
            )
        }
        // A watch that sends nothing and stays open (the browser closes it with the page).
        "watch" => Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>()))
            .unwrap_or_default(),
        "get" => found().map(|o| json_response(200, &o)).unwrap_or_else(not_found),
        "create" | "update" => match serde_json::from_slice::<Value>(body) {
            Ok(mut object) => {
                if let (Some(ns), Some(meta)) = (t.namespace, object["metadata"].as_object_mut()) {
                    meta.insert("namespace".into(), json!(ns));
                }
                json_response(if verb == "create" { 201 } else { 200 }, &object)
            }
            Err(e) => status(400, "BadRequest", &format!("the body is not JSON: {e}")),
        },
        "patch" => match (found(), serde_json::from_slice::<Value>(body)) {
            (Some(mut object), Ok(patch)) => {
                merge_patch(&mut object, &patch);
                json_response(200, &object)
            }
            (None, _) => not_found(),
            (_, Err(e)) => status(400, "BadRequest", &format!("the body is not JSON: {e}")),
        },
        "delete" => found().map(|o| json_response(200, &o)).unwrap_or_else(not_found),
        "deletecollection" => {
            json_response(200, &json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}))
        }
        _ => status(405, "MethodNotAllowed", &format!("{method} is not supported")),
    }
}

/// RFC 7386 JSON merge patch.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Some(fields) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    if let Some(obj) = target.as_object_mut() {
        for (key, value) in fields {
            if value.is_null() {
                obj.remove(key);
            } else {
                merge_patch(obj.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// A Kubernetes `Status` answer.
fn status(code: u16, reason: &str, message: &str) -> Response {
    json_response(
        code,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": reason, "code": code}),
    )
}

fn json_response(code: u16, body: &Value) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// kube-api-proxy answers plugin origins with CORS (Authorization, no cookies).
fn with_cors(mut response: Response, origin: Option<HeaderValue>) -> Response {
    let h = response.headers_mut();
    if let Some(origin) = origin {
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE"));
    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type"));
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    h.insert(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// `group/version` of a fixture, for messages.
pub fn api_version_of(object: &Value) -> String {
    let (g, v) = group_version(object);
    if g.is_empty() { v.to_string() } else { format!("{g}/{v}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_like_the_gateway() {
        let t =
            parse_path("/clusters/c/apis/cert-manager.io/v1/namespaces/web/certificates/www/status").unwrap();
        assert_eq!(
            t,
            Target {
                group: "cert-manager.io",
                version: "v1",
                namespace: Some("web"),
                resource: "certificates",
                name: Some("www"),
                subresource: "status"
            }
        );
        let t = parse_path("/clusters/c/api/v1/namespaces/web").unwrap();
        assert_eq!((t.resource, t.name, t.namespace), ("namespaces", Some("web"), None));
        assert_eq!(parse_path("/clusters/c/api/v1/secrets").unwrap().group, "");
        assert!(parse_path("/healthz").is_none());
        assert_eq!(verb(&Method::GET, false, "watch=1&allowWatchBookmarks=true"), "watch");
        assert_eq!(verb(&Method::DELETE, false, ""), "deletecollection");
    }

    #[test]
    fn merge_patch_deletes_with_null() {
        let mut v = json!({"spec": {"a": 1, "b": 2}});
        merge_patch(&mut v, &json!({"spec": {"a": null, "c": 3}}));
        assert_eq!(v, json!({"spec": {"b": 2, "c": 3}}));
    }
}
