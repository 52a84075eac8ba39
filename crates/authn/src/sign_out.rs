//! `authn.v1.AuthnService/SignOut`: revokes the caller's session, so its
//! UserToken and every PluginToken and frame ticket minted in it stop working
//! everywhere at once. Signing out twice is not an error.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;

use crate::clock;
use crate::credentials::verify_signature_and_claims;
use crate::state::AuthnState;
use crate::wire::private_json;
use fundament_connect::{ConnectError, ConnectJson};

/// No fields.
#[derive(Debug, Deserialize)]
pub(crate) struct SignOutRequest {}

pub(crate) async fn sign_out(
    State(state): State<Arc<AuthnState>>,
    headers: HeaderMap,
    ConnectJson(SignOutRequest {}): ConnectJson<SignOutRequest>,
) -> Result<Response, ConnectError> {
    let claims = verify_signature_and_claims(&state, &headers)?;
    state
        .revocations
        .revoke(&claims.jti, claims.exp, clock::now())
        .map_err(|err| ConnectError::internal("session revocation not stored", err))?;
    tracing::info!(user = %claims.sub, "signed out: session revoked");
    Ok(private_json(serde_json::json!({})))
}
