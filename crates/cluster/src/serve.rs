//! Serving the API over TLS on a TCP listener (HTTP/1.1 and HTTP/2), each
//! request carrying the client certificate its connection presented.

use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::authn::CertificateIdentity;

/// Accepts connections until `shutdown` resolves; each connection is served
/// on its own task, so a slow TLS handshake blocks nobody else. Then it stops
/// accepting and returns once every connection has finished its in-flight
/// requests and closed (HTTP/2 ones after a GOAWAY); the caller bounds that wait.
///
/// While `faults` says the cluster is down or restarting, it looks like a stopped process to
/// its clients: each new connection is closed at once and every open one (watches included)
/// is cut when the fault is set.
pub async fn serve_tls(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    app: axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    faults: Option<fundament_dev_faults::Switch>,
) {
    let acceptor = TlsAcceptor::from(tls);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if faults.as_ref().is_some_and(fundament_dev_faults::Switch::unreachable) {
            drop(stream);
            continue;
        }
        // A small last write (a watch event, the end of an answer) is sent at once, not after
        // the client's delayed ACK (Nagle's algorithm; up to 40 ms on Linux).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
        let acceptor = acceptor.clone();
        let app = app.clone();
        let graceful = graceful.watcher();
        let faults = faults.clone();
        tokio::spawn(async move {
            let handshake =
                tokio::time::timeout(std::time::Duration::from_secs(10), acceptor.accept(stream)).await;
            let tls_stream = match handshake {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => return,
            };
            // The handshake verified the chain; what it names is read once, here.
            let leaf = tls_stream.get_ref().1.peer_certificates().and_then(|chain| chain.first());
            let identity = match leaf.map(|der| CertificateIdentity::from_der(der)) {
                None => None,
                Some(Ok(identity)) => Some(identity),
                Some(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "client certificate refused");
                    return;
                }
            };
            let app = app.map_request(move |mut req: http::Request<hyper::body::Incoming>| {
                if let Some(identity) = &identity {
                    req.extensions_mut().insert(identity.clone());
                }
                req
            });
            let service = TowerToHyperService::new(app);
            let builder = auto::Builder::new(TokioExecutor::new());
            let connection =
                builder.serve_connection_with_upgrades(TokioIo::new(tls_stream), service).into_owned();
            let cut = async {
                match &faults {
                    Some(switch) => switch.until_unreachable().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                ended = graceful.watch(connection) => if let Err(e) = ended {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                },
                () = cut => tracing::debug!(%peer, "connection cut: the development fault switch took the cluster down"),
            }
        });
    }
    drop(listener);
    // Also waits for connections still in their TLS handshake (at most 10 s).
    graceful.shutdown().await;
}
