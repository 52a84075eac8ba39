//! The command line: `fundament <command> [settings]`.

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};
use fundament_settings::{Key, Layer, Settings, SettingsError, Source, load_file, resolve};

/// Fundament: a Kubernetes console with sandboxed plugins.
///
/// Settings are resolved as flags > environment variables > Leptos.toml >
/// built-in defaults. A bad setting exits with code 2 and names it.
#[derive(Debug, Parser)]
#[command(name = "fundament", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole stack in one process in mock mode (the embedded default)
    /// and print its URLs.
    Dev(Box<DevArgs>),
    /// Run the embedded cluster alone (a kubectl-compatible API over TLS), or
    /// print its admin kubeconfig.
    Cluster(Box<ClusterArgs>),
    /// Run authn alone (sign-in, user info, PluginToken minting, JWKS).
    Authn(Box<SettingsArgs>),
    /// Run organization-api alone (published plugin definitions).
    OrganizationApi(Box<SettingsArgs>),
    /// Run kube-api-proxy alone (the gateway for every cluster request).
    KubeApiProxy(Box<SettingsArgs>),
    /// Run plugin-proxy alone (plugin pages and the SDK, on their own origin).
    PluginProxy(Box<SettingsArgs>),
    /// Print tokens for scripts and curl (mock mode only).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Plugin author tools.
    #[command(subcommand)]
    Plugin(PluginCommand),
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// A UserToken: `curl -H "Authorization: Bearer $(fundament token user --email alice@acme-corp.com)" …`
    User {
        /// A seed user's email.
        #[arg(long)]
        email: String,
        /// Lifetime such as 8h or 15m; a negative one gives an expired token (for tests).
        #[arg(long, allow_hyphen_values = true)]
        ttl: Option<String>,
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
    /// A PluginToken for a user and an installation on a cluster.
    Plugin {
        /// A seed user's email.
        #[arg(long)]
        email: String,
        /// The cluster id (UUID).
        #[arg(long)]
        cluster: String,
        /// The installation name, e.g. acme-corp--cert-manager.
        #[arg(long)]
        installation: String,
        /// Lifetime such as 15m (the default); a negative one gives an expired token (for tests).
        #[arg(long, allow_hyphen_values = true)]
        ttl: Option<String>,
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Check a plugin folder: definition schema, image digest, RBAC rules, console files, menu
    /// entries, allowedResources. Exit code 1 when there are errors.
    Lint {
        /// The plugin folder (with definition.yaml).
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct DevArgs {
    /// Load a plugin folder under development (definition.yaml, crds/, fixtures/, console/):
    /// installed on prod-eu as acme-corp--<name>, its pages served from the folder and never
    /// cached, so edits show on reload. Repeatable.
    #[arg(long = "plugin", value_name = "DIR")]
    plugins: Vec<PathBuf>,
    #[command(flatten)]
    settings: SettingsArgs,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ClusterArgs {
    #[command(subcommand)]
    action: Option<ClusterAction>,
    #[command(flatten)]
    settings: SettingsArgs,
}

#[derive(Debug, Subcommand)]
enum ClusterAction {
    /// Print an admin kubeconfig for the running embedded cluster:
    /// `fundament cluster kubeconfig > /tmp/kc; KUBECONFIG=/tmp/kc kubectl get ns`
    Kubeconfig(SettingsArgs),
}

/// The stack's settings as flags. Each also reads an environment variable and
/// a key of Leptos.toml.
#[derive(Debug, Args, Default)]
pub struct SettingsArgs {
    /// Settings file [env: FUNDAMENT_CONFIG] [default: ./Leptos.toml when present]
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// mock, sandbox or real [env: FUNDAMENT_MODE] [file: stack.mode] [default: mock]
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
    /// Address the console listens on [env: FUNDAMENT_CONSOLE_LISTEN] [file: console.listen]
    /// [default: 127.0.0.1:3000]
    #[arg(long, value_name = "IP:PORT")]
    console_listen: Option<String>,
    /// The console's URL as browsers reach it [env: FUNDAMENT_CONSOLE_URL] [file: console.url]
    /// [default: http://localhost:<listen port>]
    #[arg(long, value_name = "URL")]
    console_url: Option<String>,
    /// The built site: wasm, JS, CSS, assets [env: FUNDAMENT_SITE_ROOT] [file: console.site-root]
    /// [default: target/site]
    #[arg(long, value_name = "DIR")]
    site_root: Option<String>,
    /// kube-api-proxy's URL [env: FUNDAMENT_KUBE_API_PROXY_URL] [file: kube-api-proxy.url]
    /// [default: http://localhost:8081]
    #[arg(long, value_name = "URL")]
    kube_api_proxy_url: Option<String>,
    /// kube-api-proxy's URL for the console's server, where it differs from the browsers' one
    /// (inside a cluster) [env: FUNDAMENT_KUBE_API_PROXY_INTERNAL_URL] [file: kube-api-proxy.internal-url]
    /// [default: --kube-api-proxy-url]
    #[arg(long, value_name = "URL")]
    kube_api_proxy_internal_url: Option<String>,
    /// plugin-proxy's URL: the plugins host; each installation's pages are served from
    /// <scheme>://<installation>.<its host> [env: FUNDAMENT_PLUGIN_PROXY_URL] [file: plugin-proxy.url]
    /// [default: http://localhost:8082]
    #[arg(long, value_name = "URL")]
    plugin_proxy_url: Option<String>,
    /// authn's URL [env: FUNDAMENT_AUTHN_URL] [file: authn.url] [default: http://localhost:8083]
    #[arg(long, value_name = "URL")]
    authn_url: Option<String>,
    /// organization-api's URL [env: FUNDAMENT_ORGANIZATION_API_URL] [file: organization-api.url]
    /// [default: http://localhost:8084]
    #[arg(long, value_name = "URL")]
    organization_api_url: Option<String>,
    /// The embedded cluster's API server [env: FUNDAMENT_CLUSTER_URL] [file: cluster.url]
    /// [default: https://localhost:8090]
    #[arg(long, value_name = "URL")]
    cluster_url: Option<String>,
    /// Address the embedded cluster listens on [env: FUNDAMENT_CLUSTER_LISTEN] [file: cluster.listen]
    /// [default: 127.0.0.1:8090]
    #[arg(long, value_name = "IP:PORT")]
    cluster_listen: Option<String>,
    /// Keys kept across restarts: the cluster's CA, token signing key and admin token (cluster/),
    /// authn's signing keys (authn/) [env: FUNDAMENT_STATE_DIR] [file: stack.state-dir] [default:
    /// $XDG_STATE_HOME/fundament or ~/.local/state/fundament]
    #[arg(long, value_name = "DIR")]
    state_dir: Option<String>,
    /// Keep the embedded cluster's objects in this file across restarts [env: FUNDAMENT_STATE_FILE]
    /// [file: cluster.state-file] [default: memory only]
    #[arg(long, value_name = "PATH")]
    state_file: Option<String>,
    /// A fixed admin bearer token for the embedded cluster; prefer the environment variable
    /// [env: FUNDAMENT_CLUSTER_ADMIN_TOKEN] [file: cluster.admin-token] [default: generated once,
    /// kept in the state directory]
    #[arg(long, value_name = "TOKEN")]
    cluster_admin_token: Option<String>,
    /// Cluster-wide fixtures (YAML) [env: FUNDAMENT_FIXTURES_DIR] [file: cluster.fixtures-dir]
    /// [default: fixtures/cluster]
    #[arg(long, value_name = "DIR")]
    fixtures_dir: Option<String>,
    /// Plugin folders: definition.yaml, crds/, fixtures/ [env: FUNDAMENT_PLUGINS_DIR]
    /// [file: stack.plugins-dir] [default: plugins]
    #[arg(long, value_name = "DIR")]
    plugins_dir: Option<String>,
    /// Address kube-api-proxy listens on [env: FUNDAMENT_KUBE_API_PROXY_LISTEN]
    /// [file: kube-api-proxy.listen] [default: 127.0.0.1:8081]
    #[arg(long, value_name = "IP:PORT")]
    kube_api_proxy_listen: Option<String>,
    /// Address authn listens on [env: FUNDAMENT_AUTHN_LISTEN] [file: authn.listen] [default: 127.0.0.1:8083]
    #[arg(long, value_name = "IP:PORT")]
    authn_listen: Option<String>,
    /// Address organization-api listens on [env: FUNDAMENT_ORGANIZATION_API_LISTEN]
    /// [file: organization-api.listen] [default: 127.0.0.1:8084]
    #[arg(long, value_name = "IP:PORT")]
    organization_api_listen: Option<String>,
    /// A real OpenFGA server for can_view [env: FUNDAMENT_OPENFGA_URL] [file: fga.openfga-url]
    /// [default: none, the embedded tuple store]
    #[arg(long, value_name = "URL")]
    openfga_url: Option<String>,
    /// The OpenFGA store id [env: FUNDAMENT_OPENFGA_STORE] [file: fga.openfga-store] [default: none]
    #[arg(long, value_name = "ID")]
    openfga_store: Option<String>,
    /// The OpenFGA authorization model id [env: FUNDAMENT_OPENFGA_MODEL] [file: fga.openfga-model]
    /// [default: the store's latest]
    #[arg(long, value_name = "ID")]
    openfga_model: Option<String>,
    /// The embedded tuple store (YAML) [env: FUNDAMENT_FGA_TUPLES] [file: fga.tuples]
    /// [default: fixtures/fga/tuples.yaml]
    #[arg(long, value_name = "PATH")]
    fga_tuples: Option<String>,
    /// Address plugin-proxy listens on [env: FUNDAMENT_PLUGIN_PROXY_LISTEN] [file: plugin-proxy.listen]
    /// [default: 127.0.0.1:8082]
    #[arg(long, value_name = "IP:PORT")]
    plugin_proxy_listen: Option<String>,
    /// The plugin SDK's files, served by plugin-proxy at /plugins/sdk/v1/ and by the console at
    /// /plugin-ui/ [env: FUNDAMENT_PLUGIN_SDK_DIR] [file: plugin-proxy.sdk-dir] [default: plugin-sdk]
    #[arg(long, value_name = "DIR")]
    plugin_sdk_dir: Option<String>,
    /// Also append kube-api-proxy's plugin-path audit lines to this file, one JSON object per line;
    /// its directory must exist [env: FUNDAMENT_AUDIT_LOG] [file: kube-api-proxy.audit-log]
    /// [default: none, the log only]
    #[arg(long, value_name = "PATH")]
    audit_log: Option<String>,
}

impl SettingsArgs {
    fn flag_layer(&self) -> Layer {
        let mut layer = Layer::new(Source::Flag);
        layer.set_opt(Key::Mode, self.mode.clone());
        layer.set_opt(Key::ConsoleListen, self.console_listen.clone());
        layer.set_opt(Key::ConsoleUrl, self.console_url.clone());
        layer.set_opt(Key::SiteRoot, self.site_root.clone());
        layer.set_opt(Key::KubeApiProxyUrl, self.kube_api_proxy_url.clone());
        layer.set_opt(Key::KubeApiProxyInternalUrl, self.kube_api_proxy_internal_url.clone());
        layer.set_opt(Key::PluginProxyUrl, self.plugin_proxy_url.clone());
        layer.set_opt(Key::AuthnUrl, self.authn_url.clone());
        layer.set_opt(Key::OrganizationApiUrl, self.organization_api_url.clone());
        layer.set_opt(Key::ClusterUrl, self.cluster_url.clone());
        layer.set_opt(Key::ClusterListen, self.cluster_listen.clone());
        layer.set_opt(Key::StateDir, self.state_dir.clone());
        layer.set_opt(Key::StateFile, self.state_file.clone());
        layer.set_opt(Key::ClusterAdminToken, self.cluster_admin_token.clone());
        layer.set_opt(Key::FixturesDir, self.fixtures_dir.clone());
        layer.set_opt(Key::PluginsDir, self.plugins_dir.clone());
        layer.set_opt(Key::KubeApiProxyListen, self.kube_api_proxy_listen.clone());
        layer.set_opt(Key::AuthnListen, self.authn_listen.clone());
        layer.set_opt(Key::OrganizationApiListen, self.organization_api_listen.clone());
        layer.set_opt(Key::OpenFgaUrl, self.openfga_url.clone());
        layer.set_opt(Key::OpenFgaStore, self.openfga_store.clone());
        layer.set_opt(Key::OpenFgaModel, self.openfga_model.clone());
        layer.set_opt(Key::FgaTuples, self.fga_tuples.clone());
        layer.set_opt(Key::PluginProxyListen, self.plugin_proxy_listen.clone());
        layer.set_opt(Key::PluginSdkDir, self.plugin_sdk_dir.clone());
        layer.set_opt(Key::AuditLog, self.audit_log.clone());
        layer
    }

    /// Resolves the settings; `env` looks up environment variables.
    pub fn resolve(&self, env: impl Fn(&str) -> Option<String>) -> Result<(Settings, Source), SettingsError> {
        let config = self
            .config
            .clone()
            .or_else(|| env("FUNDAMENT_CONFIG").filter(|v| !v.is_empty()).map(PathBuf::from));
        let file = match config {
            Some(path) => Some(load_file(&path)?),
            None => {
                let default = PathBuf::from("Leptos.toml");
                default.is_file().then(|| load_file(&default)).transpose()?
            }
        };
        let flags = self.flag_layer();
        let env_layer = Layer::from_env(&env);
        let mut layers = vec![&flags, &env_layer];
        if let Some(file) = &file {
            layers.push(file);
        }
        let settings = resolve(&layers)?;
        let mode_source =
            layers.iter().find(|l| l.get(Key::Mode).is_some()).map_or(Source::Default, |l| l.source());
        Ok((settings, mode_source))
    }
}

/// Runs the command line; the process's exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    fundament_telemetry::init(fundament_telemetry::LogFormat::detect());
    match cli.command {
        Command::Dev(args) => run_dev(&args.settings, &args.plugins),
        Command::Cluster(args) => match *args {
            ClusterArgs { action: None, settings } => run_cluster(&settings),
            ClusterArgs { action: Some(ClusterAction::Kubeconfig(settings)), .. } => {
                print_kubeconfig(&settings)
            }
        },
        Command::Authn(args) => run_service(&args, "authn"),
        Command::OrganizationApi(args) => run_service(&args, "organization-api"),
        Command::KubeApiProxy(args) => run_service(&args, "kube-api-proxy"),
        Command::PluginProxy(args) => run_service(&args, "plugin-proxy"),
        Command::Token(TokenCommand::User { email, ttl, settings }) => with_settings(&settings, |s| {
            crate::commands::user_token(&s, &email, ttl.as_deref()).map(print_line)
        }),
        Command::Token(TokenCommand::Plugin { email, cluster, installation, ttl, settings }) => {
            with_settings(&settings, |s| {
                let Some(rt) = runtime() else { return Ok(()) };
                rt.block_on(crate::commands::plugin_token(
                    &s,
                    &email,
                    &cluster,
                    &installation,
                    ttl.as_deref(),
                ))
                .map(print_line)
            })
        }
        Command::Plugin(PluginCommand::Lint { dir }) => {
            let (text, errors) = crate::commands::lint(&dir);
            use std::io::Write;
            let _ = std::io::stdout().write_all(text.as_bytes());
            if errors { ExitCode::FAILURE } else { ExitCode::SUCCESS }
        }
    }
}

fn print_line(text: String) {
    use std::io::Write;
    let _ = std::io::stdout().write_all(format!("{text}\n").as_bytes());
}

fn with_settings<E: std::fmt::Display>(
    args: &SettingsArgs,
    run: impl FnOnce(fundament_settings::Settings) -> Result<(), E>,
) -> ExitCode {
    match args.resolve(|name| std::env::var(name).ok()) {
        Ok((settings, _)) => match run(settings) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => usage_error(&error),
        },
        Err(error) => usage_error(&error),
    }
}

fn run_service(args: &SettingsArgs, service: &'static str) -> ExitCode {
    with_settings(args, |settings| {
        let Some(rt) = runtime() else { return Ok(()) };
        rt.block_on(crate::stack::run_one(settings, service))
    })
}

fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            None
        }
    }
}

fn run_cluster(args: &SettingsArgs) -> ExitCode {
    let settings = match args.resolve(|name| std::env::var(name).ok()) {
        Ok((settings, _)) => settings,
        Err(error) => return usage_error(&error),
    };
    let Some(runtime) = runtime() else { return ExitCode::FAILURE };
    match runtime.block_on(crate::cluster::run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => usage_error(&error),
    }
}

fn print_kubeconfig(args: &SettingsArgs) -> ExitCode {
    let settings = match args.resolve(|name| std::env::var(name).ok()) {
        Ok((settings, _)) => settings,
        Err(error) => return usage_error(&error),
    };
    match crate::cluster::kubeconfig(&settings) {
        Ok(text) => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(error) => usage_error(&error),
    }
}

fn run_dev(args: &SettingsArgs, plugins: &[PathBuf]) -> ExitCode {
    let resolved = args
        .resolve(|name| std::env::var(name).ok())
        .and_then(|(settings, source)| crate::dev::check_mode(&settings, source).map(|()| settings));
    let mut settings = match resolved {
        Ok(settings) => settings,
        Err(error) => return usage_error(&error),
    };
    for dir in plugins {
        if !dir.join("definition.yaml").is_file() {
            return usage_error(&format!("--plugin {}: no definition.yaml in that folder", dir.display()));
        }
    }
    settings.cluster.development_plugins = plugins.to_vec();
    let Some(runtime) = runtime() else { return ExitCode::FAILURE };
    match runtime.block_on(crate::dev::run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => usage_error(&error),
    }
}

/// Bad settings: one line on stderr, exit code 2.
fn usage_error(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("fundament: {error}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    fn dev_help() -> String {
        let mut cmd = Cli::command();
        cmd.find_subcommand_mut("dev").unwrap().render_long_help().to_string()
    }

    #[test]
    fn help_lists_every_setting_with_flag_env_and_file_key() {
        // Wrapping depends on the terminal width: compare with whitespace collapsed.
        let help = dev_help().split_whitespace().collect::<Vec<_>>().join(" ");
        for key in Key::ALL {
            assert!(help.contains(&format!("--{}", key.flag())), "no --{} in help", key.flag());
            assert!(help.contains(key.env()), "no {} in help", key.env());
            assert!(help.contains(&format!("[file: {}]", key.file_key())), "no {} in help", key.file_key());
        }
    }

    #[test]
    fn flags_beat_environment() {
        let args = SettingsArgs {
            console_listen: Some("127.0.0.1:4100".into()),
            config: Some(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../Leptos.toml"))),
            ..Default::default()
        };
        let env = |name: &str| match name {
            "FUNDAMENT_CONSOLE_LISTEN" => Some("127.0.0.1:4200".to_owned()),
            "FUNDAMENT_AUTHN_URL" => Some("http://auth.test:9000".to_owned()),
            _ => None,
        };
        let (settings, _) = args.resolve(env).unwrap();
        assert_eq!(settings.console_listen.port(), 4100);
        assert_eq!(settings.urls.authn.as_str(), "http://auth.test:9000/");
        // From Leptos.toml, which sets the console URL explicitly.
        assert_eq!(settings.urls.console.as_str(), "http://localhost:3000/");
    }

    #[test]
    fn dev_refuses_other_modes_naming_the_source() {
        let args = SettingsArgs { mode: Some("real".into()), ..Default::default() };
        let (settings, source) = args.resolve(|_| None).unwrap();
        let err = crate::dev::check_mode(&settings, source).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid mode \"real\" (from --mode): fundament dev runs the embedded stack, which needs mode mock"
        );
    }

    #[test]
    fn audit_log_is_a_flag_of_dev_and_kube_api_proxy() {
        for command in ["dev", "kube-api-proxy"] {
            let cli = Cli::try_parse_from(["fundament", command, "--audit-log", "/tmp/audit.jsonl"]).unwrap();
            let args = match cli.command {
                Command::Dev(args) => args.settings,
                Command::KubeApiProxy(args) => *args,
                other => panic!("{other:?}"),
            };
            let (settings, _) = args.resolve(|_| None).unwrap();
            assert_eq!(settings.audit_log, Some(PathBuf::from("/tmp/audit.jsonl")), "{command}");
        }
        let env = |name: &str| (name == "FUNDAMENT_AUDIT_LOG").then(|| "env.jsonl".to_owned());
        let (settings, _) = SettingsArgs::default().resolve(env).unwrap();
        assert_eq!(settings.audit_log, Some(PathBuf::from("env.jsonl")));
    }

    #[test]
    fn a_missing_config_file_is_named() {
        let args = SettingsArgs { config: Some("/nonexistent/Leptos.toml".into()), ..Default::default() };
        let err = args.resolve(|_| None).unwrap_err().to_string();
        assert!(err.starts_with("cannot read settings file /nonexistent/Leptos.toml"), "{err}");
    }
}
