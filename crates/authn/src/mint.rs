//! `authn.v1.TokenService/MintPluginToken` (a UserToken in, a PluginToken for one installation
//! on one cluster out) and `MintFrameTicket` (the same, but a single-use ticket that opens one
//! plugin frame). The gates run top to bottom; each one's failure is final. In mock mode the
//! development fault switch for PluginTokens sits between authentication and `can_view`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fundament_tokens::{FRAME_TICKET_TTL_SECS, PLUGIN_TOKEN_TTL_SECS, Signer, UserClaims};
use serde::{Deserialize, Serialize};

use crate::credentials::authenticate;
use crate::state::{AuthnState, Installation, LookupError};
use crate::wire::{TokenResponse, private_json};
use crate::{clock, faults};
use fundament_connect::{Code, ConnectError, ConnectJson};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InstallationRequest {
    /// Connect JSON also accepts the proto field names.
    #[serde(default, alias = "cluster_id")]
    cluster_id: String,
    #[serde(default, alias = "installation_id")]
    installation_id: String,
}

/// One answer for "no such installation" and "a cluster you cannot see", so the mint cannot
/// be used to probe which clusters or installations exist.
fn not_found() -> ConnectError {
    ConnectError::new(Code::NotFound, "plugin installation not found")
}

/// `MintPluginToken` and `MintFrameTicket`: the gates of [`entitled`], then what `M` signs.
pub(crate) async fn mint<M: Mint>(
    State(state): State<Arc<AuthnState>>,
    headers: HeaderMap,
    ConnectJson(request): ConnectJson<InstallationRequest>,
) -> Result<Response, ConnectError> {
    let entitled = entitled(&state, &headers, &request, M::FAULT).await?;
    Ok(M::sign(&state, entitled))
}

/// What one mint procedure signs for a user who passed the gates.
pub(crate) trait Mint {
    /// The development fault switch that applies.
    const FAULT: Fault;
    /// The procedure's answer.
    fn sign(state: &AuthnState, entitled: Entitled) -> Response;
}

/// `MintPluginToken`: a PluginToken for one installation on one cluster.
pub(crate) struct PluginToken;

impl Mint for PluginToken {
    const FAULT: Fault = Fault::MintPluginToken;

    fn sign(state: &AuthnState, Entitled { user, cluster_id, installation }: Entitled) -> Response {
        let now = clock::now();
        // Never past the session it was minted for: a sign-out's revocation is kept until the
        // session's own expiry, so a longer-lived token would come back to life after it.
        let ttl = PLUGIN_TOKEN_TTL_SECS.min(user.exp - now).max(0);
        let claims = Signer::plugin_claims(
            &user.sub,
            &cluster_id,
            &installation.uid,
            &installation.name,
            &installation.plugin_name,
            &installation.plugin_version,
            &installation.definition_hash,
            &user.jti,
            now,
            ttl,
        );
        let token = state.signer().sign_plugin(&claims);
        tracing::info!(
            user = %user.sub,
            cluster = %cluster_id,
            installation = %installation.uid,
            installation_name = %installation.name,
            plugin_name = %installation.plugin_name,
            plugin_version = %installation.plugin_version,
            jti = %claims.jti,
            "plugin token minted"
        );
        private_json(TokenResponse::bearer(token, ttl))
    }
}

/// `MintFrameTicket`: a ticket that lets one frame load this installation's pages once (see
/// plugin-proxy). The mint fault switch is about PluginTokens only: frames still load.
pub(crate) struct FrameTicket;

impl Mint for FrameTicket {
    const FAULT: Fault = Fault::None;

    fn sign(state: &AuthnState, Entitled { user, cluster_id, installation }: Entitled) -> Response {
        let now = clock::now();
        let ticket = state.signer().sign_frame_ticket(
            &user.sub,
            &user.jti,
            user.exp,
            &cluster_id,
            &installation.uid,
            &installation.name,
            now,
            FRAME_TICKET_TTL_SECS,
        );
        tracing::debug!(user = %user.sub, installation_name = %installation.name, "frame ticket minted");
        private_json(FrameTicketResponse {
            ticket,
            expires_in: FRAME_TICKET_TTL_SECS.min(user.exp - now).to_string(),
        })
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct FrameTicketResponse {
    ticket: String,
    /// int64 seconds; a string in Connect JSON.
    expires_in: String,
}

/// Which development fault switch applies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    MintPluginToken,
    None,
}

/// A user who may act through an installation.
pub(crate) struct Entitled {
    user: UserClaims,
    cluster_id: String,
    installation: Installation,
}

/// The gates, top to bottom; each one's failure is final.
async fn entitled(
    state: &AuthnState,
    headers: &HeaderMap,
    request: &InstallationRequest,
    fault: Fault,
) -> Result<Entitled, ConnectError> {
    // 1. Shape, before any other call.
    let (cluster_id, installation_id) = validate(request)?;
    // 2. The caller is a user with a live session (a PluginToken fails here: wrong audience).
    let user = authenticate(state, headers)?;
    // The user's mints are bounded (plugin-proxy keeps every ticket it opens for a minute),
    // before any call the mint makes.
    state.mint_budget.take(&user.sub).map_err(|exhausted| {
        tracing::warn!(user = %user.sub, "mint refused: the user's budget of tokens and tickets is spent");
        ConnectError::new(Code::ResourceExhausted, exhausted.to_string())
    })?;
    // Mock mode's fault switch: after the gates that depend only on the caller, so a broken
    // request or a missing sign-in still answers as it would without the switch.
    if fault == Fault::MintPluginToken && faults::mint_plugin_token_fails(state) {
        return Err(ConnectError::new(Code::Unavailable, faults::MINT_SWITCHED_OFF));
    }
    // 3. The user may see the cluster. A check that cannot be made is `unavailable`, naming
    // the authorization service, so the console can say what is down and try again; its
    // cause names OpenFGA's address and is logged here, once.
    match state.fga.can_view(&user.sub, &cluster_id).await {
        Ok(allowed) => {
            state.fga_health.record_ok();
            if !allowed {
                return Err(not_found());
            }
        }
        Err(err) => {
            state.fga_health.record_failure(err.summary());
            tracing::error!(error = %err, cluster_id, "can_view could not be checked");
            return Err(ConnectError::new(Code::Unavailable, err.client_message()));
        }
    }
    // 4. The installation exists on that cluster.
    let installation = match state.installations.lookup(&cluster_id, &installation_id).await {
        Ok(Some(installation)) => installation,
        Ok(None) | Err(LookupError::UnknownCluster(_)) => return Err(not_found()),
        Err(err @ LookupError::Other(_)) => {
            return Err(ConnectError::internal("installation lookup failed", err));
        }
    };
    if !installation.uid.eq_ignore_ascii_case(&installation_id) {
        // A lookup that answers with another installation is a bug; never sign for it.
        return Err(ConnectError::internal("installation lookup returned another uid", &installation.uid));
    }
    let installation = Installation { uid: installation_id, ..installation };
    Ok(Entitled { user, cluster_id, installation })
}

/// Both ids must be UUIDs (hyphenated, any case); they are returned in canonical lower case so
/// that claims, lookups and audit lines use one spelling.
fn validate(request: &InstallationRequest) -> Result<(String, String), ConnectError> {
    let cluster = canonical_uuid(&request.cluster_id);
    let installation = canonical_uuid(&request.installation_id);
    match (cluster, installation) {
        (Some(cluster), Some(installation)) => Ok((cluster, installation)),
        (cluster, installation) => {
            let mut violations = Vec::new();
            if cluster.is_none() {
                violations.push("cluster_id: value must be a valid UUID");
            }
            if installation.is_none() {
                violations.push("installation_id: value must be a valid UUID");
            }
            Err(ConnectError::new(
                Code::InvalidArgument,
                format!("validation error: {}", violations.join("; ")),
            ))
        }
    }
}

fn canonical_uuid(text: &str) -> Option<String> {
    if text.len() != 36 {
        return None; // only the hyphenated form; uuid also parses simple, braced and URN forms
    }
    uuid::Uuid::try_parse(text).ok().map(|id| id.hyphenated().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cluster: &str, installation: &str) -> InstallationRequest {
        InstallationRequest { cluster_id: cluster.into(), installation_id: installation.into() }
    }

    #[test]
    fn canonicalises_uuids_to_lower_case() {
        let (cluster, installation) = validate(&request(
            "019B4000-2000-7000-8000-00000000000A",
            "00000000-0000-0000-0000-000000000001",
        ))
        .unwrap();
        assert_eq!(cluster, "019b4000-2000-7000-8000-00000000000a");
        assert_eq!(installation, "00000000-0000-0000-0000-000000000001");
    }

    #[test]
    fn names_every_invalid_field() {
        let good = "00000000-0000-0000-0000-000000000001";
        for bad in
            ["", "not-a-uuid", "00000000000000000000000000000001", "{00000000-0000-0000-0000-000000000001}"]
        {
            let err = validate(&request(bad, good)).unwrap_err();
            assert_eq!(err.code(), Code::InvalidArgument);
            assert!(format!("{err:?}").contains("cluster_id"), "{bad}");
            let err = validate(&request(good, bad)).unwrap_err();
            assert!(format!("{err:?}").contains("installation_id"), "{bad}");
        }
        let both = format!("{:?}", validate(&request("x", "y")).unwrap_err());
        assert!(both.contains("cluster_id") && both.contains("installation_id"));
    }

    #[test]
    fn accepts_proto_field_names() {
        let request: InstallationRequest =
            serde_json::from_str(r#"{"cluster_id": "a", "installation_id": "b"}"#).unwrap();
        assert_eq!((request.cluster_id.as_str(), request.installation_id.as_str()), ("a", "b"));
    }
}
