//! The routes of the service.

use std::sync::Arc;

use axum::Router;
use axum::routing::{any, get};

use crate::connect::ConnectError;
use crate::state::AuthnState;
use crate::{faults, mint, public, sign_in, user_info};

/// The authn service. Procedures are routed for every method so that the Connect checks
/// (POST, JSON, size) answer in Connect's error format rather than axum's plain 405.
/// `DevSignIn` and the development fault switches exist in mock mode only; elsewhere they are
/// unknown paths like any other.
pub fn router(state: Arc<AuthnState>) -> Router {
    let mut router = Router::new();
    if state.config.mock {
        router = router.route("/authn.v1.AuthnService/DevSignIn", any(sign_in::dev_sign_in)).route(
            faults::MINT_PLUGIN_TOKEN_PATH,
            get(faults::get_mint_plugin_token).put(faults::put_mint_plugin_token),
        );
    }
    router
        .route("/authn.v1.AuthnService/GetUserInfo", any(user_info::get_user_info))
        .route("/authn.v1.TokenService/MintPluginToken", any(mint::mint_plugin_token))
        .route("/.well-known/jwks.json", get(public::jwks))
        .route("/livez", get(public::livez))
        .fallback(|| async { ConnectError::unknown_procedure() })
        .with_state(state)
}
