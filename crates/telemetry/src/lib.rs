//! Logging for every Fundament service.
//!
//! One call, [`init`], at the top of a binary: JSON lines when stdout is not a
//! terminal (what log collectors read), readable text when it is. [`http_layer`]
//! wraps a router so every request runs in a span that names its method and
//! path (never its query or headers, which can carry tokens), and ends with one
//! line giving status and latency.
//!
//! A request's span is a root span: whatever else runs on the thread or task that
//! accepts a request (another request's future, a connection pool's task, a cache
//! fetch) is never its parent, so each line names its own request only and a line's
//! size does not grow with the number of requests in flight.
#![forbid(unsafe_code)]

use std::{any::Any, io::IsTerminal, time::Duration};

use http::{Request, Response};
use tower_http::{
    catch_panic::{CatchPanicLayer, ResponseForPanic},
    classify::{ServerErrorsAsFailures, SharedClassifier},
    trace::{
        DefaultOnBodyChunk, DefaultOnEos, DefaultOnFailure, DefaultOnRequest, MakeSpan, OnResponse,
        TraceLayer,
    },
};
use tracing::{Level, Span};
use tracing_subscriber::{EnvFilter, fmt::MakeWriter, util::SubscriberInitExt};

/// The filter used when `RUST_LOG` is not set. kube-rs logs every answer of 500 and above at
/// ERROR, without saying whose call it was (`kube_client::client::builder`): each caller here
/// handles and logs its errors once with what it was doing, and some 500s are expected (a
/// kube-apiserver that refuses server-side apply of a CRD: six ERROR lines on every healthy
/// sandbox start). `RUST_LOG` can show them again.
pub const DEFAULT_FILTER: &str = "info,tower_http=warn,kube_client::client::builder=off";

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line.
    Json,
    /// Human-readable lines.
    Pretty,
}

impl LogFormat {
    /// JSON unless stdout is a terminal.
    pub fn detect() -> Self {
        if std::io::stdout().is_terminal() { LogFormat::Pretty } else { LogFormat::Json }
    }
}

/// Installs the global subscriber writing to stdout (services). Call once, first thing in `main`.
pub fn init(format: LogFormat) {
    install(format, std::io::stdout);
}

/// Installs the global subscriber writing to stderr, for commands whose stdout is their answer
/// (a token, a kubeconfig, a JSON report): a log line there would corrupt what a script reads.
/// JSON unless stderr is a terminal.
pub fn init_stderr() {
    let format = if std::io::stderr().is_terminal() { LogFormat::Pretty } else { LogFormat::Json };
    install(format, std::io::stderr);
}

/// The variable whose filter replaces [`DEFAULT_FILTER`].
pub const FILTER_VARIABLE: &str = "RUST_LOG";

fn install<W>(format: LogFormat, writer: W)
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let (filter, invalid) = filter_of(std::env::var(FILTER_VARIABLE));
    // A second init (tests that call main's helpers twice) keeps the first subscriber, and
    // the first one has said what was wrong with the variable already.
    if subscriber(format, filter, writer).try_init().is_ok()
        && let Some(invalid) = invalid
    {
        invalid.log();
    }
}

/// `RUST_LOG`'s filter when it is set and valid, else the default. A value that is set but not
/// a filter is reported (once the subscriber is installed: before, the warning would go
/// nowhere) rather than silently replaced, which would leave the operator wondering why their
/// filter has no effect.
fn filter_of(value: Result<String, std::env::VarError>) -> (EnvFilter, Option<InvalidFilter>) {
    let default = || EnvFilter::new(DEFAULT_FILTER);
    match value {
        Err(std::env::VarError::NotPresent) => (default(), None),
        Err(std::env::VarError::NotUnicode(raw)) => (
            default(),
            Some(InvalidFilter {
                value: raw.to_string_lossy().into_owned(),
                reason: "not valid UTF-8".to_owned(),
            }),
        ),
        Ok(value) => match EnvFilter::builder().parse(&value) {
            Ok(filter) => (filter, None),
            Err(error) => (default(), Some(InvalidFilter { value, reason: error.to_string() })),
        },
    }
}

/// A `RUST_LOG` that is not a filter, and why.
#[derive(Debug)]
struct InvalidFilter {
    value: String,
    reason: String,
}

impl InvalidFilter {
    fn log(&self) {
        tracing::warn!(
            variable = FILTER_VARIABLE,
            value = %self.value,
            reason = %self.reason,
            default = DEFAULT_FILTER,
            "{FILTER_VARIABLE} is not a valid log filter: using the default filter"
        );
    }
}

/// The subscriber [`init`] installs, writing to `writer`.
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync + 'static>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    match format {
        // The spans the line was written in, outermost first, in `spans`; not the current one
        // again in `span` (the list's last): 166 of a gateway audit line's 1,070 bytes repeated it.
        LogFormat::Json => Box::new(
            builder.json().flatten_event(true).with_span_list(true).with_current_span(false).finish(),
        ),
        LogFormat::Pretty => Box::new(builder.finish()),
    }
}

/// Opens the span of one request: method and path only.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestSpan;

impl<B> MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, request: &Request<B>) -> Span {
        tracing::info_span!(
            parent: None,
            "request",
            method = %request.method(),
            path = %request.uri().path(),
            status = tracing::field::Empty,
        )
    }
}

/// Logs one line per finished request.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponseLine;

/// A response extension saying that the service already wrote this request's line (an audit
/// line with status and latency): [`ResponseLine`] then writes none of its own at info level,
/// so each request costs one line. Failures (5xx) are still logged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logged;

/// A response extension saying that the service logged this failure itself, or chose not to
/// (an [`Outage`] it logged once, not per request): [`ResponseLine`] writes the 5xx at debug
/// level only.
#[derive(Debug, Clone, Copy, Default)]
pub struct FailureReported;

impl<B> OnResponse<B> for ResponseLine {
    fn on_response(self, response: &Response<B>, latency: Duration, span: &Span) {
        let status = response.status().as_u16();
        span.record("status", status);
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        if response.status().is_server_error() {
            if response.extensions().get::<FailureReported>().is_some() {
                tracing::debug!(status, latency_us = micros, "request failed");
            } else {
                tracing::warn!(status, latency_us = micros, "request failed");
            }
        } else if response.extensions().get::<Logged>().is_none() {
            tracing::info!(status, latency_us = micros, "request");
        }
    }
}

/// The tower layer type returned by [`http_layer`].
pub type HttpTraceLayer = TraceLayer<
    SharedClassifier<ServerErrorsAsFailures>,
    RequestSpan,
    DefaultOnRequest,
    ResponseLine,
    DefaultOnBodyChunk,
    DefaultOnEos,
    DefaultOnFailure,
>;

/// A span per request and a line per response. A 5xx is that line, at WARN ([`ResponseLine`]);
/// tower-http's own failure line (ERROR, for the same 5xx) said it a second time, so it is at
/// DEBUG, as is a body that fails while it streams (a watch its client drops).
pub fn http_layer() -> HttpTraceLayer {
    TraceLayer::new_for_http()
        .make_span_with(RequestSpan)
        .on_request(DefaultOnRequest::new().level(Level::DEBUG))
        .on_response(ResponseLine)
        .on_failure(DefaultOnFailure::new().level(Level::DEBUG))
}

/// What a service answers when one of its handlers panics: the content type and body of a
/// 500 in the service's protocol (a Kubernetes `Status`, a Connect error, a page).
#[derive(Debug, Clone, Copy)]
pub struct PanicAnswer(pub fn() -> (&'static str, String));

impl ResponseForPanic for PanicAnswer {
    type ResponseBody = String;

    fn response_for_panic(&mut self, panic: Box<dyn Any + Send + 'static>) -> Response<String> {
        // Logged once, here; the client reads only the fixed answer.
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(not a string)".to_string());
        tracing::error!(panic = %what, "handler panicked; answered 500");
        let (content_type, body) = (self.0)();
        let mut response = Response::new(body);
        *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
        let headers = response.headers_mut();
        headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
        headers.insert(http::header::X_CONTENT_TYPE_OPTIONS, http::HeaderValue::from_static("nosniff"));
        response
    }
}

/// The last-resort layer: a panicking handler becomes a 500 with `answer`, logged once, and
/// the connection and the server live on. Put it innermost of the service's own layers, so
/// its headers (CSP, CORS hardening) still apply to the answer.
pub fn catch_panics(answer: PanicAnswer) -> CatchPanicLayer<PanicAnswer> {
    CatchPanicLayer::custom(answer)
}

mod capture;
mod outage;
pub use capture::CapturedLogs;
pub use outage::Outage;

#[cfg(test)]
mod tests {

    use axum::{Router, body::Body, routing::get};
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn the_default_filter_leaves_out_kube_rs_lines_without_context_only() {
        let buffer = CapturedLogs::default();
        let sub = subscriber(LogFormat::Json, EnvFilter::new(DEFAULT_FILTER), buffer.clone());
        tracing::subscriber::with_default(sub, || {
            tracing::error!(target: "kube_client::client::builder", "failed with status 500 Internal Server Error");
            tracing::error!(target: "fundament_installer::apply", "the API server refuses server-side apply");
        });
        let text = buffer.text();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("refuses server-side apply"), "{text}");
    }

    #[tokio::test]
    async fn a_request_logs_one_json_line_without_query_or_headers() {
        let buffer = CapturedLogs::default();
        let sub = subscriber(LogFormat::Json, EnvFilter::new("info"), buffer.clone());
        let _guard = tracing::subscriber::set_default(sub);

        let app = Router::new()
            .route(
                "/things",
                get(|| async {
                    tracing::info!("inside handler");
                    "ok"
                }),
            )
            .layer(http_layer());
        let request = Request::get("/things?token=secret-value")
            .header("authorization", "Bearer secret-value")
            .body(Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);

        let text = buffer.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        for line in &lines {
            let json: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            let spans = json.get("spans").and_then(serde_json::Value::as_array);
            let request = spans.and_then(|s| s.last()).unwrap_or_else(|| panic!("no spans: {line}"));
            assert_eq!(request.get("path").and_then(serde_json::Value::as_str), Some("/things"), "{line}");
            // Named once: the current span is the list's last, not repeated beside it.
            assert_eq!(line.matches("\"path\":").count(), 1, "{line}");
            assert!(!line.contains("secret-value"), "leaked a token: {line}");
        }
        assert!(lines[1].contains("\"status\":200"), "{}", lines[1]);
    }

    #[tokio::test]
    async fn a_server_error_is_one_warning_and_none_when_the_service_reported_it() {
        use axum::response::IntoResponse;
        let buffer = CapturedLogs::default();
        let sub = subscriber(LogFormat::Json, EnvFilter::new("info"), buffer.clone());
        let _guard = tracing::subscriber::set_default(sub);
        let app = Router::new()
            .route("/down", get(|| async { http::StatusCode::SERVICE_UNAVAILABLE }))
            .route(
                "/known",
                get(|| async {
                    let mut response = http::StatusCode::SERVICE_UNAVAILABLE.into_response();
                    response.extensions_mut().insert(FailureReported);
                    response
                }),
            )
            .layer(http_layer());
        for path in ["/down", "/known"] {
            let response =
                app.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
            assert_eq!(response.status(), 503);
        }
        let text = buffer.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "one line for the first 503, none for the reported one: {text}");
        assert!(lines[0].contains("\"level\":\"WARN\"") && lines[0].contains("request failed"), "{text}");
        assert!(lines[0].contains("\"path\":\"/down\""), "{text}");
    }

    #[test]
    fn an_invalid_rust_log_is_named_once_and_the_default_used() {
        let (filter, invalid) = filter_of(Ok("not a=valid[filter".to_owned()));
        assert_eq!(filter.to_string(), EnvFilter::new(DEFAULT_FILTER).to_string());
        let invalid = invalid.expect("the value is not a filter");
        let buffer = CapturedLogs::default();
        let sub = subscriber(LogFormat::Json, filter, buffer.clone());
        tracing::subscriber::with_default(sub, || invalid.log());
        let text = buffer.text();
        assert_eq!(text.lines().count(), 1, "{text}");
        let json: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(json["level"], "WARN", "{text}");
        assert_eq!(json["variable"], "RUST_LOG", "{text}");
        assert_eq!(json["value"], "not a=valid[filter", "{text}");
        assert!(json["reason"].as_str().is_some_and(|r| !r.is_empty()), "{text}");
        assert!(json["message"].as_str().unwrap().contains("RUST_LOG is not a valid log filter"), "{text}");
    }

    #[test]
    fn an_unset_or_valid_rust_log_says_nothing() {
        let (filter, invalid) = filter_of(Err(std::env::VarError::NotPresent));
        assert!(invalid.is_none());
        assert_eq!(filter.to_string(), EnvFilter::new(DEFAULT_FILTER).to_string());
        let (filter, invalid) = filter_of(Ok("debug,hyper=warn".to_owned()));
        assert!(invalid.is_none());
        assert_eq!(filter.to_string(), EnvFilter::new("debug,hyper=warn").to_string());
    }

    async fn boom() -> &'static str {
        panic!("index out of bounds: secret detail")
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_the_service_error_and_the_router_keeps_serving() {
        let buffer = CapturedLogs::default();
        let sub = subscriber(LogFormat::Json, EnvFilter::new("info"), buffer.clone());
        let _guard = tracing::subscriber::set_default(sub);
        let answer = PanicAnswer(|| ("application/json", r#"{"code":"internal"}"#.to_string()));
        let app = Router::new()
            .route("/boom", get(boom))
            .route("/fine", get(|| async { "ok" }))
            .layer(catch_panics(answer));
        let response = app.clone().oneshot(Request::get("/boom").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), 500);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], br#"{"code":"internal"}"#);
        let response = app.oneshot(Request::get("/fine").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), 200);
        let text = buffer.text();
        assert!(text.contains("handler panicked") && text.contains("secret detail"), "{text}");
    }
}
