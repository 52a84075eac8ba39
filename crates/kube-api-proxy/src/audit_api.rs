//! `GET /audit/v1/clusters/<cluster-id>/calls?<filter>`: the plugin-path calls on a cluster, as
//! the console's audit view shows them ([`fundament_plugin_types::audit`]).
//!
//! Who sees what: a user who may view the cluster sees their own calls; a user whose
//! ServiceAccount may `audit` `plugininstallations.plugins.fundament.io` on that cluster (a
//! SubjectAccessReview; cluster-admin has every verb, and a ClusterRole rule
//! `verbs: ["audit"]` grants it alone) sees everyone's. Asked with a UserToken from a server
//! (the console's), never from a browser page: plugin pages are refused like any other origin.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use fundament_kube_core::{Query, ResourceTarget, Status};
use fundament_plugin_types::audit::{AuditFilter, AuditPage};
use http::{HeaderMap, Uri};

use crate::Gateway;
use crate::cors::{self, Caller};
use crate::gateway::{USER_SA_NAMESPACE, bearer, can_view, invalid, now_unix};
use crate::kubereq::KubeRequest;

/// The verb that shows everyone's calls, on `plugininstallations.plugins.fundament.io`.
pub const AUDIT_VERB: &str = "audit";

/// The route's handler.
pub async fn calls(
    State(gw): State<Arc<Gateway>>,
    Path(cluster): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let mut response = match answer(&gw, &cluster, &headers, &uri).await {
        Ok(page) => axum::Json(page).into_response(),
        Err(status) => status.into_response(),
    };
    cors::harden(response.headers_mut());
    response
}

async fn answer(gw: &Gateway, cluster: &str, headers: &HeaderMap, uri: &Uri) -> Result<AuditPage, Status> {
    if gw.origins.classify(headers) != Caller::NoOrigin {
        return Err(Status::forbidden_because_of(
            "origin not allowed: the audit record is read by the console's server, not by a page",
        ));
    }
    let cluster_id = uuid::Uuid::parse_str(cluster)
        .map_err(|_| Status::bad_request(format!("invalid cluster ID {cluster:?}: not a UUID")))?
        .hyphenated()
        .to_string();
    let token =
        bearer(headers).ok_or_else(|| Status::unauthorized_because("no credentials: send a bearer token"))?;
    if fundament_tokens::peek_kind(&token) == fundament_tokens::TokenKind::Plugin {
        return Err(Status::forbidden_because_of(
            "the audit record is read with a user token, not a PluginToken",
        ));
    }
    let claims = gw.credentials.verify_user(&token, now_unix()).await.map_err(|e| invalid("user", &e))?;
    let filter = AuditFilter::from_query(&Query::parse(uri.query().unwrap_or_default()))
        .map_err(|e| Status::bad_request(e.to_string()))?;
    if !can_view(gw, &claims.sub, &cluster_id).await? {
        return Err(Status::forbidden_because_of(format!(
            "permission denied: user {} cannot view cluster {cluster_id} (can_view)",
            claims.sub
        )));
    }
    let store = gw.audit.store().ok_or_else(|| {
        Status::not_found_because("this kube-api-proxy keeps no audit record for the audit view")
    })?;
    let everyone = may_see_everyone(gw, &cluster_id, &claims.sub).await?;
    let only = (!everyone).then_some(claims.sub.as_str());
    let (items, last_id) = store.tail(&cluster_id, only, &filter).await.map_err(|error| {
        tracing::error!(%error, "audit view: the record could not be read");
        Status::for_code(503, "the audit record cannot be read now: its shared store is unavailable")
    })?;
    Ok(AuditPage { items, everyone, last_id })
}

/// The SubjectAccessReview of the user's ServiceAccount for [`AUDIT_VERB`].
async fn may_see_everyone(gw: &Gateway, cluster_id: &str, user: &str) -> Result<bool, Status> {
    let up = gw.clusters.get(cluster_id).await.map_err(|e| e.status())?;
    let sa = format!("system:serviceaccount:{USER_SA_NAMESPACE}:fundament-{user}");
    let groups = [
        "system:serviceaccounts".to_string(),
        format!("system:serviceaccounts:{USER_SA_NAMESPACE}"),
        "system:authenticated".to_string(),
    ];
    let request = KubeRequest {
        target: ResourceTarget {
            group: "plugins.fundament.io".into(),
            version: "v1".into(),
            resource: "plugininstallations".into(),
            ..ResourceTarget::default()
        },
        verb: AUDIT_VERB.into(),
    };
    up.review(&sa, &groups, &request).await.map_err(|e| e.to_status())
}
