//! A router over test doubles that count their calls, and helpers to speak Connect to it.

#![allow(dead_code)] // each test file uses a different part of the harness

pub mod log;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use axum::body::Body;
use fundament_authn::{AuthnConfig, AuthnState, Installation, InstallationLookup, LookupError, User, router};
use fundament_fga::{CanView, FgaError};
use fundament_tokens::{Signer, Verifier};
use futures::future::BoxFuture;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

pub const CLUSTER: &str = "019b4000-2000-7000-8000-000000000001";
pub const OTHER_CLUSTER: &str = "00000000-0000-0000-0000-0000000000ff";
pub const INSTALLATION: &str = "00000000-0000-0000-0000-000000000001";

/// What the authorization double answers.
#[derive(Clone, Copy)]
pub enum Fga {
    /// Alice and Bob may view `CLUSTER`, nothing else.
    Seeded,
    Fails,
}

pub struct FakeFga {
    mode: Fga,
    pub calls: AtomicUsize,
    pub last: Mutex<Option<(String, String)>>,
}

impl CanView for FakeFga {
    fn can_view<'a>(
        &'a self,
        user_id: &'a str,
        cluster_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, FgaError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        *self.last.lock().unwrap() = Some((user_id.to_string(), cluster_id.to_string()));
        Box::pin(async move {
            match self.mode {
                Fga::Seeded => Ok(matches!(user_id, "alice" | "bob") && cluster_id == CLUSTER),
                Fga::Fails => Err(FgaError::Transport("connection refused to 10.0.0.7:8080".into())),
            }
        })
    }
}

/// What the installation double answers.
#[derive(Clone, Copy)]
pub enum Lookup {
    /// `INSTALLATION` on `CLUSTER` is `acme-corp--test-plugin`; other ids are not found.
    Seeded,
    UnknownCluster,
    Fails,
}

pub struct FakeLookup {
    mode: Lookup,
    pub calls: AtomicUsize,
    pub last: Mutex<Option<(String, String)>>,
}

impl InstallationLookup for FakeLookup {
    fn lookup<'a>(
        &'a self,
        cluster_id: &'a str,
        installation_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Installation>, LookupError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        *self.last.lock().unwrap() = Some((cluster_id.to_string(), installation_id.to_string()));
        Box::pin(async move {
            match self.mode {
                Lookup::Seeded if cluster_id == CLUSTER && installation_id == INSTALLATION => {
                    Ok(Some(Installation {
                        name: "acme-corp--test-plugin".into(),
                        uid: INSTALLATION.into(),
                        plugin_name: "test-plugin".into(),
                        plugin_version: "v1.0.0".into(),
                        definition_hash: "sha256:0123".into(),
                    }))
                }
                Lookup::Seeded => Ok(None),
                Lookup::UnknownCluster => Err(LookupError::UnknownCluster(cluster_id.to_string())),
                Lookup::Fails => Err(LookupError::Other("kube-apiserver said 503 at 10.0.0.9".into())),
            }
        })
    }
}

pub struct Harness {
    pub state: Arc<AuthnState>,
    pub fga: Arc<FakeFga>,
    pub lookup: Arc<FakeLookup>,
}

pub fn users() -> Vec<User> {
    vec![
        User { id: "alice".into(), email: "alice@acme-corp.com".into(), name: "Alice".into() },
        User { id: "bob".into(), email: "bob@acme-corp.com".into(), name: "Bob".into() },
    ]
}

pub fn mock_config() -> AuthnConfig {
    AuthnConfig {
        dev_sign_in: true,
        fault_switches: true,
        users: users(),
        dev_hosts: vec!["authn.internal".into()],
    }
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with(mock_config(), Fga::Seeded, Lookup::Seeded)
    }

    pub fn with(config: AuthnConfig, fga: Fga, lookup: Lookup) -> Harness {
        let fga = Arc::new(FakeFga { mode: fga, calls: AtomicUsize::new(0), last: Mutex::new(None) });
        let lookup =
            Arc::new(FakeLookup { mode: lookup, calls: AtomicUsize::new(0), last: Mutex::new(None) });
        let state = Arc::new(AuthnState {
            signer: Arc::new(RwLock::new(Signer::generate())),
            fga: fga.clone(),
            fga_health: Default::default(),
            installations: lookup.clone(),
            revocations: Arc::new(fundament_authn::Revocations::in_memory()),
            config,
            fail_mint_plugin_token: Default::default(),
            oidc: None,
            mint_budget: Default::default(),
        });
        Harness { state, fga, lookup }
    }

    pub fn fga_calls(&self) -> usize {
        self.fga.calls.load(Ordering::SeqCst)
    }

    pub fn lookup_calls(&self) -> usize {
        self.lookup.calls.load(Ordering::SeqCst)
    }

    pub fn now() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
    }

    /// A UserToken signed by the service's own key.
    pub fn user_token(&self, user_id: &str) -> String {
        let signer = self.state.signer.read().unwrap();
        signer.sign_user(user_id, &format!("{user_id}@acme-corp.com"), "Someone", Harness::now(), 3600)
    }

    pub fn verifier(&self) -> Verifier {
        Verifier::from_jwks(&self.state.signer.read().unwrap().jwks()).unwrap()
    }

    /// Sends a request as an HTTP client would: with a `Host` (localhost unless it has one).
    pub async fn send(&self, mut request: Request<Body>) -> Reply {
        if !request.headers().contains_key(http::header::HOST) {
            request
                .headers_mut()
                .insert(http::header::HOST, http::HeaderValue::from_static("localhost:8083"));
        }
        let response = router(self.state.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { status, headers, body, text: String::from_utf8_lossy(&bytes).into_owned() }
    }

    /// A Connect unary call with an optional bearer token.
    pub async fn call(&self, procedure: &str, bearer: Option<&str>, body: Value) -> Reply {
        let mut request = Request::post(format!("/{procedure}")).header("content-type", "application/json");
        if let Some(token) = bearer {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        self.send(request.body(Body::from(body.to_string())).unwrap()).await
    }

    pub async fn mint(&self, bearer: Option<&str>, cluster: &str, installation: &str) -> Reply {
        let body = serde_json::json!({"clusterId": cluster, "installationId": installation});
        self.call("authn.v1.TokenService/MintPluginToken", bearer, body).await
    }

    pub async fn mint_ticket(&self, bearer: Option<&str>, cluster: &str, installation: &str) -> Reply {
        let body = serde_json::json!({"clusterId": cluster, "installationId": installation});
        self.call("authn.v1.TokenService/MintFrameTicket", bearer, body).await
    }

    /// A PluginToken minted through the service for alice.
    pub async fn plugin_token(&self) -> String {
        let reply = self.mint(Some(&self.user_token("alice")), CLUSTER, INSTALLATION).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        reply.body["accessToken"].as_str().unwrap().to_string()
    }
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    /// Asserts a Connect error with this HTTP status, code and message.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str, message: &str) {
        assert_eq!(self.status.as_u16(), status, "{}", self.text);
        assert_eq!(self.body["code"], code, "{}", self.text);
        assert_eq!(self.body["message"], message, "{}", self.text);
    }
}
