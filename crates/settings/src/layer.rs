use std::fmt;

/// A setting of the stack. Its flag, environment variable, file key and documentation come
/// from one table, [`crate::table::SPECS`], so that they never drift apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// `mock`, `sandbox` or `real`.
    Mode,
    /// Socket address the console listens on.
    ConsoleListen,
    /// URL under which browsers reach the console (its origin).
    ConsoleUrl,
    /// Directory with the built site (`pkg/`, assets).
    SiteRoot,
    /// URL of kube-api-proxy as browsers reach it.
    KubeApiProxyUrl,
    /// URL the console's server calls kube-api-proxy at (default: the browsers' one).
    KubeApiProxyInternalUrl,
    /// URL of plugin-proxy as browsers reach it.
    PluginProxyUrl,
    /// URL of authn as browsers reach it.
    AuthnUrl,
    /// URL of organization-api as browsers reach it.
    OrganizationApiUrl,
    /// URL of the embedded cluster's API server.
    ClusterUrl,
    /// Socket address the embedded cluster listens on.
    ClusterListen,
    /// Directory of the embedded cluster's CA, signing key and admin token.
    StateDir,
    /// File the embedded cluster keeps its objects in (none: memory only).
    StateFile,
    /// The embedded cluster's admin bearer token (default: generated, kept in the state directory).
    ClusterAdminToken,
    /// Directory of the cluster-wide fixtures (YAML).
    FixturesDir,
    /// Directory of the plugin folders (definition.yaml, crds/, fixtures/).
    PluginsDir,
    /// Socket address kube-api-proxy listens on.
    KubeApiProxyListen,
    /// Socket address authn listens on.
    AuthnListen,
    /// Socket address organization-api listens on.
    OrganizationApiListen,
    /// A real OpenFGA server's API URL (none: the embedded tuple store).
    OpenFgaUrl,
    /// The OpenFGA store id.
    OpenFgaStore,
    /// The OpenFGA authorization model id (optional).
    OpenFgaModel,
    /// The embedded tuple store's YAML file.
    FgaTuples,
    /// Socket address plugin-proxy listens on.
    PluginProxyListen,
    /// Directory of plugin-sdk.js, plugin-sdk.css and plugin-sdk.d.ts.
    PluginSdkDir,
    /// File kube-api-proxy appends its plugin-path audit lines to (none: the log only).
    AuditLog,
    /// How many plugin-path calls kube-api-proxy keeps for the console's audit view.
    AuditViewEntries,
    /// For how many hours kube-api-proxy keeps them.
    AuditViewHours,
    /// Sandbox mode: the kubeconfig of the one cluster.
    Kubeconfig,
    /// Real mode: the kubeconfig of the Gardener whose Shoots are the clusters.
    GardenerKubeconfig,
    /// Real mode: the garden namespaces whose Shoots may be clusters (none: any).
    GardenNamespaces,
    /// Whether a kubeconfig may turn off verification of its server's certificate.
    AllowInsecureKubeconfig,
    /// The directory file (YAML); none: the seed.
    Directory,
    /// The OpenID Connect issuer; set, it turns OIDC sign-in on.
    OidcIssuer,
    /// The console's client id at the provider.
    OidcClientId,
    /// A file holding the client secret (a mounted Kubernetes Secret).
    OidcClientSecretFile,
    /// The provider's name on the sign-in page.
    OidcProviderName,
    /// The scopes asked for, space-separated.
    OidcScopes,
    /// The ID token claim with the user's email.
    OidcEmailClaim,
    /// The ID token claim with the user's display name.
    OidcNameClaim,
    /// The ID token claim with the user's groups.
    OidcGroupsClaim,
    /// The store replicas share (`redis://…`; none: this process's memory, one replica only).
    SharedStore,
    /// authn's signing keys from a directory (a mounted Secret), reloaded when it changes.
    SigningKeysDir,
    /// plugin-proxy's frame cookie key from a file shared by its replicas.
    FrameKeyFile,
}

impl Key {
    /// Every key, in the order `--help` and the docs list them.
    pub fn all() -> impl Iterator<Item = Key> {
        crate::table::SPECS.iter().map(|s| s.key)
    }

    /// What the settings table says of this key.
    pub fn spec(self) -> &'static crate::table::Spec {
        &crate::table::SPECS[self as usize]
    }

    /// The command-line flag, without the leading dashes.
    pub fn flag(self) -> &'static str {
        self.spec().flag
    }

    /// The environment variable.
    pub fn env(self) -> &'static str {
        self.spec().env
    }

    /// The key in `Leptos.toml`, as `table.key`.
    pub fn file_key(self) -> &'static str {
        self.spec().file_key
    }

    /// Whether its value is a credential (a bearer token, a URL with a password), which no
    /// error message, log line or `Debug` output may show.
    pub fn is_secret(self) -> bool {
        matches!(self, Key::ClusterAdminToken | Key::SharedStore)
    }

    /// What kind of value it takes, which decides what the settings file may write bare.
    pub fn kind(self) -> ValueKind {
        match self {
            Key::AuditViewEntries | Key::AuditViewHours => ValueKind::Number,
            Key::AllowInsecureKubeconfig => ValueKind::Flag,
            _ => ValueKind::Text,
        }
    }

    /// How error messages name the setting.
    pub fn describe(self) -> String {
        match self {
            Key::Mode => "mode".to_owned(),
            Key::ConsoleListen => "console listen address".to_owned(),
            Key::SiteRoot => "site root".to_owned(),
            other => other.flag().replace('-', " "),
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flag())
    }
}

/// What a setting's value is. All three sources hand it over as text (a flag's or a variable's
/// text, or a file value turned into that text) and one parser per setting judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A whole number: the file may write `5` as well as `"5"`.
    Number,
    /// `true` or `false`: the file may write them bare as well as quoted.
    Flag,
    /// Anything else: the file writes a string.
    Text,
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env,
    /// The settings file at this path.
    File(String),
    /// The built-in default.
    Default,
}

impl Source {
    /// Names the exact spelling of `key` in this source.
    pub fn describe(&self, key: &Key) -> String {
        match self {
            Source::Flag => format!("--{}", key.flag()),
            Source::Env => key.env().to_owned(),
            Source::File(path) => format!("{} in {path}", key.file_key()),
            Source::Default => "the default".to_owned(),
        }
    }
}

/// Raw values from one source; unset keys are absent.
#[derive(Clone)]
pub struct Layer {
    source: Source,
    values: Vec<(Key, String)>,
}

impl fmt::Debug for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values: Vec<_> = self
            .values
            .iter()
            .map(|(key, value)| (key, if key.is_secret() { "<redacted>" } else { value.as_str() }))
            .collect();
        f.debug_struct("Layer").field("source", &self.source).field("values", &values).finish()
    }
}

impl Layer {
    /// An empty layer of the given source.
    pub fn new(source: Source) -> Self {
        Self { source, values: Vec::new() }
    }

    /// Reads every key's environment variable through `lookup`, so tests need
    /// not touch the process environment.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut layer = Self::new(Source::Env);
        for key in Key::all() {
            if let Some(value) = lookup(key.env()).filter(|v| !v.is_empty()) {
                layer.set(key, value);
            }
        }
        layer
    }

    /// Sets a value, replacing an earlier one.
    pub fn set(&mut self, key: Key, value: impl Into<String>) {
        self.values.retain(|(k, _)| *k != key);
        self.values.push((key, value.into()));
    }

    /// Sets a value when there is one.
    pub fn set_opt(&mut self, key: Key, value: Option<impl Into<String>>) {
        if let Some(value) = value {
            self.set(key, value);
        }
    }

    /// The value of `key` in this layer.
    pub fn get(&self, key: Key) -> Option<&str> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str())
    }

    /// Where this layer's values came from.
    pub fn source(&self) -> Source {
        self.source.clone()
    }
}
