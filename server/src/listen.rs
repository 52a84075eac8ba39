//! Binding listeners with errors that say which service and which port.

use std::{io, net::SocketAddr};

use fundament_settings::{Key, Settings};
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

impl ListenError {
    /// `service` could not listen on `addr`, which the setting `key` chooses. Also for a
    /// listener opened elsewhere (the embedded cluster's), so that every busy port reads alike.
    pub fn new(service: &'static str, addr: SocketAddr, key: Key, source: io::Error) -> Self {
        let hint = hint(key);
        if source.kind() == io::ErrorKind::AddrInUse {
            ListenError::InUse { service, addr, hint }
        } else {
            ListenError::Other { service, addr, hint, source }
        }
    }
}

/// How an error names the settings that change `key`: its flag and its variable.
pub fn hint(key: Key) -> String {
    format!("--{} or {}", key.flag(), key.env())
}

/// Binds `addr` for `service`; `key` is the setting that chooses it.
pub async fn bind(service: &'static str, addr: SocketAddr, key: Key) -> Result<TcpListener, ListenError> {
    TcpListener::bind(addr).await.map_err(|source| ListenError::new(service, addr, key, source))
}

/// Warns, once at start, about each service among `listen_keys` (the listen settings of the
/// services this command runs) whose URL names another port of this machine than it listens
/// on ([`fundament_settings::url_misses_listen`]). Only a warning: something on this machine may
/// forward that port to it (a local load balancer, as scripts/scale-test runs).
pub fn warn_url_mismatches(settings: &Settings, listen_keys: &[Key]) {
    for mismatch in settings.listen_url_mismatches() {
        if listen_keys.contains(&mismatch.listen_key) {
            tracing::warn!(
                listen = %mismatch.listen,
                url = %mismatch.url,
                "{mismatch}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_names_service_and_port() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = bind("console", addr, Key::ConsoleListen).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "console cannot listen on {addr}: port {} is already in use (set --console-listen or FUNDAMENT_CONSOLE_LISTEN)",
                addr.port()
            )
        );
    }
}
