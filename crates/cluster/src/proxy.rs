//! The service proxy: `/api/v1/namespaces/<ns>/services/[<scheme>:]<name>[:<port>]/proxy/<path>`
//! reaches what runs behind a Service. There are no pods here: the process
//! that hosts the cluster registers a local address per Service port (the
//! plugin runtimes it runs in process), and the proxy forwards over HTTP.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use axum::response::Response;
use std::time::Duration;

use fundament_kube_core::headers::is_forwarded;
use http::{HeaderMap, Method, header};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::api::Api;
use crate::path::ResourcePath;
use crate::status::ApiError;

/// Local addresses behind Services: (namespace, service, port) → address.
type BackendMap = HashMap<(String, String, u16), SocketAddr>;

#[derive(Clone, Default)]
pub struct ServiceBackends {
    map: Arc<RwLock<BackendMap>>,
}

impl ServiceBackends {
    pub fn register(&self, namespace: &str, service: &str, port: u16, addr: SocketAddr) {
        let mut map = self.map.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.insert((namespace.into(), service.into(), port), addr);
    }

    pub fn unregister(&self, namespace: &str, service: &str, port: u16) {
        let mut map = self.map.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.remove(&(namespace.to_string(), service.to_string(), port));
    }

    pub fn lookup(&self, namespace: &str, service: &str, port: u16) -> Option<SocketAddr> {
        let map = self.map.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(&(namespace.to_string(), service.to_string(), port)).copied()
    }
}

/// `[<scheme>:]<name>[:<port>]` of a proxy path.
pub fn split_service(spec: &str) -> (&str, &str, &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    match parts.as_slice() {
        [name] => ("", name, ""),
        [scheme @ ("http" | "https"), name] => (scheme, name, ""),
        [name, port] => ("", name, port),
        [scheme, name, port] => (scheme, name, port),
        _ => ("", spec, ""),
    }
}

pub async fn forward(
    api: &Api,
    p: &ResourcePath,
    method: Method,
    headers: &HeaderMap,
    query: &fundament_kube_core::Query,
    body: bytes::Bytes,
) -> Result<Response, ApiError> {
    let (_, name, port_spec) = split_service(&p.name);
    let registry = api.cluster.registry();
    let rt = registry.get("", "v1", "services").ok_or_else(ApiError::no_route)?;
    let service = api.cluster.get(rt, &p.namespace, name)?;
    let ports = service["spec"]["ports"].as_array().cloned().unwrap_or_default();
    let port = ports
        .iter()
        .find(|sp| {
            port_spec.is_empty()
                || sp["name"].as_str() == Some(port_spec)
                || sp["port"].as_i64().map(|n| n.to_string()).as_deref() == Some(port_spec)
        })
        .and_then(|sp| sp["port"].as_u64())
        .and_then(|n| u16::try_from(n).ok())
        .ok_or_else(|| {
            ApiError::service_unavailable(format!("no endpoints available for service \"{name}\""))
        })?;
    let addr = api.backends.lookup(&p.namespace, name, port).ok_or_else(|| {
        ApiError::service_unavailable(format!("no endpoints available for service \"{name}\""))
    })?;
    if p.rest.split('/').any(|s| s == ".." || s.eq_ignore_ascii_case("%2e%2e")) {
        return Err(ApiError::bad_request("invalid proxy path"));
    }
    let mut uri = format!("http://{addr}{}", p.rest);
    // The backend's parameters are its own: every value passes, re-encoded as read.
    let query = query.canonical(true);
    if !query.is_empty() {
        uri.push('?');
        uri.push_str(&query);
    }
    let mut request = http::Request::builder().method(method).uri(&uri);
    for (k, v) in headers {
        if is_forwarded(k.as_str()) {
            request = request.header(k, v);
        }
    }
    let request = request
        .body(http_body_util::Full::new(body))
        .map_err(|_| ApiError::bad_request("invalid proxy request"))?;
    let client: Client<HttpConnector, http_body_util::Full<bytes::Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let answer = tokio::time::timeout(HEAD_TIMEOUT, client.request(request))
        .await
        .map_err(|_| {
            ApiError::service_unavailable(format!("error trying to reach service \"{name}\": timeout"))
        })?
        .map_err(|e| {
            tracing::warn!(service = name, error = %e, "service proxy failed");
            ApiError::service_unavailable(format!("error trying to reach service \"{name}\""))
        })?;
    let (parts, incoming) = answer.into_parts();
    let declared =
        parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_RESPONSE) {
        return Err(ApiError::bad_gateway(format!(
            "the service's answer is larger than the proxy passes ({MAX_RESPONSE} bytes)"
        )));
    }
    let mut response = Response::builder().status(parts.status);
    for (k, v) in &parts.headers {
        // The Service's cookies are not this API server's to set.
        if is_forwarded(k.as_str()) && k != header::SET_COOKIE {
            response = response.header(k, v);
        }
    }
    // Streamed as it comes, never buffered: at most MAX_RESPONSE bytes, at most IDLE between chunks.
    response
        .body(fundament_body_limits::capped(incoming, MAX_RESPONSE, IDLE))
        .map_err(|e| ApiError::internal(&e))
}

/// How long the service may take to send its answer's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the service's answer may pause between two chunks.
const IDLE: Duration = Duration::from_secs(30);
/// The largest answer passed on.
pub const MAX_RESPONSE: usize = 32 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scheme_name_and_port() {
        assert_eq!(split_service("http:plugin-x:8080"), ("http", "plugin-x", "8080"));
        assert_eq!(split_service("plugin-x:8080"), ("", "plugin-x", "8080"));
        assert_eq!(split_service("plugin-x"), ("", "plugin-x", ""));
        assert_eq!(split_service("https:plugin-x"), ("https", "plugin-x", ""));
    }
}
