//! The command line: `fundament <command> [settings]`.

use std::{path::PathBuf, process::ExitCode};

use crate::stack::Service;

use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use fundament_settings::{Key, Layer, Settings, SettingsError, Source, load_file, resolve, table};

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
    /// Run the whole stack in one process and print its URLs. --mode mock (the default):
    /// against the embedded cluster. --mode sandbox --kubeconfig FILE: against that cluster,
    /// after installing the platform and the plugin folders into it (server-side apply,
    /// idempotent). --mode real --gardener-kubeconfig FILE: against every Shoot of that
    /// Gardener labelled fundament.io/cluster-id.
    Dev(Box<DevArgs>),
    /// Run a simulated Gardener: a garden whose two Shoots (prod-eu and restricted, labelled
    /// with the seed's cluster ids) are embedded clusters seeded like mock mode's; writes the
    /// garden's kubeconfig for `fundament dev --mode real --gardener-kubeconfig FILE`.
    Garden(Box<SettingsArgs>),
    /// Remove from a sandbox cluster what `fundament dev --mode sandbox` installed there,
    /// and nothing else (needs --kubeconfig or PLUGIN_SANDBOX_KUBECONFIG).
    Uninstall(Box<SettingsArgs>),
    /// Run the embedded cluster alone (a kubectl-compatible API over TLS), or
    /// print its admin kubeconfig.
    Cluster(Box<ClusterArgs>),
    /// Run the console alone (the UI and its server functions), following authn at --authn-url;
    /// any number of replicas behind a load balancer, no stickiness needed.
    Console(Box<SettingsArgs>),
    /// Run authn alone (sign-in, user info, PluginToken minting, JWKS). More than one replica
    /// needs --shared-store and --signing-keys-dir.
    Authn(Box<SettingsArgs>),
    /// Run organization-api alone (published plugin definitions).
    OrganizationApi(Box<SettingsArgs>),
    /// Run kube-api-proxy alone (the gateway for every cluster request). More than one replica
    /// needs --shared-store (the watch limits).
    KubeApiProxy(Box<SettingsArgs>),
    /// Run plugin-proxy alone (plugin pages and the SDK, on their own origin). More than one
    /// replica needs --shared-store (single-use frame tickets) and --frame-key-file.
    PluginProxy(Box<SettingsArgs>),
    /// Print tokens for scripts and curl (mock mode only).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Plugin author tools.
    #[command(subcommand)]
    Plugin(PluginCommand),
}

impl Command {
    /// Whether the command's answer is what it prints (a token, a kubeconfig, a report): its
    /// log lines then go to stderr. Services and stacks log to stdout, as containers expect.
    fn answers_on_stdout(&self) -> bool {
        match self {
            Command::Token(_) | Command::Plugin(_) | Command::Uninstall(_) => true,
            Command::Cluster(args) => args.action.is_some(),
            Command::Dev(_)
            | Command::Garden(_)
            | Command::Console(_)
            | Command::Authn(_)
            | Command::OrganizationApi(_)
            | Command::KubeApiProxy(_)
            | Command::PluginProxy(_) => false,
        }
    }
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// A UserToken: `curl -H "Authorization: Bearer $(fundament token user --email alice@acme-corp.com)" …`
    User {
        /// A seed user's email.
        #[arg(long)]
        email: String,
        /// Lifetime such as 8h (the default and the longest a UserToken lives) or 15m; a negative
        /// one gives an expired token (for tests).
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
        /// Lifetime such as 15m (the default and the longest a PluginToken lives) or 5m; a
        /// negative one gives an expired token (for tests).
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
    /// Run every custom page of a plugin folder in headless Chromium inside a mock console, and
    /// report what breaks the console's rules. The mock console speaks the postMessage protocol
    /// (plugin:ready, fundament:init with a token, a 401 answered by a token refresh, a theme
    /// change, fundament:auth-failed); pages are served on an origin of their own under
    /// plugin-proxy's CSP; their Kubernetes calls go to a mock API that serves the plugin's
    /// fixtures/ and refuses calls outside spec.allowedResources. Each page runs twice: once
    /// where all goes well, once where the first token cannot be minted and every call is
    /// refused 403. Findings (each with its name and file): lint, no-ready (none within 5 s),
    /// data-before-init, csp-inline-script, csp-inline-style, csp-violation,
    /// outside-allowed-resources, theme-ignored, no-resize, unhandled-sdk-error,
    /// uncaught-exception, console-error, file-not-found. A plugin without custom pages
    /// passes (no-custom-pages). Exit code 1 when there are errors, 2 when the check cannot
    /// run. Needs Chromium: Debian's /usr/bin/chromium, or --chromium PATH or CHROMIUM_PATH.
    Check {
        /// The plugin folder (with definition.yaml).
        dir: PathBuf,
        /// Print the report as JSON: {plugin, pages, findings: [{severity, name, file, line?,
        /// page?, message}], errors, warnings}.
        #[arg(long)]
        json: bool,
        /// The Chromium binary [default: $CHROMIUM_PATH, else /usr/bin/chromium].
        #[arg(long, value_name = "PATH")]
        chromium: Option<PathBuf>,
        /// How many page runs at once.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
    },
    /// Create a plugin folder NAME (its last path component is the plugin's name, a DNS label
    /// of at most 40 characters): definition.yaml, the CRD of one kind (Widget), fixtures, and
    /// custom list and detail pages using the SDK. It passes `fundament plugin lint` and
    /// `fundament plugin check` as generated. Refuses a folder that exists and is not empty.
    New {
        /// The folder to create, e.g. my-plugin or plugins/my-plugin.
        #[arg(value_name = "NAME")]
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct DevArgs {
    /// Load a plugin folder under development (definition.yaml, crds/, fixtures/, console/):
    /// installed on prod-eu (mock) or the sandbox cluster as acme-corp--<name>, its pages served from the folder and never
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

/// The stack's settings as flags, made from the one settings table
/// (`fundament_settings::table::SPECS`): each also reads an environment variable
/// and a key of Leptos.toml.
#[derive(Debug, Clone)]
pub struct SettingsArgs {
    config: Option<PathBuf>,
    /// The values given as flags (not those clap found in the environment: the environment
    /// layer reads those, below the flags).
    flags: Layer,
}

impl Default for SettingsArgs {
    fn default() -> Self {
        Self { config: None, flags: Layer::new(Source::Flag) }
    }
}

impl Args for SettingsArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let config = Arg::new(table::CONFIG_FLAG)
            .long(table::CONFIG_FLAG)
            .value_name("PATH")
            .value_parser(clap::value_parser!(PathBuf))
            .env(table::CONFIG_ENV)
            .hide_env_values(true)
            .help(format!("{} [default: {}]", table::CONFIG_HELP, table::CONFIG_DEFAULT.replace('`', "")));
        table::SPECS.iter().fold(cmd.arg(config), |cmd, spec| {
            cmd.arg(
                Arg::new(spec.flag)
                    .long(spec.flag)
                    .value_name(spec.value_name)
                    .env(spec.env)
                    // Values never show in --help: one may be the cluster's admin token.
                    .hide_env_values(true)
                    .help(table::help_line(spec)),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for SettingsArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let from_flag = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        let config = if from_flag(table::CONFIG_FLAG) {
            matches.get_one::<PathBuf>(table::CONFIG_FLAG).cloned()
        } else {
            None
        };
        let mut flags = Layer::new(Source::Flag);
        for key in Key::all() {
            if from_flag(key.flag()) {
                flags.set_opt(key, matches.get_one::<String>(key.flag()).cloned());
            }
        }
        Ok(Self { config, flags })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl SettingsArgs {
    #[cfg(test)]
    fn with_flag(mut self, key: Key, value: &str) -> Self {
        self.flags.set(key, value);
        self
    }

    pub fn resolve(&self, env: impl Fn(&str) -> Option<String>) -> Result<(Settings, Source), SettingsError> {
        let config = self
            .config
            .clone()
            .or_else(|| env(table::CONFIG_ENV).filter(|v| !v.is_empty()).map(PathBuf::from));
        let file = match config {
            Some(path) => Some(load_file(&path)?),
            None => {
                let default = PathBuf::from("Leptos.toml");
                default.is_file().then(|| load_file(&default)).transpose()?
            }
        };
        let env_layer = Layer::from_env(&env);
        let mut layers = vec![&self.flags, &env_layer];
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
    if cli.command.answers_on_stdout() {
        fundament_telemetry::init_stderr();
    } else {
        fundament_telemetry::init(fundament_telemetry::LogFormat::detect());
    }
    match cli.command {
        Command::Dev(args) => run_dev(&args.settings, &args.plugins),
        Command::Cluster(args) => match *args {
            ClusterArgs { action: None, settings } => run_cluster(&settings),
            ClusterArgs { action: Some(ClusterAction::Kubeconfig(settings)), .. } => {
                print_kubeconfig(&settings)
            }
        },
        Command::Garden(args) => with_settings(&args, |settings| {
            runtime()?.block_on(crate::garden::run(settings)).map_err(|e| e.to_string())
        }),
        Command::Uninstall(args) => with_settings(&args, |settings| {
            settings.check_cluster_access().map_err(|e| e.to_string())?;
            runtime()?.block_on(crate::sandbox::uninstall(settings)).map_err(|e| e.to_string())
        }),
        Command::Console(args) => run_service(&args, Service::Console),
        Command::Authn(args) => run_service(&args, Service::Authn),
        Command::OrganizationApi(args) => run_service(&args, Service::OrganizationApi),
        Command::KubeApiProxy(args) => run_service(&args, Service::KubeApiProxy),
        Command::PluginProxy(args) => run_service(&args, Service::PluginProxy),
        Command::Token(TokenCommand::User { email, ttl, settings }) => with_settings(&settings, |s| {
            crate::commands::user_token(&s, &email, ttl.as_deref()).map(print_line)
        }),
        Command::Token(TokenCommand::Plugin { email, cluster, installation, ttl, settings }) => {
            with_settings(&settings, |s| {
                runtime()?
                    .block_on(crate::commands::plugin_token(
                        &s,
                        &email,
                        &cluster,
                        &installation,
                        ttl.as_deref(),
                    ))
                    .map(print_line)
                    .map_err(|e| e.to_string())
            })
        }
        Command::Plugin(PluginCommand::Check { dir, json, chromium, jobs }) => {
            let options = fundament_plugin_check::Options {
                chromium: fundament_plugin_check::cdp::chromium_path(chromium),
                jobs,
            };
            let runtime = match runtime() {
                Ok(runtime) => runtime,
                Err(error) => return failure(&error),
            };
            match runtime.block_on(fundament_plugin_check::check(&dir, &options)) {
                Ok(report) => {
                    let text = if json { format!("{}\n", report.to_json()) } else { report.to_string() };
                    use std::io::Write;
                    let _ = std::io::stdout().write_all(text.as_bytes());
                    if report.failed() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
                }
                Err(error) => usage_error(&error),
            }
        }
        Command::Plugin(PluginCommand::New { dir }) => {
            match fundament_plugin_check::scaffold::new_plugin(&dir) {
                Ok(files) => {
                    let mut text = format!("created {}:\n", dir.display());
                    for file in files {
                        text.push_str(&format!("  {}\n", file.display()));
                    }
                    text.push_str(&format!(
                    "next: fundament plugin lint {0} && fundament plugin check {0}; fundament dev --plugin {0}\n",
                    dir.display()
                ));
                    print_line(text.trim_end().to_string());
                    ExitCode::SUCCESS
                }
                Err(error) => usage_error(&error),
            }
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

fn run_service(args: &SettingsArgs, service: Service) -> ExitCode {
    with_settings(args, |settings| {
        if service.reaches_clusters() {
            settings.check_cluster_access().map_err(|e| e.to_string())?;
        }
        runtime()?.block_on(crate::stack::run_one(settings, service)).map_err(|e| e.to_string())
    })
}

/// The async runtime; a machine that cannot start one ends the command with a failure.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the async runtime: {error}"))
}

fn run_cluster(args: &SettingsArgs) -> ExitCode {
    let settings = match args.resolve(|name| std::env::var(name).ok()) {
        Ok((settings, _)) => settings,
        Err(error) => return usage_error(&error),
    };
    if let Err(error) = settings.check_fixtures_dir().and_then(|()| settings.check_state_file()) {
        return usage_error(&error);
    }
    run_to_end(crate::cluster::run(settings))
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
    let resolved = args.resolve(|name| std::env::var(name).ok()).map(|(settings, _)| settings);
    let mut settings = match resolved {
        Ok(settings) => settings,
        Err(error) => return usage_error(&error),
    };
    if let Err(error) = settings.check_cluster_access() {
        return usage_error(&error);
    }
    for dir in plugins {
        if !dir.join("definition.yaml").is_file() {
            return usage_error(&format!("--plugin {}: no definition.yaml in that folder", dir.display()));
        }
    }
    settings.cluster.development_plugins = plugins.to_vec();
    run_to_end(crate::dev::run(settings))
}

/// Runs a command that lives until it is stopped, on a runtime of its own:
/// exit code 0 when it ends cleanly, 2 (as `usage_error`) when it fails, 1
/// when the runtime does not start.
fn run_to_end<E: std::fmt::Display>(command: impl std::future::Future<Output = Result<(), E>>) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(error) => return failure(&error),
    };
    match runtime.block_on(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => usage_error(&error),
    }
}

/// Something outside the settings stopped the command: one line on stderr, exit code 1.
fn failure(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("fundament: {error}");
    ExitCode::FAILURE
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
        for key in Key::all() {
            assert!(help.contains(&format!("--{}", key.flag())), "no --{} in help", key.flag());
            assert!(help.contains(key.env()), "no {} in help", key.env());
            assert!(help.contains(&format!("[file: {}]", key.file_key())), "no {} in help", key.file_key());
        }
    }

    /// Every setting can come from the environment or the settings file as well as from its
    /// flag, so no usage line may list one as a required flag (`fundament console --x <X>`);
    /// `--help` still lists each flag with its variable (the test above).
    #[test]
    fn no_usage_line_requires_a_setting_flag() {
        fn usages(cmd: &mut clap::Command, out: &mut Vec<String>) {
            out.push(cmd.render_usage().to_string());
            for sub in cmd.get_subcommands_mut() {
                usages(sub, out);
            }
        }
        let mut all = Vec::new();
        usages(&mut Cli::command(), &mut all);
        assert!(all.len() > 10, "{all:?}");
        for usage in all {
            for key in Key::all() {
                let flag = format!("--{} ", key.flag());
                assert!(!usage.contains(&flag), "{usage}");
            }
            assert!(!usage.contains("--config "), "{usage}");
        }
    }

    #[test]
    fn flags_beat_environment() {
        let args = SettingsArgs {
            config: Some(
                PathBuf::from(
                    std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
                )
                .join("../Leptos.toml"),
            ),
            ..Default::default()
        }
        .with_flag(Key::ConsoleListen, "127.0.0.1:4100");
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
    fn dev_takes_every_mode_and_each_names_its_kubeconfig() {
        let args = SettingsArgs::default().with_flag(Key::Mode, "real");
        let (settings, _) = args.resolve(|_| None).unwrap();
        let err = settings.check_cluster_access().unwrap_err().to_string();
        assert!(
            err.starts_with("--gardener-kubeconfig (GARDENER_KUBECONFIG, or stack.gardener-kubeconfig"),
            "{err}"
        );
        // organization-api reaches no cluster: it starts in any mode without a kubeconfig.
        assert!(!Service::OrganizationApi.reaches_clusters() && Service::KubeApiProxy.reaches_clusters());
        let args =
            SettingsArgs::default().with_flag(Key::Mode, "sandbox").with_flag(Key::Kubeconfig, "/tmp/kc");
        let (settings, _) = args.resolve(|_| None).unwrap();
        assert_eq!(settings.kubeconfig.as_deref(), Some(std::path::Path::new("/tmp/kc")));
        let help = Cli::try_parse_from(["fundament", "dev", "--help"]).unwrap_err().to_string();
        // Wrapped to the terminal's width: compared word by word.
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for mode in ["--mode sandbox --kubeconfig FILE", "--mode real --gardener-kubeconfig FILE"] {
            assert!(help.contains(mode), "{help}");
        }
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
    fn plugin_check_help_names_every_finding_and_the_browser() {
        let help = Cli::try_parse_from(["fundament", "plugin", "check", "--help"]).unwrap_err().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for name in fundament_plugin_check::FindingName::ALL {
            assert!(help.contains(name.as_str()), "no {name} in: {help}");
        }
        for text in ["/usr/bin/chromium", "--chromium", "CHROMIUM_PATH", "--json", "Exit code 1"] {
            assert!(help.contains(text), "no {text} in: {help}");
        }
        let cli = Cli::try_parse_from(["fundament", "plugin", "new", "my-plugin"]).unwrap();
        assert!(matches!(cli.command, Command::Plugin(PluginCommand::New { .. })));
    }

    #[test]
    fn a_missing_config_file_is_named() {
        let args = SettingsArgs { config: Some("/nonexistent/Leptos.toml".into()), ..Default::default() };
        let err = args.resolve(|_| None).unwrap_err().to_string();
        assert!(err.starts_with("cannot read settings file /nonexistent/Leptos.toml"), "{err}");
    }
}
