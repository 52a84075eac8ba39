//! Whether a service's URL leads to where it listens.

use std::{fmt, net::SocketAddr};

use url::{Host, Url};

use crate::{Key, Settings};

/// A service whose URL names this machine (a loopback host) on another port than the one it
/// listens on: links and redirects built from the URL would miss it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenUrlMismatch {
    /// The listen setting.
    pub listen_key: Key,
    /// Where the service listens.
    pub listen: SocketAddr,
    /// The URL setting.
    pub url_key: Key,
    /// The URL, as set.
    pub url: Url,
}

impl fmt::Display for ListenUrlMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--{} {} names port {} of this machine, but --{} is {}: links and redirects will miss the service \
             unless something on this machine forwards that port to it (set both to the same port)",
            self.url_key.flag(),
            self.url.as_str().trim_end_matches('/'),
            self.url.port_or_known_default().unwrap_or_default(),
            self.listen_key.flag(),
            self.listen,
        )
    }
}

/// Whether `url` leads to `listen`'s port, as far as can be told from here. Only a loopback URL
/// (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`) is judged: a public name or address may
/// legitimately be a reverse proxy or an ingress on another port (443 in front of 3000), while a
/// loopback URL reaches this machine directly, where nothing stands between. Listening on port 0
/// (any free port) is not judged either.
pub fn url_misses_listen(url: &Url, listen: SocketAddr) -> bool {
    let loopback = match url.host() {
        Some(Host::Domain(host)) => {
            let host = host.trim_end_matches('.').to_ascii_lowercase();
            host == "localhost" || host.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    loopback && listen.port() != 0 && url.port_or_known_default() != Some(listen.port())
}

impl Settings {
    /// Every service whose loopback URL names another port than it listens on
    /// ([`url_misses_listen`]), by its listen setting; callers warn about those they serve.
    pub fn listen_url_mismatches(&self) -> Vec<ListenUrlMismatch> {
        let mut pairs = vec![
            (Key::ConsoleListen, self.console_listen, Key::ConsoleUrl, &self.urls.console),
            (
                Key::KubeApiProxyListen,
                self.listen.kube_api_proxy,
                Key::KubeApiProxyUrl,
                &self.urls.kube_api_proxy,
            ),
            (Key::PluginProxyListen, self.listen.plugin_proxy, Key::PluginProxyUrl, &self.urls.plugin_proxy),
            (Key::AuthnListen, self.listen.authn, Key::AuthnUrl, &self.urls.authn),
            (
                Key::OrganizationApiListen,
                self.listen.organization_api,
                Key::OrganizationApiUrl,
                &self.urls.organization_api,
            ),
            (Key::ClusterListen, self.cluster.listen, Key::ClusterUrl, &self.urls.cluster),
        ];
        // Unset, it is the browsers' URL, already judged.
        if self.urls.kube_api_proxy_internal != self.urls.kube_api_proxy {
            pairs.push((
                Key::KubeApiProxyListen,
                self.listen.kube_api_proxy,
                Key::KubeApiProxyInternalUrl,
                &self.urls.kube_api_proxy_internal,
            ));
        }
        pairs
            .into_iter()
            .filter(|(_, listen, _, url)| url_misses_listen(url, *listen))
            .map(|(listen_key, listen, url_key, url)| ListenUrlMismatch {
                listen_key,
                listen,
                url_key,
                url: url.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layer, Source, resolve};

    fn misses(url: &str, listen: &str) -> bool {
        url_misses_listen(&Url::parse(url).unwrap(), listen.parse().unwrap())
    }

    #[test]
    fn a_loopback_url_on_another_port_misses_the_listener() {
        assert!(misses("http://localhost:3001", "127.0.0.1:3000"));
        assert!(misses("http://127.0.0.1:3001", "0.0.0.0:3000"));
        assert!(misses("http://[::1]:3001", "[::1]:3000"));
        assert!(misses("http://plugins.localhost:8083", "127.0.0.1:8082"));
        assert!(misses("http://LOCALHOST.:8083", "127.0.0.1:8082"));
        // The scheme's port when none is written.
        assert!(misses("http://localhost", "127.0.0.1:3000"));
        assert!(misses("https://localhost", "127.0.0.1:80"));
        assert!(!misses("http://localhost", "127.0.0.1:80"));
        assert!(!misses("https://localhost", "127.0.0.1:443"));
        assert!(!misses("http://localhost:3000/", "127.0.0.1:3000"));
        assert!(!misses("http://127.0.0.2:3000", "0.0.0.0:3000"));
    }

    #[test]
    fn a_public_url_may_differ_behind_a_reverse_proxy() {
        assert!(!misses("https://console.example.com", "0.0.0.0:3000"));
        assert!(!misses("http://10.0.0.5:8080", "0.0.0.0:3000"));
        assert!(!misses("http://fundament-console.fundament.svc:80", "0.0.0.0:3000"));
        // A name that merely ends in "localhost" is not a loopback name.
        assert!(!misses("http://notlocalhost:3001", "127.0.0.1:3000"));
        // Any free port: nothing to compare with.
        assert!(!misses("http://localhost:3001", "127.0.0.1:0"));
    }

    #[test]
    fn the_defaults_agree_and_a_mismatch_names_both_settings() {
        assert_eq!(resolve(&[]).unwrap().listen_url_mismatches(), []);
        let mut flags = Layer::new(Source::Flag);
        flags.set(Key::ConsoleUrl, "http://localhost:3001");
        flags.set(Key::KubeApiProxyInternalUrl, "http://127.0.0.1:9081");
        let found = resolve(&[&flags]).unwrap().listen_url_mismatches();
        let keys: Vec<_> = found.iter().map(|m| (m.listen_key, m.url_key)).collect();
        assert_eq!(
            keys,
            [(Key::ConsoleListen, Key::ConsoleUrl), (Key::KubeApiProxyListen, Key::KubeApiProxyInternalUrl)]
        );
        assert_eq!(
            found[0].to_string(),
            "--console-url http://localhost:3001 names port 3001 of this machine, but --console-listen is \
             127.0.0.1:3000: links and redirects will miss the service unless something on this machine \
             forwards that port to it (set both to the same port)"
        );
    }
}
