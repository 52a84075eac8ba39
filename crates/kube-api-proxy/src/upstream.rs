//! The cluster behind the gateway: forwarding with a ServiceAccount token,
//! and the calls the gateway makes itself with the cluster's admin
//! credentials (TokenRequest, SubjectAccessReview, PluginInstallation reads).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use fundament_kube_core::{Status, headers};

use crate::cache::Cache;
use crate::kubereq::KubeRequest;

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("the cluster's CA certificate is not usable: {0}")]
    Ca(String),
    #[error("cannot reach the cluster: {0}")]
    Transport(String),
    #[error("the cluster answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("the cluster's answer could not be read: {0}")]
    Body(String),
}

/// How to reach one cluster's API server.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// `https://localhost:8090`
    pub url: String,
    /// PEM of the CA that signed its serving certificate.
    pub ca_pem: String,
    /// A token with the rights the gateway needs: TokenRequest, SubjectAccessReview,
    /// reading PluginInstallations. Never forwarded on a user's or plugin's behalf.
    pub admin_token: String,
}

/// A ServiceAccount token and how long it is good for.
#[derive(Debug, Clone)]
pub struct SaToken {
    pub token: String,
    pub ttl: Duration,
}

pub struct Upstream {
    base: String,
    client: Client<HttpsConnector<HttpConnector>, Body>,
    admin_token: HeaderValue,
    tokens: Cache<(String, String), SaToken>,
    reviews: Cache<(String, KubeRequest), bool>,
    installations: Cache<String, Option<Value>>,
    all_installations: Cache<(), Vec<Value>>,
}

/// How long a cluster may take to send an answer's head (a watch's head comes at once too).
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a fetched page may pause between two chunks.
const BODY_IDLE: Duration = Duration::from_secs(30);

/// Besides the headers no proxy passes on ([`headers::NOT_FORWARDED`]), the
/// browser page's own: where a call comes from is the gateway's judgement
/// (its CORS), never the cluster's.
const PAGE_HEADERS: &[&str] = &["origin", "referer"];

/// Whether a header crosses the gateway, either way.
fn crosses(name: &http::HeaderName) -> bool {
    headers::is_forwarded(name.as_str()) && !PAGE_HEADERS.contains(&name.as_str())
}

impl Upstream {
    pub fn new(config: &UpstreamConfig) -> Result<Self, UpstreamError> {
        let mut roots = rustls::RootCertStore::empty();
        let mut reader = std::io::Cursor::new(config.ca_pem.as_bytes());
        for cert in rustls_pemfile::certs(&mut reader) {
            let cert = cert.map_err(|e| UpstreamError::Ca(e.to_string()))?;
            roots.add(cert).map_err(|e| UpstreamError::Ca(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(UpstreamError::Ca("no certificate in the PEM".into()));
        }
        let tls =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|e| UpstreamError::Ca(e.to_string()))?
                .with_root_certificates(roots)
                .with_no_client_auth();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .enable_http2()
            .build();
        let client = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(64).build(connector);
        let admin_token = HeaderValue::from_str(&format!("Bearer {}", config.admin_token))
            .map_err(|_| UpstreamError::Ca("the admin token is not a valid header value".into()))?;
        Ok(Self {
            base: config.url.trim_end_matches('/').to_string(),
            client,
            admin_token,
            tokens: Cache::new(10_000),
            reviews: Cache::new(50_000),
            installations: Cache::new(10_000),
            all_installations: Cache::new(1),
        })
    }

    /// One call of the gateway's own: the answer read as `R`; `None` for a 404;
    /// the cluster's refusal (its Status message) for any other failure.
    async fn call<R: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Option<R>, UpstreamError> {
        let mut req = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(header::AUTHORIZATION, self.admin_token.clone())
            .header(header::ACCEPT, "application/json");
        let body = match body {
            Some(v) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        let req = req.body(body).map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let res = tokio::time::timeout(Duration::from_secs(15), self.client.request(req))
            .await
            .map_err(|_| UpstreamError::Transport("timeout".into()))?
            .map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let status = res.status();
        let bytes =
            res.into_body().collect().await.map_err(|e| UpstreamError::Body(e.to_string()))?.to_bytes();
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let message = serde_json::from_slice::<Status>(&bytes).map(|s| s.message).unwrap_or_default();
            return Err(UpstreamError::Status { status: status.as_u16(), message });
        }
        serde_json::from_slice(&bytes).map(Some).map_err(|e| UpstreamError::Body(e.to_string()))
    }

    /// A token of `namespace/name`, from the cache until 80 % of its lifetime.
    pub async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<SaToken>, UpstreamError> {
        let key = (namespace.to_string(), name.to_string());
        let fetched = self.tokens.get(key, || self.request_token(namespace, name)).await;
        match fetched {
            Ok(t) => Ok(Some(t)),
            Err(UpstreamError::Status { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A TokenRequest for `namespace/name`, and how long it stays fresh. A missing
    /// ServiceAccount is an error, so that it is not cached: it may appear any moment.
    async fn request_token(&self, namespace: &str, name: &str) -> Result<(SaToken, Duration), UpstreamError> {
        let path = format!("/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token");
        let request = TokenRequest {
            spec: Some(TokenRequestSpec { expiration_seconds: Some(900), ..Default::default() }),
            ..Default::default()
        };
        let missing = || UpstreamError::Status {
            status: 404,
            message: format!("serviceaccount {namespace}/{name} not found"),
        };
        let answer: TokenRequest =
            self.call(Method::POST, &path, Some(to_body(&request)?)).await?.ok_or_else(missing)?;
        let token = answer.status.and_then(|s| s.token).filter(|t| !t.is_empty());
        let token =
            token.ok_or_else(|| UpstreamError::Body("the TokenRequest answer has no token".into()))?;
        // The lifetime the cluster granted, which may be shorter than asked.
        let granted = answer.spec.and_then(|s| s.expiration_seconds).and_then(|s| u64::try_from(s).ok());
        let ttl = Duration::from_secs(granted.unwrap_or(600));
        Ok((SaToken { token, ttl }, ttl.mul_f64(0.8)))
    }

    /// Forgets a cached token the cluster no longer accepts.
    pub fn forget_token(&self, namespace: &str, name: &str) {
        self.tokens.forget(&(namespace.to_string(), name.to_string()));
    }

    /// SubjectAccessReview for `user` (with `groups`); allowed answers are
    /// cached 10 s and denials 2 s, as webhook authorizers cache decisions.
    pub async fn review(
        &self,
        user: &str,
        groups: &[String],
        attrs: &KubeRequest,
    ) -> Result<bool, UpstreamError> {
        let key = (format!("{user}\n{}", groups.join(",")), attrs.clone());
        self.reviews
            .get(key, || async {
                let target = &attrs.target;
                let review = SubjectAccessReview {
                    spec: SubjectAccessReviewSpec {
                        user: Some(user.to_string()),
                        groups: Some(groups.to_vec()),
                        resource_attributes: Some(ResourceAttributes {
                            namespace: Some(target.namespace.clone()),
                            verb: Some(attrs.verb.clone()),
                            group: Some(target.group.clone()),
                            version: Some(target.version.clone()),
                            resource: Some(target.resource.clone()),
                            subresource: Some(target.subresource.clone()),
                            name: Some(target.name.clone()),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                let path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
                let answer: Option<SubjectAccessReview> =
                    self.call(Method::POST, path, Some(to_body(&review)?)).await?;
                let allowed = answer.and_then(|r| r.status).is_some_and(|s| s.allowed);
                Ok((allowed, Duration::from_secs(if allowed { 10 } else { 2 })))
            })
            .await
    }

    /// The PluginInstallation `name` (cluster-scoped), cached for 2 s.
    pub async fn installation(&self, name: &str) -> Result<Option<Value>, UpstreamError> {
        self.installations
            .get(name.to_string(), || async {
                let path = format!("/apis/plugins.fundament.io/v1/plugininstallations/{name}");
                Ok((self.call(Method::GET, &path, None).await?, Duration::from_secs(2)))
            })
            .await
    }

    /// GETs `path` with the gateway's own credentials (service-proxy fetches of plugin pages):
    /// status, headers and the body, streamed as it comes with at most `limit` bytes (a body
    /// that declares more is refused before a byte is passed on).
    pub async fn get_stream(
        &self,
        path: &str,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Body), UpstreamError> {
        let req = http::Request::builder()
            .method(Method::GET)
            .uri(format!("{}{path}", self.base))
            .header(header::AUTHORIZATION, self.admin_token.clone())
            .body(Body::empty())
            .map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let res = tokio::time::timeout(HEAD_TIMEOUT, self.client.request(req))
            .await
            .map_err(|_| UpstreamError::Transport("timeout".into()))?
            .map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let (parts, body) = res.into_parts();
        let declared =
            parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
        if declared.is_some_and(|n| n > limit) {
            return Err(UpstreamError::Body(format!("the answer is larger than {limit} bytes")));
        }
        Ok((parts.status, parts.headers, fundament_body_limits::capped(body, limit, BODY_IDLE)))
    }

    /// Every PluginInstallation of the cluster, cached for 2 s (each mint and frame ticket
    /// looks its installation up here: a burst of them costs one list).
    pub async fn installations(&self) -> Result<Vec<Value>, UpstreamError> {
        self.all_installations
            .get((), || async {
                let path = "/apis/plugins.fundament.io/v1/plugininstallations";
                let list: Option<ObjectList> = self.call(Method::GET, path, None).await?;
                Ok((list.map(|l| l.items).unwrap_or_default(), Duration::from_secs(2)))
            })
            .await
    }

    /// Forwards a request with the gateway's own credentials (a plugin's
    /// runtime API through the service proxy); the caller's credentials never pass.
    pub async fn forward_as_gateway(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<Response, UpstreamError> {
        self.send(method, path_and_query, headers, body, self.admin_token.clone()).await
    }

    /// Forwards a request as `token`; the answer streams back untouched (watches too).
    pub async fn forward(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: Body,
        token: &str,
    ) -> Result<Response, UpstreamError> {
        let auth = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| UpstreamError::Transport("the token is not a valid header value".into()))?;
        self.send(method, path_and_query, headers, body, auth).await
    }

    async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: Body,
        auth: HeaderValue,
    ) -> Result<Response, UpstreamError> {
        let mut req = http::Request::builder().method(method).uri(format!("{}{path_and_query}", self.base));
        for (k, v) in headers {
            if crosses(k) {
                req = req.header(k, v);
            }
        }
        req = req.header(header::AUTHORIZATION, auth);
        let req = req.body(body).map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let res = tokio::time::timeout(HEAD_TIMEOUT, self.client.request(req))
            .await
            .map_err(|_| UpstreamError::Transport("no answer within 30 s".into()))?
            .map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let (parts, incoming) = res.into_parts();
        let mut out = Response::builder().status(parts.status);
        for (k, v) in &parts.headers {
            if crosses(k) {
                out = out.header(k, v);
            }
        }
        out.body(Body::new(incoming)).map_err(|e| UpstreamError::Transport(e.to_string()))
    }
}

/// A list answer; its items as they came (each reader types its kind).
#[derive(Deserialize)]
struct ObjectList {
    #[serde(default)]
    items: Vec<Value>,
}

/// The JSON body of a call.
fn to_body(object: &impl serde::Serialize) -> Result<Value, UpstreamError> {
    serde_json::to_value(object).map_err(|e| UpstreamError::Body(e.to_string()))
}
