//! Talking to the identity provider: discovery, the JWKS, the code exchange. Every answer is
//! read with a size cap and a timeout; nothing secret (code, verifier, tokens, client secret)
//! ever reaches an error message.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// A provider must answer within this long.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Discovery documents, JWKS and token answers are small.
const MAX_BODY: usize = 256 * 1024;

/// The parts of the discovery document we use.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Metadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
}

/// Why the provider could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("identity provider unreachable at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("identity provider answered {status} at {url}")]
    Status { url: String, status: u16 },
    #[error("identity provider's answer at {url} is not what OpenID Connect specifies: {reason}")]
    Malformed { url: String, reason: String },
    #[error(
        "discovery names issuer {found:?}, but the configured issuer is {configured:?}: they must be equal"
    )]
    IssuerMismatch { configured: String, found: String },
    #[error("the provider does not offer PKCE with S256")]
    NoPkce,
    /// The token endpoint refused the code (RFC 6749 §5.2 `error`): expired, used, or not ours.
    #[error("identity provider refused the code exchange: {error}")]
    Refused { error: String },
}

/// An HTTP client for one provider.
pub struct ProviderClient {
    client: Client<Https, Full<Bytes>>,
}

impl std::fmt::Debug for ProviderClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProviderClient")
    }
}

impl Default for ProviderClient {
    fn default() -> Self {
        Self::new()
    }
}

impl ProviderClient {
    /// HTTPS with the system's roots; plain HTTP too, which the settings allow only for
    /// loopback issuers.
    pub fn new() -> ProviderClient {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(provider)
            .map(|b| b.https_or_http().enable_http1().build())
            .unwrap_or_else(|error| {
                // No system roots: HTTPS providers will fail with a clear error per request.
                tracing::warn!(%error, "no system TLS roots for reaching the identity provider");
                hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(
                        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                            rustls::crypto::ring::default_provider(),
                        ))
                        .with_safe_default_protocol_versions()
                        .expect("ring supports the default protocol versions")
                        .with_root_certificates(rustls::RootCertStore::empty())
                        .with_no_client_auth(),
                    )
                    .https_or_http()
                    .enable_http1()
                    .build()
            });
        ProviderClient { client: Client::builder(TokioExecutor::new()).build(https) }
    }

    async fn send(&self, request: http::Request<Full<Bytes>>) -> Result<(u16, Bytes), ProviderError> {
        let url = strip_query(&request.uri().to_string());
        let unreachable = |reason: String| ProviderError::Unreachable { url: url.clone(), reason };
        let response = tokio::time::timeout(TIMEOUT, self.client.request(request))
            .await
            .map_err(|_| unreachable(format!("no answer within {} s", TIMEOUT.as_secs())))?
            .map_err(|e| unreachable(error_chain(&e)))?;
        let status = response.status().as_u16();
        let body = tokio::time::timeout(TIMEOUT, Limited::new(response.into_body(), MAX_BODY).collect())
            .await
            .map_err(|_| unreachable("answer not complete in time".into()))?
            .map_err(|e| unreachable(format!("answer not read: {e}")))?
            .to_bytes();
        Ok((status, body))
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, ProviderError> {
        let request = http::Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Full::default())
            .map_err(|e| ProviderError::Malformed { url: strip_query(url), reason: e.to_string() })?;
        let (status, body) = self.send(request).await?;
        if status != 200 {
            return Err(ProviderError::Status { url: strip_query(url), status });
        }
        serde_json::from_slice(&body)
            .map_err(|e| ProviderError::Malformed { url: strip_query(url), reason: e.to_string() })
    }

    /// The discovery document of `issuer` (OpenID Connect Discovery §4), checked: its issuer
    /// must be the configured one exactly (§4.3), and it must offer PKCE S256 when it lists
    /// its methods.
    pub async fn discover(&self, issuer: &str) -> Result<Metadata, ProviderError> {
        let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let metadata: Metadata = self.get_json(&url).await?;
        if metadata.issuer != issuer {
            return Err(ProviderError::IssuerMismatch { configured: issuer.into(), found: metadata.issuer });
        }
        if metadata.code_challenge_methods_supported.as_ref().is_some_and(|m| !m.iter().any(|m| m == "S256"))
        {
            return Err(ProviderError::NoPkce);
        }
        Ok(metadata)
    }

    pub async fn jwks(&self, jwks_uri: &str) -> Result<JwkSet, ProviderError> {
        // Keys of types jsonwebtoken does not know are skipped rather than failing the whole set.
        let raw: serde_json::Value = self.get_json(jwks_uri).await?;
        let keys = raw.get("keys").and_then(|k| k.as_array()).ok_or_else(|| ProviderError::Malformed {
            url: strip_query(jwks_uri),
            reason: "no keys array".into(),
        })?;
        let keys = keys.iter().filter_map(|k| serde_json::from_value(k.clone()).ok()).collect();
        Ok(JwkSet { keys })
    }

    /// Exchanges the code (RFC 6749 §4.1.3, with RFC 7636's verifier), authenticating as the
    /// client with HTTP Basic (`client_secret_basic`, every provider's default). The ID token.
    pub async fn exchange(&self, exchange: &Exchange<'_>) -> Result<String, ProviderError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", exchange.code)
            .append_pair("redirect_uri", exchange.redirect_uri)
            .append_pair("code_verifier", exchange.verifier)
            .finish();
        let form = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let basic = STANDARD.encode(format!("{}:{}", form(exchange.client_id), form(exchange.client_secret)));
        let url = exchange.token_endpoint;
        let request = http::Request::post(url)
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::AUTHORIZATION, format!("Basic {basic}"))
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| ProviderError::Malformed { url: strip_query(url), reason: e.to_string() })?;
        let (status, body) = self.send(request).await?;
        #[derive(Deserialize)]
        struct Answer {
            id_token: Option<String>,
            error: Option<String>,
        }
        let answer: Option<Answer> = serde_json::from_slice(&body).ok();
        match (status, answer) {
            (200, Some(Answer { id_token: Some(token), .. })) => Ok(token),
            (200, _) => Err(ProviderError::Malformed {
                url: strip_query(url),
                reason: "no id_token in the answer".into(),
            }),
            // Only the registered error code is kept: the description is the provider's free text.
            (400 | 401, Some(Answer { error: Some(error), .. })) => Err(ProviderError::Refused {
                error: error.chars().filter(|c| c.is_ascii_graphic()).take(64).collect(),
            }),
            (status, _) => Err(ProviderError::Status { url: strip_query(url), status }),
        }
    }
}

/// One code exchange.
pub struct Exchange<'a> {
    pub token_endpoint: &'a str,
    pub client_id: &'a str,
    pub client_secret: &'a str,
    pub code: &'a str,
    pub redirect_uri: &'a str,
    pub verifier: &'a str,
}

/// A URL for a log line: never its query.
fn strip_query(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or_default().to_owned()
}

/// An error with its sources, for the log ("connection refused" is in the source).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
