//! A rotation as a verifier sees it: authn starts signing with a key published moments ago, and
//! the verifier accepts its tokens without a restart, even when it fetched the JWKS just before.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::{Json, Router, extract::State, routing::get};
use fundament_authn_client::{Keys, keys::MIN_REFETCH};
use fundament_tokens::Signer;

async fn jwks(State(signer): State<Arc<RwLock<Signer>>>) -> Json<serde_json::Value> {
    Json(signer.read().unwrap().jwks())
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn a_token_of_a_brand_new_key_verifies_after_at_most_one_refetch_interval() {
    let signer = Arc::new(RwLock::new(Signer::generate()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/.well-known/jwks.json", listener.local_addr().unwrap());
    let app = Router::new().route("/.well-known/jwks.json", get(jwks)).with_state(Arc::clone(&signer));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let keys = Keys::from_url(&url);
    let old = signer.read().unwrap().sign_user("alice", "a@x", "Alice", now(), 600);
    keys.verify_user(&old, now()).await.expect("first use fetches");

    // Rotated right after that fetch: the new kid is unknown, and the last fetch is recent.
    signer.write().unwrap().rotate();
    let new = signer.read().unwrap().sign_user("alice", "a@x", "Alice", now(), 600);
    let started = Instant::now();
    keys.verify_user(&new, now()).await.expect("the new key is fetched, not refused");
    assert!(started.elapsed() <= MIN_REFETCH + Duration::from_millis(500), "{:?}", started.elapsed());
    keys.verify_user(&old, now()).await.expect("the previous key still verifies");

    // A made-up kid costs at most one fetch per interval and is refused.
    let kid = fundament_tokens::peek_kid(&new).unwrap();
    assert!(keys.knows(&kid));
    let forged = Signer::generate().sign_user("alice", "a@x", "Alice", now(), 600);
    assert!(keys.verify_user(&forged, now()).await.is_err());
}
