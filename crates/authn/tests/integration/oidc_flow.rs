//! OpenID Connect sign-in against a small provider served on loopback by the test: discovery,
//! the authorization URL (PKCE S256, state, nonce), the code exchange with the client secret
//! and the verifier, the ID token with the provider's JWKS, the directory's user, a replayed
//! code, a provider that is down or names another issuer, and the end-session URL; what
//! authn asks of the provider: discovery cached and shared, endpoints over https only, calls
//! under way bounded, and a JWKS that ages out.
//! (The same flow runs in Chromium against the real oidc-provider: end2end/oidc/.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::pkcs8::EncodePrivateKey;
use fundament_authn::oidc::identity::ClaimNames;
use fundament_authn::oidc::provider::{IN_FLIGHT_WAIT, MAX_IN_FLIGHT};
use fundament_authn::oidc::{
    Callback, DISCOVERY_MAX_AGE_SECS, Failure, JWKS_MAX_AGE_SECS, JWKS_REFETCH_SECS, Oidc, OidcConfig,
    ReplacedSession, SignInError, SignedIn,
};
use fundament_directory::{DirectoryData, FixedDirectory, Identity, User};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const CLIENT_ID: &str = "console";
const SECRET: &str = "client-secret-of-the-test";

#[derive(Default)]
struct Provider {
    issuer: String,
    /// What the authorization request asked for, as the provider's login would keep it.
    challenge: String,
    nonce: String,
    used_codes: Vec<String>,
    /// Calls received, by endpoint.
    discovery_calls: usize,
    jwks_calls: usize,
    token_calls: usize,
    /// Discovery answers 500.
    discovery_fails: bool,
    /// One field of the discovery document replaced.
    discovery_field: Option<(&'static str, String)>,
    /// The JWKS answers 500.
    jwks_fails: bool,
    /// The JWKS no longer lists `k1`, which the token endpoint still signs with.
    k1_withdrawn: bool,
    /// `k1` is another key now (a provider that made a new key under the same id on restart):
    /// the JWKS and the token endpoint both use it.
    k1_replaced: bool,
    /// The token endpoint takes a minute to answer.
    token_hangs: bool,
    /// Added to the provider's clock (`iat`, `exp`), to follow a test that moves authn's.
    clock_offset: i64,
}

type Shared = Arc<Mutex<Provider>>;

fn key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[9; 32])
}

/// The provider's key `k1` now.
fn k1(p: &Provider) -> ed25519_dalek::SigningKey {
    if p.k1_replaced { ed25519_dalek::SigningKey::from_bytes(&[10; 32]) } else { key() }
}

async fn discovery(State(p): State<Shared>) -> (StatusCode, Json<Value>) {
    let mut p = p.lock().unwrap();
    p.discovery_calls += 1;
    if p.discovery_fails {
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({})));
    }
    let issuer = p.issuer.clone();
    let mut document = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "end_session_endpoint": format!("{issuer}/logout"),
        "code_challenge_methods_supported": ["S256"],
    });
    if let Some((field, value)) = &p.discovery_field {
        document[*field] = json!(value);
    }
    (StatusCode::OK, Json(document))
}

async fn jwks(State(p): State<Shared>) -> (StatusCode, Json<Value>) {
    let mut p = p.lock().unwrap();
    p.jwks_calls += 1;
    if p.jwks_fails {
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({})));
    }
    let x = URL_SAFE_NO_PAD.encode(k1(&p).verifying_key().as_bytes());
    let k1 = json!({"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig", "x": x});
    let k9 = json!({"kty": "unknown-to-us", "kid": "k9"});
    let keys = if p.k1_withdrawn { vec![k9] } else { vec![k1, k9] };
    (StatusCode::OK, Json(json!({ "keys": keys })))
}

async fn token(
    State(p): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> (StatusCode, Json<Value>) {
    let hangs = {
        let mut p = p.lock().unwrap();
        p.token_calls += 1;
        p.token_hangs
    };
    if hangs {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    let mut p = p.lock().unwrap();
    let basic = format!("Basic {}", STANDARD.encode(format!("{CLIENT_ID}:{SECRET}")));
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"})));
    }
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let code = form.get("code").cloned().unwrap_or_default();
    if form.get("grant_type").map(String::as_str) != Some("authorization_code")
        || challenge != p.challenge
        || code != "the-code"
        || p.used_codes.contains(&code)
        || form.get("redirect_uri").map(String::as_str) != Some("http://localhost:3000/sign-in/oidc/callback")
    {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": "secret detail"})),
        );
    }
    p.used_codes.push(code);
    let now = time::OffsetDateTime::now_utc().unix_timestamp() + p.clock_offset;
    let claims = json!({"iss": p.issuer, "aud": CLIENT_ID, "sub": "acc-1", "iat": now, "exp": now + 300,
                        "nonce": p.nonce, "email": "alice@example.com", "name": "Alice (IdP)",
                        "groups": ["ops"]});
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("k1".into());
    let der = k1(&p).to_pkcs8_der().unwrap();
    let id_token =
        jsonwebtoken::encode(&header, &claims, &jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes()))
            .unwrap();
    (StatusCode::OK, Json(json!({"access_token": "at", "token_type": "Bearer", "id_token": id_token})))
}

/// A provider on a free loopback port; `issuer_suffix` makes its discovery name another issuer.
async fn provider(issuer_suffix: &str) -> (String, Shared) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let shared: Shared =
        Arc::new(Mutex::new(Provider { issuer: format!("{url}{issuer_suffix}"), ..Default::default() }));
    let app = Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .route("/token", post(token))
        .with_state(Arc::clone(&shared));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, shared)
}

fn oidc(issuer: &str) -> Oidc {
    let directory = FixedDirectory::new(DirectoryData {
        users: vec![User {
            id: "alice".into(),
            email: "alice@example.com".into(),
            name: "Alice".into(),
            description: None,
            identities: vec![Identity { issuer: issuer.into(), subject: "acc-1".into() }],
        }],
        ..Default::default()
    })
    .unwrap();
    Oidc::new(
        OidcConfig {
            issuer: issuer.into(),
            client_id: CLIENT_ID.into(),
            client_secret: SECRET.into(),
            provider_name: "Test".into(),
            scopes: vec!["openid".into(), "email".into()],
            claims: ClaimNames::default(),
            redirect_uri: "http://localhost:3000/sign-in/oidc/callback".into(),
            post_logout_redirect_uri: "http://localhost:3000/sign-in".into(),
        },
        Arc::new(directory),
    )
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

#[tokio::test]
async fn a_sign_in_runs_from_the_authorization_url_to_the_directorys_user_once() {
    let (issuer, shared) = provider("").await;
    let oidc = oidc(&issuer);
    let started = oidc.start("/clusters", now()).await.unwrap();
    let url = url::Url::parse(&started.authorization_url).unwrap();
    assert_eq!(url.as_str().split('?').next(), Some(format!("{issuer}/authorize").as_str()));
    let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
    for (name, value) in [
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", "http://localhost:3000/sign-in/oidc/callback"),
        ("scope", "openid email"),
        ("code_challenge_method", "S256"),
    ] {
        assert_eq!(query.get(name).map(String::as_str), Some(value), "{name}");
    }
    // Nothing of the transaction is readable in its sealed form.
    assert!(!started.transaction.contains(&query["state"]) && !started.transaction.contains(&query["nonce"]));
    {
        let mut p = shared.lock().unwrap();
        p.challenge = query["code_challenge"].clone();
        p.nonce = query["nonce"].clone();
    }
    let callback = Callback { code: "the-code", state: &query["state"], transaction: &started.transaction };
    let signed_in = oidc.finish(&callback, now()).await.unwrap();
    assert_eq!(signed_in.user_id, "alice", "the directory's user for issuer + sub");
    assert_eq!(signed_in.return_path, "/clusters");
    assert_eq!(
        (signed_in.profile.email.as_str(), signed_in.profile.name.as_str(), signed_in.profile.groups.clone()),
        ("alice@example.com", "Alice (IdP)", vec!["ops".to_owned()])
    );
    // The same code again: the provider refuses it, and so the sign-in.
    let again = oidc.finish(&callback, now()).await.unwrap_err();
    assert_eq!(again.failure, Failure::CodeRejected);
    assert!(!again.detail.contains("secret detail"), "the provider's free text stays out: {}", again.detail);
    // Another state with the same transaction.
    let forged = Callback { state: "forged", ..callback };
    assert_eq!(oidc.finish(&forged, now()).await.unwrap_err().failure, Failure::StateMismatch);

    let end = oidc.end_session_url("the-id-token", now()).await.unwrap();
    let end = url::Url::parse(&end).unwrap();
    let query: HashMap<String, String> = end.query_pairs().into_owned().collect();
    assert_eq!(end.path(), "/logout");
    assert_eq!(query["id_token_hint"], "the-id-token");
    assert_eq!(query["post_logout_redirect_uri"], "http://localhost:3000/sign-in");
}

#[tokio::test]
async fn a_nonce_that_is_not_this_sign_ins_is_refused() {
    let (issuer, shared) = provider("").await;
    let oidc = oidc(&issuer);
    let started = oidc.start("/", now()).await.unwrap();
    let query: HashMap<String, String> =
        url::Url::parse(&started.authorization_url).unwrap().query_pairs().into_owned().collect();
    {
        let mut p = shared.lock().unwrap();
        p.challenge = query["code_challenge"].clone();
        p.nonce = "a nonce of another sign-in".into();
    }
    let callback = Callback { code: "the-code", state: &query["state"], transaction: &started.transaction };
    let error = oidc.finish(&callback, now()).await.unwrap_err();
    assert_eq!(
        (error.failure, error.detail.as_str()),
        (Failure::TokenInvalid, "ID token nonce does not match this sign-in")
    );
}

#[tokio::test]
async fn a_provider_that_is_down_or_names_another_issuer_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let error = oidc(&closed).start("/", now()).await.unwrap_err();
    assert_eq!(error.failure, Failure::ProviderUnavailable);
    assert!(error.detail.contains("unreachable"), "{}", error.detail);

    let (issuer, _) = provider("/other").await;
    let error = oidc(&issuer).start("/", now()).await.unwrap_err();
    assert_eq!(error.failure, Failure::ProviderUnavailable);
    assert!(error.detail.contains("must be equal"), "{}", error.detail);
}

/// A whole sign-in with authn's clock (and the provider's) at `at`.
async fn sign_in(oidc: &Oidc, shared: &Shared, at: i64) -> Result<SignedIn, SignInError> {
    sign_in_replacing(oidc, shared, at, None).await
}

/// A whole sign-in, started by a browser that holds the session `replaces`.
async fn sign_in_replacing(
    oidc: &Oidc,
    shared: &Shared,
    at: i64,
    replaces: Option<ReplacedSession>,
) -> Result<SignedIn, SignInError> {
    let started = oidc.start_replacing("/", replaces, at).await?;
    let query: HashMap<String, String> =
        url::Url::parse(&started.authorization_url).unwrap().query_pairs().into_owned().collect();
    {
        let mut p = shared.lock().unwrap();
        p.challenge = query["code_challenge"].clone();
        p.nonce = query["nonce"].clone();
        p.used_codes.clear();
        p.clock_offset = at - now();
    }
    let callback = Callback { code: "the-code", state: &query["state"], transaction: &started.transaction };
    oidc.finish(&callback, at).await
}

#[tokio::test]
async fn the_session_a_sign_in_replaces_comes_back_from_the_sealed_transaction_only() {
    let (issuer, shared) = provider("").await;
    let oidc = oidc(&issuer);
    let old = ReplacedSession { sid: "session-of-the-browser".into(), exp: now() + 3_000 };
    let signed_in = sign_in_replacing(&oidc, &shared, now(), Some(old.clone())).await.unwrap();
    assert_eq!(signed_in.replaces, Some(old.clone()));
    // Sealed, not readable: the browser can neither see nor swap which session ends.
    let started = oidc.start_replacing("/", Some(old), now()).await.unwrap();
    assert!(!started.transaction.contains("session-of-the-browser"));
    assert_eq!(sign_in(&oidc, &shared, now()).await.unwrap().replaces, None);
}

#[tokio::test]
async fn discovery_is_fetched_once_for_concurrent_starts_and_again_when_it_is_old() {
    let (issuer, shared) = provider("").await;
    let oidc = oidc(&issuer);
    let calls = || shared.lock().unwrap().discovery_calls;
    let t0 = now();
    // A burst of anonymous starts: one fetch, shared by all.
    let starts = futures::future::join_all((0..40).map(|_| oidc.start("/", t0))).await;
    assert!(starts.iter().all(Result::is_ok));
    assert_eq!(calls(), 1);
    oidc.start("/", t0 + DISCOVERY_MAX_AGE_SECS - 1).await.unwrap();
    assert!(
        sign_in(&oidc, &shared, t0 + DISCOVERY_MAX_AGE_SECS - 1).await.is_ok(),
        "the callback uses it too"
    );
    assert_eq!(calls(), 1);
    oidc.start("/", t0 + DISCOVERY_MAX_AGE_SECS).await.unwrap();
    assert_eq!(calls(), 2, "fetched again once old");

    // A provider that is down: its failure is shared by the burst, kept briefly, then tried again.
    let t1 = t0 + 10 * DISCOVERY_MAX_AGE_SECS;
    shared.lock().unwrap().discovery_fails = true;
    let starts = futures::future::join_all((0..40).map(|_| oidc.start("/", t1))).await;
    assert!(starts.iter().all(|s| s.as_ref().is_err_and(|e| e.failure == Failure::ProviderUnavailable)));
    assert_eq!(calls(), 3);
    shared.lock().unwrap().discovery_fails = false;
    let error = oidc.start("/", t1 + DISCOVERY_MAX_AGE_SECS - 1).await.unwrap_err();
    assert!(error.detail.contains("answered 500"), "{}", error.detail);
    assert_eq!(calls(), 3);
    oidc.start("/", t1 + DISCOVERY_MAX_AGE_SECS).await.unwrap();
    assert_eq!(calls(), 4);
}

#[tokio::test]
async fn discovery_naming_a_plain_http_endpoint_off_the_issuers_host_is_refused() {
    let (issuer, shared) = provider("").await;
    for field in ["authorization_endpoint", "token_endpoint", "jwks_uri", "end_session_endpoint"] {
        shared.lock().unwrap().discovery_field = Some((field, "http://id.example.test/x?q=1".into()));
        let error = oidc(&issuer).start("/", now()).await.unwrap_err();
        assert_eq!(error.failure, Failure::ProviderUnavailable, "{field}");
        assert!(
            error.detail.contains(field) && error.detail.contains("must use https"),
            "{field}: {}",
            error.detail
        );
        // https is fine on any host.
        shared.lock().unwrap().discovery_field = Some((field, "https://id.example.test/x".into()));
        assert!(oidc(&issuer).start("/", now()).await.is_ok(), "{field}");
    }
}

#[tokio::test]
async fn calls_to_the_provider_under_way_are_bounded_and_past_the_bound_the_caller_hears_busy() {
    let (issuer, shared) = provider("").await;
    let oidc = Arc::new(oidc(&issuer));
    let at = now();
    let started = oidc.start("/", at).await.unwrap();
    let state = url::Url::parse(&started.authorization_url)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "state")
        .unwrap()
        .1
        .into_owned();
    let transaction = started.transaction;
    let token_calls = || shared.lock().unwrap().token_calls;
    shared.lock().unwrap().token_hangs = true;
    // One callback replayed with junk codes, as fast as it goes: each is a POST to the token
    // endpoint, which does not answer.
    let replay = |oidc: Arc<Oidc>, state: String, transaction: String| async move {
        oidc.finish(&Callback { code: "junk", state: &state, transaction: &transaction }, at).await
    };
    let held: Vec<_> = (0..MAX_IN_FLIGHT)
        .map(|_| tokio::spawn(replay(Arc::clone(&oidc), state.clone(), transaction.clone())))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    while token_calls() < MAX_IN_FLIGHT {
        assert!(Instant::now() < deadline, "{} of {MAX_IN_FLIGHT} calls reached the provider", token_calls());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = Instant::now();
    let error = tokio::time::timeout(
        Duration::from_secs(5),
        replay(Arc::clone(&oidc), state.clone(), transaction.clone()),
    )
    .await
    .expect("refused after a short wait, not left to the provider's timeout")
    .unwrap_err();
    assert!(before.elapsed() >= IN_FLIGHT_WAIT - Duration::from_millis(100));
    assert_eq!(error.failure, Failure::ProviderUnavailable);
    assert!(error.detail.contains("busy"), "{}", error.detail);
    assert_eq!(token_calls(), MAX_IN_FLIGHT, "nothing more was sent");

    // The calls under way end (their callers went away): the slots are free again.
    for call in held {
        call.abort();
        assert!(call.await.unwrap_err().is_cancelled());
    }
    shared.lock().unwrap().token_hangs = false;
    let error = replay(Arc::clone(&oidc), state, transaction).await.unwrap_err();
    assert_eq!(error.failure, Failure::CodeRejected);
    assert_eq!(token_calls(), MAX_IN_FLIGHT + 1);
}

/// A provider, authn's view of it, and a sign-in at the returned time that fetched its keys once.
async fn signed_in_once_with_its_keys_fetched() -> (String, Shared, Oidc, i64) {
    let (issuer, shared) = provider("").await;
    let oidc = oidc(&issuer);
    let t0 = now();
    sign_in(&oidc, &shared, t0).await.unwrap();
    assert_eq!(shared.lock().unwrap().jwks_calls, 1);
    (issuer, shared, oidc, t0)
}

/// A provider that made a new key under the same key id (restarted with a fresh one): a
/// signature that does not verify with the cached key fetches the set again, as an unknown key
/// id does, at most every JWKS_REFETCH_SECS; before, sign-ins failed until the set was old.
#[tokio::test]
async fn a_key_replaced_under_the_same_id_is_fetched_again() {
    let (_, shared, oidc, t0) = signed_in_once_with_its_keys_fetched().await;
    let jwks_calls = || shared.lock().unwrap().jwks_calls;
    shared.lock().unwrap().k1_replaced = true;
    sign_in(&oidc, &shared, t0 + JWKS_REFETCH_SECS).await.unwrap();
    assert_eq!(jwks_calls(), 2);
    // A token that does not verify right after a fetch is refused without another one.
    shared.lock().unwrap().k1_replaced = false;
    let error = sign_in(&oidc, &shared, t0 + JWKS_REFETCH_SECS + 1).await.unwrap_err();
    assert_eq!(error.failure, Failure::TokenInvalid);
    assert_eq!(jwks_calls(), 2);
}

#[tokio::test]
async fn a_key_the_provider_withdrew_stops_verifying_once_the_cached_set_is_old() {
    let (issuer, shared, oidc, t0) = signed_in_once_with_its_keys_fetched().await;
    let jwks_calls = || shared.lock().unwrap().jwks_calls;
    shared.lock().unwrap().k1_withdrawn = true;
    // Within its age the cached set is used (how long a withdrawn key may still verify).
    sign_in(&oidc, &shared, t0 + JWKS_MAX_AGE_SECS - 1).await.unwrap();
    assert_eq!(jwks_calls(), 1);
    let error = sign_in(&oidc, &shared, t0 + JWKS_MAX_AGE_SECS).await.unwrap_err();
    assert_eq!(error.failure, Failure::UnknownKey);
    assert_eq!(jwks_calls(), 2);

    // An old set is not used when fetching it again fails: the sign-in fails instead.
    let oidc = self::oidc(&issuer);
    shared.lock().unwrap().k1_withdrawn = false;
    sign_in(&oidc, &shared, t0).await.unwrap();
    shared.lock().unwrap().jwks_fails = true;
    let error = sign_in(&oidc, &shared, t0 + JWKS_MAX_AGE_SECS).await.unwrap_err();
    assert_eq!(error.failure, Failure::ProviderUnavailable);
    assert!(error.detail.contains("/jwks"), "{}", error.detail);
}
