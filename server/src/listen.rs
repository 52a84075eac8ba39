//! Binding listeners with errors that say which service and which port.

use std::{io, net::SocketAddr};

use tokio::net::TcpListener;

/// A listener could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Another process holds the port.
    #[error("{service} cannot listen on {addr}: port {port} is already in use (set {hint})", port = .addr.port())]
    InUse {
        /// The service that wanted the port.
        service: &'static str,
        /// The address.
        addr: SocketAddr,
        /// The settings that choose the address.
        hint: String,
    },
    /// Any other failure (permission, no such address).
    #[error("{service} cannot listen on {addr}: {source} (set {hint})")]
    Other {
        /// The service that wanted the port.
        service: &'static str,
        /// The address.
        addr: SocketAddr,
        /// The settings that choose the address.
        hint: String,
        /// The OS error.
        source: io::Error,
    },
}

/// Binds `addr` for `service`; `hint` names the flag and variable that set it.
pub async fn bind(service: &'static str, addr: SocketAddr, hint: String) -> Result<TcpListener, ListenError> {
    TcpListener::bind(addr).await.map_err(|source| {
        if source.kind() == io::ErrorKind::AddrInUse {
            ListenError::InUse { service, addr, hint }
        } else {
            ListenError::Other { service, addr, hint, source }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_names_service_and_port() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err =
            bind("console", addr, "--console-listen or FUNDAMENT_CONSOLE_LISTEN".into()).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "console cannot listen on {addr}: port {} is already in use (set --console-listen or FUNDAMENT_CONSOLE_LISTEN)",
                addr.port()
            )
        );
    }
}
