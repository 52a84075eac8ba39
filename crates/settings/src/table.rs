//! The one table of settings: for each [`Key`] its flag, environment variable,
//! file key, value name, help and default. The command line (`--help` and
//! parsing), the environment and file readers, and the README's settings table
//! ([`markdown_table`], kept equal by a test) are all made from it, so the
//! spellings and their documentation cannot drift apart.

use crate::Key;

/// Everything said about one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub key: Key,
    /// The command-line flag, without the leading dashes.
    pub flag: &'static str,
    /// The environment variable.
    pub env: &'static str,
    /// The key in `Leptos.toml`, as `table.key`.
    pub file_key: &'static str,
    /// What the flag takes, for `--help`: `URL`, `DIR`, `IP:PORT`…
    pub value_name: &'static str,
    /// One sentence for `--help` and the README.
    pub help: &'static str,
    /// The default, as the README writes it (Markdown code spans allowed).
    pub default: &'static str,
}

/// The settings file's own flag and variable (it is not itself read from a file).
pub const CONFIG_FLAG: &str = "config";
pub const CONFIG_ENV: &str = "FUNDAMENT_CONFIG";
pub const CONFIG_HELP: &str = "The settings file";
pub const CONFIG_DEFAULT: &str = "`./Leptos.toml` when present";

const fn spec(
    key: Key,
    flag: &'static str,
    env: &'static str,
    file_key: &'static str,
    value_name: &'static str,
    help: &'static str,
    default: &'static str,
) -> Spec {
    Spec { key, flag, env, file_key, value_name, help, default }
}

/// Every setting, in the order `--help` and the README list them. Entry `i` is the key
/// whose discriminant is `i` (a test checks it), so [`Key::spec`] is an index.
pub const SPECS: [Spec; 44] = [
    spec(Key::Mode, "mode", "FUNDAMENT_MODE", "stack.mode", "MODE", "mock, sandbox or real", "`mock`"),
    spec(
        Key::ConsoleListen,
        "console-listen",
        "FUNDAMENT_CONSOLE_LISTEN",
        "console.listen",
        "IP:PORT",
        "Address the console listens on",
        "`127.0.0.1:3000`",
    ),
    spec(
        Key::ConsoleUrl,
        "console-url",
        "FUNDAMENT_CONSOLE_URL",
        "console.url",
        "URL",
        "The console's URL as browsers reach it: an origin, without a path (it serves from the root of its host; a path is refused at start)",
        "`http://localhost:<listen port>`",
    ),
    spec(
        Key::SiteRoot,
        "site-root",
        "FUNDAMENT_SITE_ROOT",
        "console.site-root",
        "DIR",
        "The built site: wasm, JS, CSS, assets",
        "`target/site`",
    ),
    spec(
        Key::KubeApiProxyUrl,
        "kube-api-proxy-url",
        "FUNDAMENT_KUBE_API_PROXY_URL",
        "kube-api-proxy.url",
        "URL",
        "kube-api-proxy's URL as browsers reach it",
        "`http://localhost:8081`",
    ),
    spec(
        Key::KubeApiProxyInternalUrl,
        "kube-api-proxy-internal-url",
        "FUNDAMENT_KUBE_API_PROXY_INTERNAL_URL",
        "kube-api-proxy.internal-url",
        "URL",
        "kube-api-proxy's URL for the console's server, where it differs from the browsers' one (inside a cluster)",
        "the `--kube-api-proxy-url`",
    ),
    spec(
        Key::PluginProxyUrl,
        "plugin-proxy-url",
        "FUNDAMENT_PLUGIN_PROXY_URL",
        "plugin-proxy.url",
        "URL",
        "plugin-proxy's URL: the plugins host; each installation's pages get an origin of their own under it (installation x: http://x.localhost:8082 by default; a host name is required, not an IP, and no path)",
        "`http://localhost:8082`",
    ),
    spec(
        Key::AuthnUrl,
        "authn-url",
        "FUNDAMENT_AUTHN_URL",
        "authn.url",
        "URL",
        "authn's URL",
        "`http://localhost:8083`",
    ),
    spec(
        Key::OrganizationApiUrl,
        "organization-api-url",
        "FUNDAMENT_ORGANIZATION_API_URL",
        "organization-api.url",
        "URL",
        "organization-api's URL",
        "`http://localhost:8084`",
    ),
    spec(
        Key::ClusterUrl,
        "cluster-url",
        "FUNDAMENT_CLUSTER_URL",
        "cluster.url",
        "URL",
        "The embedded cluster's API server",
        "`https://localhost:8090`",
    ),
    spec(
        Key::ClusterListen,
        "cluster-listen",
        "FUNDAMENT_CLUSTER_LISTEN",
        "cluster.listen",
        "IP:PORT",
        "Address the embedded cluster listens on",
        "`127.0.0.1:8090`",
    ),
    spec(
        Key::StateDir,
        "state-dir",
        "FUNDAMENT_STATE_DIR",
        "stack.state-dir",
        "DIR",
        "Keys kept across restarts: the cluster's CA, token signing key and admin token (cluster/), authn's signing keys and revoked sessions (authn/), plugin-proxy's frame cookie key (plugin-proxy/)",
        "`$XDG_STATE_HOME/fundament` or `~/.local/state/fundament`",
    ),
    spec(
        Key::StateFile,
        "state-file",
        "FUNDAMENT_STATE_FILE",
        "cluster.state-file",
        "PATH",
        "Keep the embedded cluster's objects in this file across restarts; its directory must exist",
        "none (memory only)",
    ),
    spec(
        Key::ClusterAdminToken,
        "cluster-admin-token",
        "FUNDAMENT_CLUSTER_ADMIN_TOKEN",
        "cluster.admin-token",
        "TOKEN",
        "A fixed admin bearer token for the embedded cluster; prefer the environment variable",
        "generated once, kept in the state directory",
    ),
    spec(
        Key::FixturesDir,
        "fixtures-dir",
        "FUNDAMENT_FIXTURES_DIR",
        "cluster.fixtures-dir",
        "DIR",
        "Cluster-wide fixtures (YAML); the directory must exist",
        "`fixtures/cluster`",
    ),
    spec(
        Key::PluginsDir,
        "plugins-dir",
        "FUNDAMENT_PLUGINS_DIR",
        "stack.plugins-dir",
        "DIR",
        "Plugin folders: definition.yaml, crds/, fixtures/",
        "`plugins`",
    ),
    spec(
        Key::KubeApiProxyListen,
        "kube-api-proxy-listen",
        "FUNDAMENT_KUBE_API_PROXY_LISTEN",
        "kube-api-proxy.listen",
        "IP:PORT",
        "Address kube-api-proxy listens on",
        "`127.0.0.1:8081`",
    ),
    spec(
        Key::AuthnListen,
        "authn-listen",
        "FUNDAMENT_AUTHN_LISTEN",
        "authn.listen",
        "IP:PORT",
        "Address authn listens on",
        "`127.0.0.1:8083`",
    ),
    spec(
        Key::OrganizationApiListen,
        "organization-api-listen",
        "FUNDAMENT_ORGANIZATION_API_LISTEN",
        "organization-api.listen",
        "IP:PORT",
        "Address organization-api listens on",
        "`127.0.0.1:8084`",
    ),
    spec(
        Key::OpenFgaUrl,
        "openfga-url",
        "FUNDAMENT_OPENFGA_URL",
        "fga.openfga-url",
        "URL",
        "A real OpenFGA server for can_view",
        "none: the embedded tuple store",
    ),
    spec(
        Key::OpenFgaStore,
        "openfga-store",
        "FUNDAMENT_OPENFGA_STORE",
        "fga.openfga-store",
        "ID",
        "The OpenFGA store id",
        "none (required with a URL)",
    ),
    spec(
        Key::OpenFgaModel,
        "openfga-model",
        "FUNDAMENT_OPENFGA_MODEL",
        "fga.openfga-model",
        "ID",
        "The OpenFGA authorization model id",
        "the store's latest",
    ),
    spec(
        Key::FgaTuples,
        "fga-tuples",
        "FUNDAMENT_FGA_TUPLES",
        "fga.tuples",
        "PATH",
        "The embedded tuple store (YAML)",
        "`fixtures/fga/tuples.yaml`",
    ),
    spec(
        Key::PluginProxyListen,
        "plugin-proxy-listen",
        "FUNDAMENT_PLUGIN_PROXY_LISTEN",
        "plugin-proxy.listen",
        "IP:PORT",
        "Address plugin-proxy listens on",
        "`127.0.0.1:8082`",
    ),
    spec(
        Key::PluginSdkDir,
        "plugin-sdk-dir",
        "FUNDAMENT_PLUGIN_SDK_DIR",
        "plugin-proxy.sdk-dir",
        "DIR",
        "The plugin SDK's files, served by plugin-proxy at /plugins/sdk/v1/ and by the console at /plugin-ui/; a directory without plugin-sdk.min.js, plugin-sdk.css and plugin-sdk.d.ts is refused at start",
        "`plugin-sdk`",
    ),
    spec(
        Key::AuditLog,
        "audit-log",
        "FUNDAMENT_AUDIT_LOG",
        "kube-api-proxy.audit-log",
        "PATH",
        "Also append kube-api-proxy's plugin-path audit lines to this file, one JSON object per line; its directory must exist",
        "none: the log only",
    ),
    spec(
        Key::AuditViewEntries,
        "audit-view-entries",
        "FUNDAMENT_AUDIT_VIEW_ENTRIES",
        "kube-api-proxy.audit-view-entries",
        "N",
        "How many plugin-path calls kube-api-proxy keeps per cluster for the console's audit view (each cluster's newest): in the shared store when there is one (every replica's calls), else in <state-dir>/kube-api-proxy/plugin-calls.jsonl too, so they survive a restart",
        "`10000`",
    ),
    spec(
        Key::AuditViewHours,
        "audit-view-hours",
        "FUNDAMENT_AUDIT_VIEW_HOURS",
        "kube-api-proxy.audit-view-hours",
        "HOURS",
        "For how many hours kube-api-proxy keeps a plugin-path call for the audit view",
        "`168` (7 days)",
    ),
    spec(
        Key::Kubeconfig,
        "kubeconfig",
        "PLUGIN_SANDBOX_KUBECONFIG",
        "stack.kubeconfig",
        "FILE",
        "Sandbox mode: the kubeconfig of the cluster (its current context); its identity is used for the gateway's own calls only",
        "none (required in sandbox mode)",
    ),
    spec(
        Key::GardenerKubeconfig,
        "gardener-kubeconfig",
        "GARDENER_KUBECONFIG",
        "stack.gardener-kubeconfig",
        "FILE",
        "Real mode: the kubeconfig of the Gardener whose Shoots labelled fundament.io/cluster-id are the clusters",
        "none (required in real mode)",
    ),
    spec(
        Key::GardenNamespaces,
        "garden-namespaces",
        "FUNDAMENT_GARDEN_NAMESPACES",
        "stack.garden-namespaces",
        "NS,NS…",
        "Real mode: the only garden namespaces (comma-separated) whose Shoots may be clusters; whoever can label a Shoot where the gateway looks can claim a cluster id",
        "none: any namespace the garden kubeconfig can list",
    ),
    spec(
        Key::AllowInsecureKubeconfig,
        "allow-insecure-kubeconfig",
        "FUNDAMENT_ALLOW_INSECURE_KUBECONFIG",
        "stack.allow-insecure-kubeconfig",
        "BOOL",
        "Honour insecure-skip-tls-verify in kubeconfigs (logged at start); for throw-away clusters only",
        "`false`: such a kubeconfig is refused",
    ),
    spec(
        Key::Directory,
        "directory",
        "FUNDAMENT_DIRECTORY",
        "stack.directory",
        "FILE",
        "The directory: organizations, projects with their namespaces, clusters, users (with their identity-provider accounts) and memberships, as YAML (fixtures/directory.yaml shows the format); checked at start, reloaded when it changes",
        "mock mode: the seed; `fundament dev` in the other modes: fixtures/directory.yaml; the services alone: required",
    ),
    spec(
        Key::OidcIssuer,
        "oidc-issuer",
        "FUNDAMENT_OIDC_ISSUER",
        "oidc.issuer",
        "URL",
        "The OpenID Connect provider's issuer, exactly as its discovery document names it; set, sign-in goes through it (https, or http for a loopback host only)",
        "none: no OIDC sign-in",
    ),
    spec(
        Key::OidcClientId,
        "oidc-client-id",
        "FUNDAMENT_OIDC_CLIENT_ID",
        "oidc.client-id",
        "ID",
        "The console's client id at the provider (its redirect URI is `<console-url>/sign-in/oidc/callback`)",
        "none (required with an issuer)",
    ),
    spec(
        Key::OidcClientSecretFile,
        "oidc-client-secret-file",
        "FUNDAMENT_OIDC_CLIENT_SECRET_FILE",
        "oidc.client-secret-file",
        "FILE",
        "A file holding the client secret (e.g. a mounted Kubernetes Secret); read at start, surrounding whitespace ignored",
        "none (authn needs it with an issuer)",
    ),
    spec(
        Key::OidcProviderName,
        "oidc-provider-name",
        "FUNDAMENT_OIDC_PROVIDER_NAME",
        "oidc.provider-name",
        "NAME",
        "The provider's name on the sign-in page: \"Sign in with <name>\"",
        "the issuer's host name",
    ),
    spec(
        Key::OidcScopes,
        "oidc-scopes",
        "FUNDAMENT_OIDC_SCOPES",
        "oidc.scopes",
        "SCOPES",
        "The scopes asked for, separated by spaces (`openid` is always asked for)",
        "`openid email profile`",
    ),
    spec(
        Key::OidcEmailClaim,
        "oidc-email-claim",
        "FUNDAMENT_OIDC_EMAIL_CLAIM",
        "oidc.email-claim",
        "CLAIM",
        "The ID token claim holding the user's email (dropped when `email_verified` is false)",
        "`email`",
    ),
    spec(
        Key::OidcNameClaim,
        "oidc-name-claim",
        "FUNDAMENT_OIDC_NAME_CLAIM",
        "oidc.name-claim",
        "CLAIM",
        "The ID token claim holding the user's display name",
        "`name`",
    ),
    spec(
        Key::OidcGroupsClaim,
        "oidc-groups-claim",
        "FUNDAMENT_OIDC_GROUPS_CLAIM",
        "oidc.groups-claim",
        "CLAIM",
        "The ID token claim holding the user's groups (a list of strings, or one string)",
        "`groups`",
    ),
    spec(
        Key::SharedStore,
        "shared-store",
        "FUNDAMENT_SHARED_STORE",
        "stack.shared-store",
        "URL",
        "What replicas of authn, kube-api-proxy and plugin-proxy share (revoked sessions, used frame tickets, watch limits): a Redis at redis://host:port[/db]; needed to run more than one replica of any of them",
        "none: this process's memory (one replica of each service only)",
    ),
    spec(
        Key::SigningKeysDir,
        "signing-keys-dir",
        "FUNDAMENT_SIGNING_KEYS_DIR",
        "authn.signing-keys-dir",
        "DIR",
        "authn's signing keys from a directory (a mounted Secret: <name>.pem Ed25519 PKCS#8 keys and a file current naming the one that signs; all are published), read again when it changes",
        "none: generated once, kept in the state directory (one authn replica only)",
    ),
    spec(
        Key::FrameKeyFile,
        "frame-key-file",
        "FUNDAMENT_FRAME_KEY_FILE",
        "plugin-proxy.frame-key-file",
        "FILE",
        "plugin-proxy's frame cookie key from a file every replica reads (a mounted Secret: at least 32 random bytes)",
        "none: generated once, kept in the state directory (one plugin-proxy replica only)",
    ),
];

/// `--help`'s text of a setting: its sentence, file key and default (clap adds the variable).
pub fn help_line(spec: &Spec) -> String {
    format!("{} [file: {}] [default: {}]", spec.help, spec.file_key, spec.default.replace('`', ""))
}

/// The README's settings table, row by row from [`SPECS`].
pub fn markdown_table() -> String {
    let mut out =
        String::from("| flag | environment | `Leptos.toml` | what | default |\n|---|---|---|---|---|\n");
    out.push_str(&format!(
        "| `--{CONFIG_FLAG} PATH` | `{CONFIG_ENV}` | — | {CONFIG_HELP} | {CONFIG_DEFAULT} |\n"
    ));
    for s in &SPECS {
        out.push_str(&format!(
            "| `--{} {}` | `{}` | `{}` | {} | {} |\n",
            s.flag, s.value_name, s.env, s.file_key, s.help, s.default
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_kind_agrees_with_its_value_name() {
        // The settings file accepts bare numbers and booleans by the key's kind; a new
        // number or flag setting must say so there too.
        for spec in &SPECS {
            let expected = match spec.value_name {
                "N" | "HOURS" => crate::ValueKind::Number,
                "BOOL" => crate::ValueKind::Flag,
                _ => crate::ValueKind::Text,
            };
            assert_eq!(spec.key.kind(), expected, "{}", spec.flag);
        }
    }

    #[test]
    fn entry_i_is_the_key_with_discriminant_i_and_every_spelling_is_unique() {
        for (i, s) in SPECS.iter().enumerate() {
            assert_eq!(s.key as usize, i, "{s:?}");
        }
        for pick in [|s: &Spec| s.flag, |s: &Spec| s.env, |s: &Spec| s.file_key] {
            let mut seen: Vec<&str> = SPECS.iter().map(pick).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), SPECS.len());
        }
        // The kubeconfig variables keep the names operators of the original know.
        let upstream_names = [
            (Key::Kubeconfig, "PLUGIN_SANDBOX_KUBECONFIG"),
            (Key::GardenerKubeconfig, "GARDENER_KUBECONFIG"),
        ];
        for s in &SPECS {
            let expected = match upstream_names.iter().find(|(k, _)| *k == s.key) {
                Some((_, name)) => (*name).to_owned(),
                None => format!("FUNDAMENT_{}", s.flag.to_uppercase().replace('-', "_")),
            };
            assert_eq!(s.env, expected, "{s:?}");
        }
    }

    #[test]
    fn the_readme_table_is_the_generated_one() {
        let readme = std::fs::read_to_string(crate::checkout::repo().join("README.md")).unwrap();
        assert!(
            readme.contains(&markdown_table()),
            "README.md's settings table differs from crates/settings/src/table.rs; replace it with:\n{}",
            markdown_table()
        );
    }
}
