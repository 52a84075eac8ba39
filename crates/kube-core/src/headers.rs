//! Headers a proxy never passes on, in either direction: the hop-by-hop
//! headers (RFC 9110 §7.6.1, plus `Host`, which names the hop's own target),
//! and the caller's credentials for the server in front (`Authorization`,
//! `Cookie`, `Proxy-Authorization` and the impersonation headers), which
//! belong to that server and never to whatever answers behind it.
//!
//! Both proxies of the console read this list: the gateway in front of a
//! cluster and the embedded cluster's service proxy in front of a Service.

/// Lower-case names, as `http::HeaderName::as_str` gives them.
pub const NOT_FORWARDED: &[&str] = &[
    "authorization",
    "cookie",
    "proxy-authorization",
    "impersonate-user",
    "impersonate-group",
    "impersonate-uid",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Whether a header of this (lower-case) name may cross a proxy.
pub fn is_forwarded(name: &str) -> bool {
    !NOT_FORWARDED.contains(&name)
}
