//! Every plugin installation's pages get an origin of their own, so plugins
//! share no storage, cookies, caches or frames (VS Code gives each webview its
//! own origin for the same reason):
//!
//! `<scheme>://<installation>.<plugins host>[:<port>]`
//!
//! where scheme, host and port are those of plugin-proxy's base URL:
//! `http://localhost:8082` gives `http://acme-corp--demo.localhost:8082` in
//! development (Chromium resolves `*.localhost` to loopback), and
//! `https://plugins.example.io` gives `https://acme-corp--demo.plugins.example.io`
//! in production. The base origin itself serves only the SDK, never a page.
//!
//! Only installation names that are DNS labels get an origin: a name with a
//! dot would make one installation's origin a parent domain of another's.
#![forbid(unsafe_code)]

use fundament_kube_core::validation::is_dns1123_label;

/// The query parameter that carries a frame ticket on a plugin frame's first navigation; the
/// console adds it, plugin-proxy takes it away (it answers with a redirect to the clean URL).
pub const FRAME_TICKET_PARAM: &str = "fundament-ticket";

/// The Content-Security-Policy of every plugin page: plugin-proxy sends it with each page, and
/// `fundament plugin check` serves pages under it too. `'self'` is the installation's own origin
/// (its files, its SDK copy, its runtime API); besides, pages may reach `kube_api_proxy` only,
/// and only `console` may frame them. No inline scripts or styles.
pub fn page_csp(kube_api_proxy: &str, console: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; \
         connect-src 'self' {kube_api_proxy}; form-action 'self'; frame-src 'self'; child-src 'self'; worker-src 'self'; \
         manifest-src 'self'; frame-ancestors {console}; base-uri 'none'; object-src 'none'"
    )
}

/// The Content-Type a plugin's console file is served with, by its name: plugin-proxy types
/// what a runtime sends without a type (or as bare bytes) with it, `fundament plugin check`
/// serves a folder's files with it, and a Rust plugin's runtime (`fundament-plugin-runtime`)
/// declares it. The types a page is made of are spelled out (browsers refuse module scripts
/// and stylesheets of the wrong type under `nosniff`); TypeScript sources are text, not the
/// extension table's MPEG transport stream; the rest come from that table, with UTF-8 for text.
pub fn console_file_type(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or_default();
    let extension = name.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).unwrap_or_default();
    let known = match extension.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "wasm" => "application/wasm",
        "txt" | "ts" | "mts" => "text/plain; charset=utf-8",
        _ => {
            return match mime_guess::from_path(file).first() {
                Some(mime) if mime.type_() == mime_guess::mime::TEXT => format!("{mime}; charset=utf-8"),
                Some(mime) => mime.to_string(),
                None => "application/octet-stream".to_owned(),
            };
        }
    };
    known.to_owned()
}

/// The plugins host and what hangs off it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginOrigins {
    scheme: String,
    host: String,
    /// `:8082`, or empty for the scheme's default port.
    port: String,
}

/// What a `Host` header names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginHost {
    /// The plugins host itself (the SDK).
    Base,
    /// One installation's origin.
    Installation(String),
}

impl PluginOrigins {
    /// From plugin-proxy's base URL or origin (`http://localhost:8082/`); `None`
    /// when it is not an `http(s)` URL with a host name (an IP address will not do).
    pub fn from_base(url: &str) -> Option<PluginOrigins> {
        let (scheme, rest) = url.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
                if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let default = (scheme == "http" && port == "80") || (scheme == "https" && port == "443");
                (host, if default { String::new() } else { format!(":{port}") })
            }
            _ => (authority, String::new()),
        };
        if host.is_empty() || is_ip_address(host) {
            // An IP address has no subdomains to give installations.
            return None;
        }
        Some(PluginOrigins { scheme, host: host.to_ascii_lowercase(), port })
    }

    /// plugin-proxy's own origin (`http://localhost:8082`).
    pub fn base(&self) -> String {
        format!("{}://{}{}", self.scheme, self.host, self.port)
    }

    /// The origin of an installation's pages, or `None` when its name is not a DNS label.
    pub fn of(&self, installation: &str) -> Option<String> {
        is_dns1123_label(installation)
            .then(|| format!("{}://{installation}.{}{}", self.scheme, self.host, self.port))
    }

    /// Every installation's origin, as a CSP source (`http://*.localhost:8082`).
    pub fn wildcard(&self) -> String {
        format!("{}://*.{}{}", self.scheme, self.host, self.port)
    }

    /// The installation whose origin `origin` (an `Origin` header) is.
    pub fn installation_of(&self, origin: &str) -> Option<String> {
        let rest = origin.strip_prefix(&self.scheme)?.strip_prefix("://")?;
        let rest = rest.strip_suffix(self.port.as_str())?;
        self.label_under(rest)
    }

    /// What a `Host` header (`acme-corp--demo.localhost:8082`) names. The port
    /// is not compared: behind a proxy the listening port is not the public one.
    pub fn host(&self, host_header: &str) -> Option<PluginHost> {
        let host = match host_header.rsplit_once(':') {
            Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host_header,
        };
        let host = host.to_ascii_lowercase();
        if host == self.host {
            return Some(PluginHost::Base);
        }
        self.label_under(&host).map(PluginHost::Installation)
    }

    fn label_under(&self, host: &str) -> Option<String> {
        let label = host.strip_suffix(self.host.as_str())?.strip_suffix('.')?;
        is_dns1123_label(label).then(|| label.to_string())
    }
}

/// Whether a URL's host is an IP address rather than a name: an IPv6 literal (`[::1]`), or a
/// host that URL parsers (the WHATWG standard's, which browsers and the `url` crate follow)
/// read as IPv4: any host whose last label is a number, decimal or `0x` hex, so `127.0.0.1`
/// and also `127.1`, `2130706433`, `0x7f.1` and `017700000001`. No DNS name ends that way.
fn is_ip_address(host: &str) -> bool {
    if host.starts_with('[') {
        return true;
    }
    let host = host.strip_suffix('.').unwrap_or(host);
    let last = host.rsplit('.').next().unwrap_or_default();
    match last.strip_prefix("0x").or_else(|| last.strip_prefix("0X")) {
        Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn console_files_are_typed_by_name() {
        let cases = [
            ("index.html", "text/html; charset=utf-8"),
            ("PAGE.HTM", "text/html; charset=utf-8"),
            ("sub/app.js", "text/javascript; charset=utf-8"),
            ("mod.mjs", "text/javascript; charset=utf-8"),
            ("style.css", "text/css; charset=utf-8"),
            ("data.json", "application/json"),
            ("app.js.map", "application/json"),
            ("icon.svg", "image/svg+xml"),
            ("module.wasm", "application/wasm"),
            ("notes.txt", "text/plain; charset=utf-8"),
            ("src/sdk.d.ts", "text/plain; charset=utf-8"),
            ("logo.png", "image/png"),
            ("font.woff2", "font/woff2"),
            ("notes.md", "text/markdown; charset=utf-8"),
            ("blob.unknownext", "application/octet-stream"),
            ("Makefile", "application/octet-stream"),
            ("dir.d/noext", "application/octet-stream"),
        ];
        for (file, expected) in cases {
            assert_eq!(super::console_file_type(file), expected, "{file}");
        }
    }

    use super::*;

    #[test]
    fn development_origins() {
        let o = PluginOrigins::from_base("http://localhost:8082/").unwrap();
        assert_eq!(o.base(), "http://localhost:8082");
        assert_eq!(o.of("acme-corp--demo").unwrap(), "http://acme-corp--demo.localhost:8082");
        assert_eq!(o.wildcard(), "http://*.localhost:8082");
        assert_eq!(
            o.installation_of("http://acme-corp--demo.localhost:8082").as_deref(),
            Some("acme-corp--demo")
        );
        assert_eq!(
            o.host("acme-corp--demo.localhost:8082"),
            Some(PluginHost::Installation("acme-corp--demo".into()))
        );
        assert_eq!(
            o.host("ACME-corp--demo.Localhost"),
            Some(PluginHost::Installation("acme-corp--demo".into()))
        );
        assert_eq!(o.host("localhost:8082"), Some(PluginHost::Base));
    }

    #[test]
    fn production_origins_drop_the_default_port() {
        let o = PluginOrigins::from_base("https://plugins.example.io:443").unwrap();
        assert_eq!(o.of("a").unwrap(), "https://a.plugins.example.io");
        assert_eq!(o.installation_of("https://a.plugins.example.io").as_deref(), Some("a"));
        assert_eq!(o.installation_of("https://a.plugins.example.io:8443"), None);
    }

    #[test]
    fn nothing_else_is_an_installation_origin() {
        let o = PluginOrigins::from_base("http://localhost:8082").unwrap();
        for bad in [
            "http://localhost:8082",
            "https://a.localhost:8082",
            "http://a.localhost:8083",
            "http://a.b.localhost:8082",
            "http://.localhost:8082",
            "http://-a.localhost:8082",
            "http://a.localhost:8082.evil",
            "http://alocalhost:8082",
            "null",
            "",
        ] {
            assert_eq!(o.installation_of(bad), None, "{bad}");
        }
        assert_eq!(o.of("a.b"), None);
        assert_eq!(o.of(&"a".repeat(64)), None);
        assert_eq!(o.host("evil.example:8082"), None);
        assert_eq!(o.host("a.b.localhost:8082"), None);
    }

    #[test]
    fn bases_that_cannot_host_installations() {
        for bad in ["ftp://x", "http://", "http://[::1]:8082", "http://u@h", "localhost:8082", "http://h:x"] {
            assert_eq!(PluginOrigins::from_base(bad), None, "{bad}");
        }
    }

    /// Each installation's origin is `<installation>.<host>`, which an IP address cannot have:
    /// refused in every form a URL parser reads as one, not only as a dotted quad.
    #[test]
    fn ip_addresses_cannot_host_installations() {
        for bad in [
            "http://127.0.0.1:46082",
            "http://127.0.0.1",
            "https://10.0.0.7/",
            "http://127.0.0.1.:8082",
            "http://127.1",
            "http://2130706433",
            "http://0x7f.1",
            "http://0X7F000001",
            "http://017700000001",
            "http://[::1]:8082",
            "http://[2001:db8::1]",
        ] {
            assert_eq!(PluginOrigins::from_base(bad), None, "{bad}");
        }
        // Names with digits are names.
        for good in
            ["http://plugins.10x.example", "http://1.example.com:8082", "http://0xcafe.io", "http://a1"]
        {
            assert!(PluginOrigins::from_base(good).is_some(), "{good}");
        }
    }
}
