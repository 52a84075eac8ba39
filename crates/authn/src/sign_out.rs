//! `authn.v1.AuthnService/SignOut`: revokes the caller's session, so its
//! UserToken and every PluginToken and frame ticket minted in it stop working
//! everywhere at once. Signing out twice is not an error.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use crate::clock;
use crate::credentials::Caller;
use crate::state::AuthnState;
use crate::wire::private_json;
use fundament_connect::ConnectError;

/// The request has no fields. A revoked session's token still signs out (again).
pub(crate) async fn sign_out(
    State(state): State<Arc<AuthnState>>,
    Caller(claims): Caller,
) -> Result<Response, ConnectError> {
    state
        .revocations
        .revoke(&claims.jti, claims.exp, clock::now())
        .await
        .map_err(|err| ConnectError::internal("session revocation not stored", err))?;
    tracing::info!(user = %claims.sub, "signed out: session revoked");
    Ok(private_json(serde_json::json!({})))
}
