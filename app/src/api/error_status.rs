//! The HTTP status of a server function's error. server_fn answers every error `500`, so a
//! typo in a label selector, an object that does not exist or a session that ended counted as
//! a failure of the console itself: in its log (a warning per request) and in any monitoring
//! of its 5xx rate. The error's kind says what it is; this layer gives it the status that
//! means that (and `Retry-After` when the service named a time). The browser's server_fn
//! client reads any 4xx or 5xx answer as the error it carries, so nothing else changes.

use axum::{body::Body, extract::Request, middleware::Next, response::Response};
use http::{HeaderValue, StatusCode, header};
use leptos::server_fn::error::{SERVER_FN_ERROR_HEADER, ServerFnErrorErr};

use crate::error::AppError;

/// An error answer is a few hundred bytes; more is not one of ours, and is passed on as it is.
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// The status an error of this kind is answered with.
pub fn status_of(error: &AppError) -> StatusCode {
    match error {
        AppError::Unauthenticated => StatusCode::UNAUTHORIZED,
        AppError::Invalid(_) => StatusCode::BAD_REQUEST,
        AppError::Forbidden(_) => StatusCode::FORBIDDEN,
        AppError::NotFound(_) => StatusCode::NOT_FOUND,
        AppError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        AppError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        // What the browser sent could not be read as the function's arguments.
        AppError::Transport(
            ServerFnErrorErr::Args(_)
            | ServerFnErrorErr::MissingArg(_)
            | ServerFnErrorErr::Deserialization(_)
            | ServerFnErrorErr::Request(_)
            | ServerFnErrorErr::UnsupportedRequestMethod(_),
        ) => StatusCode::BAD_REQUEST,
        AppError::Transport(ServerFnErrorErr::Registration(_)) => StatusCode::NOT_FOUND,
        AppError::Transport(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Middleware: a server function's error answer gets the status of its kind ([`status_of`]).
pub async fn with_error_status(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR
        || !response.headers().contains_key(SERVER_FN_ERROR_HEADER)
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_ERROR_BYTES).await {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::warn!(%error, "a server function's error answer could not be read");
            return Response::from_parts(parts, Body::from("Something went wrong on the server."));
        }
    };
    if let Ok(error) = serde_json::from_slice::<AppError>(&bytes) {
        parts.status = status_of(&error);
        if let Some(seconds) = error.retry_after() {
            parts.headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use axum::{Router, routing::post};
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn each_kind_of_error_has_the_status_that_means_it() {
        assert_eq!(status_of(&AppError::Unauthenticated), 401);
        assert_eq!(status_of(&AppError::Invalid("bad selector".into())), 400);
        assert_eq!(status_of(&AppError::Forbidden("You may not read Certificates".into())), 403);
        assert_eq!(status_of(&AppError::NotFound("Certificate web".into())), 404);
        assert_eq!(status_of(&AppError::Internal), 500);
        assert_eq!(status_of(&AppError::Unavailable { message: "down".into(), retry_after: Some(3) }), 503);
        assert_eq!(status_of(&AppError::Transport(ServerFnErrorErr::Args("x".into()))), 400);
        assert_eq!(status_of(&AppError::Transport(ServerFnErrorErr::ServerError("x".into()))), 500);
    }

    /// A router answering `error` as server_fn does: 500, its header, the error as JSON.
    fn answering(error: AppError) -> Router {
        Router::new()
            .route(
                "/api/f",
                post(move || {
                    let error = error.clone();
                    async move {
                        Response::builder()
                            .status(StatusCode::INTERNAL_SERVER_ERROR)
                            .header(SERVER_FN_ERROR_HEADER, "/api/f")
                            .body(Body::from(serde_json::to_vec(&error).unwrap()))
                            .unwrap()
                    }
                }),
            )
            .route("/panic", post(|| async { StatusCode::INTERNAL_SERVER_ERROR }))
            .layer(axum::middleware::from_fn(with_error_status))
    }

    async fn call(router: Router, path: &str) -> Response {
        router.oneshot(http::Request::post(path).body(Body::empty()).unwrap()).await.unwrap()
    }

    #[tokio::test]
    async fn an_error_answer_gets_its_status_and_keeps_its_body() {
        let error = AppError::NotFound("Certificate web".into());
        let response = call(answering(error.clone()), "/api/f").await;
        assert_eq!(response.status(), 404);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        assert_eq!(
            serde_json::from_slice::<AppError>(&body).unwrap(),
            error,
            "the browser reads the same error"
        );

        let busy =
            AppError::Unavailable { message: "the cluster is restarting".into(), retry_after: Some(7) };
        let response = call(answering(busy), "/api/f").await;
        assert_eq!(response.status(), 503);
        assert_eq!(response.headers()[header::RETRY_AFTER], "7");

        let internal = call(answering(AppError::Internal), "/api/f").await;
        assert_eq!(internal.status(), 500, "a failure of the console stays one");
        let other = call(answering(AppError::Internal), "/panic").await;
        assert_eq!(other.status(), 500, "not a server function's answer: untouched");
    }
}
