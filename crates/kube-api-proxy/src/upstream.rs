//! The cluster behind the gateway: forwarding with a ServiceAccount token,
//! and the calls the gateway makes itself with the cluster's admin
//! credentials (TokenRequest, SubjectAccessReview, PluginInstallation reads).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec};
use kube::config::{AuthInfo, KubeConfigOptions, Kubeconfig};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use fundament_health::DependencyHealth;
use fundament_kube_core::{Status, headers};

use crate::cache::Cache;
use crate::installations::{InstallationStore, Lookup, StoredInstallation};
use crate::kubereq::KubeRequest;

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("the cluster's CA certificate is not usable: {0}")]
    Ca(String),
    #[error("the kubeconfig {path} is not usable: {detail}")]
    Kubeconfig { path: String, detail: String },
    #[error(
        "the kubeconfig of {server} turns off verification of the server's certificate (insecure-skip-tls-verify); allow it only for a throw-away cluster, with --allow-insecure-kubeconfig true or FUNDAMENT_ALLOW_INSECURE_KUBECONFIG=true"
    )]
    Insecure { server: String },
    #[error("cannot set up the connection to {server}: {detail}")]
    Client { server: String, detail: String },
    #[error("cannot reach the cluster: {0}")]
    Transport(String),
    /// A call did not get through to the cluster: refused, a TLS failure, … (`detail` holds
    /// the root cause).
    #[error("cannot reach the cluster at {server}: {detail}")]
    Unreachable { server: String, detail: String },
    /// The cluster took the connection but sent no answer in time.
    #[error("the cluster did not answer within {seconds} s")]
    Timeout { seconds: u64 },
    #[error("the cluster answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("the cluster's answer could not be read: {0}")]
    Body(String),
    #[error("the request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// The caller's request body paused longer than [`BODY_IDLE`] between two chunks: nothing
    /// was sent to the cluster.
    #[error("the request body went quiet for {} s", .after.as_secs_f64())]
    BodyIdle { after: Duration },
    /// The caller's request body was not whole within its deadline ([`REQUEST_BODY_TIME`]),
    /// however steadily it trickled: nothing was sent to the cluster.
    #[error("the request body was not received whole within {} s", .after.as_secs_f64())]
    BodyDeadline { after: Duration },
    /// The caller's request body would pass a bound on request bytes held at once
    /// ([`crate::in_flight`]): the 429 to answer; nothing was sent to the cluster.
    #[error("{}", .0.message)]
    BodyRefused(Box<Status>),
}

/// How to reach the embedded cluster's API server (mock mode).
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

impl UpstreamConfig {
    /// The same as a kube-rs configuration: one way to reach every cluster.
    pub fn kube_config(&self) -> Result<kube::Config, UpstreamError> {
        let url = self.url.parse().map_err(|e| UpstreamError::Client {
            server: self.url.clone(),
            detail: format!("not a URL: {e}"),
        })?;
        let mut roots = Vec::new();
        let mut reader = std::io::Cursor::new(self.ca_pem.as_bytes());
        for cert in rustls_pemfile::certs(&mut reader) {
            roots.push(cert.map_err(|e| UpstreamError::Ca(e.to_string()))?.to_vec());
        }
        if roots.is_empty() {
            return Err(UpstreamError::Ca("no certificate in the PEM".into()));
        }
        let mut config = kube::Config::new(url);
        config.root_cert = Some(roots);
        config.auth_info.token = Some(self.admin_token.clone().into());
        Ok(config)
    }
}

/// Whether a kubeconfig may turn off the verification of its server's certificate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServerVerification {
    /// `insecure-skip-tls-verify` is refused.
    #[default]
    Required,
    /// `insecure-skip-tls-verify` is honoured (and logged once, when the connection is set up).
    SkipAllowed,
}

/// Reads the kubeconfig at `path` (its current context) as kube-rs does: tokens, token files,
/// client certificates, exec credential plugins, CA data and files, tls-server-name, proxy-url.
pub async fn load_kubeconfig(path: &Path) -> Result<kube::Config, UpstreamError> {
    let failed = |detail: String| UpstreamError::Kubeconfig { path: path.display().to_string(), detail };
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| failed(e.to_string()))?;
    let config = kube_config_of(kubeconfig).await.map_err(failed)?;
    if let Some(file) = &config.auth_info.token_file {
        check_token_file(Path::new(file)).map_err(failed)?;
    }
    Ok(config)
}

/// kube-rs sends a token file's text as it is (client-go trims it): a token followed by a
/// newline would be refused as an invalid header at the first call, so it is refused here.
fn check_token_file(file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read the token file {}: {e}", file.display()))?;
    if text.trim() != text || text.is_empty() {
        return Err(format!(
            "the token file {} is empty or has white space around the token (a trailing newline?): write the token alone, e.g. with printf '%s'",
            file.display()
        ));
    }
    Ok(())
}

/// A kubeconfig already read (e.g. one a garden issued), as kube-rs configures it.
pub async fn kube_config_of(kubeconfig: Kubeconfig) -> Result<kube::Config, String> {
    kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| e.to_string())
}

/// The same server, trusted the same way, but with no identity at all: no client
/// certificate, token, exec plugin, basic auth or impersonation. Forwarded requests go out on
/// it carrying only the ServiceAccount token they are given, so the kubeconfig's own
/// (often admin) identity can never authenticate a user's or a plugin's call — an API server
/// authenticates a client certificate before it looks at a bearer token.
pub fn anonymous(config: &kube::Config) -> kube::Config {
    let mut anonymous = config.clone();
    anonymous.auth_info = AuthInfo::default();
    anonymous.headers.clear();
    anonymous
}

/// A ServiceAccount token and how long it is good for.
#[derive(Debug, Clone)]
pub struct SaToken {
    pub token: String,
    pub ttl: Duration,
}

/// The two connections to one API server.
struct Transports {
    /// The kubeconfig's identity: the gateway's own calls only.
    own: kube::Client,
    /// No identity ([`anonymous`]): every forwarded request.
    forwarding: kube::Client,
    /// The API server's URL, for messages ([`fundament_kube_core::cause::server`]).
    server: String,
}

impl Transports {
    fn new(mut config: kube::Config, verification: ServerVerification) -> Result<Self, UpstreamError> {
        let server = fundament_kube_core::cause::server(&config.cluster_url);
        if config.accept_invalid_certs {
            if verification == ServerVerification::Required {
                return Err(UpstreamError::Insecure { server });
            }
            tracing::warn!(%server, "the cluster's certificate is NOT verified (insecure-skip-tls-verify allowed by --allow-insecure-kubeconfig)");
        }
        // Retries are the caller's decision: a forwarded POST must never be sent twice.
        config.default_retry = false;
        let client = |config: kube::Config| {
            kube::Client::try_from(config).map_err(|e| UpstreamError::Client {
                server: server.clone(),
                detail: fundament_kube_core::cause::chain(&e),
            })
        };
        let forwarding = forwarding_client(anonymous(&config)).map_err(|e| UpstreamError::Client {
            server: server.clone(),
            detail: fundament_kube_core::cause::chain(&e),
        })?;
        let own = client(config)?;
        Ok(Self { own, forwarding, server })
    }
}

/// A forwarded call's read buffer on the connection to the cluster: fixed. Hyper's default grows
/// a connection's buffer with every read that fills it, up to 400 KiB, and keeps it; a watch holds
/// its connection for many minutes, so one burst (its first list) set its memory for its whole
/// life: 57 KiB per idle watch on 100 small objects (heaptrack on the watch benchmark), up to
/// 400 KiB on a large list. Reads of at most this size cost a few more system calls on large
/// answers instead (bench/gateway.sh: no change in requests/s). An answer's head must fit in it:
/// kube-apiserver's take well under 2 KiB, warnings included; a larger one fails the call as a
/// transport error, never a truncated answer.
const FORWARD_READ_BUFFER: usize = 16 * 1024;

/// The connection every forwarded call takes: kube-rs's client (the kubeconfig's TLS: CA, client
/// certificate, tls-server-name, connect timeout) over a hyper client whose read buffer is
/// [`FORWARD_READ_BUFFER`]. kube-rs builds its own hyper client without that switch, so with a
/// proxy-url (kube-rs's proxy tunnel) the connection is kube-rs's own, with hyper's growing buffer.
fn forwarding_client(config: kube::Config) -> Result<kube::Client, kube::Error> {
    use kube::client::ConfigExt;
    if config.proxy_url.is_some() {
        return kube::Client::try_from(config);
    }
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(config.connect_timeout);
    let connector = config.rustls_https_connector_with_connector(http)?;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http1_read_buf_exact_size(FORWARD_READ_BUFFER)
        .build(connector);
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(tower::BoxError::from)
        .service(client);
    Ok(kube::Client::new(service, config.default_namespace))
}

impl crate::installations::OwnClient for std::sync::RwLock<Arc<Transports>> {
    fn own_client(&self) -> kube::Client {
        self.read().unwrap_or_else(std::sync::PoisonError::into_inner).own.clone()
    }
}

pub struct Upstream {
    /// Replaced whole when the cluster's credentials are renewed ([`Upstream::reconnect`]);
    /// shared with the task that follows the cluster's PluginInstallations.
    transports: Arc<std::sync::RwLock<Arc<Transports>>>,
    /// How many calls went out on the gateway's own identity (round trips a request cost).
    own_calls: AtomicU64,
    tokens: Cache<(String, String), SaToken>,
    reviews: Cache<(String, KubeRequest), bool>,
    installations: Arc<InstallationStore>,
    /// What the calls to this cluster found, for `/readyz?verbose`.
    health: Arc<DependencyHealth>,
    /// How long a forwarded request's body may take to arrive whole ([`REQUEST_BODY_TIME`]).
    request_body_time: Duration,
}

/// How long a cluster may take to send an answer's head (a watch's head comes at once too).
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a fetched page, or a request body, may pause between two chunks.
const BODY_IDLE: Duration = Duration::from_secs(30);
/// How long a request body may take to arrive whole, however steadily it trickles (each chunk
/// within [`BODY_IDLE`]): without it a caller could hold a call, its slot and up to
/// [`MAX_REQUEST_BODY`] of memory for as long as it likes. kube-apiserver's own default
/// `--request-timeout` (1 min) bounds a whole call, its body included, so no body that takes
/// longer would be served there either; 3 MiB in 60 s is 50 KiB/s, slower than any working link.
pub const REQUEST_BODY_TIME: Duration = Duration::from_secs(60);
/// The largest request body passed on: kube-apiserver's own limit (3 MiB).
pub const MAX_REQUEST_BODY: usize = 3 * 1024 * 1024;

/// Besides the headers no proxy passes on ([`headers::NOT_FORWARDED`]), the
/// browser page's own: where a call comes from is the gateway's judgement
/// (its CORS), never the cluster's.
const PAGE_HEADERS: &[&str] = &["origin", "referer"];

/// Whether a request header may cross the gateway at all (an answer's headers are picked by
/// [`PASSED_BACK`] instead).
fn crosses(name: &http::HeaderName) -> bool {
    headers::is_forwarded(name.as_str()) && !PAGE_HEADERS.contains(&name.as_str())
}

/// The request headers an API call (not a proxied one) takes to the cluster: what the API
/// server reads to answer, nothing that could name an identity or a route to a server that
/// trusts more than kube-apiserver does (an authenticating proxy as the cluster's URL reads
/// `X-Remote-User`; kube-apiserver reads it only from a front proxy's certificate).
const API_REQUEST_HEADERS: &[&str] = &["accept", "accept-encoding", "content-type", "user-agent"];

/// Request headers no proxied call takes either: identities and routes as front proxies tell
/// them to whatever stands behind them.
const IDENTITY_PREFIXES: &[&str] = &["x-remote-", "x-forwarded-"];

/// Whether a request header of `path` goes to the cluster.
fn goes_to_the_cluster(name: &http::HeaderName, path: &str) -> bool {
    let name_str = name.as_str();
    if !crosses(name) || IDENTITY_PREFIXES.iter().any(|p| name_str.starts_with(p)) || name_str == "forwarded"
    {
        return false;
    }
    // A backend behind the API server's proxy reads its own headers; an API call needs these.
    proxied(path) || API_REQUEST_HEADERS.contains(&name_str)
}

impl UpstreamError {
    /// What the client is told (the cause is logged here, once): 503 when the cluster cannot
    /// be reached and 504 when it does not answer in time, both naming the cluster, both
    /// retried by clients; anything else is internal and not described.
    pub fn to_status(&self) -> Status {
        match self {
            UpstreamError::Transport(_) | UpstreamError::Unreachable { .. } => {
                tracing::warn!(error = %self, "the cluster could not be reached");
                Status::failure(503, "ServiceUnavailable", "the cluster cannot be reached; try again")
            }
            UpstreamError::Timeout { seconds } => {
                tracing::warn!(error = %self, "the cluster did not answer in time");
                Status::failure(
                    504,
                    "Timeout",
                    format!("the cluster did not answer within {seconds} s; try again"),
                )
            }
            UpstreamError::TooLarge { limit } => Status::too_large(*limit),
            UpstreamError::BodyRefused(status) => Status::clone(status),
            // kube-apiserver answers a call whose body is still arriving at its request timeout
            // with this Status (504, `Timeout`: its `WithTimeoutForNonLongRunningRequests`).
            UpstreamError::BodyIdle { .. } | UpstreamError::BodyDeadline { .. } => {
                tracing::info!(error = %self, "a request body did not arrive in time; nothing was forwarded");
                Status::failure(504, "Timeout", format!("Timeout: {self}; nothing was sent to the cluster"))
            }
            _ => Status::internal(self),
        }
    }
}

/// A call to `server` that did not get through, with its root cause.
fn unreachable(server: &str, e: kube::Error) -> UpstreamError {
    UpstreamError::Unreachable { server: server.to_owned(), detail: fundament_kube_core::cause::chain(&e) }
}

/// A request body, read whole (kube-rs sends bodies it holds) up to [`MAX_REQUEST_BODY`],
/// with at most `idle` between two chunks and all of it within `total`.
async fn buffered(body: Body, idle: Duration, total: Duration) -> Result<Bytes, UpstreamError> {
    tokio::time::timeout(total, read_whole(body, idle))
        .await
        .map_err(|_| UpstreamError::BodyDeadline { after: total })?
}

async fn read_whole(mut body: Body, idle: Duration) -> Result<Bytes, UpstreamError> {
    let mut whole = bytes::BytesMut::new();
    loop {
        let frame = tokio::time::timeout(idle, body.frame())
            .await
            .map_err(|_| UpstreamError::BodyIdle { after: idle })?;
        let Some(frame) = frame else { return Ok(whole.freeze()) };
        let frame = frame.map_err(|e| match crate::in_flight::BodyError::refusal_in(&e) {
            Some(refused) => UpstreamError::BodyRefused(Box::new(refused.clone())),
            None => UpstreamError::Transport(format!("the request body broke off: {e}")),
        })?;
        if let Ok(data) = frame.into_data() {
            if whole.len() + data.len() > MAX_REQUEST_BODY {
                return Err(UpstreamError::TooLarge { limit: MAX_REQUEST_BODY });
            }
            whole.extend_from_slice(&data);
        }
    }
}

impl Upstream {
    /// The embedded cluster, reached with its CA and admin token.
    pub fn new(config: &UpstreamConfig) -> Result<Self, UpstreamError> {
        Self::from_kube_config(config.kube_config()?, ServerVerification::Required)
    }

    /// A cluster as a kube-rs configuration describes it (a kubeconfig's current context).
    pub fn from_kube_config(
        config: kube::Config,
        verification: ServerVerification,
    ) -> Result<Self, UpstreamError> {
        Ok(Self {
            transports: Arc::new(std::sync::RwLock::new(Arc::new(Transports::new(config, verification)?))),
            own_calls: AtomicU64::new(0),
            tokens: Cache::new(10_000),
            reviews: Cache::new(50_000),
            installations: Arc::default(),
            health: Arc::default(),
            request_body_time: REQUEST_BODY_TIME,
        })
    }

    /// With another deadline for a forwarded request's body than [`REQUEST_BODY_TIME`] (tests).
    pub fn with_request_body_time(mut self, total: Duration) -> Self {
        self.request_body_time = total;
        self
    }

    /// A server on this machine over plain HTTP, reached without any credentials (a plugin's
    /// runtime in sandbox mode).
    pub fn loopback(addr: std::net::SocketAddr) -> Result<Self, UpstreamError> {
        if !addr.ip().is_loopback() {
            return Err(UpstreamError::Client {
                server: addr.to_string(),
                detail: "not a loopback address".into(),
            });
        }
        let url = format!("http://{addr}");
        let uri =
            url.parse().map_err(|e| UpstreamError::Client { server: url.clone(), detail: format!("{e}") })?;
        Self::from_kube_config(kube::Config::new(uri), ServerVerification::Required)
    }

    /// Goes on with new credentials (a renewed admin kubeconfig); what was cached stays.
    pub fn reconnect(
        &self,
        config: kube::Config,
        verification: ServerVerification,
    ) -> Result<(), UpstreamError> {
        let fresh = Arc::new(Transports::new(config, verification)?);
        *self.transports.write().unwrap_or_else(std::sync::PoisonError::into_inner) = fresh;
        Ok(())
    }

    fn transports(&self) -> Arc<Transports> {
        Arc::clone(&self.transports.read().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// A client on the gateway's own identity (the kubeconfig's), for set-up work such as
    /// sandbox mode's installer; never for a user's or a plugin's request.
    pub fn own_client(&self) -> kube::Client {
        self.transports().own.clone()
    }

    /// How many requests went out on the gateway's own identity so far.
    pub fn own_calls(&self) -> u64 {
        self.own_calls.load(Ordering::Relaxed)
    }

    /// What the calls to this cluster found so far (every call records its outcome).
    pub fn health(&self) -> &Arc<DependencyHealth> {
        &self.health
    }

    /// Records what a call to `path` found of the cluster. Not reached, or no answer in time,
    /// is a failure; so is a server error the API server answers itself (its storage or an
    /// aggregated API failing). A server error through the service proxy is the backend's
    /// (a plugin's runtime), and any other answer means the cluster serves.
    fn observe<T>(&self, path: &str, result: &Result<http::Response<T>, UpstreamError>) {
        match result {
            Ok(response) if response.status().is_server_error() && !proxied(path) => {
                self.health.record_failure(format!("answered HTTP {}", response.status().as_u16()));
            }
            Ok(_) => self.health.record_ok(),
            Err(UpstreamError::Timeout { seconds }) => {
                self.health.record_failure(format!("no answer within {seconds}s"));
            }
            Err(UpstreamError::Transport(_) | UpstreamError::Unreachable { .. }) => {
                self.health.record_failure("unreachable")
            }
            // Nothing the cluster did (a request that could not be built).
            Err(_) => {}
        }
    }

    /// Sends `req` as the gateway itself, waiting at most `wait` for the answer's head.
    async fn send_own(
        &self,
        req: http::Request<kube::client::Body>,
        wait: Duration,
    ) -> Result<http::Response<kube::client::Body>, UpstreamError> {
        self.own_calls.fetch_add(1, Ordering::Relaxed);
        let transports = self.transports();
        let path = req.uri().path().to_owned();
        let result = tokio::time::timeout(wait, transports.own.send(req))
            .await
            .map_err(|_| UpstreamError::Timeout { seconds: wait.as_secs() })
            .and_then(|sent| sent.map_err(|e| unreachable(&transports.server, e)));
        self.observe(&path, &result);
        result
    }

    /// One call of the gateway's own: the answer read as `R`; `None` for a 404;
    /// the cluster's refusal (its Status message) for any other failure.
    pub(crate) async fn call<R: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Option<R>, UpstreamError> {
        let mut req =
            http::Request::builder().method(method).uri(path).header(header::ACCEPT, "application/json");
        let body = match body {
            Some(v) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                kube::client::Body::from(v.to_string().into_bytes())
            }
            None => kube::client::Body::empty(),
        };
        let req = req.body(body).map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let res = self.send_own(req, Duration::from_secs(15)).await?;
        let status = res.status();
        let bytes = res.into_body().collect_bytes().await.map_err(|e| UpstreamError::Body(e.to_string()))?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let message = serde_json::from_slice::<Status>(&bytes).map(|s| s.message).unwrap_or_default();
            return Err(UpstreamError::Status { status: status.as_u16(), message });
        }
        serde_json::from_slice(&bytes).map(Some).map_err(|e| UpstreamError::Body(e.to_string()))
    }

    /// One call of the gateway's own, `GET /version`, made once at start (real mode's garden)
    /// so that a server that cannot be reached is known, and logged, before the first request
    /// needs it. Recorded in [`Upstream::health`] as every call is; never repeated by a probe.
    pub async fn check_reachable(&self) -> Result<(), UpstreamError> {
        self.call::<Value>(Method::GET, "/version", None).await.map(|_| ())
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

    /// The PluginInstallation `name` (cluster-scoped), as the cluster announced it last
    /// ([`InstallationStore`]), read once; asked of the cluster while the store does not follow
    /// it.
    pub async fn installation_shared(
        &self,
        name: &str,
    ) -> Result<Option<Arc<StoredInstallation>>, UpstreamError> {
        self.installations.follow(Arc::downgrade(&self.transports)).await;
        match self.installations.lookup(name) {
            Lookup::Known(found) => Ok(found),
            Lookup::Unknown => {
                let path = format!("{}/{name}", crate::installations::PATH);
                Ok(self
                    .call::<Value>(Method::GET, &path, None)
                    .await?
                    .map(|v| Arc::new(StoredInstallation::new(v))))
            }
        }
    }

    /// Resolves when a plugin page's stream must end: its session ended (signed out, or its
    /// token's expiry `exp`) or its installation `name` is no longer as `admitted` (deleted,
    /// replaced, its spec changed; [`InstallationStore::changed_from`]). Its next request is
    /// checked against what is there then. The gateway's plugin path and plugin-proxy's runtime
    /// route both end their streams by it.
    pub fn plugin_stream_ends(
        &self,
        revoked: &Arc<fundament_authn_client::RevokedSessions>,
        session: &str,
        exp: i64,
        name: &str,
        admitted: &Arc<StoredInstallation>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let session = Box::pin(revoked.ended(session, exp));
        let installation = Box::pin(self.installations.changed_from(name, admitted));
        Box::pin(async move {
            futures::future::select(session, installation).await;
        })
    }

    /// The store that follows the cluster's PluginInstallations (tests wait on its changes).
    pub fn installation_store(&self) -> &Arc<InstallationStore> {
        &self.installations
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
            .uri(path)
            .body(kube::client::Body::empty())
            .map_err(|e| UpstreamError::Transport(e.to_string()))?;
        let res = self.send_own(req, HEAD_TIMEOUT).await?;
        let (parts, body) = res.into_parts();
        let declared =
            parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
        if declared.is_some_and(|n| n > limit) {
            return Err(UpstreamError::Body(format!("the answer is larger than {limit} bytes")));
        }
        Ok((parts.status, parts.headers, fundament_body_limits::capped(body, limit, BODY_IDLE)))
    }

    /// Every PluginInstallation of the cluster, as the cluster announced them last (each mint
    /// and frame ticket looks its installation up here); listed while the store does not
    /// follow the cluster.
    pub async fn installations(&self) -> Result<Vec<Value>, UpstreamError> {
        self.installations.follow(Arc::downgrade(&self.transports)).await;
        if let Some(all) = self.installations.all() {
            return Ok(all);
        }
        let list: Option<ObjectList> = self.call(Method::GET, crate::installations::PATH, None).await?;
        Ok(list.map(|l| l.items).unwrap_or_default())
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
        let req = outgoing(method, path_and_query, headers, body, self.request_body_time).await?;
        let res = self.send_own(req, HEAD_TIMEOUT).await?;
        incoming(res, proxied(path_and_query))
    }

    /// Forwards a request as `token`, on the transport without an identity of its own;
    /// the answer streams back untouched (watches too), except that a server error of the API
    /// server itself loses its message ([`crate::server_errors`]).
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
        let mut req = outgoing(method, path_and_query, headers, body, self.request_body_time).await?;
        req.headers_mut().insert(header::AUTHORIZATION, auth);
        let transports = self.transports();
        let res = tokio::time::timeout(HEAD_TIMEOUT, transports.forwarding.send(req))
            .await
            .map_err(|_| UpstreamError::Timeout { seconds: HEAD_TIMEOUT.as_secs() })
            .and_then(|sent| sent.map_err(|e| unreachable(&transports.server, e)));
        self.observe(path_and_query, &res);
        let response = incoming(res?, proxied(path_and_query))?;
        Ok(crate::server_errors::withheld(response, proxied(path_and_query)).await)
    }
}

/// Whether `path` goes through the API server's proxy to a backend: the `proxy` subresource of a
/// service, a pod or a node (`/api/v1/namespaces/<ns>/services/<name>/proxy/…`,
/// `/api/v1/nodes/<name>/proxy`). The answer is then the backend's. Judged by position, not by
/// any segment named `proxy`: a namespace or an object may be called that.
fn proxied(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    matches!(
        segments.as_slice(),
        ["api", "v1", "namespaces", _, "services" | "pods", _, "proxy", ..]
            | ["api", "v1", "nodes", _, "proxy", ..]
    )
}

/// The request as it goes on: the headers that cross, the body read whole within `body_time`.
async fn outgoing(
    method: Method,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Body,
    body_time: Duration,
) -> Result<http::Request<kube::client::Body>, UpstreamError> {
    let mut req = http::Request::builder().method(method).uri(path_and_query);
    for (k, v) in headers {
        if goes_to_the_cluster(k, path_and_query) {
            req = req.header(k, v);
        }
    }
    let body = kube::client::Body::from(buffered(body, BODY_IDLE, body_time).await?);
    req.body(body).map_err(|e| UpstreamError::Transport(e.to_string()))
}

/// The headers of the cluster's answer that go back to the caller: what describes the body
/// (its type, length, encoding, language, disposition and range, validators and caching), and
/// what kube-apiserver tells a client about the call: `Warning` (deprecations, admission
/// warnings), `Audit-Id`, `Retry-After`, `Date` and [`PASSED_BACK_PREFIXES`]. The gateway adds
/// its own CORS and security headers afterwards ([`crate::cors`]). Everything else stays behind,
/// because through a `proxy` subresource the answer, headers and all, is a backend's, a plugin's
/// own runtime included, and the gateway's origin is same-site with the console in production:
/// `Clear-Site-Data: "cookies"` would sign the user out of the console, `NEL`, `Report-To` and
/// `Reporting-Endpoints` would send the browser's reports about the gateway to the backend's
/// choice, `Alt-Svc` and `Strict-Transport-Security` would change how the browser reaches the
/// gateway for all its later calls, and `Refresh`, `Link`, `Location`, `Set-Cookie`,
/// `Content-Security-Policy` and `Access-Control-*` would redirect, preload, plant or widen.
/// plugin-proxy relays its runtime's answers through this list, then through its own narrower one.
const PASSED_BACK: &[&str] = &[
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "content-disposition",
    "content-range",
    "etag",
    "last-modified",
    "cache-control",
    "expires",
    "vary",
    "warning",
    "audit-id",
    "retry-after",
    "date",
];

/// Header names kube-apiserver's answers carry by family: API Priority and Fairness tells the
/// flow schema and priority level that handled the call (`X-Kubernetes-PF-FlowSchema-UID`,
/// `X-Kubernetes-PF-PriorityLevel-UID`), which tell a client why a call waited or was refused.
const PASSED_BACK_PREFIXES: &[&str] = &["x-kubernetes-pf-"];

/// Whether a header of the cluster's answer goes back to the caller ([`PASSED_BACK`]).
fn passed_back(name: &http::HeaderName) -> bool {
    let name = name.as_str();
    PASSED_BACK.contains(&name) || PASSED_BACK_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

/// The cluster's answer as it goes back: the headers of [`PASSED_BACK`], the body streamed. A
/// backend's answer through a `proxy` subresource (`proxied`) is the caller's own, read with its
/// bearer token: it is never stored, whatever caching the backend asks for (kube-apiserver marks
/// its own answers `private`).
fn incoming(res: http::Response<kube::client::Body>, proxied: bool) -> Result<Response, UpstreamError> {
    let (parts, body) = res.into_parts();
    let mut out = Response::builder().status(parts.status);
    for (k, v) in &parts.headers {
        let caching = k == header::CACHE_CONTROL || k == header::EXPIRES;
        let kept = passed_back(k) && !(proxied && caching);
        if kept {
            out = out.header(k, v);
        }
    }
    if proxied {
        out = out.header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    out.body(Body::new(body)).map_err(|e| UpstreamError::Transport(e.to_string()))
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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[test]
    fn only_the_proxy_subresource_is_a_backends_answer() {
        for path in [
            "/api/v1/namespaces/p/services/http:web:8080/proxy/console/a.html?x=1",
            "/api/v1/namespaces/p/pods/web-0/proxy",
            "/api/v1/nodes/n1/proxy/metrics",
        ] {
            assert!(proxied(path), "{path}");
        }
        for path in [
            "/api/v1/namespaces/proxy/configmaps/a",
            "/api/v1/namespaces/x/configmaps/proxy",
            "/apis/example.com/v1/namespaces/x/things/a/proxy",
            "/api/v1/namespaces/x/services/proxy",
            "/api/v1/namespaces/x/services?labelSelector=proxy",
        ] {
            assert!(!proxied(path), "{path}");
        }
    }

    /// A one-connection server on loopback that answers the first request with `head` and the body
    /// `{}`.
    async fn answering(head_extra: String) -> kube::Config {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n{head_extra}\r\n{{}}"
            );
            let _ = socket.write_all(answer.as_bytes()).await;
            let _ = socket.shutdown().await;
        });
        kube::Config::new(format!("http://{addr}").parse().unwrap())
    }

    async fn get(config: kube::Config) -> Result<http::Response<kube::client::Body>, kube::Error> {
        let client = forwarding_client(config).unwrap();
        let request = http::Request::get("/api").body(kube::client::Body::empty()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), client.send(request))
            .await
            .expect("an answer, not a hang")
    }

    /// The fixed read buffer bounds an answer's head too: a head that does not fit fails the call
    /// (the gateway's 503) instead of being cut, and an ordinary one with a long warning passes.
    #[tokio::test]
    async fn the_forwarding_buffer_takes_ordinary_heads_and_refuses_oversized_ones() {
        let warning = format!("warning: 299 - \"{}\"\r\n", "w".repeat(2048));
        let answer = get(answering(warning).await).await.expect("an ordinary head");
        assert_eq!(answer.status(), 200);
        let huge = format!("x-padding: {}\r\n", "p".repeat(FORWARD_READ_BUFFER + 1));
        assert!(get(answering(huge).await).await.is_err(), "a head larger than the buffer is an error");
    }

    #[test]
    fn an_answer_keeps_only_the_headers_an_api_answer_needs() {
        let mut head = HeaderMap::new();
        for (name, value) in [
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
            ("warning", "299 - \"first\""),
            ("warning", "299 - \"second\""),
            ("audit-id", "a-1"),
            ("x-kubernetes-pf-flowschema-uid", "f-1"),
            ("x-kubernetes-pf-prioritylevel-uid", "p-1"),
            ("cache-control", "public, max-age=9999"),
            ("clear-site-data", "\"cookies\""),
            ("nel", "{\"report_to\":\"r\",\"max_age\":86400}"),
            ("report-to", "{\"group\":\"r\",\"endpoints\":[{\"url\":\"https://evil.example\"}]}"),
            ("reporting-endpoints", "r=\"https://evil.example\""),
            ("alt-svc", "h3=\":443\""),
            ("strict-transport-security", "max-age=0"),
            ("refresh", "0; url=https://evil.example"),
            ("link", "<https://evil.example/x.css>; rel=preload"),
            ("location", "https://evil.example"),
            ("set-cookie", "a=b"),
            ("access-control-allow-origin", "*"),
            ("content-security-policy", "default-src *"),
            ("service-worker-allowed", "/"),
            ("x-custom", "1"),
        ] {
            head.append(http::HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        let answer = || {
            let mut answer = http::Response::new(kube::client::Body::empty());
            *answer.headers_mut() = head.clone();
            answer
        };
        let names = |response: &Response| {
            let mut names: Vec<String> = response.headers().keys().map(|k| k.to_string()).collect();
            names.sort_unstable();
            names
        };
        let api = incoming(answer(), false).unwrap();
        assert_eq!(
            names(&api),
            [
                "audit-id",
                "cache-control",
                "content-encoding",
                "content-type",
                "warning",
                "x-kubernetes-pf-flowschema-uid",
                "x-kubernetes-pf-prioritylevel-uid"
            ]
        );
        assert_eq!(api.headers().get_all("warning").iter().count(), 2);
        // A backend's answer is never stored, whatever it asks for.
        let backend = incoming(answer(), true).unwrap();
        assert_eq!(names(&backend), names(&api));
        assert_eq!(backend.headers()[header::CACHE_CONTROL], "no-store");
    }

    /// A body that trickles, each chunk well within the idle time, is refused at its deadline;
    /// one that pauses is refused at the idle time; either way as kube-apiserver's request
    /// timeout answers, 504 `Timeout`, naming the body.
    #[tokio::test]
    async fn a_request_body_must_arrive_whole_in_time() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
        let trickle = tokio::spawn(async move {
            while tx.send(Ok(Bytes::from_static(b"a"))).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let body = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        }));
        let started = std::time::Instant::now();
        let err = buffered(body, Duration::from_secs(5), Duration::from_millis(200)).await.unwrap_err();
        assert!(matches!(err, UpstreamError::BodyDeadline { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        trickle.abort();
        let status = err.to_status();
        assert_eq!((status.code, status.reason.as_str()), (504, "Timeout"));
        assert_eq!(
            status.message,
            "Timeout: the request body was not received whole within 0.2 s; nothing was sent to the cluster"
        );

        let (_tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
        let quiet = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        }));
        let err = buffered(quiet, Duration::from_millis(50), Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(err, UpstreamError::BodyIdle { .. }), "{err}");
        assert_eq!(err.to_status().code, 504);

        let whole = buffered(Body::from("{}"), BODY_IDLE, REQUEST_BODY_TIME).await.unwrap();
        assert_eq!(&whole[..], b"{}");
    }

    #[test]
    fn an_api_call_takes_only_what_the_api_server_reads_and_no_call_takes_an_identity() {
        let goes =
            |name: &'static str, path: &str| goes_to_the_cluster(&http::HeaderName::from_static(name), path);
        let api = "/api/v1/namespaces/n/configmaps";
        for name in ["accept", "accept-encoding", "content-type", "user-agent"] {
            assert!(goes(name, api), "{name}");
        }
        for name in [
            "x-remote-user",
            "x-remote-group",
            "x-forwarded-for",
            "forwarded",
            "x-http-method-override",
            "impersonate-user",
            "authorization",
            "origin",
        ] {
            assert!(!goes(name, api), "{name}");
        }
        let proxied = "/api/v1/namespaces/n/services/s:80/proxy/x";
        assert!(goes("x-custom", proxied), "a backend's own headers");
        for name in ["x-remote-user", "x-forwarded-host", "forwarded", "impersonate-group", "cookie"] {
            assert!(!goes(name, proxied), "{name}");
        }
    }
}
