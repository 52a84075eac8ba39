//! The routes of the service.

use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::{any, get, post};

use crate::state::AuthnState;
use crate::{dev_guard, faults, mint, oidc_sign_in, public, revocation_stream, sign_in, sign_out, user_info};
use fundament_connect::ConnectError;

/// The authn service. Procedures are routed for every method so that the Connect checks
/// (POST, JSON, size) answer in Connect's error format rather than axum's plain 405.
/// `DevSignIn` exists where [`AuthnConfig::dev_sign_in`] says (mock mode, and `fundament dev`
/// without an identity provider); the development fault switches exist in mock mode only
/// ([`AuthnConfig::fault_switches`]). Elsewhere they are unknown paths like any other, and where
/// they exist they answer local tools only, never a browser page.
///
/// [`AuthnConfig::dev_sign_in`]: crate::AuthnConfig::dev_sign_in
/// [`AuthnConfig::fault_switches`]: crate::AuthnConfig::fault_switches
pub fn router(state: Arc<AuthnState>) -> Router {
    router_with_dev_routes(state, Router::new())
}

/// [`router`] with more development fault switches (`fundament dev`'s switchboard) behind the
/// same mock-mode-only, local-tools-only guard: without `fault_switches` they are not mounted.
pub fn router_with_dev_routes(state: Arc<AuthnState>, more: Router<Arc<AuthnState>>) -> Router {
    let mut dev = Router::new();
    if state.config.fault_switches {
        dev = more
            .route(
                faults::MINT_PLUGIN_TOKEN_PATH,
                get(faults::get_mint_plugin_token).put(faults::put_mint_plugin_token),
            )
            .route(faults::ROTATE_SIGNING_KEY_PATH, post(faults::rotate_signing_key));
    }
    if state.config.dev_sign_in {
        dev = dev.route("/authn.v1.AuthnService/DevSignIn", any(sign_in::dev_sign_in));
    }
    let mut router = Router::new();
    if dev.has_routes() {
        router = router
            .merge(dev.route_layer(from_fn_with_state(Arc::clone(&state), dev_guard::local_tools_only)));
    }
    if state.oidc.is_some() {
        router = router
            .route("/authn.v1.OidcService/StartSignIn", any(oidc_sign_in::start))
            .route("/authn.v1.OidcService/FinishSignIn", any(oidc_sign_in::finish))
            .route("/authn.v1.OidcService/EndSessionUrl", any(oidc_sign_in::end_session_url));
    }
    router
        .route("/authn.v1.AuthnService/GetUserInfo", any(user_info::get_user_info))
        .route("/authn.v1.AuthnService/SignOut", any(sign_out::sign_out))
        .route("/authn.v1.TokenService/MintPluginToken", any(mint::mint::<mint::PluginToken>))
        .route("/authn.v1.TokenService/MintFrameTicket", any(mint::mint::<mint::FrameTicket>))
        .route("/sessions/revocations", get(revocation_stream::revocations))
        .route("/.well-known/jwks.json", get(public::jwks))
        .route("/livez", get(public::livez))
        .route("/readyz", get(public::readyz))
        .fallback(|uri: http::Uri| async move {
            ConnectError::unknown_procedure(uri.path().trim_start_matches('/'))
        })
        .with_state(state)
        .layer(fundament_telemetry::catch_panics(fundament_telemetry::PanicAnswer(|| {
            ("application/json", ConnectError::internal_body())
        })))
}
