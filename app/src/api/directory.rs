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
}

/// The clusters the signed-in user can view.
#[server(endpoint = "clusters")]
pub async fn list_clusters() -> Result<Vec<ClusterRow>, AppError> {
    let email = super::session::ssr::signed_in_email().ok_or(AppError::Unauthenticated)?;
    Ok(fundament_seed::clusters_visible_to(&email)
        .map(|c| ClusterRow {
            id: c.id.to_owned(),
            name: c.name.to_owned(),
            selected: c.id == fundament_seed::DEFAULT_CLUSTER_ID,
            projects: fundament_seed::PROJECTS
                .iter()
                .filter(|p| p.cluster_id == c.id)
                .map(|p| p.display_name.to_owned())
                .collect(),
        })
        .collect())
}
