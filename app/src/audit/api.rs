//! The audit page's server function: the gateway's record of plugin calls, asked as the
//! signed-in user (the gateway decides whether they see everyone's calls or their own).

use fundament_plugin_types::audit::AuditPage;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// What the page shows: the calls and whose they are, on which cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditView {
    pub page: AuditPage,
    /// The cluster's name (organization-level pages show the selected cluster).
    pub cluster: String,
}

/// The calls the page's query (`query`, as in its URL) selects, newest first; with `after`,
/// only those recorded after that id (a live tail's next step); with `wait` too, the answer
/// comes when such a call is recorded or after a few seconds with none (a long poll).
#[server(endpoint = "audit", output = crate::api::codec::Json)]
pub async fn audit_calls(query: String, after: Option<u64>, wait: bool) -> Result<AuditView, AppError> {
    ssr::calls(&query, after, wait).await
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use super::AuditView;
    use crate::error::AppError;
    use crate::plugins::api::ssr::{caller, user_error};

    pub async fn calls(query: &str, after: Option<u64>, wait: bool) -> Result<AuditView, AppError> {
        let mut filter =
            super::super::query::filter_of(query).map_err(|e| AppError::Invalid(e.to_string()))?;
        filter.after = after;
        filter.wait_ms = (wait && after.is_some()).then_some(fundament_plugin_types::audit::MAX_WAIT_MS);
        let (state, token, _) = caller()?;
        let session = crate::api::session::ssr::session_of_request().ok_or(AppError::Unauthenticated)?;
        let page = state
            .backend
            .audit(&token, &session.selected_cluster_id, &filter)
            .await
            .map_err(|e| user_error(e, "the audit record of this cluster"))?;
        Ok(AuditView { page, cluster: session.selected_cluster })
    }
}
