//! The organization's clusters as the signed-in user sees them.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// A cluster the user can view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRow {
    /// Cluster id (UUID).
    pub id: String,
    /// Name.
    pub name: String,
    /// Whether organization-level pages use it.
    pub selected: bool,
    /// Names of the projects that run on it.
    pub projects: Vec<String>,
    /// Whether the console reached it just now.
    pub reachability: Reachability,
    /// The Gardener Shoot that is the cluster (real mode).
    pub shoot: Option<fundament_kube_core::cluster_info::ShootSummary>,
}

/// Whether a cluster answered kube-api-proxy's `/version`, asked as the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reachability {
    /// It answered: its Kubernetes version.
    Reachable { version: String },
    /// It did not: why, as the gateway put it (a cluster without a Shoot, a ServiceAccount
    /// not synced yet), or that nothing answered in time.
    Unreachable { reason: String },
}

/// How long the cluster list waits for each cluster: a dead one must not hold the page.
#[cfg(feature = "ssr")]
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

#[cfg(feature = "ssr")]
async fn reachability(state: &crate::state::ConsoleState, token: &str, cluster_id: &str) -> Reachability {
    use crate::plugins::backend::BackendError;
    #[derive(Deserialize)]
    struct Version {
        #[serde(rename = "gitVersion")]
        git_version: String,
    }
    let unreachable = |reason: &str| Reachability::Unreachable { reason: reason.to_owned() };
    match tokio::time::timeout(PROBE_TIMEOUT, state.backend.kube_get(token, cluster_id, "/version")).await {
        Err(_) => unreachable("no answer within 3 s"),
        Ok(Ok(answer)) => match serde_json::from_value::<Version>(answer) {
            Ok(v) => Reachability::Reachable { version: v.git_version },
            Err(_) => unreachable("its /version answer is not one of Kubernetes"),
        },
        // The gateway's Status messages are written for the client.
        Ok(Err(BackendError::Status { message, .. })) if !message.is_empty() => unreachable(&message),
        Ok(Err(error)) => {
            tracing::warn!(%error, cluster_id, "cluster probe failed");
            unreachable("kube-api-proxy did not answer")
        }
    }
}

/// The Shoot behind a cluster, as kube-api-proxy tells it (`GET /clusters/<id>`); `None`
/// outside real mode, and when it cannot say (the reachability column says why).
#[cfg(feature = "ssr")]
async fn shoot(
    state: &crate::state::ConsoleState,
    token: &str,
    cluster_id: &str,
) -> Option<fundament_kube_core::cluster_info::ShootSummary> {
    let answer =
        tokio::time::timeout(PROBE_TIMEOUT, state.backend.kube_get(token, cluster_id, "")).await.ok()?;
    let info: fundament_kube_core::cluster_info::ClusterInfo = serde_json::from_value(answer.ok()?).ok()?;
    info.shoot
}

/// The clusters of the user's organization they can view (OpenFGA's `can_view`, as the
/// gateway asks it; when a check fails the list is not given: it would not be complete).
#[server(endpoint = "clusters", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn list_clusters() -> Result<Vec<ClusterRow>, AppError> {
    let user = super::session::ssr::signed_in_user().ok_or(AppError::Unauthenticated)?;
    let session = super::session::ssr::session_of_request().ok_or(AppError::Unauthenticated)?;
    let (state, token) = crate::plugins::api::ssr::user()?;
    let directory = state.directory.current();
    let candidates: Vec<_> = directory.clusters_of(&session.organization).collect();
    let checks =
        futures::future::join_all(candidates.iter().map(|c| state.fga.can_view(&user.id, &c.id))).await;
    let mut visible = Vec::new();
    let mut unchecked = 0;
    for (cluster, check) in candidates.into_iter().zip(checks) {
        match check {
            Ok(true) => visible.push(cluster),
            Ok(false) => {}
            Err(error) => {
                tracing::error!(%error, cluster = %cluster.id, "can_view failed");
                unchecked += 1;
            }
        }
    }
    // A list that silently leaves out the clusters whose check failed would look complete.
    if unchecked > 0 {
        return Err(AppError::Unavailable {
            message: "Which clusters you can view cannot be checked right now: the authorization \
                      service (OpenFGA) did not answer."
                .to_owned(),
            retry_after: None,
        });
    }
    // Every cluster is asked at once: the page waits for the slowest, at most PROBE_TIMEOUT.
    let probes = futures::future::join_all(visible.iter().map(|c| async {
        futures::join!(reachability(&state, &token, &c.id), shoot(&state, &token, &c.id))
    }))
    .await;
    Ok(visible
        .into_iter()
        .zip(probes)
        .map(|(c, (reachability, shoot))| ClusterRow {
            id: c.id.clone(),
            name: c.shown_name().to_owned(),
            selected: c.id == session.selected_cluster_id,
            // The user's own projects there, not every project of the organization on it.
            projects: directory
                .projects_for_on(&user.id, &session.organization, &c.id)
                .into_iter()
                .map(|p| p.display_name.clone())
                .collect(),
            reachability,
            shoot,
        })
        .collect())
}
