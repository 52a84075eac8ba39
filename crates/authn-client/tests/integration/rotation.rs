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
    // One interval and the fetch, with room for a loaded machine (as the flood below has):
    // still far from the next periodic refresh, or from a second interval.
    assert!(started.elapsed() <= MIN_REFETCH + Duration::from_millis(1500), "{:?}", started.elapsed());
    keys.verify_user(&old, now()).await.expect("the previous key still verifies");

    // A made-up kid costs at most one fetch per interval and is refused.
    let kid = fundament_tokens::peek_kid(&new).unwrap();
    assert!(keys.knows(&kid));
    let forged = Signer::generate().sign_user("alice", "a@x", "Alice", now(), 600);
    assert!(keys.verify_user(&forged, now()).await.is_err());
}

/// Tokens naming made-up key ids, many at once (a flood of forged session cookies or bearer
/// tokens): each waits for the next fetch at most, and the lot costs authn one JWKS request per
/// interval, not one each in turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_made_up_key_ids_costs_one_fetch_per_interval() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let signer = Signer::generate();
    let hits = Arc::new(AtomicUsize::new(0));
    let jwks = signer.jwks();
    let counted = Arc::clone(&hits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/.well-known/jwks.json", listener.local_addr().unwrap());
    let app = Router::new().route(
        "/.well-known/jwks.json",
        get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            let jwks = jwks.clone();
            async move { Json(jwks) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let keys = Keys::from_url(&url);
    let real = signer.sign_user("alice", "a@x", "Alice", now(), 600);
    keys.verify_user(&real, now()).await.expect("first use fetches");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // Waiting verifiers (kube-api-proxy, plugin-proxy): all refused by the next fetch.
    let started = Instant::now();
    let forged: Vec<_> = (0..200)
        .map(|_| {
            let keys = keys.clone();
            let token = Signer::generate().sign_user("alice", "a@x", "Alice", now(), 600);
            tokio::spawn(async move { keys.verify_user(&token, now()).await })
        })
        .collect();
    for verification in forged {
        assert!(verification.await.unwrap().is_err());
    }
    assert!(started.elapsed() <= MIN_REFETCH + Duration::from_millis(1500), "{:?}", started.elapsed());
    assert!(hits.load(Ordering::SeqCst) <= 3, "{} fetches", hits.load(Ordering::SeqCst));

    // Verifiers that answer with the keys at hand (the console's pages): one fetch in the
    // background, however many unknown key ids arrive while it runs.
    let before = hits.load(Ordering::SeqCst);
    let learning = Instant::now();
    for i in 0..1000 {
        keys.learn_in_background(&format!("made-up-{i}"));
    }
    // The fetch comes within an interval; on a loaded machine it may land late, so wait for it
    // (at most 5 s past the interval), and at least as long as an idle machine needs, so that
    // more than one would have shown too; then count: exactly one.
    let deadline = learning + MIN_REFETCH + Duration::from_secs(5);
    while hits.load(Ordering::SeqCst) == before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(
        (learning + MIN_REFETCH + Duration::from_millis(800)).saturating_duration_since(Instant::now()),
    )
    .await;
    assert_eq!(hits.load(Ordering::SeqCst), before + 1);
    // What was verified before still verifies, without a fetch.
    keys.verify_user(&real, now()).await.expect("the real token still verifies");
    assert_eq!(hits.load(Ordering::SeqCst), before + 1);
}
