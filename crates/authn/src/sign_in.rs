//! `authn.v1.AuthnService/DevSignIn`: the development sign-in, a user picker without passwords
//! (mock mode, and `fundament dev` in the other modes until an identity provider is configured).

use fundament_kube_core::validation::is_dns1123_label;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use fundament_tokens::USER_TOKEN_TTL_SECS;
use serde::Deserialize;

use crate::clock;
use crate::state::AuthnState;
use crate::wire::{TokenResponse, private_json};
use fundament_connect::{Code, ConnectError, ConnectJson};

#[derive(Debug, Deserialize)]
pub(crate) struct DevSignInRequest {
    #[serde(default)]
    email: String,
}

/// Signs in a configured user by email: a UserToken in the body (no cookie: the console keeps
/// the session in a cookie of its own origin). Without `config.dev_sign_in` the procedure is not routed at all (404 `unimplemented`); the check
/// here is a second wall, so a production deployment can never be entered without credentials.
pub(crate) async fn dev_sign_in(
    State(state): State<Arc<AuthnState>>,
    ConnectJson(request): ConnectJson<DevSignInRequest>,
) -> Result<Response, ConnectError> {
    if !state.config.dev_sign_in {
        return Err(ConnectError::unknown_procedure("authn.v1.AuthnService/DevSignIn"));
    }
    let email = request.email.trim();
    if email.is_empty() {
        return Err(ConnectError::new(Code::InvalidArgument, "email: value is required"));
    }
    let user = state
        .config
        .users
        .iter()
        .find(|user| user.email.eq_ignore_ascii_case(email))
        .ok_or_else(|| ConnectError::new(Code::NotFound, "unknown user"))?;
    if !is_dns1123_label(&user.id) {
        // Verifiers would refuse the token; better to say so here, once, than to sign it.
        return Err(ConnectError::internal("configured user id is not a DNS-1123 label", &user.id));
    }
    let token =
        state.signer().sign_user(&user.id, &user.email, &user.name, clock::now(), USER_TOKEN_TTL_SECS);
    tracing::info!(user = %user.id, "dev sign-in");
    Ok(private_json(TokenResponse::bearer(token, USER_TOKEN_TTL_SECS)))
}
