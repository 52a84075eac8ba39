//! The gateway: every request to a cluster comes through here, takes the user
//! path or the PluginToken path, and reaches the cluster as a ServiceAccount
//! whose rights the cluster itself enforces.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use fundament_authn_client::{CredentialError, Credentials};
use fundament_fga::CanView;
use fundament_health::DependencyHealth;
use fundament_kube_core::{Query, RequestInfo, ResourceTarget};
use fundament_tokens::{PluginClaims, TokenKind};
use http::{HeaderMap, Method, StatusCode, header};

use crate::audit::{AuditLine, AuditSink};
use crate::clusters::Clusters;
use crate::cors::{self, Caller, Origins};
use crate::in_flight::{CallLimits, CallSlot};
use crate::kubereq::KubeRequest;
use crate::limits::{MAX_WATCH_SECONDS, WatchLimits, WatchPermit};
use crate::upstream::Upstream;
use fundament_kube_core::Status;
use fundament_kube_core::status::group_resource;

/// The namespace of the per-user ServiceAccounts `fundament-<user-id>`.
pub const USER_SA_NAMESPACE: &str = "fundament-system";

/// One entry of a definition's `allowedResources`: the shared type, so the
/// gateway judges entries exactly as organization-api reads them.
pub use fundament_plugin_types::AllowedResource;

/// A published definition as the gateway needs it.
#[derive(Debug, Clone)]
pub struct PublishedDefinition {
    pub hash: String,
    pub allowed: Vec<AllowedResource>,
}

/// Where published definitions come from (organization-api's catalog).
pub trait DefinitionSource: Send + Sync + 'static {
    fn definition(&self, plugin_name: &str, plugin_version: &str) -> Option<PublishedDefinition>;
}

pub struct Gateway {
    pub origins: Origins,
    /// authn's public keys and revoked sessions.
    pub credentials: Credentials,
    pub fga: Arc<dyn CanView>,
    /// What the `can_view` checks found of OpenFGA, for `/readyz?verbose`; every check records
    /// its outcome here ([`can_view`]).
    pub fga_health: DependencyHealth,
    /// The clusters, by canonical (lower-case) id.
    pub clusters: Clusters,
    pub definitions: Arc<dyn DefinitionSource>,
    pub audit: Arc<dyn AuditSink>,
    pub watches: Arc<WatchLimits>,
    /// Ordinary calls in flight, per replica ([`crate::in_flight`]); open streams are counted by
    /// `watches` instead.
    pub calls: CallLimits,
}

const ROOTS: &[&str] = &["api", "apis", "openapi", "version"];

pub(crate) fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// Runs in the span of its request, which the service's HTTP layer opens
/// ([`fundament_telemetry::http_layer`]); none of its own, so a line carries one span.
pub async fn handle(State(gw): State<Arc<Gateway>>, req: Request) -> Response {
    let caller = gw.origins.classify(req.headers());
    if req.method() == Method::OPTIONS && req.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
        let Some(cors) = gw.origins.preflight(&caller) else {
            let mut refused = Status::forbidden_because_of(ORIGIN_REFUSED).into_response();
            cors::harden(refused.headers_mut());
            return refused;
        };
        let mut response = StatusCode::NO_CONTENT.into_response();
        cors::harden(response.headers_mut());
        response.headers_mut().extend(cors);
        return response;
    }
    let mut response = match route(&gw, req, &caller).await {
        Ok(r) => r,
        Err(refusal) => refusal.into_response(),
    };
    // The cluster's own cookies and CORS go; then only the gateway's CORS is added.
    cors::harden(response.headers_mut());
    gw.origins.apply(&caller, response.headers_mut());
    response
}

const ORIGIN_REFUSED: &str = "origin not allowed: only plugin pages, each from its own installation's origin, may call kube-api-proxy from a browser";

pub(crate) fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_string()).filter(|t| !t.is_empty())
}

/// The request as the gateway judges it, and as it is forwarded: nothing else reaches the cluster.
struct Judged {
    cluster_id: String,
    info: RequestInfo,
    /// The canonical path and query sent on.
    target: String,
    /// A server-side apply (a PATCH of an `application/apply-patch+…` body): it creates the
    /// object when there is none. The API server then checks `create` too, of the caller it sees
    /// (on the plugin path, the plugin's ServiceAccount): the gateway checks it of the plugin's
    /// allowedResources and of the user as well, or a definition or user allowed to patch but
    /// not to create could create through it.
    applies: bool,
    /// An answer that may last as long as the caller keeps it open: a watch, a followed log
    /// (`pods/<name>/log?follow=true`), or a proxied call (`…/services|pods|nodes/<name>/proxy/…`,
    /// whose backend may stream without end). Each holds one of the caller's stream slots
    /// ([`crate::limits`]) while it is open. A proxied call that answers at once gives its slot
    /// back at once; counting every one costs a lease per call, and proxied calls are rare
    /// next to lists and gets, which hold none.
    streams: bool,
}

/// Whether a PATCH is a server-side apply (`application/apply-patch+yaml`, `+json`, `+cbor`).
/// kube-apiserver takes the `Content-Type` up to its first `;` as the patch type, whatever bytes
/// follow, so the gateway must read every such header exactly as it does, or a type it cannot
/// read (a byte past ASCII in a parameter) would pass as "not an apply" and create with only
/// `patch` checked. So a PATCH carries one `Content-Type` of visible ASCII naming a patch type
/// the API server knows, or it is refused as the API server refuses an unknown one: 415.
fn patch_applies(headers: &HeaderMap) -> Result<bool, Status> {
    let unsupported = |why: &str| {
        Status::failure(
            415,
            "UnsupportedMediaType",
            format!(
                "{why}: a PATCH body is application/json-patch+json, application/merge-patch+json, \
                 application/strategic-merge-patch+json or application/apply-patch+yaml"
            ),
        )
    };
    let mut values = headers.get_all(http::header::CONTENT_TYPE).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(unsupported("a PATCH needs exactly one Content-Type header"));
    };
    let Some(text) =
        value.to_str().ok().filter(|t| t.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)))
    else {
        return Err(unsupported("the Content-Type header is not plain ASCII"));
    };
    let media = text.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match media.as_str() {
        "application/json-patch+json"
        | "application/merge-patch+json"
        | "application/strategic-merge-patch+json" => Ok(false),
        m if m.starts_with("application/apply-patch") => Ok(true),
        _ => Err(unsupported("not a patch type")),
    }
}

/// `/clusters/<uuid>/<rest>` → (canonical id, raw `/<rest>`).
fn split_path(path: &str) -> Result<(String, &str), Status> {
    let rest = path.strip_prefix("/clusters/").ok_or_else(|| {
        Status::not_found_because(
            "not found: kube-api-proxy serves /clusters/<cluster-id>/{api,apis,openapi,version}/…",
        )
    })?;
    let (id, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let id = uuid::Uuid::parse_str(id)
        .map_err(|_| Status::bad_request(format!("invalid cluster ID {id:?}: not a UUID")))?
        .hyphenated()
        .to_string();
    Ok((id, tail))
}

/// Reads the request once, as the API server will: decoded segments and query keys, the first
/// of repeated parameters; refuses what no API server serves.
fn judge(req: &Request) -> Result<Judged, Status> {
    let (cluster_id, tail) = split_path(req.uri().path())?;
    let mut query = Query::parse(req.uri().query().unwrap_or_default());
    let info = RequestInfo::parse(req.method(), if tail.is_empty() { "/" } else { tail }, &query)
        .map_err(|e| Status::bad_request(e.to_string()))?;
    let first = info.segments.first().map(String::as_str).unwrap_or_default();
    if !ROOTS.contains(&first) {
        return Err(Status::not_found_because(format!(
            "not found: /clusters/{cluster_id}/{first} is not a Kubernetes API path"
        )));
    }
    if !info.method_allowed(req.method()) {
        return Err(Status::failure(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ));
    }
    // A proxied call reaches a backend in the cluster: its parameters are its own (all of them
    // pass, re-encoded), and its answer may stream without end.
    let proxied = info.subresource == "proxy" || info.verb == "proxy";
    let streams = info.verb == "watch" || (info.subresource == "log" && query.flag("follow")) || proxied;
    if info.verb == "watch" {
        let asked = query.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok());
        // 0 is no bound to kube-apiserver (it picks 30 to 60 minutes), so it is capped too.
        if asked.is_none_or(|t| t == 0 || t > MAX_WATCH_SECONDS) {
            query.set("timeoutSeconds", &MAX_WATCH_SECONDS.to_string());
        }
    }
    let query = query.canonical(proxied);
    let path = info.canonical_path();
    let target = if query.is_empty() { path } else { format!("{path}?{query}") };
    let applies = req.method() == Method::PATCH && patch_applies(req.headers())?;
    Ok(Judged { cluster_id, info, target, applies, streams })
}

/// `GET /clusters/<id>` (nothing after the id): the cluster's id, if that is the request.
fn info_request(req: &Request) -> Option<String> {
    let (id, tail) = split_path(req.uri().path()).ok()?;
    (tail.is_empty() && req.method() == Method::GET).then_some(id)
}

/// Whether `user` may view `cluster_id` (OpenFGA's `can_view`), the outcome recorded in
/// [`Gateway::fga_health`]. A check that cannot be made answers `503 ServiceUnavailable` (`504
/// Timeout` when OpenFGA did not answer in time) naming the authorization service, so clients
/// retry and the console can say what is down; never "allowed", never a 500. The cause names
/// OpenFGA's address: it is logged here, once, and never told.
pub(crate) async fn can_view(gw: &Gateway, user: &str, cluster_id: &str) -> Result<bool, Status> {
    match gw.fga.can_view(user, cluster_id).await {
        Ok(allowed) => {
            gw.fga_health.record_ok();
            Ok(allowed)
        }
        Err(e) => {
            gw.fga_health.record_failure(e.summary());
            tracing::error!(error = %e, cluster_id, "can_view could not be checked");
            Err(if e.is_timeout() {
                Status::failure(504, "Timeout", e.client_message())
            } else {
                Status::failure(503, "ServiceUnavailable", e.client_message())
            })
        }
    }
}

/// What the gateway knows of a cluster beyond its API (its Shoot in real mode), for the
/// console's cluster list: a user who may view the cluster, from the console's server (no
/// browser origin: plugin pages never ask it).
async fn cluster_info(gw: &Gateway, cluster_id: &str, token: &str) -> Result<Response, Status> {
    let claims = gw.credentials.verify_user(token, now_unix()).await.map_err(|e| invalid("user", &e))?;
    // Held until the answer is built: it is small and read at once.
    let _slot = gw.calls.acquire(&claims.sub, None)?;
    if !can_view(gw, &claims.sub, cluster_id).await? {
        return Err(Status::forbidden_because_of(format!(
            "permission denied: user {} cannot view cluster {cluster_id} (can_view)",
            claims.sub
        )));
    }
    let info = gw.clusters.info(cluster_id).await.map_err(|e| e.status())?;
    Ok(axum::Json(info).into_response())
}

async fn route(gw: &Gateway, req: Request, caller: &Caller) -> Result<Response, Status> {
    if let Some(cluster_id) = info_request(&req) {
        if *caller != Caller::NoOrigin {
            return Err(Status::forbidden_because_of(ORIGIN_REFUSED));
        }
        let token = bearer(req.headers())
            .ok_or_else(|| Status::unauthorized_because("no credentials: send a bearer token"))?;
        return cluster_info(gw, &cluster_id, &token).await;
    }
    // A PluginToken's request is audited even when it is refused before its token is looked
    // at: a path no API server serves, or a browser origin that is no plugin's.
    let plugin_token = bearer(req.headers()).filter(|t| fundament_tokens::peek_kind(t) == TokenKind::Plugin);
    let judged = match judge(&req) {
        Ok(judged) => judged,
        Err(status) => {
            let cluster_id = split_path(req.uri().path()).map(|(id, _)| id).unwrap_or_default();
            let check = if status.code == 415 { "denied:content-type" } else { "denied:path" };
            return refused_early(gw, plugin_token.as_deref(), cluster_id, check, status).await;
        }
    };
    if *caller == Caller::Other {
        let status = Status::forbidden_because_of(ORIGIN_REFUSED);
        return refused_early(gw, plugin_token.as_deref(), judged.cluster_id, "denied:origin", status).await;
    }
    let Some(token) = bearer(req.headers()) else {
        let cookie = req.headers().contains_key(header::COOKIE);
        return Err(Status::unauthorized_because(if cookie {
            "no credentials: kube-api-proxy takes bearer tokens only, never a cookie"
        } else {
            "no credentials: send a bearer token"
        }));
    };
    if plugin_token.is_some() {
        return plugin_path(gw, req, judged, token, caller).await;
    }
    if let Caller::Plugin { installation, .. } = caller {
        return Err(Status::forbidden_because_of(format!(
            "a user token is not accepted from a plugin page (the origin of installation {installation}): plugin pages send their PluginToken"
        )));
    }
    user_path(gw, req, judged, token).await
}

/// A request refused before the plugin path's checks: with a PluginToken, its audit line (the
/// token's user and installation when it is valid; blank when it is not) and the refusal.
async fn refused_early(
    gw: &Gateway,
    plugin_token: Option<&str>,
    cluster_id: String,
    decision: &'static str,
    status: Status,
) -> Result<Response, Status> {
    let Some(token) = plugin_token else { return Err(status) };
    let mut call = PluginCall {
        line: AuditLine { audit: "plugin_request", cluster_id, ..Default::default() },
        started: Instant::now(),
    };
    if let Ok(claims) = gw.credentials.verify_plugin(token, now_unix()).await {
        call.claims(&claims);
    }
    call.finish(gw, decision, status.code);
    Ok(audited(gw, status.into_response()))
}

async fn upstream(gw: &Gateway, cluster_id: &str) -> Result<Arc<Upstream>, Status> {
    gw.clusters.get(cluster_id).await.map_err(|e| e.status())
}

/// A stream that answers on after its request was checked, and ends when the credentials it
/// was checked with stop being accepted (a sign-out, the token's expiry).
type SessionEnds = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// A watch holds a slot of its user (and PluginToken) until its stream ends, which is at the
/// latest when its session does; it gives back the call slot it was admitted with at once (an
/// open stream is counted by [`crate::limits`], not as a call in flight). Any other answer holds
/// its call slot until it has been passed on.
fn hold(response: Response, permit: Option<(WatchPermit, SessionEnds)>, slot: CallSlot) -> Response {
    let (parts, body) = response.into_parts();
    let body = match permit {
        Some((permit, ends)) => {
            drop(slot);
            permit.hold(body, ends)
        }
        None => fundament_body_limits::holding(body, slot),
    };
    Response::from_parts(parts, body)
}

async fn forward(
    up: &Upstream,
    req: Request,
    judged: &Judged,
    ns: &str,
    sa: &str,
    token: &str,
) -> Result<Response, Status> {
    let target = &judged.target;
    let (parts, body) = req.into_parts();
    // Clients retry a 503 and a 504 (kubectl, client-go); the message names the dependency,
    // never the internal error, which is logged once.
    let failed = |e: crate::upstream::UpstreamError| {
        use crate::upstream::UpstreamError;
        match e {
            UpstreamError::TooLarge { .. }
            | UpstreamError::BodyRefused(_)
            | UpstreamError::BodyIdle { .. }
            | UpstreamError::BodyDeadline { .. }
            | UpstreamError::Timeout { .. }
            | UpstreamError::Transport(_)
            | UpstreamError::Unreachable { .. } => e.to_status(),
            _ => {
                tracing::warn!(error = %e, "forwarding failed");
                Status::bad_gateway("failed to contact the Kubernetes API")
            }
        }
    };
    let response = up
        .forward(parts.method.clone(), target, &parts.headers, Body::new(body), token)
        .await
        .map_err(failed)?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return Ok(response);
    }
    // The cluster no longer takes the cached token (its ServiceAccount was
    // recreated): forget it, and retry once with a fresh one where no body was sent.
    up.forget_token(ns, sa);
    if !matches!(parts.method, Method::GET | Method::HEAD) {
        return Ok(response);
    }
    // A ServiceAccount deleted and not (yet) created again is the same wait as one never
    // synced: a 503 to retry, not the cluster's 401 about a token the client never sent.
    match up.service_account_token(ns, sa).await {
        Ok(Some(fresh)) => up
            .forward(parts.method, target, &parts.headers, Body::empty(), &fresh.token)
            .await
            .map_err(failed),
        Ok(None) => Err(Status::service_unavailable("service account sync pending, try again shortly")),
        Err(e) => Err(e.to_status()),
    }
}

pub(crate) fn invalid(kind: &str, e: &CredentialError) -> Status {
    match e {
        // authn's keys could not be fetched to check the token: a 401 would send the user to
        // sign in again for nothing.
        CredentialError::Token(t) if t.is_passing() => Status::service_unavailable(format!(
            "the {kind} token cannot be checked right now: authn, which publishes the keys, cannot be reached; try again"
        )),
        _ => Status::unauthorized_because(format!("invalid {kind} token: {e}")),
    }
}

async fn user_path(gw: &Gateway, req: Request, judged: Judged, token: String) -> Result<Response, Status> {
    let claims = gw.credentials.verify_user(&token, now_unix()).await.map_err(|e| invalid("user", &e))?;
    // Before anything that costs a call of the gateway's own (OpenFGA, the cluster).
    let slot = gw.calls.acquire(&claims.sub, None)?;
    let cluster_id = &judged.cluster_id;
    let allowed = can_view(gw, &claims.sub, cluster_id).await?;
    if !allowed {
        return Err(Status::forbidden_because_of(format!(
            "permission denied: user {} cannot view cluster {cluster_id} (can_view)",
            claims.sub
        )));
    }
    let up = upstream(gw, cluster_id).await?;
    let permit = if judged.streams {
        let ends: SessionEnds = Box::pin(gw.credentials.revoked.ended(&claims.jti, claims.exp));
        Some((gw.watches.acquire(&claims.sub, None).await?, ends))
    } else {
        None
    };
    let sa = format!("fundament-{}", claims.sub);
    let sa_token = up
        .service_account_token(USER_SA_NAMESPACE, &sa)
        .await
        .map_err(|e| e.to_status())?
        .ok_or_else(|| Status::service_unavailable("service account sync pending, try again shortly"))?;
    let req = req.map(|body| slot.counted(body));
    let response = forward(&up, req, &judged, USER_SA_NAMESPACE, &sa, &sa_token.token).await?;
    Ok(hold(response, permit, slot))
}

/// The cluster a PluginToken was minted for, as request paths spell it (`None`: not a UUID).
fn token_cluster(claims: &PluginClaims) -> Option<String> {
    uuid::Uuid::parse_str(&claims.cluster_id).ok().map(|u| u.hyphenated().to_string())
}

struct PluginCall {
    line: AuditLine,
    started: Instant,
}

impl PluginCall {
    fn finish(mut self, gw: &Gateway, decision: &str, status: u16) {
        self.line.decision = decision.to_string();
        self.line.status = status;
        self.line.latency_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        // What the request and the token name is the caller's own text (a path segment may be
        // ~64 KiB): cut to Kubernetes' bounds, marked as cut, before any sink sees it.
        gw.audit.record(&self.line.bounded());
    }

    /// The claims' text is the console's, signed; bounded all the same (`audit::bounded`), so
    /// every field of a line has a bound whoever minted the token.
    fn claims(&mut self, c: &PluginClaims) {
        let on_its_cluster = token_cluster(c).is_some_and(|t| t.eq_ignore_ascii_case(&self.line.cluster_id));
        self.line = AuditLine {
            on_its_cluster,
            user: c.sub.clone(),
            installation_id: c.installation_id.clone(),
            installation_name: c.installation_name.clone(),
            plugin_name: c.plugin_name.clone(),
            plugin_version: c.plugin_version.clone(),
            definition_hash: c.definition_hash.clone(),
            ..std::mem::take(&mut self.line)
        };
    }

    fn request(&mut self, r: &KubeRequest) {
        let ResourceTarget { group, resource, subresource, name, namespace, .. } = &r.target;
        self.line = AuditLine {
            group: group.clone(),
            resource: resource.clone(),
            subresource: subresource.clone(),
            name: name.clone(),
            namespace: namespace.clone(),
            verb: r.verb.clone(),
            ..std::mem::take(&mut self.line)
        };
    }
}

/// Why the plugin path refused a request: the audit line's decision and the answer.
struct Refusal {
    decision: &'static str,
    status: Status,
}

fn refusal(decision: &'static str, status: Status) -> Refusal {
    Refusal { decision, status }
}

/// A 403 whose message is the whole explanation.
fn denied(decision: &'static str, message: impl Into<String>) -> Refusal {
    refusal(decision, Status::forbidden_because_of(message))
}

/// A call to the cluster failed: 503/504 when it cannot be reached or does not answer
/// ([`UpstreamError::to_status`](crate::upstream::UpstreamError::to_status)), else internal.
fn unreachable_cluster(decision: &'static str, e: &crate::upstream::UpstreamError) -> Refusal {
    refusal(decision, e.to_status())
}

/// A request every check of the plugin path admitted: where it goes, as whom.
struct Admitted {
    up: Arc<Upstream>,
    /// The plugin's namespace, where its ServiceAccount `plugin` is.
    namespace: String,
    /// A token of that ServiceAccount.
    sa_token: String,
    permit: Option<(WatchPermit, SessionEnds)>,
    /// The call's slots of its user, plugin pages and PluginToken ([`crate::in_flight`]).
    slot: CallSlot,
}

async fn plugin_path(
    gw: &Gateway,
    req: Request,
    judged: Judged,
    token: String,
    caller: &Caller,
) -> Result<Response, Status> {
    let mut call = PluginCall {
        line: AuditLine {
            audit: "plugin_request",
            cluster_id: judged.cluster_id.clone(),
            ..Default::default()
        },
        started: Instant::now(),
    };
    let Admitted { up, namespace, sa_token, permit, slot } =
        match admit_plugin(gw, &judged, &token, caller, &mut call).await {
            Ok(admitted) => admitted,
            Err(Refusal { decision, status }) => {
                call.finish(gw, decision, status.code);
                return Ok(audited(gw, status.into_response()));
            }
        };
    let req = req.map(|body| slot.counted(body));
    let response = forward(&up, req, &judged, &namespace, "plugin", &sa_token).await;
    let status = response.as_ref().map_or_else(|r| r.code, |r| r.status().as_u16());
    call.finish(gw, "allowed", status);
    let response = match response {
        Ok(response) => hold(response, permit, slot),
        Err(status) => status.into_response(),
    };
    Ok(audited(gw, response))
}

/// The audit line logged is this request's line: the HTTP layer writes no second one.
fn audited(gw: &Gateway, mut response: Response) -> Response {
    if gw.audit.logs() {
        response.extensions_mut().insert(fundament_telemetry::Logged);
    }
    response
}

/// The checks of the PluginToken path, in order; each refusal names the check in the audit line.
async fn admit_plugin(
    gw: &Gateway,
    judged: &Judged,
    token: &str,
    caller: &Caller,
    call: &mut PluginCall,
) -> Result<Admitted, Refusal> {
    let cluster_id = &judged.cluster_id;
    // 1. The token, of a session that was not signed out.
    let claims = gw
        .credentials
        .verify_plugin(token, now_unix())
        .await
        .map_err(|e| refusal("denied:invalid-token", invalid("plugin", &e)))?;
    call.claims(&claims);
    let installation_name = &claims.installation_name;
    // From a browser, only the page of the installation the token was minted for may use it.
    if let Caller::Plugin { installation, .. } = caller
        && installation != installation_name
    {
        return Err(denied(
            "denied:origin",
            format!(
                "origin mismatch: the plugin token of installation {installation_name} was sent from the origin of installation {installation}"
            ),
        ));
    }
    // 2. The cluster the token was minted for.
    if token_cluster(&claims).as_ref() != Some(cluster_id) {
        return Err(denied(
            "denied:cluster-mismatch",
            format!(
                "cluster_id mismatch: the plugin token was minted for cluster {}, not {cluster_id}",
                claims.cluster_id
            ),
        ));
    }
    // Before anything that costs a call of the gateway's own (OpenFGA, the cluster): the calls
    // of this token, of the user's plugin pages and of the user, in flight.
    let slot = gw
        .calls
        .acquire(&claims.sub, Some(&claims.jti))
        .map_err(|status| refusal("denied:call-limit", status))?;
    // 3. The user may view the cluster.
    if !can_view(gw, &claims.sub, cluster_id).await.map_err(|status| refusal("error:can-view", status))? {
        let user = &claims.sub;
        return Err(denied(
            "denied:can-view",
            format!("permission denied: user {user} cannot view cluster {cluster_id} (can_view)"),
        ));
    }
    // 4. What is asked (read once, in `judge`).
    let kube = KubeRequest::from_info(&judged.info).ok_or_else(|| {
        refusal(
            "error:unparseable-request",
            Status::bad_request(format!(
                "not a request on a Kubernetes resource: {}; plugins may only call resource paths",
                judged.info.canonical_path()
            )),
        )
    })?;
    call.request(&kube);
    if let Some(why) = judged_by_the_callers_own_rights(&kube) {
        return Err(denied("denied:escalation", why));
    }
    let up = upstream(gw, cluster_id).await.map_err(|status| refusal("error:plugin-sa", status))?;
    // 5. The installation the token names still exists as it was minted for.
    let admitted_installation = up
        .installation_shared(installation_name)
        .await
        .map_err(|e| unreachable_cluster("error:plugin-sa", &e))?
        .ok_or_else(|| {
            denied("denied:installation", format!("plugin installation {installation_name} not found"))
        })?;
    // The CRD requires spec.definitionRef: an object without it pins no definition, so
    // allowedResources has nothing to admit with (refused as an unpublished definition was).
    let installation = admitted_installation.installation().map_err(|e| {
        denied(
            "denied:allowed-resources",
            format!("allowedResources: installation {installation_name} names no definition ({e})"),
        )
    })?;
    if installation.metadata.uid != claims.installation_id {
        return Err(denied(
            "denied:installation",
            format!(
                "plugin installation {installation_name} was replaced since the token was minted (uid does not match installation_id)"
            ),
        ));
    }
    // Being deleted: its controller is taking the plugin down, and the user has asked for it
    // to go. Its pages must not act on the cluster any more, whatever its ServiceAccount still
    // may until the namespace is gone.
    if installation.metadata.deletion_timestamp.is_some() {
        return Err(denied(
            "denied:installation",
            format!("plugin installation {installation_name} is being deleted"),
        ));
    }
    let pinned = installation.definition_ref();
    call.line.pinned_definition_hash = pinned.definition_hash.clone();
    // 6. allowedResources of the installation's pinned definition.
    let (name, version) = (pinned.plugin_name.as_str(), pinned.plugin_version.as_str());
    let definition = gw.definitions.definition(name, version).ok_or_else(|| {
        denied(
            "denied:allowed-resources",
            format!(
                "allowedResources: the definition {name}@{version} of installation {installation_name} is not published"
            ),
        )
    })?;
    if !pinned.definition_hash.is_empty() && definition.hash != pinned.definition_hash {
        return Err(denied(
            "denied:allowed-resources",
            format!(
                "allowedResources: the published definition {name}@{version} does not match the installation's pinned hash"
            ),
        ));
    }
    // What the cluster will check of the caller: the verb, and `create` too when the request
    // creates the object if there is none. kube-apiserver then checks `create` only of the
    // caller it sees, the plugin's ServiceAccount: here allowedResources and the user must
    // allow it as well. An apply always may; a PUT does for the kinds that create on update
    // (RBAC roles and bindings, leases, among others), so a PUT of an object the plugin's
    // ServiceAccount does not find is checked as a create. The cluster is asked only once
    // allowedResources and the user's review admit the update. (An object deleted between that
    // look and the PUT is created with `update` checked: a race only someone who may delete it
    // can run, and kube-apiserver itself checks the plugin's ServiceAccount for `create` then.)
    // The refusal when allowedResources does not admit `k` (an Option: the closure's `Err` would
    // be as large as a Refusal).
    let not_admitted = |k: &KubeRequest, why: &str| {
        if definition.allowed.iter().any(|a| a.admits(&k.as_resource_request())) {
            return None;
        }
        let target = &k.target;
        let what = group_resource(&target.group, &target.resource);
        let sub =
            if target.subresource.is_empty() { String::new() } else { format!("/{}", target.subresource) };
        Some(denied(
            "denied:allowed-resources",
            format!("allowedResources: plugin {name} may not {} {what}{sub}{why}", k.verb),
        ))
    };
    if let Some(refused) = not_admitted(&kube, "") {
        return Err(refused);
    }
    let namespace = format!("plugin-{installation_name}");
    // 7. The user may do it (their ServiceAccount's review), asked before the cluster is asked
    // anything on the plugin's behalf about this object.
    user_may(&up, &claims.sub, &kube, "").await?;
    let mut sa_token = None;
    let creates_because = if judged.applies {
        Some(" (a server-side apply creates the object when there is none)")
    } else if kube.verb == "update" && kube.target.subresource.is_empty() {
        // Only a PUT of the object itself may create it (never one of a subresource, so a
        // proxied backend is never called for this look).
        let token = plugin_sa_token(&up, &namespace).await?;
        let path = judged.info.canonical_path();
        let found = up
            .forward(Method::GET, &path, &HeaderMap::new(), Body::empty(), &token)
            .await
            .map_err(|e| unreachable_cluster("error:exists-check", &e))?
            .status()
            == StatusCode::OK;
        sa_token = Some(token);
        (!found).then_some(" (a PUT of an object that does not exist creates it, for some kinds)")
    } else {
        None
    };
    if let Some(why) = creates_because {
        let create = KubeRequest { target: kube.target.clone(), verb: "create".into() };
        if let Some(refused) = not_admitted(&create, why) {
            return Err(refused);
        }
        user_may(&up, &claims.sub, &create, why).await?;
    }
    // 8. Forward as the plugin's ServiceAccount: the cluster's RBAC for the plugin decides.
    let permit = if judged.streams {
        let page =
            crate::limits::PluginStream { token_id: &claims.jti, installation: &claims.installation_name };
        let permit = gw.watches.acquire(&claims.sub, Some(page)).await;
        // It ends with the session, and when the installation it was admitted for is deleted,
        // replaced or changed (its allowedResources and rights may be narrower now).
        let ends: SessionEnds = up.plugin_stream_ends(
            &gw.credentials.revoked,
            &claims.sid,
            claims.exp,
            installation_name,
            &admitted_installation,
        );
        Some((permit.map_err(|status| refusal("denied:watch-limit", status))?, ends))
    } else {
        None
    };
    let sa_token = match sa_token {
        Some(token) => token,
        None => plugin_sa_token(&up, &namespace).await?,
    };
    Ok(Admitted { up, namespace, sa_token, permit, slot })
}

/// Writes the cluster allows by what the caller itself holds, beyond the verb on the resource:
/// a Role or binding passes RBAC's escalation check when the caller holds every rule it grants
/// (or `bind`/`escalate`), and a certificate request's approval or status needs `approve` or
/// `sign` on its signer. On the plugin path that caller is the plugin's ServiceAccount, so the
/// user's SubjectAccessReview of the verb would let a user grant what only the plugin holds
/// (bind the plugin's own ClusterRole to themselves, approve a certificate for any user). They
/// are refused here; a user makes them on the user path, where the cluster judges the user.
fn judged_by_the_callers_own_rights(k: &KubeRequest) -> Option<String> {
    let t = &k.target;
    let writes = matches!(k.verb.as_str(), "create" | "update" | "patch");
    let rbac = t.group == "rbac.authorization.k8s.io"
        && matches!(t.resource.as_str(), "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings");
    let certificates = t.group == "certificates.k8s.io"
        && t.resource == "certificatesigningrequests"
        && matches!(t.subresource.as_str(), "approval" | "status");
    let what = if rbac {
        "RBAC roles and bindings: the cluster checks them for escalation against the caller's own permissions"
    } else if certificates {
        "a certificate request's approval or status: the cluster checks the caller's own right to its signer"
    } else {
        return None;
    };
    writes.then(|| {
        let sub = if t.subresource.is_empty() { String::new() } else { format!("/{}", t.subresource) };
        format!(
            "forbidden: the plugin path does not {} {}{sub}; it writes {what}, which on this path are the plugin's, not the user's",
            k.verb, t.resource
        )
    })
}

/// Whether `user` may do `k`: the SubjectAccessReview of their ServiceAccount.
async fn user_may(up: &Upstream, user: &str, k: &KubeRequest, why: &str) -> Result<(), Refusal> {
    let user_sa = format!("system:serviceaccount:{USER_SA_NAMESPACE}:fundament-{user}");
    let groups = [
        "system:serviceaccounts".to_string(),
        format!("system:serviceaccounts:{USER_SA_NAMESPACE}"),
        "system:authenticated".to_string(),
    ];
    if up.review(&user_sa, &groups, k).await.map_err(|e| unreachable_cluster("error:user-sar", &e))? {
        return Ok(());
    }
    Err(denied(
        "denied:user-sar",
        format!(
            "forbidden: user {user} may not {} {} (SubjectAccessReview of {user_sa}){why}",
            k.verb, k.target.resource
        ),
    ))
}

/// A token of the plugin's ServiceAccount (`plugin` in `namespace`).
async fn plugin_sa_token(up: &Upstream, namespace: &str) -> Result<String, Refusal> {
    let token = up
        .service_account_token(namespace, "plugin")
        .await
        .map_err(|e| unreachable_cluster("error:plugin-sa", &e))?
        .ok_or_else(|| {
            refusal(
                "error:plugin-sa",
                Status::service_unavailable(
                    "service unavailable: the plugin's service account does not exist yet",
                ),
            )
        })?;
    Ok(token.token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(method: Method, uri: &str) -> Result<Judged, Status> {
        judge(&http::Request::builder().method(method).uri(uri).body(Body::empty()).unwrap())
    }

    const C: &str = "/clusters/019b4000-2000-7000-8000-000000000001";

    #[test]
    fn paths_are_gated_before_any_auth() {
        let code = |m: Method, uri: &str| judged(m, uri).err().map(|r| r.code);
        assert_eq!(code(Method::GET, "/clusters/not-a-uuid/api/v1"), Some(400));
        assert_eq!(code(Method::GET, &format!("{C}/metrics")), Some(404));
        assert_eq!(code(Method::GET, &format!("{C}/apix")), Some(404));
        assert_eq!(code(Method::GET, C), Some(404));
        assert_eq!(code(Method::GET, "/other"), Some(404));
        assert_eq!(code(Method::GET, &format!("{C}/api/v1/namespaces/%2E%2E/secrets")), Some(400));
        assert_eq!(code(Method::GET, &format!("{C}/api/v1/namespaces/a%2Fb/secrets")), Some(400));
        let j = judged(Method::GET, "/clusters/019B4000-2000-7000-8000-000000000001/apis/x/v1/y").unwrap();
        assert_eq!(
            (j.cluster_id.as_str(), j.target.as_str()),
            ("019b4000-2000-7000-8000-000000000001", "/apis/x/v1/y")
        );
        for root in ["api", "apis", "openapi", "version"] {
            assert!(judged(Method::GET, &format!("{C}/{root}")).is_ok());
        }
    }

    #[test]
    fn forwards_exactly_what_it_judged() {
        // Encoded query keys and repeated parameters are read, and sent on, as the API server reads them.
        let j = judged(Method::GET, &format!("{C}/api/v1/pods?wat%63h=1")).unwrap();
        assert_eq!(j.info.verb, "watch");
        assert_eq!(j.target, "/api/v1/pods?watch=1&timeoutSeconds=1800");
        let j = judged(Method::GET, &format!("{C}/api/v1/pods?watch=0&watch=1")).unwrap();
        assert_eq!((j.info.verb.as_str(), j.target.as_str()), ("list", "/api/v1/pods?watch=0"));
        let j = judged(Method::GET, &format!("{C}/api/v1/pods?watch=1;x=1&labelSelector=a%3Db")).unwrap();
        assert_eq!((j.info.verb.as_str(), j.target.as_str()), ("list", "/api/v1/pods?labelSelector=a%3Db"));
        let j = judged(
            Method::GET,
            &format!("{C}/api/v1/namespaces/d%65fault/pods?watch=1&timeoutSeconds=99999"),
        )
        .unwrap();
        assert_eq!(j.target, "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1800");
        let j = judged(Method::GET, &format!("{C}/api/v1/pods?watch=1&timeoutSeconds=30")).unwrap();
        assert_eq!(j.target, "/api/v1/pods?watch=1&timeoutSeconds=30");
        let j = judged(Method::GET, &format!("{C}/api/v1/pods?watch=1&timeoutSeconds=0")).unwrap();
        assert_eq!(j.target, "/api/v1/pods?watch=1&timeoutSeconds=1800");
        // A proxied backend gets every value of its own parameters.
        let j = judged(Method::GET, &format!("{C}/api/v1/namespaces/n/services/s/proxy/x?a=1&a=2")).unwrap();
        assert_eq!(j.target, "/api/v1/namespaces/n/services/s/proxy/x?a=1&a=2");
    }

    #[test]
    fn watches_followed_logs_and_proxied_calls_hold_a_stream_slot_and_applies_are_told_apart() {
        let streams = |uri: &str| judged(Method::GET, &format!("{C}{uri}")).unwrap().streams;
        assert!(streams("/api/v1/pods?watch=1"));
        assert!(streams("/api/v1/namespaces/n/pods/p/log?follow=true"));
        assert!(streams("/api/v1/namespaces/n/pods/p/log?fol%6Cow=1"));
        assert!(!streams("/api/v1/namespaces/n/pods/p/log"));
        assert!(!streams("/api/v1/namespaces/n/pods/p/log?follow=false"));
        assert!(!streams("/api/v1/namespaces/n/pods/p?follow=true"), "not a log");
        assert!(!streams("/api/v1/pods"));
        assert!(streams("/api/v1/namespaces/n/services/s:8080/proxy/events"));
        assert!(streams("/api/v1/namespaces/n/pods/p/proxy"));
        assert!(streams("/api/v1/nodes/node-1/proxy/logs/"));
        let applies = |method: Method, content_type: &str| {
            let req = http::Request::builder()
                .method(method)
                .uri(format!("{C}/api/v1/namespaces/n/configmaps/a"))
                .header(http::header::CONTENT_TYPE, content_type)
                .body(Body::empty())
                .unwrap();
            judge(&req).unwrap().applies
        };
        assert!(applies(Method::PATCH, "application/apply-patch+yaml"));
        assert!(applies(Method::PATCH, " Application/Apply-Patch+CBOR"));
        assert!(!applies(Method::PATCH, "application/merge-patch+json"));
        assert!(!applies(Method::PATCH, "application/strategic-merge-patch+json"));
        assert!(!applies(Method::PUT, "application/apply-patch+yaml"), "only a PATCH applies");
    }

    #[test]
    fn writes_the_cluster_judges_by_the_callers_own_rights_stay_off_the_plugin_path() {
        let refused = |method: Method, path: &str| {
            let req = http::Request::builder()
                .method(method)
                .uri(format!("{C}{path}"))
                .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
                .body(Body::empty())
                .unwrap();
            let j = judge(&req).unwrap();
            judged_by_the_callers_own_rights(&KubeRequest::from_info(&j.info).unwrap()).is_some()
        };
        let rbac = "/apis/rbac.authorization.k8s.io/v1";
        assert!(refused(Method::POST, &format!("{rbac}/namespaces/team/rolebindings")));
        assert!(refused(Method::PUT, &format!("{rbac}/clusterrolebindings/b")));
        assert!(refused(Method::PATCH, &format!("{rbac}/namespaces/team/roles/r")));
        assert!(refused(Method::POST, &format!("{rbac}/clusterroles")));
        let csr = "/apis/certificates.k8s.io/v1/certificatesigningrequests/c";
        assert!(refused(Method::PUT, &format!("{csr}/approval")));
        assert!(refused(Method::PATCH, &format!("{csr}/status")));
        // Reads and deletes grant nothing; the user's own review covers them.
        assert!(!refused(Method::GET, &format!("{rbac}/namespaces/team/rolebindings")));
        assert!(!refused(Method::DELETE, &format!("{rbac}/namespaces/team/rolebindings/b")));
        assert!(!refused(Method::PUT, csr), "the request itself names no signer right");
        assert!(!refused(Method::POST, "/api/v1/namespaces/team/configmaps"));
    }

    #[test]
    fn a_patch_type_the_gateway_cannot_read_as_the_api_server_does_is_415() {
        let judge_patch = |content_types: &[&[u8]]| {
            let mut req = http::Request::builder()
                .method(Method::PATCH)
                .uri(format!("{C}/api/v1/namespaces/n/configmaps/a"))
                .body(Body::empty())
                .unwrap();
            for ct in content_types {
                req.headers_mut()
                    .append(http::header::CONTENT_TYPE, http::HeaderValue::from_bytes(ct).unwrap());
            }
            judge(&req).map(|j| j.applies).map_err(|s| (s.code, s.reason))
        };
        let refused = Err((415, "UnsupportedMediaType".to_owned()));
        // kube-apiserver reads this one as an apply: the byte after the `;` is never looked at.
        assert_eq!(judge_patch(&[b"application/apply-patch+yaml; x=\xff"]), refused);
        assert_eq!(judge_patch(&[b"application/apply-patch+yaml; charset=utf-8"]), Ok(true));
        assert_eq!(judge_patch(&[b"application/merge-patch+json", b"application/apply-patch+yaml"]), refused);
        assert_eq!(judge_patch(&[]), refused);
        assert_eq!(judge_patch(&[b"text/plain"]), refused);
        assert_eq!(judge_patch(&[b"application/json"]), refused);
        assert_eq!(judge_patch(&[b"application/json-patch+json"]), Ok(false));
    }

    #[test]
    fn a_post_to_a_named_object_is_405() {
        let r = judged(Method::POST, &format!("{C}/api/v1/namespaces/n/configmaps/a")).err().unwrap();
        assert_eq!((r.code, r.reason.as_str()), (405, "MethodNotAllowed"));
        assert!(judged(Method::POST, &format!("{C}/api/v1/namespaces/n/configmaps")).is_ok());
        assert!(judged(Method::POST, &format!("{C}/api/v1/namespaces/n/serviceaccounts/a/token")).is_ok());
    }

    #[test]
    fn allowed_resources_match_group_resource_verb_and_subresource() {
        // The entry as a definition writes it; the requests as the gateway reads them.
        let entry = serde_json::json!({"group": "cert-manager.io", "version": "v1", "resource": "certificates", "verbs": ["get", "list"]});
        let a: AllowedResource = serde_json::from_value(entry).unwrap();
        let admits = |method: Method, path: &str| {
            let judged = judged(method, &format!("{C}{path}")).unwrap();
            a.admits(&KubeRequest::from_info(&judged.info).unwrap().as_resource_request())
        };
        let certificates = "/apis/cert-manager.io/v1/namespaces/n/certificates";
        assert!(admits(Method::GET, certificates));
        assert!(!admits(Method::POST, certificates));
        assert!(!admits(Method::GET, &format!("{certificates}/c/status")));
        assert!(!admits(Method::GET, "/apis/cert-manager.io/v1/namespaces/n/issuers"));
        assert!(!admits(Method::GET, "/api/v1/namespaces/n/certificates/c"));
    }

    #[test]
    fn reads_bearers_only() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=1; fundament_auth=tok; b=2".parse().unwrap());
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer x.y.z".parse().unwrap());
        assert_eq!(bearer(&h).as_deref(), Some("x.y.z"));
    }
}
