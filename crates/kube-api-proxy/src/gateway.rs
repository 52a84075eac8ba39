//! The gateway: every request to a cluster comes through here, takes the user
//! path or the PluginToken path, and reaches the cluster as a ServiceAccount
//! whose rights the cluster itself enforces.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use fundament_fga::CanView;
use fundament_tokens::{PluginClaims, TokenKind};
use http::{HeaderMap, Method, StatusCode, header};

use crate::audit::{AuditLine, AuditSink};
use crate::cors::{Caller, Origins};
use crate::keys::Keys;
use crate::kubereq::{self, KubeRequest};
use crate::status::Refusal;
use crate::upstream::Upstream;

/// The namespace of the per-user ServiceAccounts `fundament-<user-id>`.
pub const USER_SA_NAMESPACE: &str = "fundament-system";

/// One entry of a definition's `allowedResources`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedResource {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub verbs: Vec<String>,
}

impl AllowedResource {
    /// Whether this entry admits `r`. A subresource needs an entry of its own
    /// (`certificates/status`): a plugin allowed to read certificates is not
    /// thereby allowed to write their status.
    pub fn admits(&self, r: &KubeRequest) -> bool {
        let resource = if r.subresource.is_empty() {
            r.resource.clone()
        } else {
            format!("{}/{}", r.resource, r.subresource)
        };
        self.group == r.group
            && (self.version.is_empty() || self.version == "*" || self.version == r.version)
            && (self.resource == resource || self.resource == "*")
            && self.verbs.iter().any(|v| v == &r.verb || v == "*")
    }
}

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
    pub keys: Keys,
    pub fga: Arc<dyn CanView>,
    /// Canonical (lower-case) cluster id → its API server.
    pub clusters: HashMap<String, Arc<Upstream>>,
    pub definitions: Arc<dyn DefinitionSource>,
    pub audit: Arc<dyn AuditSink>,
}

const ROOTS: &[&str] = &["api", "apis", "openapi", "version"];

fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

pub async fn handle(State(gw): State<Arc<Gateway>>, req: Request) -> Response {
    let caller = gw.origins.classify(req.headers());
    let span = tracing::info_span!("kube_api_proxy", method = %req.method(), path = %req.uri().path());
    let _enter = span.enter();
    if req.method() == Method::OPTIONS && req.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
        return match gw.origins.preflight(&caller) {
            Some(headers) => (StatusCode::NO_CONTENT, headers).into_response(),
            None => Refusal::forbidden("origin not allowed: only the console and plugin-proxy may call kube-api-proxy from a browser").into_response(),
        };
    }
    let mut response = match route(&gw, req, &caller).await {
        Ok(r) => r,
        Err(refusal) => refusal.into_response(),
    };
    gw.origins.apply(&caller, response.headers_mut());
    response
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    fundament_session::session_token(headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()))
        .map(str::to_string)
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_string()).filter(|t| !t.is_empty())
}

/// `/clusters/<uuid>/<rest>` → (canonical id, `/<rest>`).
fn split_path(path: &str) -> Result<(String, String), Refusal> {
    let rest = path.strip_prefix("/clusters/").ok_or_else(|| {
        Refusal::not_found(
            "not found: kube-api-proxy serves /clusters/<cluster-id>/{api,apis,openapi,version}/…",
        )
    })?;
    let (id, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let id = uuid::Uuid::parse_str(id)
        .map_err(|_| Refusal::bad_request(format!("invalid cluster ID {id:?}: not a UUID")))?
        .hyphenated()
        .to_string();
    let first = tail.split('/').next().unwrap_or_default();
    if !ROOTS.contains(&first) {
        return Err(Refusal::not_found(format!(
            "not found: /clusters/{id}/{first} is not a Kubernetes API path"
        )));
    }
    if tail
        .split('/')
        .any(|s| s == "." || s == ".." || s.eq_ignore_ascii_case("%2e%2e") || s.eq_ignore_ascii_case("%2e"))
    {
        return Err(Refusal::bad_request("invalid path: '.' and '..' segments are not allowed"));
    }
    Ok((id, format!("/{tail}")))
}

async fn route(gw: &Gateway, req: Request, caller: &Caller) -> Result<Response, Refusal> {
    let (cluster_id, path) = split_path(req.uri().path())?;
    if *caller == Caller::Other {
        return Err(Refusal::forbidden(
            "origin not allowed: only the console and plugin-proxy may call kube-api-proxy from a browser",
        ));
    }
    let headers = req.headers();
    if let Some(token) = bearer(headers) {
        if fundament_tokens::peek_kind(&token) == TokenKind::Plugin {
            return plugin_path(gw, req, cluster_id, path, token).await;
        }
        return user_path(gw, req, cluster_id, path, token).await;
    }
    match cookie(headers) {
        Some(token) if matches!(caller, Caller::NoOrigin | Caller::Console) => {
            user_path(gw, req, cluster_id, path, token).await
        }
        Some(_) => Err(Refusal::unauthorized(
            "the session cookie is only accepted from the console: plugin pages must send their PluginToken",
        )),
        None => Err(Refusal::unauthorized("no credentials: send a bearer token")),
    }
}

fn upstream<'a>(gw: &'a Gateway, cluster_id: &str) -> Result<&'a Arc<Upstream>, Refusal> {
    gw.clusters.get(cluster_id).ok_or_else(|| {
        Refusal::unavailable(format!("cluster {cluster_id} is not reachable from kube-api-proxy"))
    })
}

fn path_and_query(req: &Request, path: &str) -> String {
    match req.uri().query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    }
}

async fn forward(
    up: &Upstream,
    req: Request,
    path: &str,
    ns: &str,
    sa: &str,
    token: &str,
) -> Result<Response, Refusal> {
    let target = path_and_query(&req, path);
    let (parts, body) = req.into_parts();
    let failed = |e: crate::upstream::UpstreamError| {
        tracing::warn!(error = %e, "forwarding failed");
        Refusal::bad_gateway("failed to contact the Kubernetes API")
    };
    let response = up
        .forward(parts.method.clone(), &target, &parts.headers, Body::new(body), token)
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
    match up.service_account_token(ns, sa).await {
        Ok(Some(fresh)) => up
            .forward(parts.method, &target, &parts.headers, Body::empty(), &fresh.token)
            .await
            .map_err(failed),
        _ => Ok(response),
    }
}

async fn user_path(
    gw: &Gateway,
    req: Request,
    cluster_id: String,
    path: String,
    token: String,
) -> Result<Response, Refusal> {
    let claims = gw
        .keys
        .verify_user(&token, now_unix())
        .await
        .map_err(|e| Refusal::unauthorized(format!("invalid user token: {e}")))?;
    let allowed = gw.fga.can_view(&claims.sub, &cluster_id).await.map_err(|e| Refusal::internal(&e))?;
    if !allowed {
        return Err(Refusal::forbidden(format!(
            "permission denied: user {} cannot view cluster {cluster_id} (can_view)",
            claims.sub
        )));
    }
    let up = upstream(gw, &cluster_id)?;
    let sa = format!("fundament-{}", claims.sub);
    let sa_token = up
        .service_account_token(USER_SA_NAMESPACE, &sa)
        .await
        .map_err(|e| Refusal::internal(&e))?
        .ok_or_else(|| Refusal::unavailable("service account sync pending, try again shortly"))?;
    forward(up, req, &path, USER_SA_NAMESPACE, &sa, &sa_token.token).await
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
        gw.audit.record(&self.line);
    }

    fn refuse(self, gw: &Gateway, decision: &str, refusal: Refusal) -> Result<Response, Refusal> {
        self.finish(gw, decision, refusal.code);
        Err(refusal)
    }

    fn claims(&mut self, c: &PluginClaims) {
        let l = &mut self.line;
        l.user = c.sub.clone();
        l.installation_id = c.installation_id.clone();
        l.installation_name = c.installation_name.clone();
        l.plugin_name = c.plugin_name.clone();
        l.plugin_version = c.plugin_version.clone();
        l.definition_hash = c.definition_hash.clone();
    }

    fn request(&mut self, r: &KubeRequest) {
        let l = &mut self.line;
        l.group = r.group.clone();
        l.resource = r.resource.clone();
        l.subresource = r.subresource.clone();
        l.name = r.name.clone();
        l.namespace = r.namespace.clone();
        l.verb = r.verb.clone();
    }
}

async fn plugin_path(
    gw: &Gateway,
    req: Request,
    cluster_id: String,
    path: String,
    token: String,
) -> Result<Response, Refusal> {
    let mut call = PluginCall {
        line: AuditLine { audit: "plugin_request", cluster_id: cluster_id.clone(), ..Default::default() },
        started: Instant::now(),
    };
    // 1. The token.
    let claims = match gw.keys.verify_plugin(&token, now_unix()).await {
        Ok(c) => c,
        Err(e) => {
            return call.refuse(
                gw,
                "denied:invalid-token",
                Refusal::unauthorized(format!("invalid plugin token: {e}")),
            );
        }
    };
    call.claims(&claims);
    // 2. The cluster the token was minted for.
    let token_cluster =
        uuid::Uuid::parse_str(&claims.cluster_id).map(|u| u.hyphenated().to_string()).unwrap_or_default();
    if token_cluster != cluster_id {
        return call.refuse(
            gw,
            "denied:cluster-mismatch",
            Refusal::forbidden(format!(
                "cluster_id mismatch: the plugin token was minted for cluster {}, not {cluster_id}",
                claims.cluster_id
            )),
        );
    }
    // 3. The user may view the cluster.
    match gw.fga.can_view(&claims.sub, &cluster_id).await {
        Ok(true) => {}
        Ok(false) => {
            return call.refuse(
                gw,
                "denied:can-view",
                Refusal::forbidden(format!(
                    "permission denied: user {} cannot view cluster {cluster_id} (can_view)",
                    claims.sub
                )),
            );
        }
        Err(e) => return call.refuse(gw, "error:can-view", Refusal::internal(&e)),
    }
    // 4. What is asked.
    let kube = match kubereq::parse(req.method(), &path, req.uri().query().unwrap_or_default()) {
        Ok(k) => k,
        Err(e) => {
            return call.refuse(
                gw,
                "error:unparseable-request",
                Refusal::bad_request(format!(
                    "unparseable kube request: {e}; plugins may only call resource paths"
                )),
            );
        }
    };
    call.request(&kube);
    let up = match upstream(gw, &cluster_id) {
        Ok(u) => Arc::clone(u),
        Err(r) => return call.refuse(gw, "error:plugin-sa", r),
    };
    // 5. The installation the token names still exists as it was minted for.
    let installation = match up.installation(&claims.installation_name).await {
        Ok(Some(i)) => i,
        Ok(None) => {
            return call.refuse(
                gw,
                "denied:installation",
                Refusal::forbidden(format!("plugin installation {} not found", claims.installation_name)),
            );
        }
        Err(e) => return call.refuse(gw, "error:plugin-sa", Refusal::internal(&e)),
    };
    if installation["metadata"]["uid"].as_str() != Some(claims.installation_id.as_str()) {
        return call.refuse(gw, "denied:installation", Refusal::forbidden(format!(
            "plugin installation {} was replaced since the token was minted (uid does not match installation_id)",
            claims.installation_name
        )));
    }
    let pinned = &installation["spec"]["definitionRef"];
    call.line.pinned_definition_hash = pinned["definitionHash"].as_str().unwrap_or_default().to_string();
    // 6. allowedResources of the installation's pinned definition.
    let name = pinned["pluginName"].as_str().unwrap_or_default();
    let version = pinned["pluginVersion"].as_str().unwrap_or_default();
    let Some(definition) = gw.definitions.definition(name, version) else {
        return call.refuse(
            gw,
            "denied:allowed-resources",
            Refusal::forbidden(format!(
                "allowedResources: the definition {name}@{version} of installation {} is not published",
                claims.installation_name
            )),
        );
    };
    if !call.line.pinned_definition_hash.is_empty() && definition.hash != call.line.pinned_definition_hash {
        return call.refuse(gw, "denied:allowed-resources", Refusal::forbidden(format!(
            "allowedResources: the published definition {name}@{version} does not match the installation's pinned hash"
        )));
    }
    if !definition.allowed.iter().any(|a| a.admits(&kube)) {
        let what = if kube.group.is_empty() {
            kube.resource.clone()
        } else {
            format!("{}.{}", kube.resource, kube.group)
        };
        return call.refuse(
            gw,
            "denied:allowed-resources",
            Refusal::forbidden(format!(
                "allowedResources: plugin {name} may not {} {what}{}",
                kube.verb,
                if kube.subresource.is_empty() { String::new() } else { format!("/{}", kube.subresource) }
            )),
        );
    }
    // 7. The user may do it (their ServiceAccount's review).
    let user_sa = format!("system:serviceaccount:{USER_SA_NAMESPACE}:fundament-{}", claims.sub);
    let groups = [
        "system:serviceaccounts".to_string(),
        format!("system:serviceaccounts:{USER_SA_NAMESPACE}"),
        "system:authenticated".to_string(),
    ];
    match up.review(&user_sa, &groups, &kube).await {
        Ok(true) => {}
        Ok(false) => {
            return call.refuse(
                gw,
                "denied:user-sar",
                Refusal::forbidden(format!(
                    "forbidden: user {} may not {} {} (SubjectAccessReview of {user_sa})",
                    claims.sub, kube.verb, kube.resource
                )),
            );
        }
        Err(e) => return call.refuse(gw, "error:user-sar", Refusal::internal(&e)),
    }
    // 8. Forward as the plugin's ServiceAccount: the cluster's RBAC for the plugin decides.
    let ns = format!("plugin-{}", claims.installation_name);
    let sa_token = match up.service_account_token(&ns, "plugin").await {
        Ok(Some(t)) => t,
        Ok(None) => {
            return call.refuse(
                gw,
                "error:plugin-sa",
                Refusal::unavailable("service unavailable: the plugin's service account does not exist yet"),
            );
        }
        Err(e) => return call.refuse(gw, "error:plugin-sa", Refusal::internal(&e)),
    };
    let response = forward(&up, req, &path, &ns, "plugin", &sa_token.token).await;
    let status = response.as_ref().map_or_else(|r| r.code, |r| r.status().as_u16());
    call.finish(gw, "allowed", status);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_gated_before_any_auth() {
        assert_eq!(split_path("/clusters/not-a-uuid/api/v1").unwrap_err().code, 400);
        assert_eq!(
            split_path("/clusters/019b4000-2000-7000-8000-000000000001/metrics").unwrap_err().code,
            404
        );
        assert_eq!(split_path("/clusters/019b4000-2000-7000-8000-000000000001/apix").unwrap_err().code, 404);
        assert_eq!(split_path("/clusters/019b4000-2000-7000-8000-000000000001").unwrap_err().code, 404);
        assert_eq!(split_path("/other").unwrap_err().code, 404);
        assert_eq!(
            split_path("/clusters/019b4000-2000-7000-8000-000000000001/api/v1/namespaces/%2E%2E/secrets")
                .unwrap_err()
                .code,
            400
        );
        let (id, path) = split_path("/clusters/019B4000-2000-7000-8000-000000000001/apis/x/v1/y").unwrap();
        assert_eq!((id.as_str(), path.as_str()), ("019b4000-2000-7000-8000-000000000001", "/apis/x/v1/y"));
        for root in ["api", "apis", "openapi", "version"] {
            assert!(split_path(&format!("/clusters/019b4000-2000-7000-8000-000000000001/{root}")).is_ok());
        }
    }

    #[test]
    fn allowed_resources_match_group_resource_verb_and_subresource() {
        let a = AllowedResource {
            group: "cert-manager.io".into(),
            version: "v1".into(),
            resource: "certificates".into(),
            verbs: vec!["get".into(), "list".into()],
        };
        let r = |verb: &str, resource: &str, sub: &str| KubeRequest {
            group: "cert-manager.io".into(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            verb: verb.into(),
            ..Default::default()
        };
        assert!(a.admits(&r("list", "certificates", "")));
        assert!(!a.admits(&r("create", "certificates", "")));
        assert!(!a.admits(&r("get", "certificates", "status")));
        assert!(!a.admits(&r("get", "issuers", "")));
        let core = KubeRequest {
            resource: "certificates".into(),
            verb: "get".into(),
            version: "v1".into(),
            ..Default::default()
        };
        assert!(!a.admits(&core));
    }

    #[test]
    fn reads_cookies_and_bearers() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=1; fundament_auth=tok; b=2".parse().unwrap());
        assert_eq!(cookie(&h).as_deref(), Some("tok"));
        h.insert(header::COOKIE, "fundament_auth=".parse().unwrap());
        assert_eq!(cookie(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer x.y.z".parse().unwrap());
        assert_eq!(bearer(&h).as_deref(), Some("x.y.z"));
    }
}
