//! What went wrong on the way to a server, as one line: an error and every cause under it.
//!
//! kube-rs and hyper say `ServiceError: client error (Connect)` for a refused connection, an
//! unknown CA and a certificate for another name alike; the reason is in `source()`, further
//! down (`tcp connect error: Connection refused`, `invalid peer certificate: UnknownIssuer`,
//! `certificate not valid for name "…"`). A message for a person needs that reason.

use std::error::Error;

/// `error` and each of its sources, joined by `: `. A cause whose text the line already holds
/// (kube-rs's `ServiceError: {0}` repeats the error under it) is not repeated.
pub fn chain(error: &dyn Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !text.is_empty() && !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = cause.source();
    }
    line
}

/// A server's URL for a message: scheme, host, port and path, never a user or password that a
/// kubeconfig's `server:` might carry.
pub fn server(url: &http::Uri) -> String {
    let mut shown = String::new();
    if let Some(scheme) = url.scheme_str() {
        shown.push_str(scheme);
        shown.push_str("://");
    }
    if let Some(authority) = url.authority() {
        let host_port = authority.as_str().rsplit_once('@').map_or(authority.as_str(), |(_, rest)| rest);
        shown.push_str(host_port);
    }
    match url.path() {
        "" | "/" => {}
        path => shown.push_str(path),
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a message and an optional cause, like hyper's and kube-rs's.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn Error + 'static))
        }
    }

    fn layers(texts: &[&'static str]) -> Layer {
        texts.iter().rev().fold(None, |under, text| Some(Layer(text, under.map(Box::new)))).unwrap()
    }

    #[test]
    fn the_root_cause_is_named_and_repeats_are_not() {
        let refused = layers(&[
            "ServiceError: client error (Connect)",
            "client error (Connect)",
            "tcp connect error",
            "Connection refused (os error 111)",
        ]);
        assert_eq!(
            chain(&refused),
            "ServiceError: client error (Connect): tcp connect error: Connection refused (os error 111)"
        );
        let unknown_ca = layers(&[
            "ServiceError: client error (Connect)",
            "client error (Connect)",
            "invalid peer certificate: UnknownIssuer",
        ]);
        assert_eq!(
            chain(&unknown_ca),
            "ServiceError: client error (Connect): invalid peer certificate: UnknownIssuer"
        );
        assert_eq!(chain(&layers(&["alone"])), "alone");
        assert_eq!(chain(&layers(&["top", "", "bottom"])), "top: bottom");
    }

    #[test]
    fn a_server_is_shown_without_its_credentials() {
        let shown = |url: &str| server(&url.parse().unwrap());
        assert_eq!(shown("https://127.0.0.1:6443"), "https://127.0.0.1:6443");
        assert_eq!(shown("https://127.0.0.1:6443/"), "https://127.0.0.1:6443");
        assert_eq!(shown("https://admin:s3cret@k8s.example:443/base"), "https://k8s.example:443/base");
        assert_eq!(shown("https://[::1]:6443"), "https://[::1]:6443");
    }
}
