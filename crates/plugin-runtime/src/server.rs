//! The routes, and serving them until shutdown.

use std::future::{Future, IntoFuture};
use std::time::Duration;

use axum::Router;
use axum::routing::{any, get};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::runtime::Runtime;
use crate::{console, health, metadata};

/// How long in-flight requests may finish after shutdown was asked for (upstream's default):
/// the pod's termination grace period is about as long, and a stuck client must not hold it.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

pub(crate) fn router(runtime: Runtime) -> Router {
    let service = metadata::SERVICE;
    Router::new()
        .route("/livez", get(health::livez))
        .route("/readyz", get(health::readyz))
        .route(&format!("{service}/GetStatus"), any(metadata::get_status))
        .route(&format!("{service}/GetMetadata"), any(metadata::get_metadata))
        .route(&format!("{service}/{{*procedure}}"), any(metadata::unknown_procedure))
        .route(console::PREFIX, get(console::serve))
        .route(&format!("{}{{*path}}", console::PREFIX), get(console::serve))
        .fallback(|| async { console::not_found() })
        .with_state(runtime)
        .layer(fundament_telemetry::catch_panics(fundament_telemetry::PanicAnswer(|| {
            ("application/json", fundament_connect::ConnectError::internal_body())
        })))
}

/// Serves `runtime` on `listener` until `shutdown` resolves, then lets in-flight requests finish
/// for up to 30 seconds.
pub async fn serve(
    runtime: Runtime,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // TCP_NODELAY: an answer's last small write leaves at once, not after the client's
    // delayed ACK (Nagle's algorithm; up to 40 ms on Linux).
    let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY could not be set");
        }
    });
    serve_router(runtime.router(), listener, shutdown, SHUTDOWN_GRACE).await
}

/// [`serve`] for a runtime's router the caller wrapped, on any listener: `fundament dev` puts
/// a development fault switch around both (`fundament-dev-faults`).
pub async fn serve_wrapped<L>(
    router: Router,
    listener: L,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    serve_router(router, listener, shutdown, SHUTDOWN_GRACE).await
}

async fn serve_router<L>(
    router: Router,
    listener: L,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    let (started, stopping) = oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        let _ = started.send(());
    };
    let server = axum::serve(listener, router).with_graceful_shutdown(signal).into_future();
    let deadline = async move {
        match stopping.await {
            Ok(()) => tokio::time::sleep(grace).await,
            // The server ended before shutdown was asked for: its own result decides.
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        result = server => result,
        () = deadline => {
            tracing::warn!(grace_seconds = grace.as_secs(), "requests still in flight after the shutdown grace period; stopping");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn listener() -> (TcpListener, std::net::SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr)
    }

    #[tokio::test]
    async fn a_request_that_never_ends_does_not_hold_shutdown_beyond_the_grace() {
        let router = Router::new().route("/hang", get(std::future::pending::<&'static str>));
        let (listener, addr) = listener().await;
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(serve_router(
            router,
            listener,
            async move {
                let _ = stopped.await;
            },
            Duration::from_millis(100),
        ));
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        client.write_all(b"GET /hang HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        stop.send(()).unwrap();
        let result = tokio::time::timeout(Duration::from_secs(5), server).await;
        assert!(matches!(result, Ok(Ok(Ok(())))), "{result:?}");
        drop(client);
    }

    #[tokio::test]
    async fn serve_answers_until_shutdown() {
        let info =
            crate::PluginInfo { name: "p".into(), version: "v1".into(), definition_hash: String::new() };
        let (listener, addr) = listener().await;
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(serve(Runtime::new(info, crate::Assets::None), listener, async move {
            let _ = stopped.await;
        }));
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        client.write_all(b"GET /livez HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").await.unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.ends_with("\r\n\r\nok"), "{answer}");
        stop.send(()).unwrap();
        let result = tokio::time::timeout(Duration::from_secs(5), server).await;
        assert!(matches!(result, Ok(Ok(Ok(())))), "{result:?}");
    }
}
