//! A server error the cluster answers itself goes back without the cluster's words.
//!
//! kube-apiserver's 5xx messages are the platform's insides: a webhook's service address and
//! the dial error (`failed calling webhook "…": Post "https://10.96.0.12:443/…": connect:
//! connection refused`), etcd's errors, an aggregated API's backend. The caller gets the
//! code, the reason and `retryAfterSeconds` (clients retry by them), and a message saying where
//! the rest is; the gateway logs the cluster's message once. A 5xx through the API server's
//! proxy (`…/services/<name>/proxy/…`) is the backend's own answer and passes unchanged.

use std::io::Read;
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};
use http_body_util::{BodyExt, Limited};

use fundament_kube_core::{Status, StatusDetails};

/// At most this much of a server error's body is read for the log.
const MOST_READ: usize = 64 * 1024;

/// How long the body of a server error may take to arrive after its head.
const BODY_WAIT: Duration = Duration::from_secs(5);

/// The StatusReasons a server error may carry (apimachinery's `metav1.StatusReason`s that come
/// with 5xx codes, and the generic ones).
const SERVER_ERROR_REASONS: &[&str] =
    &["InternalError", "ServiceUnavailable", "Timeout", "ServerTimeout", "TooManyRequests", "Unknown"];

/// What the caller reads in place of the cluster's message.
fn withheld_message(code: u16) -> String {
    format!(
        "the cluster failed to handle the request (HTTP {code}); its message is in the gateway's log, under this call's time and path"
    )
}

/// `response` as it goes back to the caller: a server error of the API server itself with its
/// message withheld (and logged), anything else untouched.
pub(crate) async fn withheld(response: Response, proxied: bool) -> Response {
    if !response.status().is_server_error() || proxied {
        return response;
    }
    let (parts, body) = response.into_parts();
    let gzipped = parts.headers.get(header::CONTENT_ENCODING).is_some_and(|v| v.as_bytes() == b"gzip");
    let read = tokio::time::timeout(BODY_WAIT, Limited::new(body, MOST_READ).collect()).await;
    let cluster_said = match read {
        Ok(Ok(collected)) => readable(&collected.to_bytes(), gzipped),
        _ => None,
    };
    let code = parts.status.as_u16();
    let said = cluster_said.as_ref();
    tracing::warn!(
        code,
        reason = said.map_or("", |s| s.reason.as_str()),
        message = said.map_or("(no Status in the body)", |s| s.message.as_str()),
        "the cluster answered a server error; its message was withheld from the caller"
    );
    // Only a reason Kubernetes defines: an aggregated API server writes this one, any text.
    let reason = said.map(|s| s.reason.clone()).filter(|r| SERVER_ERROR_REASONS.contains(&r.as_str()));
    let mut status = match reason {
        Some(reason) => Status::failure(code, &reason, withheld_message(code)),
        None => Status::for_code(code, withheld_message(code)),
    };
    if let Some(retry_after_seconds) = said.and_then(Status::retry_after_seconds) {
        status = status.with_details(StatusDetails { retry_after_seconds, ..Default::default() });
    }
    let mut out = status.into_response();
    *out.status_mut() = parts.status;
    // Retry-After and the audit id still help the caller; nothing else of the cluster's head does.
    for name in [header::RETRY_AFTER, header::HeaderName::from_static("audit-id")] {
        if let Some(value) = parts.headers.get(&name) {
            out.headers_mut().insert(name, value.clone());
        }
    }
    out.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    out
}

/// The cluster's Status out of an error body, gzipped or not, as far as it was read.
fn readable(bytes: &[u8], gzipped: bool) -> Option<Status> {
    if !gzipped {
        return Status::from_body(bytes);
    }
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(bytes).take(MOST_READ as u64).read_to_end(&mut plain).ok()?;
    Status::from_body(&plain)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use axum::body::Body;
    use http::StatusCode;

    fn answer(code: u16, headers: &[(&str, &str)], body: Vec<u8>) -> Response {
        let mut builder = Response::builder().status(code);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(Body::from(body)).unwrap()
    }

    async fn read(response: Response) -> (StatusCode, http::HeaderMap, Status) {
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (parts.status, parts.headers, Status::from_body(&bytes).expect("a Status"))
    }

    const WEBHOOK: &str = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Internal error occurred: failed calling webhook \"v.example.com\": Post \"https://10.96.0.12:443/validate\": dial tcp 10.96.0.12:443: connect: connection refused","reason":"InternalError","details":{"causes":[{"message":"dial tcp 10.96.0.12:443"}],"retryAfterSeconds":3},"code":500}"#;

    #[tokio::test]
    async fn a_server_error_keeps_its_code_reason_and_wait_and_loses_the_clusters_words() {
        let cluster = answer(
            500,
            &[
                ("content-type", "application/json"),
                ("retry-after", "3"),
                ("audit-id", "a-1"),
                ("x-internal", "1"),
            ],
            WEBHOOK.as_bytes().to_vec(),
        );
        let (code, headers, status) = read(withheld(cluster, false).await).await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            (status.code, status.reason.as_str(), status.message),
            (500, "InternalError", withheld_message(500))
        );
        let details = status.details.expect("the wait");
        assert_eq!(details.retry_after_seconds, 3);
        assert!(details.causes.is_empty());
        assert_eq!(headers.get("retry-after").unwrap(), "3");
        assert_eq!(headers.get("audit-id").unwrap(), "a-1");
        assert!(headers.get("x-internal").is_none());
        assert_eq!(headers.get("content-type").unwrap(), "application/json");
    }

    #[tokio::test]
    async fn a_gzipped_or_unreadable_body_is_withheld_too() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(WEBHOOK.as_bytes()).unwrap();
        let cluster = answer(503, &[("content-encoding", "gzip")], gz.finish().unwrap());
        let (code, headers, status) = read(withheld(cluster, false).await).await;
        assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
        assert!(headers.get("content-encoding").is_none());
        assert_eq!((status.reason.as_str(), status.message), ("InternalError", withheld_message(503)));

        let cluster = answer(504, &[], b"<html>upstream timed out at 10.0.0.7</html>".to_vec());
        let (code, _, status) = read(withheld(cluster, false).await).await;
        assert_eq!(
            (code.as_u16(), status.reason.as_str(), status.message),
            (504, "Timeout", withheld_message(504))
        );

        // A reason is the cluster's words too when it is not one Kubernetes defines.
        let made_up = r#"{"kind":"Status","status":"Failure","reason":"dial tcp 10.0.0.7:443","code":502}"#;
        let (_, _, status) = read(withheld(answer(502, &[], made_up.as_bytes().to_vec()), false).await).await;
        assert_eq!(status.reason, "Unknown");
    }

    #[tokio::test]
    async fn other_answers_and_a_backends_own_errors_pass_unchanged() {
        for (code, proxied) in [(200, false), (422, false), (502, true)] {
            let cluster = answer(code, &[("x-kept", "1")], b"as sent".to_vec());
            let out = withheld(cluster, proxied).await;
            assert_eq!(out.status().as_u16(), code);
            assert_eq!(out.headers().get("x-kept").unwrap(), "1");
            assert_eq!(&out.into_body().collect().await.unwrap().to_bytes()[..], b"as sent");
        }
    }
}
