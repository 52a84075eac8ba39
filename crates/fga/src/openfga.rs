//! The Check API of a real OpenFGA server.

use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use crate::{CanView, FgaError};

/// How long a check may take, as upstream: a slow OpenFGA must not hold
/// requests for ever, and a timeout is answered as an error (deny).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A Check answer is a few dozen bytes; anything much larger is not OpenFGA.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// How much of an error body goes into [`FgaError::Status`].
const MAX_ERROR_BODY_CHARS: usize = 200;

/// A real OpenFGA server's Check API:
/// `POST {api_url}/stores/{store_id}/check` with
/// `{"tuple_key": {"user": "user:<id>", "relation": "can_view", "object": "cluster:<id>"},
/// "authorization_model_id": <if set>}`, answered by `{"allowed": <bool>}`.
///
/// Plain `http://` only: OpenFGA usually sits next to the services inside the
/// cluster network. An `https://` URL is refused at construction; it needs a
/// TLS connector (hyper-rustls) in front of the [`HttpConnector`], not built yet.
#[derive(Debug, Clone)]
pub struct OpenFgaClient {
    check_uri: Uri,
    authorization_model_id: Option<String>,
    timeout: Duration,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl OpenFgaClient {
    /// A client for the store `store_id` on the OpenFGA server at `api_url`
    /// (e.g. `http://openfga:8080`, a path prefix is kept). Without an
    /// authorization model id (or with an empty one, as an unset environment
    /// variable gives) OpenFGA uses the store's latest model.
    pub fn new(
        api_url: &str,
        store_id: &str,
        authorization_model_id: Option<String>,
    ) -> Result<OpenFgaClient, FgaError> {
        let base = api_url.trim_end_matches('/');
        let uri: Uri = base.parse().map_err(|e| FgaError::Config(format!("API URL {api_url:?}: {e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(FgaError::Config(format!(
                    "API URL {api_url:?}: https needs a TLS connector, which this client does not have yet; \
                     use an http:// URL inside the cluster network"
                )));
            }
            _ => {
                return Err(FgaError::Config(format!("API URL {api_url:?} must be an absolute http:// URL")));
            }
        }
        if uri.authority().is_none() || uri.query().is_some() {
            return Err(FgaError::Config(format!("API URL {api_url:?} must be http://host[:port][/path]")));
        }
        // Store ids are ULIDs; anything else would change the path we build.
        if store_id.is_empty() || !store_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(FgaError::Config(format!("store id {store_id:?} must be a non-empty ULID")));
        }
        let check_uri = format!("{base}/stores/{store_id}/check")
            .parse()
            .map_err(|e| FgaError::Config(format!("check URL from {api_url:?}: {e}")))?;
        Ok(OpenFgaClient {
            check_uri,
            authorization_model_id: authorization_model_id.filter(|id| !id.is_empty()),
            timeout: DEFAULT_TIMEOUT,
            client: Client::builder(TokioExecutor::new()).build(HttpConnector::new()),
        })
    }

    /// The same client with another timeout (the default is [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> OpenFgaClient {
        self.timeout = timeout;
        self
    }

    /// The Check request body.
    fn check_body(&self, user_id: &str, cluster_id: &str) -> Value {
        let mut body = json!({
            "tuple_key": {
                "user": format!("user:{user_id}"),
                "relation": "can_view",
                "object": format!("cluster:{cluster_id}"),
            }
        });
        if let Some(id) = &self.authorization_model_id {
            body["authorization_model_id"] = Value::String(id.clone());
        }
        body
    }

    async fn check(&self, user_id: &str, cluster_id: &str) -> Result<bool, FgaError> {
        let body = serde_json::to_vec(&self.check_body(user_id, cluster_id))
            .map_err(|e| FgaError::Transport(format!("encoding the check request: {e}")))?;
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.check_uri.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| FgaError::Transport(e.to_string()))?;
        let response =
            self.client.request(request).await.map_err(|e| FgaError::Transport(error_chain(&e)))?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| FgaError::Transport(format!("reading the answer: {e}")))?
            .to_bytes();
        if !status.is_success() {
            return Err(FgaError::Status { status, body: snippet(&bytes) });
        }
        parse_allowed(status, &bytes)
    }
}

impl CanView for OpenFgaClient {
    fn can_view<'a>(
        &'a self,
        user_id: &'a str,
        cluster_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, FgaError>> {
        Box::pin(async move {
            let allowed = tokio::time::timeout(self.timeout, self.check(user_id, cluster_id))
                .await
                .map_err(|_| FgaError::Timeout(self.timeout))??;
            tracing::debug!(user_id, cluster_id, allowed, "openfga can_view");
            Ok(allowed)
        })
    }
}

/// `{"allowed": <bool>}`; OpenFGA always writes the field (it emits unpopulated
/// fields), so a body without it means we are not talking to OpenFGA.
fn parse_allowed(status: StatusCode, bytes: &[u8]) -> Result<bool, FgaError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        FgaError::BadResponse(format!("{status} with non-JSON body ({e}): {}", snippet(bytes)))
    })?;
    value.get("allowed").and_then(Value::as_bool).ok_or_else(|| {
        FgaError::BadResponse(format!("{status} without a boolean \"allowed\": {}", snippet(bytes)))
    })
}

/// The start of a body, on one line, for error messages.
fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_ERROR_BODY_CHARS) {
        Some((end, _)) => format!("{}…", &one_line[..end]),
        None => one_line,
    }
}

/// hyper-util's errors say "client error (Connect)" and keep the cause in
/// `source()`; the log needs the cause.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_check_url_and_body() {
        let client = OpenFgaClient::new("http://openfga:8080/", "01HSTORE", Some("01HMODEL".into())).unwrap();
        assert_eq!(client.check_uri.to_string(), "http://openfga:8080/stores/01HSTORE/check");
        assert_eq!(
            client.check_body("alice", "c1"),
            json!({
                "tuple_key": {"user": "user:alice", "relation": "can_view", "object": "cluster:c1"},
                "authorization_model_id": "01HMODEL",
            })
        );
        let prefixed = OpenFgaClient::new("http://gw/openfga", "01HSTORE", Some(String::new())).unwrap();
        assert_eq!(prefixed.check_uri.to_string(), "http://gw/openfga/stores/01HSTORE/check");
        assert!(prefixed.check_body("a", "b").get("authorization_model_id").is_none());
    }

    #[test]
    fn refuses_settings_that_cannot_work() {
        let https = OpenFgaClient::new("https://openfga", "s", None).unwrap_err().to_string();
        assert!(https.contains("https needs a TLS connector"), "{https}");
        for url in ["openfga:8080", "/relative", "ftp://x", "http://x?q=1", "not a url"] {
            assert!(matches!(OpenFgaClient::new(url, "s", None), Err(FgaError::Config(_))), "{url}");
        }
        for store in ["", "a/b", "a?b", "a b"] {
            assert!(
                matches!(OpenFgaClient::new("http://x", store, None), Err(FgaError::Config(_))),
                "{store}"
            );
        }
    }

    #[test]
    fn snippets_are_short_and_on_one_line() {
        assert_eq!(snippet(b"a\n  b"), "a b");
        let long = "x".repeat(500);
        assert_eq!(snippet(long.as_bytes()).chars().count(), MAX_ERROR_BODY_CHARS + 1);
    }
}
