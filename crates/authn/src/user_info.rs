//! `authn.v1.AuthnService/GetUserInfo`: who the caller's UserToken says they are.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::credentials::authenticate;
use crate::state::AuthnState;
use crate::wire::private_json;
use fundament_connect::{ConnectError, ConnectJson};

/// The request has no fields; unknown ones are ignored like everywhere in Connect JSON.
#[derive(Debug, Deserialize)]
pub(crate) struct GetUserInfoRequest {}

#[derive(Debug, Serialize)]
struct UserInfo {
    id: String,
    email: String,
    name: String,
}

pub(crate) async fn get_user_info(
    State(state): State<Arc<AuthnState>>,
    headers: HeaderMap,
    ConnectJson(GetUserInfoRequest {}): ConnectJson<GetUserInfoRequest>,
) -> Result<Response, ConnectError> {
    let claims = authenticate(&state, &headers)?;
    Ok(private_json(UserInfo { id: claims.sub, email: claims.email, name: claims.name }))
}
