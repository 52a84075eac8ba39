use std::{fmt, net::SocketAddr, path::PathBuf, str::FromStr};

use url::Url;

use crate::{
    error::SettingsError,
    layer::{Key, Layer, Source},
};

/// How the stack reaches Kubernetes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The embedded cluster answers (the default).
    Mock,
    /// A local cluster from a kubeconfig.
    Sandbox,
    /// Gardener-managed clusters.
    Real,
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mock" => Ok(Mode::Mock),
            "sandbox" => Ok(Mode::Sandbox),
            "real" => Ok(Mode::Real),
            _ => Err("unknown mode: expected one of mock, sandbox, real".to_owned()),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Mock => "mock",
            Mode::Sandbox => "sandbox",
            Mode::Real => "real",
        })
    }
}

/// Where browsers and services reach the stack's services.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceUrls {
    /// The console's own origin.
    pub console: Url,
    /// kube-api-proxy, as browsers (plugin pages) reach it.
    pub kube_api_proxy: Url,
    /// kube-api-proxy, as the console's server reaches it.
    pub kube_api_proxy_internal: Url,
    /// plugin-proxy: the plugins host; each installation's pages are on a subdomain of it.
    pub plugin_proxy: Url,
    /// authn.
    pub authn: Url,
    /// organization-api.
    pub organization_api: Url,
    /// The embedded cluster's API server.
    pub cluster: Url,
}

/// The resolved, checked settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How the stack reaches Kubernetes.
    pub mode: Mode,
    /// Where the console listens.
    pub console_listen: SocketAddr,
    /// The built site (wasm, CSS, assets).
    pub site_root: PathBuf,
    /// The services' public URLs.
    pub urls: ServiceUrls,
    /// The embedded cluster.
    pub cluster: ClusterSettings,
    /// Where the services listen.
    pub listen: ServiceListen,
    /// Cluster access of users.
    pub fga: FgaSettings,
    /// Keys and other state kept across restarts; `None`: the platform's state directory.
    pub state_dir: Option<PathBuf>,
    /// kube-api-proxy's audit lines also go to this file (JSON lines); `None`: the log only.
    pub audit_log: Option<PathBuf>,
    /// What kube-api-proxy keeps for the console's audit view.
    pub audit_view: AuditViewSettings,
    /// Sandbox mode's cluster (required there).
    pub kubeconfig: Option<PathBuf>,
    /// Real mode's Gardener (required there).
    pub gardener_kubeconfig: Option<PathBuf>,
    /// Real mode: the garden namespaces whose Shoots may be clusters; empty: any.
    pub garden_namespaces: Vec<String>,
    /// Whether kubeconfigs may skip verifying their server's certificate.
    pub allow_insecure_kubeconfig: bool,
    /// The directory file; `None`: the seed.
    pub directory: Option<PathBuf>,
    /// OpenID Connect sign-in; `None`: not configured.
    pub oidc: Option<OidcSettings>,
    /// What the replicas share, and how it is reached.
    pub scale: ScaleSettings,
}

impl Settings {
    /// For the commands that reach clusters (`dev`, authn, kube-api-proxy, plugin-proxy,
    /// `uninstall`): what the mode needs to reach them is set. The console and
    /// organization-api reach no cluster and do not ask. The error says which setting and
    /// where to set it.
    pub fn check_cluster_access(&self) -> Result<(), SettingsError> {
        let needs =
            |key: Key, what: &str| SettingsError::required(key, format!("in {} mode", self.mode), what);
        match self.mode {
            Mode::Sandbox if self.kubeconfig.is_none() => {
                Err(needs(Key::Kubeconfig, "the cluster's kubeconfig"))
            }
            Mode::Real if self.gardener_kubeconfig.is_none() => {
                Err(needs(Key::GardenerKubeconfig, "the Gardener's kubeconfig"))
            }
            _ => Ok(()),
        }
    }
}

/// The files the console (`/plugin-ui/`) and plugin-proxy (`/plugins/sdk/v1/`) serve from
/// `--plugin-sdk-dir`; the script is served minified.
pub const PLUGIN_SDK_FILES: [&str; 3] = ["plugin-sdk.min.js", "plugin-sdk.css", "plugin-sdk.d.ts"];

impl Settings {
    /// For the commands that serve the plugin SDK (the console, plugin-proxy, `dev`): its files
    /// are there. Without them every plugin page loses its SDK while every `/readyz` says ready,
    /// so a wrong directory stops the command at start instead.
    pub fn check_plugin_sdk(&self) -> Result<(), SettingsError> {
        let dir = &self.cluster.plugin_sdk_dir;
        require_directory(Key::PluginSdkDir, dir)?;
        match PLUGIN_SDK_FILES.iter().find(|file| !dir.join(file).is_file()) {
            Some(file) => Err(missing(Key::PluginSdkDir, dir, format!("no {file} in that directory"))),
            None => Ok(()),
        }
    }

    /// For the commands that seed a cluster from the fixtures (`cluster`, `dev` in mock and
    /// sandbox mode): the directory is there. A missing one would seed nothing, and the first
    /// error would be about something else.
    pub fn check_fixtures_dir(&self) -> Result<(), SettingsError> {
        require_directory(Key::FixturesDir, &self.cluster.fixtures_dir)
    }

    /// For the commands that run the embedded cluster: the state file's directory is there (the
    /// file itself is made at start). Without it the cluster would start and refuse every write.
    pub fn check_state_file(&self) -> Result<(), SettingsError> {
        let Some(file) = &self.cluster.state_file else {
            return Ok(());
        };
        // A bare file name lives in the working directory, which exists.
        let parent = file.parent().filter(|p| !p.as_os_str().is_empty());
        match parent {
            Some(dir) if !dir.is_dir() => {
                Err(missing(Key::StateFile, file, format!("its directory {} does not exist", dir.display())))
            }
            _ => Ok(()),
        }
    }
}

fn missing(key: Key, path: &std::path::Path, problem: String) -> SettingsError {
    SettingsError::Missing { key, path: path.to_owned(), problem }
}

fn require_directory(key: Key, dir: &std::path::Path) -> Result<(), SettingsError> {
    if dir.is_dir() {
        Ok(())
    } else if dir.exists() {
        Err(missing(key, dir, "not a directory".to_owned()))
    } else {
        Err(missing(key, dir, "no such directory".to_owned()))
    }
}

/// OpenID Connect sign-in. The client secret itself is read from its file by the service that
/// needs it (authn), so it never sits in the settings of the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcSettings {
    /// Exactly as given (compared with the discovery document's `issuer` character by character).
    pub issuer: String,
    pub client_id: String,
    /// Only authn reads it (and refuses to start without it); the console and the others
    /// know the issuer without holding the secret.
    pub client_secret_file: Option<PathBuf>,
    pub provider_name: String,
    /// Always starts with `openid`.
    pub scopes: Vec<String>,
    pub email_claim: String,
    pub name_claim: String,
    pub groups_claim: String,
}

/// How much of the plugin-path calls kube-api-proxy keeps for the console's audit view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditViewSettings {
    /// The newest this many.
    pub entries: usize,
    /// None older than this many hours.
    pub hours: u64,
}

/// What several replicas of a service need to share.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ScaleSettings {
    /// `redis://host:port[/db]`; `None`: this process's memory.
    pub shared_store: Option<String>,
    /// authn's signing keys directory; `None`: `<state-dir>/authn`.
    pub signing_keys_dir: Option<PathBuf>,
    /// plugin-proxy's frame cookie key file; `None`: `<state-dir>/plugin-proxy`.
    pub frame_key_file: Option<PathBuf>,
}

impl std::fmt::Debug for ScaleSettings {
    /// The store URL may hold a password: never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaleSettings")
            .field("shared_store", &self.shared_store.as_ref().map(|_| "<set>"))
            .field("signing_keys_dir", &self.signing_keys_dir)
            .field("frame_key_file", &self.frame_key_file)
            .finish()
    }
}

/// Socket addresses of the services.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceListen {
    /// kube-api-proxy.
    pub kube_api_proxy: SocketAddr,
    /// authn.
    pub authn: SocketAddr,
    /// organization-api.
    pub organization_api: SocketAddr,
    /// plugin-proxy.
    pub plugin_proxy: SocketAddr,
}

/// Where `can_view` is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FgaSettings {
    /// A real OpenFGA server; `None`: the embedded tuple store.
    pub openfga_url: Option<Url>,
    /// Its store id (required with a URL).
    pub store_id: Option<String>,
    /// Its authorization model id.
    pub model_id: Option<String>,
    /// The embedded tuple store's file.
    pub tuples: PathBuf,
}

/// Settings of the embedded cluster (mock mode). Its `Debug` hides the admin token.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// Where it listens.
    pub listen: SocketAddr,
    /// Objects kept across restarts; `None`: memory only.
    pub state_file: Option<PathBuf>,
    /// A fixed admin token; `None`: generated once and kept in the state directory.
    pub admin_token: Option<String>,
    /// Cluster-wide fixtures.
    pub fixtures_dir: PathBuf,
    /// Plugin folders.
    pub plugins_dir: PathBuf,
    /// The plugin SDK's files.
    pub plugin_sdk_dir: PathBuf,
    /// Development plugin folders (`fundament dev --plugin DIR`), installed besides `plugins_dir`.
    pub development_plugins: Vec<PathBuf>,
}

impl fmt::Debug for ClusterSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterSettings")
            .field("listen", &self.listen)
            .field("state_file", &self.state_file)
            .field("admin_token", &self.admin_token.as_ref().map(|_| "<redacted>"))
            .field("fixtures_dir", &self.fixtures_dir)
            .field("plugins_dir", &self.plugins_dir)
            .field("plugin_sdk_dir", &self.plugin_sdk_dir)
            .field("development_plugins", &self.development_plugins)
            .finish()
    }
}

/// The built-in default of a key; `None` where it derives from other settings.
fn default_of(key: Key) -> Option<&'static str> {
    Some(match key {
        Key::Mode => "mock",
        Key::ConsoleListen => "127.0.0.1:3000",
        Key::ConsoleUrl => return None,
        Key::SiteRoot => "target/site",
        Key::KubeApiProxyUrl => "http://localhost:8081",
        Key::KubeApiProxyInternalUrl => return None,
        Key::PluginProxyUrl => "http://localhost:8082",
        Key::AuthnUrl => "http://localhost:8083",
        Key::OrganizationApiUrl => "http://localhost:8084",
        Key::ClusterUrl => "https://localhost:8090",
        Key::ClusterListen => "127.0.0.1:8090",
        Key::StateDir | Key::StateFile | Key::ClusterAdminToken => return None,
        Key::FixturesDir => "fixtures/cluster",
        Key::PluginsDir => "plugins",
        Key::KubeApiProxyListen => "127.0.0.1:8081",
        Key::AuthnListen => "127.0.0.1:8083",
        Key::OrganizationApiListen => "127.0.0.1:8084",
        Key::OpenFgaUrl | Key::OpenFgaStore | Key::OpenFgaModel => return None,
        Key::FgaTuples => "fixtures/fga/tuples.yaml",
        Key::PluginProxyListen => "127.0.0.1:8082",
        Key::PluginSdkDir => "plugin-sdk",
        Key::AuditLog | Key::Kubeconfig | Key::GardenerKubeconfig | Key::GardenNamespaces => return None,
        Key::AuditViewEntries => "10000",
        Key::AuditViewHours => "168",
        Key::AllowInsecureKubeconfig => "false",
        Key::Directory
        | Key::OidcIssuer
        | Key::OidcClientId
        | Key::OidcClientSecretFile
        | Key::OidcProviderName => {
            return None;
        }
        Key::OidcScopes => "openid email profile",
        Key::OidcEmailClaim => "email",
        Key::OidcNameClaim => "name",
        Key::OidcGroupsClaim => "groups",
        Key::SharedStore | Key::SigningKeysDir | Key::FrameKeyFile => return None,
    })
}

struct Resolver<'a> {
    layers: &'a [&'a Layer],
}

impl Resolver<'_> {
    /// The first layer that sets `key`, else the default.
    fn raw(&self, key: Key) -> Option<(String, Source)> {
        self.layers
            .iter()
            .find_map(|l| l.get(key).map(|v| (v.to_owned(), l.source())))
            .or_else(|| default_of(key).map(|v| (v.to_owned(), Source::Default)))
    }

    fn parse<T>(
        &self,
        key: Key,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, SettingsError> {
        let Some((value, source)) = self.raw(key) else {
            return Ok(None);
        };
        parse(&value).map(Some).map_err(|reason| SettingsError::Invalid {
            key,
            origin: source,
            // A credential is never echoed: the message ends up in logs more people read.
            value: if key.is_secret() { "<redacted>".to_owned() } else { value },
            reason,
        })
    }

    fn required<T>(&self, key: Key, parse: impl Fn(&str) -> Result<T, String>) -> Result<T, SettingsError> {
        Ok(self.parse(key, parse)?.expect("every required key has a default"))
    }
}

fn parse_listen(value: &str) -> Result<SocketAddr, String> {
    value.parse().map_err(|_| "expected an IP address and port such as 127.0.0.1:3000".to_owned())
}

/// A service URL: http or https, a host, nothing after the path.
pub(crate) fn parse_service_url(value: &str) -> Result<Url, String> {
    let url = Url::parse(value).map_err(|e| format!("malformed URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("malformed URL: scheme must be http or https, not {}", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("malformed URL: no host".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("malformed URL: credentials do not belong in a URL".to_owned());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("malformed URL: no query or fragment allowed".to_owned());
    }
    Ok(url)
}

/// A service URL that is an origin: the console serves its pages, and plugin-proxy each
/// installation's origin, from the root of the host; a path would print a URL that answers 404
/// and give the identity provider a redirect URI that leads nowhere.
pub(crate) fn parse_origin_url(value: &str) -> Result<Url, String> {
    let url = parse_service_url(value)?;
    if url.path() != "/" {
        return Err(format!(
            "must be an origin, without a path (served from the root of its host): {}",
            url.origin().ascii_serialization()
        ));
    }
    Ok(url)
}

/// Resolves the settings from layers given highest precedence first
/// (flags, environment, file), then the defaults.
pub fn resolve(layers: &[&Layer]) -> Result<Settings, SettingsError> {
    let r = Resolver { layers };
    let mode = r.required(Key::Mode, Mode::from_str)?;
    let console_listen = r.required(Key::ConsoleListen, parse_listen)?;
    let site_root = r.required(Key::SiteRoot, |v| Ok(PathBuf::from(v)))?;
    let console = match r.parse(Key::ConsoleUrl, parse_origin_url)? {
        Some(url) => url,
        None => Url::parse(&format!("http://localhost:{}", console_listen.port()))
            .expect("a port always makes a valid URL"),
    };
    let kube_api_proxy = r.required(Key::KubeApiProxyUrl, parse_service_url)?;
    let urls = ServiceUrls {
        console,
        kube_api_proxy_internal: r
            .parse(Key::KubeApiProxyInternalUrl, parse_service_url)?
            .unwrap_or_else(|| kube_api_proxy.clone()),
        kube_api_proxy,
        plugin_proxy: r.required(Key::PluginProxyUrl, parse_origin_url)?,
        authn: r.required(Key::AuthnUrl, parse_service_url)?,
        organization_api: r.required(Key::OrganizationApiUrl, parse_service_url)?,
        cluster: r.required(Key::ClusterUrl, parse_service_url)?,
    };
    let path = |v: &str| if v.is_empty() { Err("expected a path".to_owned()) } else { Ok(PathBuf::from(v)) };
    let namespaces = |v: &str| {
        let names: Vec<String> =
            v.split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect();
        match names.iter().find(|n| !fundament_kube_core::validation::is_dns1123_label(n)) {
            Some(bad) => Err(format!("{bad:?} is not a namespace name (a DNS-1123 label)")),
            None if names.is_empty() => Err("expected namespaces, separated by commas".to_owned()),
            None => Ok(names),
        }
    };
    let cluster = ClusterSettings {
        listen: r.required(Key::ClusterListen, parse_listen)?,
        state_file: r.parse(Key::StateFile, path)?,
        admin_token: r.parse(Key::ClusterAdminToken, |v| {
            if v.len() < 16 {
                Err("an admin token needs at least 16 characters".to_owned())
            } else {
                Ok(v.to_owned())
            }
        })?,
        fixtures_dir: r.required(Key::FixturesDir, path)?,
        plugins_dir: r.required(Key::PluginsDir, path)?,
        plugin_sdk_dir: r.required(Key::PluginSdkDir, path)?,
        development_plugins: Vec::new(),
    };
    let listen = ServiceListen {
        kube_api_proxy: r.required(Key::KubeApiProxyListen, parse_listen)?,
        authn: r.required(Key::AuthnListen, parse_listen)?,
        organization_api: r.required(Key::OrganizationApiListen, parse_listen)?,
        plugin_proxy: r.required(Key::PluginProxyListen, parse_listen)?,
    };
    let text = |v: &str| {
        if v.trim().is_empty() { Err("expected a value".to_owned()) } else { Ok(v.trim().to_owned()) }
    };
    let fga = FgaSettings {
        openfga_url: r.parse(Key::OpenFgaUrl, parse_service_url)?,
        store_id: r.parse(Key::OpenFgaStore, text)?,
        model_id: r.parse(Key::OpenFgaModel, text)?,
        tuples: r.required(Key::FgaTuples, path)?,
    };
    if fga.openfga_url.is_some() && fga.store_id.is_none() {
        return Err(SettingsError::required(
            Key::OpenFgaStore,
            format!("with --{}", Key::OpenFgaUrl.flag()),
            "the OpenFGA store id",
        ));
    }
    let state_dir = r.parse(Key::StateDir, path)?;
    let audit_log = r.parse(Key::AuditLog, path)?;
    let audit_view = AuditViewSettings {
        entries: r.required(Key::AuditViewEntries, |v| match v.parse::<usize>() {
            Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
            _ => Err("expected a number of calls from 1 to 1000000".to_owned()),
        })?,
        hours: r.required(Key::AuditViewHours, |v| match v.parse::<u64>() {
            Ok(n) if (1..=24 * 366).contains(&n) => Ok(n),
            _ => Err("expected a number of hours from 1 to 8784 (a year)".to_owned()),
        })?,
    };
    let kubeconfig = r.parse(Key::Kubeconfig, path)?;
    let gardener_kubeconfig = r.parse(Key::GardenerKubeconfig, path)?;
    let garden_namespaces = r.parse(Key::GardenNamespaces, namespaces)?.unwrap_or_default();
    let directory = r.parse(Key::Directory, path)?;
    let allow_insecure_kubeconfig = r.required(Key::AllowInsecureKubeconfig, |v| match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("expected true or false".to_owned()),
    })?;
    let oidc = resolve_oidc(&r)?;
    let scale = ScaleSettings {
        shared_store: r.parse(Key::SharedStore, |v| {
            if v.starts_with("redis://") || v.starts_with("rediss://") {
                Url::parse(v).map(|_| v.to_owned()).map_err(|e| e.to_string())
            } else {
                Err("expected redis://host:port[/db]".to_owned())
            }
        })?,
        signing_keys_dir: r.parse(Key::SigningKeysDir, path)?,
        frame_key_file: r.parse(Key::FrameKeyFile, path)?,
    };
    Ok(Settings {
        mode,
        console_listen,
        site_root,
        urls,
        cluster,
        listen,
        fga,
        state_dir,
        audit_log,
        audit_view,
        kubeconfig,
        gardener_kubeconfig,
        garden_namespaces,
        allow_insecure_kubeconfig,
        directory,
        oidc,
        scale,
    })
}

/// An issuer: https, or http for a loopback host (a provider started on this machine for
/// development or tests), no query, fragment or credentials, no control characters.
fn parse_issuer(value: &str) -> Result<String, String> {
    if value.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("an issuer URL has no spaces or control characters".to_owned());
    }
    let url = parse_service_url(value)?;
    let loopback = match url.host() {
        // `localhost` itself, which resolvers keep on this machine. Not `*.localhost`: many
        // (in containers among them) hand those to real DNS, and the code exchange and the
        // client secret would then travel in plain text to wherever the name points.
        Some(url::Host::Domain(host)) => host == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if url.scheme() != "https" && !loopback {
        return Err("an issuer must use https (http only for a loopback host such as 127.0.0.1)".to_owned());
    }
    Ok(value.to_owned())
}

fn resolve_oidc(r: &Resolver<'_>) -> Result<Option<OidcSettings>, SettingsError> {
    let text = |v: &str| {
        if v.trim().is_empty() { Err("expected a value".to_owned()) } else { Ok(v.trim().to_owned()) }
    };
    let claim = |v: &str| {
        let v = v.trim();
        if v.is_empty() || v.chars().any(char::is_whitespace) {
            Err("expected a claim name without spaces".to_owned())
        } else {
            Ok(v.to_owned())
        }
    };
    let Some(issuer) = r.parse(Key::OidcIssuer, parse_issuer)? else {
        return Ok(None);
    };
    let client_id = r.parse(Key::OidcClientId, text)?.ok_or_else(|| {
        SettingsError::required(
            Key::OidcClientId,
            format!("with --{}", Key::OidcIssuer.flag()),
            "the console's client id at the provider",
        )
    })?;
    let client_secret_file = r.parse(Key::OidcClientSecretFile, |v| {
        if v.is_empty() { Err("expected a path".to_owned()) } else { Ok(PathBuf::from(v)) }
    })?;
    let provider_name = match r.parse(Key::OidcProviderName, text)? {
        Some(name) => name,
        None => Url::parse(&issuer).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default(),
    };
    let scopes = r.required(Key::OidcScopes, |v| {
        let mut scopes: Vec<String> = vec!["openid".to_owned()];
        for scope in v.split_whitespace() {
            if !scope.chars().all(|c| c.is_ascii_graphic() && c != '"' && c != '\\') {
                return Err(format!("scope {scope:?} has characters RFC 6749 does not allow"));
            }
            if !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_owned());
            }
        }
        Ok(scopes)
    })?;
    Ok(Some(OidcSettings {
        issuer,
        client_id,
        client_secret_file,
        provider_name,
        scopes,
        email_claim: r.required(Key::OidcEmailClaim, claim)?,
        name_claim: r.required(Key::OidcNameClaim, claim)?,
        groups_claim: r.required(Key::OidcGroupsClaim, claim)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(source: Source, pairs: &[(Key, &str)]) -> Layer {
        let mut l = Layer::new(source);
        for (k, v) in pairs {
            l.set(*k, *v);
        }
        l
    }

    #[test]
    fn defaults_are_the_dev_topology() {
        let s = resolve(&[]).unwrap();
        assert_eq!(s.mode, Mode::Mock);
        assert_eq!(s.console_listen.to_string(), "127.0.0.1:3000");
        assert_eq!(s.urls.console.as_str(), "http://localhost:3000/");
        assert_eq!(s.urls.kube_api_proxy.as_str(), "http://localhost:8081/");
        assert_eq!(s.urls.plugin_proxy.as_str(), "http://localhost:8082/");
        assert_eq!(s.urls.authn.as_str(), "http://localhost:8083/");
        assert_eq!(s.urls.organization_api.as_str(), "http://localhost:8084/");
        assert_eq!(s.urls.cluster.as_str(), "https://localhost:8090/");
    }

    #[test]
    fn each_mode_names_the_kubeconfig_it_needs() {
        let sandbox = layer(Source::Flag, &[(Key::Mode, "sandbox")]);
        let err = resolve(&[&sandbox]).unwrap().check_cluster_access().unwrap_err().to_string();
        assert_eq!(
            err,
            "--kubeconfig (PLUGIN_SANDBOX_KUBECONFIG, or stack.kubeconfig in the settings file) is required \
             in sandbox mode and is not set: the cluster's kubeconfig"
        );
        let real = layer(Source::Flag, &[(Key::Mode, "real"), (Key::Kubeconfig, "/tmp/kc")]);
        let err = resolve(&[&real]).unwrap().check_cluster_access().unwrap_err().to_string();
        assert_eq!(
            err,
            "--gardener-kubeconfig (GARDENER_KUBECONFIG, or stack.gardener-kubeconfig in the settings file) \
             is required in real mode and is not set: the Gardener's kubeconfig"
        );
        let real = layer(Source::Env, &[(Key::Mode, "real"), (Key::GardenerKubeconfig, "/tmp/garden")]);
        let s = resolve(&[&real]).unwrap();
        s.check_cluster_access().unwrap();
        assert_eq!(
            (s.gardener_kubeconfig.as_deref(), s.allow_insecure_kubeconfig),
            (Some(std::path::Path::new("/tmp/garden")), false)
        );
        let insecure = layer(Source::Env, &[(Key::AllowInsecureKubeconfig, "yes")]);
        let err = resolve(&[&insecure]).unwrap_err().to_string();
        assert!(err.contains("expected true or false"), "{err}");
    }

    #[test]
    fn garden_namespaces_are_namespace_names_and_none_means_any() {
        assert!(resolve(&[]).unwrap().garden_namespaces.is_empty());
        let set = layer(Source::Env, &[(Key::GardenNamespaces, " garden-acme, garden-platform ,")]);
        assert_eq!(resolve(&[&set]).unwrap().garden_namespaces, ["garden-acme", "garden-platform"]);
        for (bad, says) in [
            ("garden-acme,Garden_B", "\"Garden_B\" is not a namespace name"),
            (" , ", "expected namespaces, separated by commas"),
        ] {
            let err =
                resolve(&[&layer(Source::Env, &[(Key::GardenNamespaces, bad)])]).unwrap_err().to_string();
            assert!(err.contains(says) && err.contains("FUNDAMENT_GARDEN_NAMESPACES"), "{err}");
        }
    }

    #[test]
    fn a_required_setting_that_is_not_set_says_so_never_from_the_default() {
        let url = layer(Source::Env, &[(Key::OpenFgaUrl, "http://openfga:8080")]);
        let err = resolve(&[&url]).unwrap_err().to_string();
        assert_eq!(
            err,
            "--openfga-store (FUNDAMENT_OPENFGA_STORE, or fga.openfga-store in the settings file) is required \
             with --openfga-url and is not set: the OpenFGA store id"
        );
        let with_store =
            layer(Source::Env, &[(Key::OpenFgaUrl, "http://openfga:8080"), (Key::OpenFgaStore, "s")]);
        resolve(&[&with_store]).unwrap();
        // Every spelling named in the message sets it.
        let file = parse_file_layer("[stack]\nmode = \"real\"\ngardener-kubeconfig = \"/etc/garden\"\n");
        resolve(&[&file]).unwrap().check_cluster_access().unwrap();
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let flags = layer(Source::Flag, &[(Key::ConsoleListen, "127.0.0.1:4001")]);
        let env = layer(
            Source::Env,
            &[(Key::ConsoleListen, "127.0.0.1:4002"), (Key::Mode, "sandbox"), (Key::Kubeconfig, "/tmp/kc")],
        );
        let file = layer(
            Source::File("Leptos.toml".into()),
            &[(Key::ConsoleListen, "127.0.0.1:4003"), (Key::Mode, "real"), (Key::SiteRoot, "site")],
        );
        let s = resolve(&[&flags, &env, &file]).unwrap();
        assert_eq!(s.console_listen.port(), 4001);
        assert_eq!(s.mode, Mode::Sandbox);
        assert_eq!(s.site_root, PathBuf::from("site"));
        // The console URL follows the listen port unless it is set.
        assert_eq!(s.urls.console.as_str(), "http://localhost:4001/");
    }

    #[test]
    fn unknown_mode_names_the_setting_and_its_source() {
        let env = layer(Source::Env, &[(Key::Mode, "prod")]);
        let err = resolve(&[&env]).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid mode \"prod\" (from FUNDAMENT_MODE): unknown mode: expected one of mock, sandbox, real"
        );
    }

    #[test]
    fn malformed_url_names_the_flag() {
        let flags = layer(Source::Flag, &[(Key::AuthnUrl, "localhost:8083")]);
        let err = resolve(&[&flags]).unwrap_err().to_string();
        assert!(
            err.starts_with("invalid authn url \"localhost:8083\" (from --authn-url): malformed URL"),
            "{err}"
        );
    }

    #[test]
    fn url_checks() {
        assert!(parse_service_url("http://localhost:8081").is_ok());
        assert!(parse_service_url("https://plugins.example.io/").is_ok());
        assert!(parse_service_url("ftp://x").is_err());
        assert!(parse_service_url("http://u:p@x").is_err());
        assert!(parse_service_url("http://x/?a=b").is_err());
        assert!(parse_service_url("not a url").is_err());
    }

    /// The console and plugin-proxy serve from the root of their hosts: a path is refused at
    /// start, naming the setting, rather than printing a URL that answers 404.
    #[test]
    fn the_console_and_plugin_proxy_urls_are_origins() {
        assert!(parse_origin_url("https://console.example.io").is_ok());
        assert!(parse_origin_url("https://console.example.io/").is_ok());
        let flags = layer(Source::Flag, &[(Key::ConsoleUrl, "http://localhost:3000/console")]);
        let err = resolve(&[&flags]).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid console url \"http://localhost:3000/console\" (from --console-url): must be an origin, without a path (served from the root of its host): http://localhost:3000"
        );
        let env = layer(Source::Env, &[(Key::PluginProxyUrl, "https://plugins.example.io/p/")]);
        let err = resolve(&[&env]).unwrap_err().to_string();
        assert!(err.contains("(from FUNDAMENT_PLUGIN_PROXY_URL): must be an origin"), "{err}");
        // Other services may sit under a path behind a proxy.
        let flags = layer(Source::Flag, &[(Key::ClusterUrl, "https://rancher.example.io/k8s/clusters/c-1")]);
        assert!(resolve(&[&flags]).is_ok());
    }

    #[test]
    fn bad_listen_address_from_file_names_the_file_key() {
        let file = layer(Source::File("/etc/Leptos.toml".into()), &[(Key::ConsoleListen, "localhost")]);
        let err = resolve(&[&file]).unwrap_err().to_string();
        assert!(err.contains("(from console.listen in /etc/Leptos.toml)"), "{err}");
    }

    #[test]
    fn audit_log_is_unset_by_default_and_read_from_each_source() {
        assert_eq!(resolve(&[]).unwrap().audit_log, None);
        let file = parse_file_layer("[kube-api-proxy]\naudit-log = \"/var/log/fundament/audit.jsonl\"\n");
        assert_eq!(
            resolve(&[&file]).unwrap().audit_log,
            Some(PathBuf::from("/var/log/fundament/audit.jsonl"))
        );
        let env = Layer::from_env(|name| (name == "FUNDAMENT_AUDIT_LOG").then(|| "env.jsonl".to_owned()));
        assert_eq!(resolve(&[&env, &file]).unwrap().audit_log, Some(PathBuf::from("env.jsonl")));
        let flags = layer(Source::Flag, &[(Key::AuditLog, "flag.jsonl")]);
        assert_eq!(resolve(&[&flags, &env, &file]).unwrap().audit_log, Some(PathBuf::from("flag.jsonl")));
        let (flag, env, file_key) = (Key::AuditLog.flag(), Key::AuditLog.env(), Key::AuditLog.file_key());
        assert_eq!((flag, env, file_key), ("audit-log", "FUNDAMENT_AUDIT_LOG", "kube-api-proxy.audit-log"));
    }

    #[test]
    fn scale_out_settings_are_unset_by_default_and_the_store_must_be_redis() {
        let settings = resolve(&[]).unwrap();
        assert_eq!(settings.scale, ScaleSettings::default());
        let env = layer(
            Source::Env,
            &[
                (Key::SharedStore, "redis://:secret@10.0.0.5:6379/2"),
                (Key::SigningKeysDir, "/keys"),
                (Key::FrameKeyFile, "/frame/key"),
            ],
        );
        let scale = resolve(&[&env]).unwrap().scale;
        assert_eq!(scale.shared_store.as_deref(), Some("redis://:secret@10.0.0.5:6379/2"));
        assert_eq!(scale.signing_keys_dir, Some(PathBuf::from("/keys")));
        assert_eq!(scale.frame_key_file, Some(PathBuf::from("/frame/key")));
        assert!(!format!("{scale:?}").contains("secret"), "the store's password never shows");
        let bad = layer(Source::Flag, &[(Key::SharedStore, "memcached://x")]);
        let err = resolve(&[&bad]).unwrap_err().to_string();
        assert!(err.contains("shared-store") && err.contains("redis://host:port"), "{err}");
    }

    #[test]
    fn a_credential_never_shows_in_an_error_or_debug_output() {
        // A password with a '/' makes the URL unparseable; the message names the setting only.
        let bad = layer(Source::Env, &[(Key::SharedStore, "redis://:pa/ss#w0rd@redis:6379")]);
        let err = resolve(&[&bad]).unwrap_err().to_string();
        assert!(err.contains("FUNDAMENT_") && err.contains("<redacted>") && !err.contains("w0rd"), "{err}");
        assert!(!format!("{bad:?}").contains("w0rd"), "{bad:?}");
        let token = layer(Source::Flag, &[(Key::ClusterAdminToken, "t0ken-value-of-32-characters-xyz")]);
        let cluster = resolve(&[&token]).unwrap().cluster;
        assert_eq!(cluster.admin_token.as_deref(), Some("t0ken-value-of-32-characters-xyz"));
        assert!(!format!("{cluster:?}").contains("t0ken") && !format!("{token:?}").contains("t0ken"));
    }

    #[test]
    fn an_empty_audit_log_path_from_the_file_is_named() {
        let file = parse_file_layer("[kube-api-proxy]\naudit-log = \"\"\n");
        let err = resolve(&[&file]).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid audit log \"\" (from kube-api-proxy.audit-log in Leptos.toml): expected a path"
        );
    }

    fn parse_file_layer(text: &str) -> Layer {
        crate::file::parse_file(text, std::path::Path::new("Leptos.toml")).unwrap()
    }

    #[test]
    fn oidc_is_off_by_default_and_on_with_an_issuer_and_its_client() {
        assert_eq!(resolve(&[]).unwrap().oidc, None);
        let file = parse_file_layer(
            "[oidc]\nissuer = \"https://id.example.com/realms/acme\"\nclient-id = \"console\"\n\
             client-secret-file = \"/run/secrets/oidc\"\nscopes = \"email  profile groups openid\"\n",
        );
        let oidc = resolve(&[&file]).unwrap().oidc.unwrap();
        assert_eq!(oidc.issuer, "https://id.example.com/realms/acme", "kept exactly as given");
        assert_eq!(oidc.scopes, ["openid", "email", "profile", "groups"]);
        assert_eq!(oidc.provider_name, "id.example.com");
        assert_eq!(
            (oidc.email_claim.as_str(), oidc.name_claim.as_str(), oidc.groups_claim.as_str()),
            ("email", "name", "groups")
        );
        assert_eq!(oidc.client_secret_file, Some(PathBuf::from("/run/secrets/oidc")));
        let env = layer(Source::Env, &[(Key::OidcProviderName, "Acme ID"), (Key::OidcGroupsClaim, "roles")]);
        let oidc = resolve(&[&env, &file]).unwrap().oidc.unwrap();
        assert_eq!((oidc.provider_name.as_str(), oidc.groups_claim.as_str()), ("Acme ID", "roles"));
        let defaults = layer(
            Source::Env,
            &[
                (Key::OidcIssuer, "http://127.0.0.1:8095"),
                (Key::OidcClientId, "c"),
                (Key::OidcClientSecretFile, "s"),
            ],
        );
        assert_eq!(resolve(&[&defaults]).unwrap().oidc.unwrap().scopes, ["openid", "email", "profile"]);
    }

    #[test]
    fn an_oidc_issuer_needs_https_and_its_client() {
        let issuer = |value: &str| {
            let l = layer(
                Source::Flag,
                &[(Key::OidcIssuer, value), (Key::OidcClientId, "c"), (Key::OidcClientSecretFile, "s")],
            );
            resolve(&[&l]).map(|s| s.oidc.unwrap().issuer).map_err(|e| e.to_string())
        };
        assert!(issuer("http://127.0.0.1:8095").is_ok());
        assert!(issuer("http://localhost:8095/oidc").is_ok());
        assert!(issuer("http://[::1]:8095").is_ok());
        assert!(issuer("http://id.localhost:8095").is_err(), "resolved by DNS in many places");
        assert!(issuer("https://id.localhost:8095").is_ok());
        let err = issuer("http://id.example.com").unwrap_err();
        assert_eq!(
            err,
            "invalid oidc issuer \"http://id.example.com\" (from --oidc-issuer): an issuer must use https (http only for a loopback host such as 127.0.0.1)"
        );
        assert!(issuer("https://id.example.com/?x=1").is_err());
        assert!(issuer("https://id.example.com/\n").is_err());
        let without = layer(Source::Env, &[(Key::OidcIssuer, "https://id.example.com")]);
        let err = resolve(&[&without]).unwrap_err().to_string();
        assert_eq!(
            err,
            "--oidc-client-id (FUNDAMENT_OIDC_CLIENT_ID, or oidc.client-id in the settings file) is required \
             with --oidc-issuer and is not set: the console's client id at the provider"
        );
        let without =
            layer(Source::Env, &[(Key::OidcIssuer, "https://id.example.com"), (Key::OidcClientId, "c")]);
        // The console and the proxies know the issuer without the secret; authn refuses to
        // start without it (server/src/services.rs).
        assert_eq!(resolve(&[&without]).unwrap().oidc.unwrap().client_secret_file, None);
        let bad_claim = layer(
            Source::Env,
            &[
                (Key::OidcIssuer, "https://id.example.com"),
                (Key::OidcClientId, "c"),
                (Key::OidcClientSecretFile, "s"),
                (Key::OidcEmailClaim, "e mail"),
            ],
        );
        assert!(resolve(&[&bad_claim]).unwrap_err().to_string().contains("claim name without spaces"));
    }

    #[test]
    fn empty_env_values_are_unset() {
        let env = Layer::from_env(|name| (name == "FUNDAMENT_MODE").then(String::new));
        assert_eq!(env.get(Key::Mode), None);
        let env = Layer::from_env(|name| (name == "FUNDAMENT_MODE").then(|| "real".to_owned()));
        assert_eq!(env.get(Key::Mode), Some("real"));
    }

    fn with_paths(paths: &[(Key, &std::path::Path)]) -> Settings {
        let mut flags = Layer::new(Source::Flag);
        for (key, path) in paths {
            flags.set(*key, path.to_str().unwrap());
        }
        resolve(&[&flags]).unwrap()
    }

    #[test]
    fn a_plugin_sdk_dir_without_the_sdk_is_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nonexistent");
        let err = with_paths(&[(Key::PluginSdkDir, &missing)]).check_plugin_sdk().unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "plugin sdk dir {}: no such directory (set --plugin-sdk-dir or FUNDAMENT_PLUGIN_SDK_DIR)",
                missing.display()
            )
        );
        let settings = with_paths(&[(Key::PluginSdkDir, dir.path())]);
        let err = settings.check_plugin_sdk().unwrap_err().to_string();
        assert!(err.contains("no plugin-sdk.min.js in that directory"), "{err}");
        for file in PLUGIN_SDK_FILES {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        settings.check_plugin_sdk().unwrap();
        // The checkout's own SDK passes.
        with_paths(&[(Key::PluginSdkDir, &crate::checkout::repo().join("plugin-sdk"))])
            .check_plugin_sdk()
            .unwrap();
    }

    #[test]
    fn a_missing_fixtures_dir_is_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nonexistent");
        let err = with_paths(&[(Key::FixturesDir, &missing)]).check_fixtures_dir().unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "fixtures dir {}: no such directory (set --fixtures-dir or FUNDAMENT_FIXTURES_DIR)",
                missing.display()
            )
        );
        let file = dir.path().join("file.yaml");
        std::fs::write(&file, "").unwrap();
        let err = with_paths(&[(Key::FixturesDir, &file)]).check_fixtures_dir().unwrap_err().to_string();
        assert!(err.contains("not a directory"), "{err}");
        with_paths(&[(Key::FixturesDir, dir.path())]).check_fixtures_dir().unwrap();
    }

    #[test]
    fn a_state_file_in_a_missing_directory_is_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("missing-dir/cl.state");
        let err = with_paths(&[(Key::StateFile, &file)]).check_state_file().unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "state file {}: its directory {} does not exist (set --state-file or FUNDAMENT_STATE_FILE)",
                file.display(),
                dir.path().join("missing-dir").display()
            )
        );
        // The file itself need not exist yet; no state file, or a bare name, is fine too.
        with_paths(&[(Key::StateFile, &dir.path().join("cl.state"))]).check_state_file().unwrap();
        with_paths(&[(Key::StateFile, std::path::Path::new("cl.state"))]).check_state_file().unwrap();
        resolve(&[]).unwrap().check_state_file().unwrap();
    }
}
