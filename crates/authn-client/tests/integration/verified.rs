//! A token verified once is not verified again on every call, yet it is refused the moment
//! it would be refused afresh: past its `exp`, or once its key has left authn's JWKS.

use std::sync::{Arc, RwLock};

use axum::{Json, Router, extract::State, routing::get};
use fundament_authn_client::Keys;
use fundament_tokens::{EXP_LEEWAY_SECS, Signer, TokenError, Verifier};

async fn jwks(State(signer): State<Arc<RwLock<Signer>>>) -> Json<serde_json::Value> {
    Json(signer.read().unwrap().jwks())
}

const NOW: i64 = 1_900_000_000;

#[tokio::test]
async fn a_remembered_token_still_expires() {
    let signer = Signer::generate();
    let keys = Keys::fixed(Verifier::from_jwks(&signer.jwks()).unwrap());
    let token = signer.sign_user("alice", "a@x", "Alice", NOW, 60);
    assert_eq!(keys.verify_user(&token, NOW).await.unwrap().sub, "alice");
    assert!(keys.verify_user(&token, NOW + 59 + EXP_LEEWAY_SECS).await.is_ok());
    assert_eq!(keys.verify_user(&token, NOW + 60 + EXP_LEEWAY_SECS).await, Err(TokenError::Expired));
    // A clock reading before the first verification is judged afresh (not yet valid there).
    assert_eq!(keys.verify_user(&token, NOW - 3600).await, Err(TokenError::NotYetValid));
    // A token of one kind is never remembered as the other.
    assert!(keys.verify_plugin(&token, NOW).await.is_err());
}

#[tokio::test]
async fn a_remembered_token_is_refused_once_its_key_left_the_jwks() {
    let signer = Arc::new(RwLock::new(Signer::generate()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/.well-known/jwks.json", listener.local_addr().unwrap());
    let app = Router::new().route("/.well-known/jwks.json", get(jwks)).with_state(Arc::clone(&signer));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let keys = Keys::from_url(&url);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let old = signer.read().unwrap().sign_user("alice", "a@x", "Alice", now, 600);
    keys.verify_user(&old, now).await.expect("first use fetches");
    keys.verify_user(&old, now).await.expect("and is remembered");
    // Two rotations: the key that signed `old` is no longer published.
    signer.write().unwrap().rotate();
    signer.write().unwrap().rotate();
    let new = signer.read().unwrap().sign_user("alice", "a@x", "Alice", now, 600);
    keys.verify_user(&new, now).await.expect("the new key is fetched");
    assert_eq!(keys.verify_user(&old, now).await, Err(TokenError::UnknownKey));
}

/// authn's JWKS, answered only while `up` (else a 503, as a stopped authn behind a balancer).
async fn jwks_while_up(
    State((signer, up)): State<(Arc<RwLock<Signer>>, Arc<std::sync::atomic::AtomicBool>)>,
) -> Result<Json<serde_json::Value>, http::StatusCode> {
    if up.load(std::sync::atomic::Ordering::SeqCst) {
        Ok(Json(signer.read().unwrap().jwks()))
    } else {
        Err(http::StatusCode::SERVICE_UNAVAILABLE)
    }
}

#[tokio::test]
async fn a_key_that_cannot_be_looked_up_while_authn_is_down_is_a_passing_failure() {
    let signer = Arc::new(RwLock::new(Signer::generate()));
    let up = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/.well-known/jwks.json", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/.well-known/jwks.json", get(jwks_while_up))
        .with_state((Arc::clone(&signer), Arc::clone(&up)));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let keys = Keys::from_url(&url);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let old = signer.read().unwrap().sign_user("alice", "a@x", "Alice", now, 600);
    keys.verify_user(&old, now).await.expect("first use fetches");
    // authn rotates, then goes down before this verifier has seen the new key.
    signer.write().unwrap().rotate();
    up.store(false, std::sync::atomic::Ordering::SeqCst);
    let new = signer.read().unwrap().sign_user("alice", "a@x", "Alice", now, 600);
    let refused = keys.verify_user(&new, now).await.unwrap_err();
    assert_eq!(refused, TokenError::KeysUnavailable, "not UnknownKey: the key may well exist");
    assert!(refused.is_passing());
    keys.verify_user(&old, now).await.expect("tokens of keys at hand still verify");
    // A token that is not authn's at all is still refused as such once authn answers.
    up.store(true, std::sync::atomic::Ordering::SeqCst);
    keys.verify_user(&new, now).await.expect("once authn answers, the new key is learned");
    let stranger = Signer::generate().sign_user("alice", "a@x", "Alice", now, 600);
    assert_eq!(keys.verify_user(&stranger, now).await, Err(TokenError::UnknownKey));
}
