//! `authn.v1.AuthnService/GetUserInfo`: who the caller's UserToken says they are.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::Serialize;

use crate::credentials::Caller;
use crate::state::AuthnState;
use crate::wire::private_json;
use fundament_connect::ConnectError;

#[derive(Debug, Serialize)]
struct UserInfo {
    id: String,
    email: String,
    name: String,
}

/// The request has no fields.
pub(crate) async fn get_user_info(
    State(state): State<Arc<AuthnState>>,
    caller: Caller,
) -> Result<Response, ConnectError> {
    let claims = caller.live(&state)?;
    Ok(private_json(UserInfo { id: claims.sub, email: claims.email, name: claims.name }))
}
