//! The console's sessions, from authn: sign-in calls authn's `DevSignIn`;
//! a session cookie is valid when it is a UserToken that authn's public keys
//! (its JWKS, refetched every minute to follow rotations) verify.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use app::state::{IssuedSession, SessionAuthority, SessionUser, SignInError};
use bytes::Bytes;
use fundament_tokens::Verifier;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

pub struct AuthnSessions {
    authn_url: String,
    verifier: RwLock<Verifier>,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl std::fmt::Debug for AuthnSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthnSessions").field("authn_url", &self.authn_url).finish_non_exhaustive()
    }
}

impl AuthnSessions {
    /// `verifier`: authn's current public keys.
    pub fn new(authn_url: &str, verifier: Verifier) -> Arc<Self> {
        Arc::new(Self {
            authn_url: authn_url.trim_end_matches('/').to_string(),
            verifier: RwLock::new(verifier),
            client: Client::builder(TokioExecutor::new()).build_http(),
        })
    }

    async fn post(&self, path: &str, body: Value) -> Result<(u16, Value), String> {
        let req = http::Request::post(format!("{}{path}", self.authn_url))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let res = tokio::time::timeout(Duration::from_secs(10), self.client.request(req))
            .await
            .map_err(|_| "timeout".to_string())?
            .map_err(|e| e.to_string())?;
        let status = res.status().as_u16();
        let bytes = res.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
    }

    async fn refresh(&self) -> Result<(), String> {
        let uri: http::Uri = format!("{}/.well-known/jwks.json", self.authn_url)
            .parse()
            .map_err(|e: http::uri::InvalidUri| e.to_string())?;
        let res = self.client.get(uri).await.map_err(|e| e.to_string())?;
        let bytes = res.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        let jwks: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        let verifier = Verifier::from_jwks(&jwks).map_err(|e| e.to_string())?;
        *self.verifier.write().unwrap_or_else(std::sync::PoisonError::into_inner) = verifier;
        Ok(())
    }

    /// Refetches the JWKS every minute, for as long as the process runs.
    pub fn spawn_refresh(self: &Arc<Self>) {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            tick.tick().await;
            loop {
                tick.tick().await;
                if let Err(error) = this.refresh().await {
                    tracing::warn!(%error, "console: authn JWKS refresh failed");
                }
            }
        });
    }
}

impl SessionAuthority for AuthnSessions {
    fn dev_sign_in<'a>(
        &'a self,
        email: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<IssuedSession, SignInError>> + Send + 'a>> {
        Box::pin(async move {
            let (status, body) = self
                .post("/authn.v1.AuthnService/DevSignIn", serde_json::json!({"email": email}))
                .await
                .map_err(|error| {
                    tracing::error!(%error, "console: authn unreachable for sign-in");
                    SignInError::Failed
                })?;
            match (status, body["code"].as_str()) {
                (200, _) => {
                    let token = body["accessToken"].as_str().unwrap_or_default().to_string();
                    let max_age = body["expiresIn"].as_str().and_then(|s| s.parse().ok()).unwrap_or(3600);
                    if token.is_empty() {
                        tracing::error!("console: authn answered sign-in without a token");
                        return Err(SignInError::Failed);
                    }
                    Ok(IssuedSession { token, max_age })
                }
                (404, Some("not_found")) | (400, Some("invalid_argument")) => Err(SignInError::UnknownUser),
                (404, Some("unimplemented")) => Err(SignInError::Unavailable),
                (status, code) => {
                    tracing::error!(status, code, "console: authn refused sign-in unexpectedly");
                    Err(SignInError::Failed)
                }
            }
        })
    }

    fn verify(&self, token: &str) -> Option<SessionUser> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let verifier = self.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        match verifier.verify_user(token, now) {
            Ok(c) => Some(SessionUser { id: c.sub, email: c.email, name: c.name }),
            Err(reason) => {
                tracing::debug!(%reason, "session refused");
                None
            }
        }
    }
}
