//! CORS: the console's origin with credentials (its pages use the cookie);
//! the plugin-proxy origin without (plugin pages carry a PluginToken, never
//! the user's cookie); no other origin at all.

use http::{HeaderMap, HeaderValue, header};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No `Origin`: not a browser cross-origin call (curl, kubectl, servers).
    NoOrigin,
    Console,
    PluginProxy,
    Other,
}

#[derive(Debug, Clone)]
pub struct Origins {
    pub console: String,
    pub plugin_proxy: String,
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
        match headers.get(header::ORIGIN).map(|v| v.to_str().unwrap_or("\u{0}")) {
            None => Caller::NoOrigin,
            Some(o) if o == self.console => Caller::Console,
            Some(o) if o == self.plugin_proxy => Caller::PluginProxy,
            Some(_) => Caller::Other,
        }
    }

    /// CORS headers for an answer to `caller`.
    pub fn apply(&self, caller: &Caller, headers: &mut HeaderMap) {
        let (origin, credentials) = match caller {
            Caller::Console => (&self.console, true),
            Caller::PluginProxy => (&self.plugin_proxy, false),
            _ => return,
        };
        if let Ok(v) = HeaderValue::from_str(origin) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        }
        if credentials {
            headers.insert(header::ACCESS_CONTROL_ALLOW_CREDENTIALS, HeaderValue::from_static("true"));
        }
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }

    /// The headers of a preflight answer, or `None` when the origin is not allowed.
    pub fn preflight(&self, caller: &Caller) -> Option<HeaderMap> {
        if !matches!(caller, Caller::Console | Caller::PluginProxy) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn origins() -> Origins {
        Origins { console: "http://localhost:3000".into(), plugin_proxy: "http://localhost:8082".into() }
    }

    fn with_origin(o: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, o.parse().unwrap());
        h
    }

    #[test]
    fn console_gets_credentials_plugins_do_not_others_get_nothing() {
        let o = origins();
        let console = o.preflight(&o.classify(&with_origin("http://localhost:3000"))).unwrap();
        assert_eq!(console[header::ACCESS_CONTROL_ALLOW_CREDENTIALS], "true");
        let plugin = o.preflight(&o.classify(&with_origin("http://localhost:8082"))).unwrap();
        assert_eq!(plugin[header::ACCESS_CONTROL_ALLOW_ORIGIN], "http://localhost:8082");
        assert!(plugin.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
        assert!(o.preflight(&o.classify(&with_origin("https://evil.example"))).is_none());
        assert!(o.preflight(&o.classify(&with_origin("null"))).is_none());
        assert_eq!(o.classify(&HeaderMap::new()), Caller::NoOrigin);
        assert_eq!(origin_of("http://localhost:3000/"), "http://localhost:3000");
        assert_eq!(origin_of("https://a.example/x/y"), "https://a.example");
    }
}
