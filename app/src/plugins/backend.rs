//! The console server's calls to the other services on behalf of the signed-in
//! user (server only): kube-api-proxy with the user's token (the user path),
//! organization-api for definitions, authn for PluginTokens.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::{Client, connect::HttpConnector};
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use super::model::DefinitionAnswer;
use super::token::{AuthFailure, Minted};

/// The services the console calls, as its `/readyz?verbose` names them.
const SERVICES: [&str; 3] = ["kube-api-proxy", "organization-api", "authn"];

/// Answers larger than this are refused (a cluster's installations, a CRD).
pub const MAX_ANSWER_BYTES: usize = 16 << 20;
/// No call may hold a page render longer than this.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How deep a too-deep answer is shown ([`BackendError::TooDeep`]).
pub const SHOWN_DEPTH: usize = 64;
/// How long an answer's body may take once its head came.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// A definition of a name and version changes only when republished: kept this long.
const DEFINITION_TTL: Duration = Duration::from_secs(30);

/// A failed call. Logged on the server; users get [`crate::error::AppError`].
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{service} answered HTTP {status}: {message}")]
    Status {
        service: &'static str,
        status: u16,
        code: String,
        message: String,
        /// `details.retryAfterSeconds` of a Kubernetes `Status` (a 429, a restart).
        retry_after: Option<u32>,
    },
    #[error("{service} could not be reached: {detail}")]
    Unreachable { service: &'static str, detail: String },
    #[error("{service} did not answer within {} s", CALL_TIMEOUT.as_secs())]
    TimedOut { service: &'static str },
    #[error("{service} answered something that is not JSON: {detail}")]
    Decode { service: &'static str, detail: String },
    /// An answer past [`MAX_ANSWER_BYTES`] (a list of a huge collection): the service is up,
    /// and asking again gets the same answer, so this is no passing failure.
    #[error("{service} answered more than {} MiB", MAX_ANSWER_BYTES >> 20)]
    TooLarge { service: &'static str },
    /// An answer nested deeper than serde_json reads (kube-apiserver stores deeper objects):
    /// `shown` is it with what lies deeper than [`SHOWN_DEPTH`] marked, for views that only
    /// show it; anything that would write it back must not use that.
    #[error("{service} answered JSON nested deeper than 128 levels")]
    TooDeep { service: &'static str, shown: Option<Box<Value>> },
    /// The user's calls (or everyone's) at once are at their bound ([`super::call_limits`]),
    /// and this one waited its turn too long: nothing was sent.
    #[error("too many calls to {service} at once; this one was not sent")]
    Busy { service: &'static str },
}

/// The longest message of a service passed on to users; the rest is in the log.
const MAX_PASSED_MESSAGE: usize = 300;

/// A failure that may pass by itself: what users are told, and when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passing {
    pub message: String,
    /// Seconds the service asked for, if it named any.
    pub retry_after: Option<u32>,
}

impl BackendError {
    /// What users are told when the failure is passing (the service is down, restarting,
    /// busy or slow) and trying again later may work: `None` for every other failure.
    /// kube-api-proxy's `Status` messages for these are written for clients (they name the
    /// cluster or the dependency that failed, as kubectl shows them); a connection error's own
    /// text is not, and stays in the log.
    pub fn passing(&self) -> Option<Passing> {
        let message = match self {
            BackendError::Status { service, status: status @ (429 | 500..=599), message, .. } => {
                let said: String =
                    message.lines().next().unwrap_or_default().chars().take(MAX_PASSED_MESSAGE).collect();
                match (*status, said.is_empty()) {
                    (429, true) => format!("{service} is busy (too many requests)."),
                    (_, true) => format!("{service} failed (HTTP {status})."),
                    (_, false) => format!("{service} answered: {said}"),
                }
            }
            BackendError::Unreachable { service, .. } => format!("{service} cannot be reached."),
            BackendError::TimedOut { service } => {
                format!("{service} did not answer within {} s.", CALL_TIMEOUT.as_secs())
            }
            BackendError::Busy { .. } => "Too many of your requests are under way at once.".to_owned(),
            BackendError::Status { .. }
            | BackendError::Decode { .. }
            | BackendError::TooLarge { .. }
            | BackendError::TooDeep { .. } => {
                return None;
            }
        };
        let retry_after = match self {
            BackendError::Status { retry_after, .. } => *retry_after,
            BackendError::Busy { .. } => Some(1),
            _ => None,
        };
        Some(Passing { message, retry_after })
    }
}

/// The services' base URLs and one connection pool.
pub struct Backend {
    kube_api_proxy: String,
    organization_api: String,
    authn: String,
    client: Client<HttpConnector, Full<Bytes>>,
    definitions: Mutex<HashMap<(String, String), (Instant, DefinitionAnswer)>>,
    /// CRDs and installation lists per user and cluster (see [`super::cache`]).
    cache: super::cache::KubeCache,
    /// Calls to kube-api-proxy at once, per user and in all (see [`super::call_limits`]).
    calls: super::call_limits::CallLimits,
    /// Reads whose a session token is, so that a call counts against its user, however many
    /// sessions they hold, and a token that is not a live session takes no turn at all.
    sessions: Arc<dyn crate::state::SessionAuthority>,
    /// What the console's own calls found of each service, for its `/readyz?verbose`.
    health: [(&'static str, fundament_health::DependencyHealth); 3],
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("kube_api_proxy", &self.kube_api_proxy)
            .field("organization_api", &self.organization_api)
            .field("authn", &self.authn)
            .finish_non_exhaustive()
    }
}

impl Backend {
    pub fn new(
        kube_api_proxy: &str,
        organization_api: &str,
        authn: &str,
        sessions: Arc<dyn crate::state::SessionAuthority>,
    ) -> Self {
        let base = |u: &str| u.trim_end_matches('/').to_owned();
        Self {
            kube_api_proxy: base(kube_api_proxy),
            organization_api: base(organization_api),
            authn: base(authn),
            client: Client::builder(TokioExecutor::new()).build_http(),
            definitions: Mutex::new(HashMap::new()),
            cache: super::cache::KubeCache::default(),
            calls: super::call_limits::CallLimits::default(),
            sessions,
            health: SERVICES.map(|name| (name, fundament_health::DependencyHealth::new())),
        }
    }

    /// Each service the console calls, with what its calls found (latest first).
    pub fn dependencies(&self) -> impl Iterator<Item = (&'static str, &fundament_health::DependencyHealth)> {
        self.health.iter().map(|(name, health)| (*name, health))
    }

    /// Records the outcome of a call to `service`. An answer is a working service, but for a
    /// 5xx or a 429 of authn or organization-api themselves; kube-api-proxy's error statuses
    /// are the clusters' and its own dependencies' (its `/readyz?verbose` lists those).
    fn record(&self, service: &str, outcome: Result<u16, &BackendError>) {
        let Some((_, health)) = self.health.iter().find(|(name, _)| *name == service) else { return };
        match outcome {
            Ok(status) if service != "kube-api-proxy" && (status == 429 || status >= 500) => {
                health.record_failure(format!("answered HTTP {status}"));
            }
            Ok(_) => health.record_ok(),
            Err(BackendError::Unreachable { .. }) => health.record_failure("cannot be reached"),
            Err(BackendError::TimedOut { .. }) => {
                health.record_failure(format!("did not answer within {} s", CALL_TIMEOUT.as_secs()))
            }
            Err(BackendError::Decode { .. }) => health.record_failure("answered something that is not JSON"),
            Err(
                BackendError::Status { .. } | BackendError::TooLarge { .. } | BackendError::TooDeep { .. },
            ) => health.record_ok(),
            // Nothing was sent: it says nothing of the service.
            Err(BackendError::Busy { .. }) => {}
        }
    }

    async fn call(
        &self,
        service: &'static str,
        url: String,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> Result<(u16, Value), BackendError> {
        let method = if body.is_some() { http::Method::POST } else { http::Method::GET };
        self.call_with(service, method, url, bearer, body).await
    }

    async fn call_with(
        &self,
        service: &'static str,
        method: http::Method,
        url: String,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> Result<(u16, Value), BackendError> {
        let answer = self.send(service, method, url, bearer, body).await;
        self.record(service, answer.as_ref().map(|(status, _)| *status));
        answer
    }

    async fn send(
        &self,
        service: &'static str,
        method: http::Method,
        url: String,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> Result<(u16, Value), BackendError> {
        let unreachable = |detail: String| BackendError::Unreachable { service, detail };
        let mut request = http::Request::builder().uri(url).header(http::header::ACCEPT, "application/json");
        if let Some(token) = bearer {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = match body {
            Some(body) => {
                let content_type = if method == http::Method::PATCH {
                    "application/merge-patch+json"
                } else {
                    "application/json"
                };
                request
                    .method(method)
                    .header(http::header::CONTENT_TYPE, content_type)
                    .body(Full::new(Bytes::from(body.to_string())))
            }
            None => request.method(method).body(Full::new(Bytes::new())),
        }
        .map_err(|e| unreachable(e.to_string()))?;
        let response = tokio::time::timeout(CALL_TIMEOUT, self.client.request(request))
            .await
            .map_err(|_| BackendError::TimedOut { service })?
            .map_err(|e| unreachable(e.to_string()))?;
        let status = response.status().as_u16();
        // The whole answer within its own time, too: a trickling one would hold its call's
        // turn and its buffer without end.
        let bytes = tokio::time::timeout(
            BODY_TIMEOUT,
            Limited::new(response.into_body(), MAX_ANSWER_BYTES).collect(),
        )
        .await
        .map_err(|_| BackendError::TimedOut { service })?
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                BackendError::TooLarge { service }
            } else {
                unreachable(e.to_string())
            }
        })?
        .to_bytes();
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            match serde_json::from_slice(&bytes) {
                Ok(value) => value,
                Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                    let shown = fundament_kube_core::json_depth::prune_deeper_than(&bytes, SHOWN_DEPTH)
                        .and_then(|pruned| serde_json::from_slice(&pruned).ok())
                        .map(Box::new);
                    return Err(BackendError::TooDeep { service, shown });
                }
                Err(e) => {
                    return Err(BackendError::Decode { service, detail: format!("HTTP {status}: {e}") });
                }
            }
        };
        Ok((status, value))
    }

    fn status_error(service: &'static str, status: u16, body: &Value) -> BackendError {
        let text = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        // Kubernetes Status: reason + message; Connect: code + message.
        let code = if body.get("reason").is_some() { text("reason") } else { text("code") };
        let retry_after = body
            .pointer("/details/retryAfterSeconds")
            .and_then(Value::as_u64)
            .and_then(|s| u32::try_from(s).ok());
        BackendError::Status { service, status, code, message: text("message"), retry_after }
    }

    /// GET `<kube-api-proxy>/clusters/<cluster>/<path>` as the user.
    pub async fn kube_get(
        &self,
        user_token: &str,
        cluster_id: &str,
        path: &str,
    ) -> Result<Value, BackendError> {
        match self.kube(http::Method::GET, user_token, cluster_id, path, None).await? {
            (200, value) => Ok(value),
            (status, body) => Err(Self::kube_error(status, &body)),
        }
    }

    /// [`Backend::kube_get`] through the cache of `user` (the verified user the token is of):
    /// a kept answer younger than `ttl`, and at least as new as `not_older_than` (a
    /// resourceVersion the browser saw on a watch), else a fresh one, which is kept.
    pub async fn kube_get_cached(
        &self,
        user: &str,
        user_token: &str,
        cluster_id: &str,
        path: &str,
        ttl: Duration,
        not_older_than: Option<&str>,
    ) -> Result<std::sync::Arc<Value>, BackendError> {
        if let Some(kept) = self.cache.get(user, cluster_id, path, not_older_than) {
            return Ok(kept);
        }
        let value = std::sync::Arc::new(self.kube_get(user_token, cluster_id, path).await?);
        self.cache.put(user, cluster_id, path, std::sync::Arc::clone(&value), ttl);
        Ok(value)
    }

    /// Any call to `<kube-api-proxy>/clusters/<cluster>/<path>` as the user:
    /// the status and the JSON answer (a Kubernetes `Status` on errors), so
    /// the caller decides what each status means.
    pub async fn kube(
        &self,
        method: http::Method,
        user_token: &str,
        cluster_id: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), BackendError> {
        let url = format!("{}/clusters/{cluster_id}{path}", self.kube_api_proxy);
        let _turn = self.turn(user_token).await?;
        self.call_with("kube-api-proxy", method, url, Some(user_token), body).await
    }

    /// A GET through kube-api-proxy as the user whose answer streams back as it comes (a watch,
    /// for the console's own route): the head within the call timeout, the body for as long as
    /// the gateway keeps it open (it caps watches at 30 minutes).
    pub async fn kube_stream(
        &self,
        user_token: &str,
        cluster_id: &str,
        path_and_query: &str,
        accept: Option<http::HeaderValue>,
    ) -> Result<http::Response<hyper::body::Incoming>, BackendError> {
        let unreachable = |detail: String| BackendError::Unreachable { service: "kube-api-proxy", detail };
        let request =
            http::Request::get(format!("{}/clusters/{cluster_id}{path_and_query}", self.kube_api_proxy))
                .header(
                    http::header::ACCEPT,
                    accept.unwrap_or(http::HeaderValue::from_static("application/json")),
                )
                .header(http::header::AUTHORIZATION, format!("Bearer {user_token}"))
                .body(Full::new(Bytes::new()))
                .map_err(|e| unreachable(e.to_string()))?;
        let answer = tokio::time::timeout(CALL_TIMEOUT, self.client.request(request))
            .await
            .map_err(|_| BackendError::TimedOut { service: "kube-api-proxy" })
            .and_then(|r| r.map_err(|e| unreachable(e.to_string())));
        self.record("kube-api-proxy", answer.as_ref().map(|r| r.status().as_u16()));
        answer
    }

    /// kube-api-proxy's record of plugin calls on a cluster (`GET /audit/v1/clusters/<id>/calls`),
    /// as the user: everyone's or their own, as the gateway decides. One of the user's turns,
    /// as every call to kube-api-proxy: a page of it is up to 1,000 entries read whole, and a
    /// live tail's long poll holds its turn while it waits.
    pub async fn audit(
        &self,
        user_token: &str,
        cluster_id: &str,
        filter: &fundament_plugin_types::audit::AuditFilter,
    ) -> Result<fundament_plugin_types::audit::AuditPage, BackendError> {
        const SERVICE: &str = "kube-api-proxy";
        let url =
            format!("{}/audit/v1/clusters/{cluster_id}/calls?{}", self.kube_api_proxy, filter.to_query());
        let _turn = self.turn(user_token).await?;
        match self.call_with(SERVICE, http::Method::GET, url, Some(user_token), None).await? {
            (200, value) => serde_json::from_value(value)
                .map_err(|e| BackendError::Decode { service: SERVICE, detail: e.to_string() }),
            (status, body) => Err(Self::status_error(SERVICE, status, &body)),
        }
    }

    /// A turn among the calls to kube-api-proxy of the user whose session `user_token` is
    /// ([`super::call_limits`]): counted by user, not by session, since signing in again gives
    /// the same user another session (eight sessions of one user would otherwise hold every
    /// turn of the console). A token that is not a live session is refused as kube-api-proxy
    /// would refuse it, and nothing is sent.
    async fn turn(&self, user_token: &str) -> Result<super::call_limits::CallTurn, BackendError> {
        const SERVICE: &str = "kube-api-proxy";
        let Some(user) = self.sessions.verify(user_token) else {
            return Err(BackendError::Status {
                service: SERVICE,
                status: 401,
                code: "Unauthorized".to_owned(),
                message: "the session is not valid".to_owned(),
                retry_after: None,
            });
        };
        self.calls.turn(&user.id).await.map_err(|_| BackendError::Busy { service: SERVICE })
    }

    /// The `Status` error of a kube-api-proxy answer, for the caller's log.
    pub fn kube_error(status: u16, body: &Value) -> BackendError {
        Self::status_error("kube-api-proxy", status, body)
    }

    /// A plugin definition from organization-api (cached per name and version). While
    /// organization-api cannot be reached, a copy fetched earlier whose hash is the one the
    /// installation pins (`pinned_hash`) is that very definition, however old: it is
    /// answered as [`DefinitionAnswer::Kept`], so running plugins stay usable.
    pub async fn definition(
        &self,
        organization: &str,
        plugin: &str,
        version: &str,
        pinned_hash: &str,
    ) -> DefinitionAnswer {
        let key = (plugin.to_owned(), version.to_owned());
        let kept = self.lock_definitions().get(&key).cloned();
        if let Some((at, answer)) = &kept
            && at.elapsed() < DEFINITION_TTL
        {
            return answer.clone();
        }
        match self.fetch_definition(organization, plugin, version).await {
            DefinitionAnswer::Unreachable => match kept {
                Some((_, DefinitionAnswer::Found { hash, definition })) if hash == pinned_hash => {
                    DefinitionAnswer::Kept { hash, definition }
                }
                _ => DefinitionAnswer::Unreachable,
            },
            answer => {
                self.lock_definitions().insert(key, (Instant::now(), answer.clone()));
                answer
            }
        }
    }

    fn lock_definitions(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(String, String), (Instant, DefinitionAnswer)>> {
        self.definitions.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn fetch_definition(&self, organization: &str, plugin: &str, version: &str) -> DefinitionAnswer {
        const SERVICE: &str = "organization-api";
        let url = format!("{}/organization.v1.PluginService/GetPluginDefinition", self.organization_api);
        let body = json!({"organization": organization, "pluginName": plugin, "pluginVersion": version});
        match self.call(SERVICE, url, None, Some(body)).await {
            Ok((200, mut value)) => {
                let hash = value.get("hash").and_then(Value::as_str).unwrap_or_default().to_owned();
                match value.get_mut("definition").map(Value::take) {
                    Some(definition) if definition.is_object() && !hash.is_empty() => {
                        match fundament_plugin_types::PluginDefinition::from_value(&definition) {
                            Ok(definition) => {
                                DefinitionAnswer::Found { hash, definition: Box::new(definition) }
                            }
                            // organization-api checked it against the schema these types follow, so
                            // this is a version skew between the two: say so rather than guess.
                            Err(error) => {
                                tracing::error!(plugin, version, %error, "organization-api answered a definition the console cannot read");
                                DefinitionAnswer::Missing(format!(
                                    "Its definition {plugin}@{version} cannot be read by the console: {error}."
                                ))
                            }
                        }
                    }
                    _ => {
                        tracing::error!(
                            plugin,
                            version,
                            "organization-api answered a definition without hash or body"
                        );
                        DefinitionAnswer::Unreachable
                    }
                }
            }
            Ok((404, _)) => DefinitionAnswer::Missing(format!(
                "organization-api has no definition of {plugin}@{version}."
            )),
            Ok((status, body)) => {
                tracing::error!(plugin, version, error = %Self::status_error(SERVICE, status, &body), "GetPluginDefinition failed");
                DefinitionAnswer::Unreachable
            }
            Err(error) => {
                tracing::error!(plugin, version, %error, "GetPluginDefinition failed");
                DefinitionAnswer::Unreachable
            }
        }
    }

    /// A single-use ticket that opens one frame of an installation's pages (`MintFrameTicket`).
    pub async fn frame_ticket(
        &self,
        user_token: &str,
        cluster_id: &str,
        installation_id: &str,
    ) -> Result<String, AuthFailure> {
        let value = self.for_installation("MintFrameTicket", user_token, cluster_id, installation_id).await?;
        match value.get("ticket").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            Some(ticket) => Ok(ticket.to_owned()),
            None => {
                tracing::error!("authn answered MintFrameTicket without a ticket");
                Err(AuthFailure::MintFailed)
            }
        }
    }

    /// A PluginToken for the user on one installation (`MintPluginToken`).
    pub async fn mint(
        &self,
        user_token: &str,
        cluster_id: &str,
        installation_id: &str,
    ) -> Result<Minted, AuthFailure> {
        let started = unix_now();
        let value = self.for_installation("MintPluginToken", user_token, cluster_id, installation_id).await?;
        let token = value.get("accessToken").and_then(Value::as_str).filter(|t| !t.is_empty());
        let expires_in = value.get("expiresIn").and_then(|v| match v {
            Value::String(s) => s.parse::<i64>().ok(),
            other => other.as_i64(),
        });
        match (token, expires_in) {
            (Some(token), Some(expires_in)) if expires_in > 0 => {
                Ok(Minted { token: token.to_owned(), expires_at: started + expires_in })
            }
            _ => {
                tracing::error!("authn answered MintPluginToken without a token or lifetime");
                Err(AuthFailure::MintFailed)
            }
        }
    }

    /// One of authn's `TokenService` procedures for an installation, as the user: the answer,
    /// or why there is none (401: the session ended; 403/404: no access; else a passing failure).
    async fn for_installation(
        &self,
        procedure: &'static str,
        user_token: &str,
        cluster_id: &str,
        installation_id: &str,
    ) -> Result<Value, AuthFailure> {
        const SERVICE: &str = "authn";
        let url = format!("{}/authn.v1.TokenService/{procedure}", self.authn);
        let body = json!({"clusterId": cluster_id, "installationId": installation_id});
        match self.call(SERVICE, url, Some(user_token), Some(body)).await {
            Ok((200, value)) => Ok(value),
            Ok((status, body)) => {
                let error = Self::status_error(SERVICE, status, &body);
                let failure = match status {
                    401 => AuthFailure::Unauthorized,
                    403 | 404 => AuthFailure::Revoked,
                    _ => AuthFailure::MintFailed,
                };
                if failure == AuthFailure::MintFailed {
                    tracing::warn!(%error, procedure, cluster_id, installation_id, "authn failed");
                } else {
                    tracing::info!(%error, procedure, cluster_id, installation_id, "authn refused");
                }
                Err(failure)
            }
            Err(error) => {
                tracing::warn!(%error, procedure, cluster_id, installation_id, "authn unreachable");
                Err(AuthFailure::MintFailed)
            }
        }
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::extract::State;
    use serde_json::json;

    use super::*;
    use crate::plugins::cache::CRD_TTL;

    fn users() -> Arc<dyn crate::state::SessionAuthority> {
        Arc::new(crate::test_sessions::TokensOfUsers)
    }

    const CLUSTER: &str = "019b4000-2000-7000-8000-000000000001";
    const PATH: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/demoitems.demo.fundament.io";

    /// A kube-api-proxy whose CRD names the caller (so an answer shows whose it is) and
    /// carries the current version; it counts the requests it gets.
    #[derive(Default)]
    struct Gateway {
        requests: AtomicUsize,
        version: AtomicUsize,
    }

    async fn serve() -> (Backend, Arc<Gateway>) {
        let gateway = Arc::new(Gateway::default());
        gateway.version.store(7, Ordering::SeqCst);
        let app = axum::Router::new()
            .fallback(|State(g): State<Arc<Gateway>>, headers: http::HeaderMap| async move {
                g.requests.fetch_add(1, Ordering::SeqCst);
                let caller = headers[http::header::AUTHORIZATION].to_str().unwrap_or_default().to_owned();
                let version = g.version.load(Ordering::SeqCst).to_string();
                axum::Json(json!({"metadata": {"resourceVersion": version}, "spec": {"caller": caller}}))
            })
            .with_state(Arc::clone(&gateway));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (Backend::new(&url, "http://127.0.0.1:9", "http://127.0.0.1:9", users()), gateway)
    }

    async fn crd(backend: &Backend, user: &str, not_older_than: Option<&str>) -> Value {
        let token = format!("token-of-{user}");
        (*backend.kube_get_cached(user, &token, CLUSTER, PATH, CRD_TTL, not_older_than).await.unwrap())
            .clone()
    }

    #[tokio::test]
    async fn a_crd_is_read_once_per_user_and_never_given_to_another_user() {
        let (backend, gateway) = serve().await;
        let alice = crd(&backend, "alice", None).await;
        assert_eq!(alice["spec"]["caller"], "Bearer token-of-alice");
        assert_eq!(crd(&backend, "alice", None).await, alice, "kept");
        assert_eq!(gateway.requests.load(Ordering::SeqCst), 1, "the second call asked nobody");
        let bob = crd(&backend, "bob", None).await;
        assert_eq!(bob["spec"]["caller"], "Bearer token-of-bob", "bob gets his own answer, not alice's");
        assert_eq!(gateway.requests.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_answer_older_than_a_version_seen_on_a_watch_is_read_again() {
        let (backend, gateway) = serve().await;
        assert_eq!(crd(&backend, "alice", None).await["metadata"]["resourceVersion"], "7");
        gateway.version.store(9, Ordering::SeqCst);
        // A caller saw version 9 on a watch: the kept copy at 7 is not used.
        assert_eq!(crd(&backend, "alice", Some("9")).await["metadata"]["resourceVersion"], "9");
        assert_eq!(gateway.requests.load(Ordering::SeqCst), 2);
        assert_eq!(
            crd(&backend, "alice", None).await["metadata"]["resourceVersion"],
            "9",
            "the new one is kept"
        );
        assert_eq!(crd(&backend, "alice", Some("8")).await["metadata"]["resourceVersion"], "9");
        assert_eq!(gateway.requests.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn errors_are_not_kept_and_answers_expire() {
        let (backend, gateway) = serve().await;
        for _ in 0..3 {
            backend
                .kube_get_cached("alice", "token-of-alice", CLUSTER, PATH, Duration::ZERO, None)
                .await
                .unwrap();
        }
        assert_eq!(gateway.requests.load(Ordering::SeqCst), 3, "a zero lifetime keeps nothing");
        let offline = Backend::new("http://127.0.0.1:9", "http://127.0.0.1:9", "http://127.0.0.1:9", users());
        assert!(
            offline.kube_get_cached("alice", "token-of-alice", CLUSTER, PATH, CRD_TTL, None).await.is_err()
        );
        assert!(offline.cache.is_empty(), "a failed call leaves nothing behind");
    }

    /// A list past the limit is "too large", not "cannot be reached": no retry every few
    /// seconds that downloads it again, and kube-api-proxy is not reported as failing.
    #[tokio::test]
    async fn an_answer_past_the_limit_is_too_large_not_unreachable() {
        let app = axum::Router::new().fallback(|| async { vec![b' '; MAX_ANSWER_BYTES + 1] });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let backend = Backend::new(&url, "http://127.0.0.1:9", "http://127.0.0.1:9", users());
        let error = backend
            .kube_get_cached("alice", "token-of-alice", CLUSTER, PATH, CRD_TTL, None)
            .await
            .unwrap_err();
        assert!(matches!(error, BackendError::TooLarge { service: "kube-api-proxy" }), "{error}");
        assert_eq!(error.passing(), None, "not retried as a passing failure");
        let (_, health) = backend.dependencies().find(|(name, _)| *name == "kube-api-proxy").unwrap();
        assert_eq!(health.observed(), fundament_health::Observed::Ok, "kube-api-proxy answered: not failing");
    }

    /// One user firing many calls at once, audit reads among them, from eight sessions, gets
    /// PER_USER of them to kube-api-proxy at a time; the rest wait their turn (and another user
    /// is not held up). A token that is no session takes no turn and is not sent.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_users_calls_at_once_are_bounded() {
        use std::sync::atomic::AtomicUsize;
        let (in_flight, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let app = axum::Router::new().fallback({
            let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
            move || {
                let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
                async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    // A list, and an audit page too.
                    axum::Json(json!({"kind": "List", "items": [], "everyone": false, "last_id": 0}))
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let backend = Arc::new(Backend::new(&url, "http://127.0.0.1:9", "http://127.0.0.1:9", users()));
        let filter = fundament_plugin_types::audit::AuditFilter::default();
        let calls: Vec<_> = (0..40)
            .map(|i| {
                let (backend, filter) = (Arc::clone(&backend), filter.clone());
                tokio::spawn(async move {
                    let token = format!("token-of-mallory#{}", i % 8);
                    if i % 2 == 0 {
                        backend.kube_get(&token, CLUSTER, PATH).await.map(drop)
                    } else {
                        backend.audit(&token, CLUSTER, &filter).await.map(drop)
                    }
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = std::time::Instant::now();
        backend.kube_get("token-of-alice", CLUSTER, PATH).await.expect("alice is not held up");
        assert!(started.elapsed() < Duration::from_millis(400), "{:?}", started.elapsed());
        for call in calls {
            call.await.unwrap().expect("every call gets its turn");
        }
        let most = most.load(Ordering::SeqCst);
        assert!(
            most <= super::super::call_limits::PER_USER + 1,
            "at most one user's bound, plus alice: {most}"
        );
        let refused = backend.kube_get("forged", CLUSTER, PATH).await.unwrap_err();
        assert!(matches!(refused, BackendError::Status { status: 401, .. }), "{refused}");
    }

    /// A list with one object nested deeper than serde_json reads is "too deep", with the
    /// list as it can be shown: every object's metadata, the deep part marked.
    #[tokio::test]
    async fn a_list_with_an_object_too_deep_is_shown_with_that_part_marked() {
        let deep = format!("{}1{}", r#"{"a":["#.repeat(150), "]}".repeat(150));
        let body = format!(
            r#"{{"kind":"List","items":[{{"metadata":{{"name":"deep"}},"spec":{deep}}},{{"metadata":{{"name":"fine"}}}}]}}"#
        );
        let app = axum::Router::new().fallback(move || {
            let body = body.clone();
            async move { ([(http::header::CONTENT_TYPE, "application/json")], body) }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let backend = Backend::new(&url, "http://127.0.0.1:9", "http://127.0.0.1:9", users());
        let error = backend.kube_get("token-of-alice", CLUSTER, PATH).await.unwrap_err();
        let BackendError::TooDeep { shown: Some(shown), .. } = error else { panic!("{error}") };
        let names: Vec<&str> = shown["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["deep", "fine"]);
        assert!(shown.to_string().contains(fundament_kube_core::json_depth::PRUNED));
        assert_eq!(
            BackendError::TooDeep { service: "kube-api-proxy", shown: None }.passing(),
            None,
            "not retried"
        );
    }
}
