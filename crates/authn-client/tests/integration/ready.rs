//! `Credentials::ready`, what every verifier's `/readyz` answers with: keys held and the revoked
//! sessions received, against an authn served on loopback.

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use fundament_authn_client::{Credentials, Keys, NotReady, RevokedSessions};
use fundament_tokens::{Signer, Verifier};

/// An authn on loopback: its JWKS, and a revocation stream that answers `revocations_status`
/// (200: a snapshot with nothing revoked).
async fn authn(signer: &Signer, revocations_status: u16) -> String {
    let jwks = signer.jwks();
    let app =
        Router::new().route("/.well-known/jwks.json", get(move || async move { axum::Json(jwks) })).route(
            "/sessions/revocations",
            get(move || async move {
                let status = http::StatusCode::from_u16(revocations_status).unwrap();
                (status, "{\"type\":\"SNAPSHOT\",\"revoked\":[]}\n")
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// `ready()` until it holds or `within` has passed.
async fn ready_within(credentials: &Credentials, within: Duration) -> Result<(), NotReady> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let answer = credentials.ready().await;
        if answer.is_ok() || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn fixed_keys_and_nothing_followed_are_ready_at_once() {
    let verifier = Verifier::from_jwks(&Signer::generate().jwks()).unwrap();
    assert_eq!(Credentials::fixed(verifier).ready().await, Ok(()));
}

#[tokio::test]
async fn an_unreachable_authn_is_not_ready_naming_the_keys() {
    let port = fundament_shared_store::testing::refused_port();
    let credentials = Credentials {
        keys: Keys::from_url(&format!("http://127.0.0.1:{port}/.well-known/jwks.json")),
        revoked: RevokedSessions::none(),
    };
    let answer = credentials.ready().await;
    assert_eq!(answer, Err(NotReady::Keys));
    assert_eq!(answer.unwrap_err().to_string(), "authn's keys (JWKS) not fetched yet");
}

#[tokio::test]
async fn readiness_fetches_the_keys_itself_and_waits_for_the_revocations() {
    let signer = Signer::generate();
    let credentials = Credentials::from_authn(&authn(&signer, 200).await);
    assert!(!credentials.keys.loaded(), "keys are fetched on demand, not at construction");
    assert_eq!(ready_within(&credentials, Duration::from_secs(10)).await, Ok(()));
    assert!(credentials.keys.loaded(), "the readiness check fetched the JWKS without any token");
    // The keys are the signer's: a token it signs verifies with what was fetched.
    let now = time_now();
    let token = signer.sign_user("alice", "alice@acme-corp.com", "Alice", now, 60);
    assert!(credentials.verify_user_now(&token, now).is_ok());
}

#[tokio::test]
async fn keys_without_the_revoked_sessions_are_not_ready() {
    let signer = Signer::generate();
    let credentials = Credentials::from_authn(&authn(&signer, 500).await);
    assert_eq!(ready_within(&credentials, Duration::from_secs(1)).await, Err(NotReady::Revocations));
    assert!(credentials.keys.loaded());
}

fn time_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}
