//! Who may call the gateway from a browser: each plugin installation's pages,
//! from their own origin (`<scheme>://<installation>.<plugins host>`), without
//! credentials (they send their PluginToken as a bearer token), and nobody
//! else. The console's own browser code never calls the gateway: it goes
//! through the console's same-origin route, which adds the user's token on the
//! server. From a browser, a PluginToken is accepted from its own installation's origin
//! only; a request without an `Origin` (a server, curl) is no browser's cross-origin call and
//! is judged by its token alone, so a PluginToken taken out of its page works from anywhere
//! until it expires (its calls are bounded as a page's are: [`crate::in_flight`]).

use fundament_plugin_origin::PluginOrigins;
use http::{HeaderMap, HeaderValue, header};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No `Origin`: not a browser cross-origin call (curl, kubectl, servers,
    /// the console's server side).
    NoOrigin,
    /// A page of this installation, on its own origin.
    Plugin { installation: String, origin: String },
    /// Any other origin, `null` included.
    Other,
}

#[derive(Debug, Clone)]
pub struct Origins {
    pub plugins: PluginOrigins,
}

/// `http://localhost:3000/` → `http://localhost:3000`: origins have no path.
pub fn origin_of(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    match trimmed.find("://") {
        Some(i) => match trimmed[i + 3..].find('/') {
            Some(j) => trimmed[..i + 3 + j].to_string(),
            None => trimmed.to_string(),
        },
        None => trimmed.to_string(),
    }
}

impl Origins {
    pub fn classify(&self, headers: &HeaderMap) -> Caller {
        let Some(origin) = headers.get(header::ORIGIN) else { return Caller::NoOrigin };
        let Ok(origin) = origin.to_str() else { return Caller::Other };
        match self.plugins.installation_of(origin) {
            Some(installation) => Caller::Plugin { installation, origin: origin.to_string() },
            None => Caller::Other,
        }
    }

    /// CORS headers for an answer to `caller`: never credentials.
    pub fn apply(&self, caller: &Caller, headers: &mut HeaderMap) {
        let Caller::Plugin { origin, .. } = caller else { return };
        if let Ok(v) = HeaderValue::from_str(origin) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        }
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }

    /// The headers of a preflight answer, or `None` when the origin is not allowed.
    pub fn preflight(&self, caller: &Caller) -> Option<HeaderMap> {
        if !matches!(caller, Caller::Plugin { .. }) {
            return None;
        }
        let mut headers = HeaderMap::new();
        self.apply(caller, &mut headers);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("Authorization, Content-Type, Accept"),
        );
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        Some(headers)
    }
}

/// What every answer of the gateway carries, whatever the cluster said: it is
/// never a document a browser could run (a page of a plugin's own, served
/// through a service proxy, would otherwise run on the gateway's origin), it
/// sets no cookie, and only the gateway decides about CORS. The cluster's answers
/// reach here with only the headers an API answer needs
/// ([`crate::upstream`]'s `PASSED_BACK`); this holds for the gateway's own answers too.
pub fn harden(headers: &mut HeaderMap) {
    headers.remove(header::SET_COOKIE);
    let cors: Vec<_> =
        headers.keys().filter(|k| k.as_str().starts_with("access-control-")).cloned().collect();
    for key in cors {
        headers.remove(key);
    }
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins() -> Origins {
        Origins { plugins: PluginOrigins::from_base("http://localhost:8082").unwrap() }
    }

    fn with_origin(o: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, o.parse().unwrap());
        h
    }

    #[test]
    fn plugin_origins_get_cors_without_credentials_others_get_nothing() {
        let o = origins();
        let caller = o.classify(&with_origin("http://acme-corp--demo.localhost:8082"));
        assert_eq!(
            caller,
            Caller::Plugin {
                installation: "acme-corp--demo".into(),
                origin: "http://acme-corp--demo.localhost:8082".into()
            }
        );
        let plugin = o.preflight(&caller).unwrap();
        assert_eq!(plugin[header::ACCESS_CONTROL_ALLOW_ORIGIN], "http://acme-corp--demo.localhost:8082");
        assert!(plugin.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
        for other in ["http://localhost:3000", "http://localhost:8082", "https://evil.example", "null"] {
            assert_eq!(o.classify(&with_origin(other)), Caller::Other, "{other}");
            assert!(o.preflight(&o.classify(&with_origin(other))).is_none());
        }
        assert_eq!(o.classify(&HeaderMap::new()), Caller::NoOrigin);
        assert_eq!(origin_of("http://localhost:3000/"), "http://localhost:3000");
        assert_eq!(origin_of("https://a.example/x/y"), "https://a.example");
    }

    #[test]
    fn hardening_removes_cookies_and_foreign_cors_and_forbids_documents() {
        let mut h = HeaderMap::new();
        h.insert(header::SET_COOKIE, "__Host-fundament_auth=x; Path=/".parse().unwrap());
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".parse().unwrap());
        h.insert(header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true".parse().unwrap());
        h.insert(header::CONTENT_SECURITY_POLICY, "default-src *".parse().unwrap());
        h.insert(header::CONTENT_TYPE, "text/html".parse().unwrap());
        harden(&mut h);
        assert!(h.get(header::SET_COOKIE).is_none());
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}
