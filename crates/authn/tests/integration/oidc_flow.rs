//! OpenID Connect sign-in against a small provider served on loopback by the test: discovery,
//! the authorization URL (PKCE S256, state, nonce), the code exchange with the client secret
//! and the verifier, the ID token with the provider's JWKS, the directory's user, a replayed
//! code, a provider that is down or names another issuer, and the end-session URL.
//! (The same flow runs in Chromium against the real oidc-provider: end2end/oidc/.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::pkcs8::EncodePrivateKey;
use fundament_authn::oidc::identity::ClaimNames;
use fundament_authn::oidc::{Callback, Failure, Oidc, OidcConfig};
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
}

type Shared = Arc<Mutex<Provider>>;

fn key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[9; 32])
}

async fn discovery(State(p): State<Shared>) -> Json<Value> {
    let issuer = p.lock().unwrap().issuer.clone();
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "end_session_endpoint": format!("{issuer}/logout"),
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn jwks() -> Json<Value> {
    let x = URL_SAFE_NO_PAD.encode(key().verifying_key().as_bytes());
    Json(json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig", "x": x},
                         {"kty": "unknown-to-us", "kid": "k9"}]}))
}

async fn token(
    State(p): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> (StatusCode, Json<Value>) {
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
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = json!({"iss": p.issuer, "aud": CLIENT_ID, "sub": "acc-1", "iat": now, "exp": now + 300,
                        "nonce": p.nonce, "email": "alice@example.com", "name": "Alice (IdP)",
                        "groups": ["ops"]});
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("k1".into());
    let der = key().to_pkcs8_der().unwrap();
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

    let end = oidc.end_session_url("the-id-token").await.unwrap();
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
