//! Talking to the identity provider: discovery, the JWKS, the code exchange. Every answer is
//! read with a size cap and a timeout, at most [`MAX_IN_FLIGHT`] calls are under way at once,
//! and every endpoint of the discovery document must use https (see [`check_endpoint`]);
//! nothing secret (code, verifier, tokens, client secret) ever reaches an error message.

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
use tokio::sync::{Semaphore, SemaphorePermit};

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// A provider must answer within this long.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Discovery documents, JWKS and token answers are small.
const MAX_BODY: usize = 256 * 1024;
/// Calls to the provider (discovery, JWKS, token endpoint) under way at once, per client. Sign-in
/// starts and callbacks are anonymous: without a bound, a loop of them (a callback replayed with
/// junk codes costs one POST to the token endpoint each) would become as many concurrent calls
/// from authn, each held up to [`TIMEOUT`], and a provider that rate-limits per client would
/// then refuse every user's sign-in.
pub const MAX_IN_FLIGHT: usize = 16;
/// How long a call waits for one of the [`MAX_IN_FLIGHT`] slots before it is refused with
/// [`ProviderError::Busy`]. A short wait rather than an instant refusal: honest sign-ins come in
/// bursts (a team at nine in the morning), and a provider answering in a few hundred
/// milliseconds frees slots well within it; a bounded wait rather than a queue: callers behind
/// a slow or flooded provider are told to try again instead of piling up without end.
pub const IN_FLIGHT_WAIT: Duration = Duration::from_secs(2);

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
    /// An endpoint of the discovery document that would carry the code, the client secret, the
    /// ID token or the keys that verify it (or send the browser there) in plain text.
    #[error(
        "discovery's {field} {url:?} must use https (http only on the host of an http issuer, which the settings allow for loopback only)"
    )]
    InsecureEndpoint { field: &'static str, url: String },
    /// [`MAX_IN_FLIGHT`] calls were under way for all of [`IN_FLIGHT_WAIT`]: nothing was sent.
    #[error("the identity provider is busy ({limit} calls to it under way); try again in a moment")]
    Busy { limit: usize },
    /// The token endpoint refused the code (RFC 6749 §5.2 `error`): expired, used, or not ours.
    #[error("identity provider refused the code exchange: {error}")]
    Refused { error: String },
}

/// An HTTP client for one provider.
pub struct ProviderClient {
    client: Client<Https, Full<Bytes>>,
    /// One permit per call under way ([`MAX_IN_FLIGHT`]).
    in_flight: Semaphore,
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
        ProviderClient {
            client: Client::builder(TokioExecutor::new()).build(https),
            in_flight: Semaphore::new(MAX_IN_FLIGHT),
        }
    }

    /// A slot for one call, waiting at most [`IN_FLIGHT_WAIT`] (tokio's semaphore is fair: the
    /// longest waiter is served first).
    async fn slot(&self) -> Result<SemaphorePermit<'_>, ProviderError> {
        match tokio::time::timeout(IN_FLIGHT_WAIT, self.in_flight.acquire()).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; a closed one would be as unusable as a full one.
            Ok(Err(_)) | Err(_) => Err(ProviderError::Busy { limit: MAX_IN_FLIGHT }),
        }
    }

    async fn send(&self, request: http::Request<Full<Bytes>>) -> Result<(u16, Bytes), ProviderError> {
        // Held until the answer is read whole (or the call failed or was dropped).
        let _slot = self.slot().await?;
        let url = strip_query(&request.uri().to_string());
        let unreachable = |reason: String| ProviderError::Unreachable { url: url.clone(), reason };
        let response = tokio::time::timeout(TIMEOUT, self.client.request(request))
            .await
            .map_err(|_| unreachable(format!("no answer within {} s", TIMEOUT.as_secs())))?
            .map_err(|e| unreachable(fundament_kube_core::cause::chain(&e)))?;
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
    /// must be the configured one exactly (§4.3), every endpoint we call or send the browser to
    /// must pass [`check_endpoint`], and it must offer PKCE S256 when it lists its methods.
    pub async fn discover(&self, issuer: &str) -> Result<Metadata, ProviderError> {
        let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let metadata: Metadata = self.get_json(&url).await?;
        if metadata.issuer != issuer {
            return Err(ProviderError::IssuerMismatch { configured: issuer.into(), found: metadata.issuer });
        }
        let issuer_url = url::Url::parse(issuer).map_err(|e| ProviderError::Malformed {
            url: strip_query(issuer),
            reason: format!("issuer: {e}"),
        })?;
        for (field, endpoint) in [
            ("authorization_endpoint", Some(&metadata.authorization_endpoint)),
            ("token_endpoint", Some(&metadata.token_endpoint)),
            ("jwks_uri", Some(&metadata.jwks_uri)),
            ("end_session_endpoint", metadata.end_session_endpoint.as_ref()),
        ] {
            if let Some(endpoint) = endpoint {
                check_endpoint(&issuer_url, field, endpoint)?;
            }
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

/// An endpoint named by the discovery document: https, or plain http only on the very host of
/// an http issuer. The token endpoint gets the code, the verifier and the client secret, the JWKS
/// decides which signatures we trust, and the authorization and end-session endpoints are where
/// the browser goes with state, nonce and ID token: none may travel in clear just because the
/// provider's document says `http://`.
///
/// The exception is the issuer's own, not a second list of loopback names: the settings
/// (crates/settings, `parse_issuer`) take an http issuer only for a loopback host, and an
/// endpoint may use http only where that issuer already does. So an http endpoint can only
/// ever be on a host the issuer rule admitted. Any other scheme (`javascript:`, `file:`) is
/// refused too: the authorization URL becomes a link in the console's page.
pub fn check_endpoint(issuer: &url::Url, field: &'static str, endpoint: &str) -> Result<(), ProviderError> {
    let url = url::Url::parse(endpoint).map_err(|e| ProviderError::Malformed {
        url: strip_query(endpoint),
        reason: format!("{field} is not a URL: {e}"),
    })?;
    let on_http_issuers_host =
        issuer.scheme() == "http" && url.host().is_some() && url.host() == issuer.host();
    match url.scheme() {
        "https" => Ok(()),
        "http" if on_http_issuers_host => Ok(()),
        _ => Err(ProviderError::InsecureEndpoint { field, url: strip_query(endpoint) }),
    }
}

/// A URL for a log line: never its query.
fn strip_query(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_must_use_https_unless_on_the_host_of_an_http_issuer() {
        let check = |issuer: &str, endpoint: &str| {
            check_endpoint(&url::Url::parse(issuer).unwrap(), "token_endpoint", endpoint)
        };
        let local = "http://127.0.0.1:5556";
        for endpoint in
            ["https://id.example.com/token", "http://127.0.0.1:5556/token", "http://127.0.0.1:9/t"]
        {
            assert_eq!(check(local, endpoint), Ok(()), "{endpoint}");
        }
        assert_eq!(check("https://id.example.com", "https://keys.example.net/jwks"), Ok(()));
        assert_eq!(check("http://[::1]:8080", "http://[::1]:8080/token"), Ok(()));
        for (issuer, endpoint) in [
            (local, "http://id.example.com/token"),
            // An https issuer lends its host no plain http.
            ("https://id.example.com", "http://id.example.com/token"),
            // Another spelling of loopback is another host: the exception is the issuer's own.
            ("http://localhost:5556", "http://127.0.0.1:5556/token"),
            (local, "javascript:alert(1)"),
            (local, "ftp://127.0.0.1:5556/token"),
        ] {
            assert!(
                matches!(check(issuer, endpoint), Err(ProviderError::InsecureEndpoint { .. })),
                "{issuer} {endpoint}"
            );
        }
        let error = check(local, "http://id.example.com/token?secret=1").unwrap_err();
        assert!(!error.to_string().contains("secret"), "no query in the message: {error}");
        assert!(matches!(check(local, "/token"), Err(ProviderError::Malformed { .. })));
    }
}
