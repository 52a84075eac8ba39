//! Server functions of the plugin integration. Each acts as the signed-in
//! user: kube-api-proxy sees the user's own token, so the cluster's RBAC and
//! OpenFGA decide what the user sees, not the console.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::model::{KindInfo, Registry};
use super::token::{AuthFailure, Minted};
use crate::error::AppError;

/// Whom a page asking for a credential was drawn for. The browser sends it with every mint
/// and ticket request, and the server answers only while the session cookie is still that
/// user's in that organization: a tab left open across a sign-out and someone else's sign-in
/// (on a shared machine, or the same person with more rights) gets nothing for the new
/// session, however often its plugin page asks. The same user signing in again is the same
/// user: the page recovers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawnFor {
    /// The user's id (never the email: two accounts may share one, or have none).
    pub user: String,
    pub organization: String,
}

impl DrawnFor {
    pub fn of(session: &crate::api::session::Session) -> Self {
        Self { user: session.viewer.id.clone(), organization: session.organization.clone() }
    }
}

/// The answer to a mint request: a token, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MintReply {
    Minted(Minted),
    Failed(AuthFailure),
}

/// The plugin installations of a cluster with their definitions. `after`: a resourceVersion
/// the browser's watch of the installations reported, which the answer must include (the
/// console keeps each user's installation list for a few seconds).
#[server(endpoint = "plugins", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn discover_plugins(cluster_id: String, after: Option<String>) -> Result<Registry, AppError> {
    ssr::discover(&cluster_id, after.as_deref()).await
}

/// The kind behind a `<plural>.<group>` route segment, from its CRD.
#[server(endpoint = "plugin-kind", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn resource_kind(cluster_id: String, crd: String) -> Result<KindInfo, AppError> {
    ssr::kind(&cluster_id, &crd).await
}

/// The namespaces of a project (or of the whole cluster without one), sorted.
#[server(endpoint = "namespaces", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn namespaces(cluster_id: String, project: Option<String>) -> Result<Vec<String>, AppError> {
    ssr::namespaces(&cluster_id, project.as_deref()).await
}

/// A PluginToken for one installation. The token goes to the browser's memory
/// and from there to that installation's frame only; it is never stored or logged.
#[server(endpoint = "plugin-token", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn mint_plugin_token(
    cluster_id: String,
    installation_id: String,
    drawn_for: DrawnFor,
) -> Result<MintReply, AppError> {
    ssr::mint(&cluster_id, &installation_id, &drawn_for).await
}

/// A single-use ticket with which the frame opens the installation's pages on plugin-proxy
/// (its first navigation only; the page then lives on a cookie of its own origin).
#[server(endpoint = "frame-ticket", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn frame_ticket(
    cluster_id: String,
    installation_id: String,
    drawn_for: DrawnFor,
) -> Result<TicketReply, AppError> {
    ssr::ticket(&cluster_id, &installation_id, &drawn_for).await
}

/// The answer to a ticket request: a ticket, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TicketReply {
    Ticket(String),
    Failed(AuthFailure),
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use std::collections::BTreeMap;

    use super::MintReply;
    use crate::error::AppError;
    use crate::plugins::backend::BackendError;
    use crate::plugins::model::{self, KindInfo, Registry, is_cluster_id};
    use crate::plugins::token::AuthFailure;
    use crate::state::ConsoleState;

    /// The console state and the signed-in user's token.
    pub(crate) fn user() -> Result<(ConsoleState, String), AppError> {
        caller().map(|(state, token, _)| (state, token))
    }

    /// [`user`], and who the token is of.
    pub(crate) fn caller() -> Result<(ConsoleState, String, crate::state::SessionUser), AppError> {
        let state = crate::api::session::ssr::state()?;
        let token = crate::state::request_session_token().ok_or(AppError::Unauthenticated)?;
        let user = state.sessions.verify(&token).ok_or(AppError::Unauthenticated)?;
        Ok((state, token, user))
    }

    pub(crate) fn check_cluster(cluster_id: &str) -> Result<(), AppError> {
        if is_cluster_id(cluster_id) {
            Ok(())
        } else {
            Err(AppError::Invalid(format!("{cluster_id:?} is not a cluster id.")))
        }
    }

    /// What users are told about a failed call; the detail goes to the log.
    pub(crate) fn user_error(error: BackendError, what: &str) -> AppError {
        match &error {
            BackendError::Status { status: 401, .. } => AppError::Unauthenticated,
            BackendError::Status { status: 403, message, .. } => {
                tracing::info!(%error, "refused");
                AppError::Forbidden(format!("You may not read {what}: {message}"))
            }
            BackendError::Status { status: 404, .. } => AppError::NotFound(capitalized(what)),
            BackendError::TooDeep { .. } => {
                tracing::warn!(%error, "reading {what}: nested too deep");
                AppError::Invalid(format!(
                    "{} nests deeper than the console reads (128 levels): use kubectl.",
                    capitalized(what)
                ))
            }
            // Not passing: asking again gets the same answer (and took 16 MiB each time).
            BackendError::TooLarge { .. } => {
                tracing::warn!(%error, "reading {what}: the answer is too large");
                AppError::Invalid(format!(
                    "{} is too large to show here (more than {} MiB): narrow it with a label selector, or use kubectl.",
                    capitalized(what),
                    crate::plugins::backend::MAX_ANSWER_BYTES >> 20
                ))
            }
            _ => match error.passing() {
                Some(passing) => {
                    tracing::warn!(%error, "reading {what} failed for now");
                    let message =
                        format!("{} cannot be read right now. {}", capitalized(what), passing.message);
                    AppError::Unavailable { message, retry_after: passing.retry_after }
                }
                None => {
                    tracing::error!(%error, "reading {what} failed");
                    AppError::Internal
                }
            },
        }
    }

    /// `what` at the start of a sentence.
    fn capitalized(what: &str) -> String {
        let mut chars = what.chars();
        chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
    }

    pub async fn discover(cluster_id: &str, after: Option<&str>) -> Result<Registry, AppError> {
        use crate::plugins::cache::{DISCOVERY_TTL, resource_version};
        check_cluster(cluster_id)?;
        let (state, token, caller) = caller()?;
        let path = "/apis/plugins.fundament.io/v1/plugininstallations";
        let list = state
            .backend
            .kube_get_cached(&caller.id, &token, cluster_id, path, DISCOVERY_TTL, after)
            .await
            .map_err(|e| user_error(e, "the plugin installations of this cluster"))?;
        let installations = model::installations(&list);
        let organization =
            crate::api::session::ssr::session_of_request().ok_or(AppError::Unauthenticated)?.organization;
        let lookups = installations.iter().filter(|i| i.is_running()).map(|i| {
            let backend = &state.backend;
            let organization = &organization;
            async move {
                let pinned = i.definition_ref();
                let answer = backend
                    .definition(
                        organization,
                        &pinned.plugin_name,
                        &pinned.plugin_version,
                        &pinned.definition_hash,
                    )
                    .await;
                (i.metadata.name.clone(), answer)
            }
        });
        let answers: BTreeMap<_, _> = futures::future::join_all(lookups).await.into_iter().collect();
        let mut registry = model::registry(cluster_id, &installations, &answers);
        registry.resource_version = resource_version(&list).unwrap_or_default().to_owned();
        Ok(registry)
    }

    pub async fn kind(cluster_id: &str, crd: &str) -> Result<KindInfo, AppError> {
        check_cluster(cluster_id)?;
        let (state, token) = user()?;
        Ok(crate::resource_views::api::ssr::definition(&state, &token, cluster_id, crd).await?.info)
    }

    pub async fn namespaces(cluster_id: &str, project: Option<&str>) -> Result<Vec<String>, AppError> {
        check_cluster(cluster_id)?;
        let (state, token) = user()?;
        crate::resource_views::api::ssr::namespaces(&state, &token, cluster_id, project).await
    }

    /// Tokens and tickets must not be cached anywhere on the way.
    fn no_store() {
        if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
            response.insert_header(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
        }
    }

    /// A request for a credential of the signed-in user, answered uncached.
    /// Without a session the reply says so (`failed`) rather than erring: the
    /// frame tells the user, as it does for every other failure.
    /// Only for the user and organization the asking page was drawn for ([`super::DrawnFor`]).
    async fn credential<T, Reply>(
        cluster_id: &str,
        drawn_for: &super::DrawnFor,
        granted: fn(T) -> Reply,
        failed: fn(AuthFailure) -> Reply,
        request: impl AsyncFnOnce(&ConsoleState, &str) -> Result<T, AuthFailure>,
    ) -> Result<Reply, AppError> {
        no_store();
        check_cluster(cluster_id)?;
        let Ok((state, token, user)) = caller() else {
            return Ok(failed(AuthFailure::Unauthorized));
        };
        // Whom the request's session is for: its user, and the organization the directory
        // makes them a member of (as the page's session was drawn).
        let organization = state.directory.current().organization_of(&user.id).map(|o| o.id.clone());
        let now = organization.map(|organization| super::DrawnFor { user: user.id, organization });
        if now.as_ref() != Some(drawn_for) {
            tracing::info!("a page drawn for another session asked for a credential; refused");
            return Ok(failed(AuthFailure::Unauthorized));
        }
        Ok(request(&state, &token).await.map_or_else(failed, granted))
    }

    pub async fn ticket(
        cluster_id: &str,
        installation_id: &str,
        drawn_for: &super::DrawnFor,
    ) -> Result<super::TicketReply, AppError> {
        use super::TicketReply;
        credential(cluster_id, drawn_for, TicketReply::Ticket, TicketReply::Failed, async |state, token| {
            state.backend.frame_ticket(token, cluster_id, installation_id).await
        })
        .await
    }

    pub async fn mint(
        cluster_id: &str,
        installation_id: &str,
        drawn_for: &super::DrawnFor,
    ) -> Result<MintReply, AppError> {
        credential(cluster_id, drawn_for, MintReply::Minted, MintReply::Failed, async |state, token| {
            state.backend.mint(token, cluster_id, installation_id).await
        })
        .await
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::{DrawnFor, TicketReply};
    use crate::plugins::token::AuthFailure;
    use crate::resource_views::api::scope_tests::{CLUSTER, as_user, run};

    /// A page drawn for alice gets nothing with bob's session, even where the identity provider
    /// gave both the same email, or none (these sessions have none): users are told apart by id.
    #[tokio::test]
    async fn a_credential_is_only_for_the_user_the_page_was_drawn_for_by_id() {
        let (bob, _gateway) = as_user("bob").await;
        let drawn_for = |user: &str| DrawnFor { user: user.into(), organization: "acme-corp".into() };
        let ticket =
            |drawn_for: DrawnFor| async move { super::ssr::ticket(CLUSTER, "uid", &drawn_for).await };
        let alices = run(&bob, ticket(drawn_for("alice"))).await.unwrap();
        assert_eq!(alices, TicketReply::Failed(AuthFailure::Unauthorized));
        // Bob's own page is asked on (authn cannot be reached here: another failure).
        let bobs = run(&bob, ticket(drawn_for("bob"))).await.unwrap();
        assert!(matches!(bobs, TicketReply::Failed(ref f) if *f != AuthFailure::Unauthorized), "{bobs:?}");
    }
}
