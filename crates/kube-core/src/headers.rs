//! Headers a proxy never passes on, in either direction: the hop-by-hop
//! headers (RFC 9110 §7.6.1, plus `Host`, which names the hop's own target),
//! and the caller's credentials for the server in front (`Authorization`,
//! `Cookie`, `Proxy-Authorization` and every impersonation header), which
//! belong to that server and never to whatever answers behind it.
//!
//! Both proxies of the console read this list: the gateway in front of a
//! cluster and the embedded cluster's service proxy in front of a Service.

/// Lower-case names, as `http::HeaderName::as_str` gives them.
pub const NOT_FORWARDED: &[&str] = &[
    "authorization",
    "cookie",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// What every header kube-apiserver reads as impersonation starts with: `Impersonate-User`,
/// `-Group`, `-Uid`, and `Impersonate-Extra-<key>` for any key. Passed on, an extra would be
/// added to the identity the proxy's own kubeconfig impersonates (`as:`), whoever sent it.
pub const IMPERSONATION_PREFIX: &str = "impersonate-";

/// Whether a header of this (lower-case) name may cross a proxy.
pub fn is_forwarded(name: &str) -> bool {
    !NOT_FORWARDED.contains(&name) && !name.starts_with(IMPERSONATION_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::is_forwarded;

    #[test]
    fn no_impersonation_header_crosses_whatever_it_names() {
        for name in [
            "impersonate-user",
            "impersonate-group",
            "impersonate-uid",
            "impersonate-extra-scopes",
            "impersonate-extra-acme.com%2fteam",
        ] {
            assert!(!is_forwarded(name), "{name}");
        }
        for name in ["authorization", "cookie", "proxy-authorization", "host", "upgrade"] {
            assert!(!is_forwarded(name), "{name}");
        }
        for name in ["accept", "content-type", "x-impersonate-user", "user-agent"] {
            assert!(is_forwarded(name), "{name}");
        }
    }
}
