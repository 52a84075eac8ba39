//! `authn.v1.OidcService/*`: the console's calls for OpenID Connect sign-in.
//!
//! - `StartSignIn {returnPath}` → `{authorizationUrl, transaction, expiresIn}`; with the
//!   browser's current session as a bearer UserToken, finishing revokes that session;
//! - `FinishSignIn {code, state, transaction}` → a UserToken (`accessToken`, `tokenType`,
//!   `expiresIn`), the provider's `idToken` (the hint for ending its session) and `returnPath`;
//! - `EndSessionUrl {idTokenHint}` → `{url}`, empty when the provider offers no
//!   `end_session_endpoint`.
//!
//! Failures answer a Connect error whose message is the failure's code (see
//! [`crate::oidc::Failure`]); each is logged once here, without codes, tokens or verifiers.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fundament_connect::{Code, ConnectError, ConnectJson};
use fundament_kube_core::validation::is_dns1123_label;
use fundament_tokens::USER_TOKEN_TTL_SECS;
use serde::{Deserialize, Serialize};

use crate::clock;
use crate::oidc::{Callback, Oidc, ReplacedSession, SignInError};
use crate::state::AuthnState;
use crate::wire::private_json;

fn configured(state: &AuthnState) -> Result<&Oidc, ConnectError> {
    state
        .oidc
        .as_deref()
        .ok_or_else(|| ConnectError::new(Code::Unimplemented, "OpenID Connect sign-in is not configured"))
}

fn refused(error: SignInError) -> ConnectError {
    tracing::warn!(reason = error.failure.code(), detail = %error.detail, "oidc sign-in failed");
    ConnectError::new(error.failure.connect_code(), error.failure.code())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartRequest {
    #[serde(default)]
    return_path: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StartResponse {
    authorization_url: String,
    transaction: String,
    expires_in: String,
}

/// A bearer UserToken, when the console sends one, is the session the browser holds now: the
/// sign-in replaces it, so it is revoked once the new session is issued ([`finish`]).
pub(crate) async fn start(
    State(state): State<Arc<AuthnState>>,
    headers: HeaderMap,
    ConnectJson(request): ConnectJson<StartRequest>,
) -> Result<Response, ConnectError> {
    let oidc = configured(&state)?;
    // A path on the console: the console checked it; a second wall against an open redirect.
    let path = request.return_path.trim();
    if !path.starts_with('/')
        || path.starts_with("//")
        || path.contains('\\')
        || path.chars().any(char::is_control)
    {
        return Err(ConnectError::new(Code::InvalidArgument, "returnPath: must be a path on the console"));
    }
    let replaces = crate::credentials::replaced_session(&state, &headers)
        .map(|claims| ReplacedSession { sid: claims.jti, exp: claims.exp });
    let started = oidc.start_replacing(path, replaces, clock::now()).await.map_err(refused)?;
    tracing::info!("oidc sign-in started");
    Ok(private_json(StartResponse {
        authorization_url: started.authorization_url,
        transaction: started.transaction,
        expires_in: started.expires_in.to_string(),
    }))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FinishRequest {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    transaction: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct FinishResponse {
    access_token: String,
    token_type: &'static str,
    expires_in: String,
    id_token: String,
    return_path: String,
}

pub(crate) async fn finish(
    State(state): State<Arc<AuthnState>>,
    ConnectJson(request): ConnectJson<FinishRequest>,
) -> Result<Response, ConnectError> {
    let oidc = configured(&state)?;
    let callback = Callback { code: &request.code, state: &request.state, transaction: &request.transaction };
    let signed_in = oidc.finish(&callback, clock::now()).await.map_err(refused)?;
    if !is_dns1123_label(&signed_in.user_id) {
        // A directory entry that verifiers would refuse: say so once, here.
        return Err(ConnectError::internal("mapped user id is not a DNS-1123 label", &signed_in.user_id));
    }
    let p = &signed_in.profile;
    let token = state.signer().sign_user_in_groups(
        &signed_in.user_id,
        &p.email,
        &p.name,
        &p.groups,
        clock::now(),
        USER_TOKEN_TTL_SECS,
    );
    // The session this browser held when the sign-in started ends with it: a copy of its
    // token (left in a log, on a shared machine) must not outlive the browser's switch. The new
    // session stands if that cannot be stored; the old one then ends at its expiry, as before.
    let replaced = match &signed_in.replaces {
        Some(old) => match state.revocations.revoke(&old.sid, old.exp, clock::now()).await {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(%error, "oidc sign-in: the session it replaces could not be revoked");
                false
            }
        },
        None => false,
    };
    tracing::info!(
        user = %signed_in.user_id,
        groups = p.groups.len(),
        groups_left_out = p.groups_left_out,
        replaced,
        "oidc sign-in"
    );
    Ok(private_json(FinishResponse {
        access_token: token,
        token_type: "Bearer",
        expires_in: USER_TOKEN_TTL_SECS.to_string(),
        id_token: signed_in.id_token,
        return_path: signed_in.return_path,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndSessionRequest {
    #[serde(default)]
    id_token_hint: String,
}

pub(crate) async fn end_session_url(
    State(state): State<Arc<AuthnState>>,
    ConnectJson(request): ConnectJson<EndSessionRequest>,
) -> Result<Response, ConnectError> {
    let oidc = configured(&state)?;
    let url = oidc.end_session_url(request.id_token_hint.trim(), clock::now()).await.unwrap_or_default();
    Ok(private_json(serde_json::json!({ "url": url })))
}
