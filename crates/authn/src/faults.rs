//! Mock mode's development fault switches: `GET`/`PUT /dev/faults/mint-plugin-token`, and
//! `POST /dev/faults/rotate-signing-key` (a key rotation in the middle of everyone's session).
//!
//! Not a Connect procedure: a plain JSON resource, so a test or a developer can flip it with curl.
//! Outside mock mode the routes do not exist (see [`crate::router`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::state::AuthnState;

/// The path of the `MintPluginToken` switch, also named in the error it causes.
pub(crate) const MINT_PLUGIN_TOKEN_PATH: &str = "/dev/faults/mint-plugin-token";

/// What a switched-off mint answers: it names the switch so that whoever meets it in a test
/// log knows where it came from and how to undo it.
pub(crate) const MINT_SWITCHED_OFF: &str = "plugin token minting is switched off by the development fault switch (PUT /dev/faults/mint-plugin-token)";

/// The body of both methods. Strict (`fail` required, nothing else allowed) so that a typo such
/// as `{"fails": true}` is refused instead of silently leaving the switch as it was.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Switch {
    fail: bool,
}

/// Whether the mint fault is on. Mock mode only: a state built for production with the flag set
/// by mistake still mints.
pub(crate) fn mint_plugin_token_fails(state: &AuthnState) -> bool {
    state.config.fault_switches && state.fail_mint_plugin_token.load(Ordering::SeqCst)
}

/// `GET /dev/faults/mint-plugin-token` → `{"fail": bool}`.
pub(crate) async fn get_mint_plugin_token(State(state): State<Arc<AuthnState>>) -> Json<Switch> {
    Json(Switch { fail: state.fail_mint_plugin_token.load(Ordering::SeqCst) })
}

/// `PUT /dev/faults/mint-plugin-token` with `{"fail": true|false}` → 204. Any content type is
/// accepted so a bare `curl -d` works; browsers cannot send a cross-origin PUT without a CORS
/// preflight, which authn's CORS policy (GET and POST only) refuses.
pub(crate) async fn put_mint_plugin_token(State(state): State<Arc<AuthnState>>, body: Bytes) -> Response {
    let Ok(Switch { fail }) = serde_json::from_slice::<Switch>(&body) else {
        return (StatusCode::BAD_REQUEST, "expected a JSON body {\"fail\": true} or {\"fail\": false}\n")
            .into_response();
    };
    let was = state.fail_mint_plugin_token.swap(fail, Ordering::SeqCst);
    if was != fail {
        tracing::info!(switch = MINT_PLUGIN_TOKEN_PATH, fail, "development fault switch flipped");
    }
    StatusCode::NO_CONTENT.into_response()
}

/// The path of the key rotation.
pub(crate) const ROTATE_SIGNING_KEY_PATH: &str = "/dev/faults/rotate-signing-key";

/// What a rotation answers: the key that signs from now on, and every key published.
#[derive(Debug, Serialize)]
pub(crate) struct Rotated {
    kid: String,
    published: Vec<String>,
}

/// `POST /dev/faults/rotate-signing-key` → 200 `{"kid": "<new>", "published": ["<new>", "<previous>"]}`.
/// authn signs with a new key from now on and keeps publishing the previous one, so tokens it
/// signed verify until they expire (the key before that is dropped, as in every rotation).
/// Verifiers meet the new `kid` on the next token and fetch the JWKS then: no one is signed out.
/// In memory only: a restart goes back to the keys authn was started with.
pub(crate) async fn rotate_signing_key(State(state): State<Arc<AuthnState>>) -> Json<Rotated> {
    let mut signer = state.signer.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    signer.rotate();
    let rotated = Rotated { kid: signer.current_kid().to_owned(), published: signer.published_kids() };
    tracing::info!(switch = ROTATE_SIGNING_KEY_PATH, kid = %rotated.kid, "development switch: signing key rotated");
    Json(rotated)
}
