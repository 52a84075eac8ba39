//! `fundament dev`: the whole stack in one process, in any mode: mock (the embedded
//! cluster), sandbox (a kubeconfig's cluster) or real (a Gardener's Shoots).

use std::io::Write;

use fundament_cluster::controller::PluginDefinition;
use fundament_kube_api_proxy::upstream::UpstreamConfig;
use fundament_plugin_proxy::Runtimes;
use fundament_settings::{Key, Mode, Settings, SettingsError};

use crate::services::ClusterAccess;

use crate::{console, listen};

/// Why `fundament dev` could not start. All of these are bad settings or a
/// busy port: the process exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    /// A setting is invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The built site is missing.
    #[error(transparent)]
    Site(#[from] console::SiteMissing),
    /// A port could not be opened.
    #[error(transparent)]
    Listen(#[from] listen::ListenError),
    /// The embedded cluster could not start (state, fixtures, port).
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    /// The sandbox cluster could not be set up.
    #[error(transparent)]
    Sandbox(#[from] Box<crate::sandbox::SandboxError>),
    /// A plugin folder could not be read.
    #[error(transparent)]
    Definition(#[from] fundament_cluster::controller::DefinitionError),
    /// The plugin runtimes could not start.
    #[error("cannot start the plugin runtimes: {0}")]
    Runtimes(std::io::Error),
    /// authn, organization-api or kube-api-proxy could not start.
    #[error(transparent)]
    Stack(#[from] crate::stack::StackError),
}

/// Starts the stack and serves until SIGINT or SIGTERM.
pub async fn run(mut settings: Settings) -> Result<(), DevError> {
    let shutdown = crate::signal::shutdown_signal();
    if settings.mode != Mode::Mock && settings.directory.is_none() {
        // The development stack's users and clusters, as a file: real and sandbox clusters
        // get the same demo users as mock mode unless told otherwise.
        let path = std::path::PathBuf::from(DEV_DIRECTORY);
        tracing::info!(path = %path.display(), "no --directory: using the development directory");
        settings.directory = Some(path);
    }
    console::check_site(&settings)?;
    // Paths the stack would otherwise find missing only when asked for them (an SDK file that
    // answers 404, a state file no write reaches): refused now, naming the setting.
    settings.check_plugin_sdk()?;
    // Before a port is bound or the cluster starts: a plugins host that cannot give each
    // installation an origin (an IP address) stops the stack anyway.
    crate::services::plugin_origins(&settings).map_err(crate::stack::StackError::from)?;
    if matches!(settings.mode, Mode::Mock | Mode::Sandbox) {
        settings.check_fixtures_dir()?;
    }
    if settings.mode == Mode::Mock {
        settings.check_state_file()?;
    }
    let mut listening = vec![
        Key::ConsoleListen,
        Key::AuthnListen,
        Key::OrganizationApiListen,
        Key::KubeApiProxyListen,
        Key::PluginProxyListen,
    ];
    if settings.mode == Mode::Mock {
        listening.push(Key::ClusterListen);
    }
    listen::warn_url_mismatches(&settings, &listening);
    let listener = listen::bind("console", settings.console_listen, Key::ConsoleListen).await?;
    // The services stop in the order they call each other (the console first, authn and
    // organization-api last: every other service asks them), then the cluster and the runtimes,
    // whose clients they all are.
    let mut staged = crate::stack::StagedStop::new(3);
    let (stop_runtimes, runtimes_stopped) = tokio::sync::watch::channel(false);
    // Mock mode's development fault switches for whole services (docs/dev-switches.md).
    let faults = (settings.mode == Mode::Mock).then(fundament_dev_faults::Switchboard::default);
    let mut target = Target::start(&settings, runtimes_stopped, faults.as_ref()).await?;
    let signer = crate::services::live_signer(&settings).map_err(crate::stack::StackError::from)?;
    let jwks = signer.read().unwrap_or_else(std::sync::PoisonError::into_inner).jwks();
    let store = crate::services::shared_store(&settings).map_err(crate::stack::StackError::from)?;
    let dev_sign_in = crate::services::dev_sign_in(&settings);
    let services = [
        (
            2,
            crate::stack::authn(
                &settings,
                &target.access,
                signer,
                store.clone(),
                dev_sign_in,
                faults.as_ref(),
            )
            .await?,
        ),
        (
            2,
            crate::stack::organization_api(
                &settings,
                faults.as_ref().map(|f| f.switch(fundament_dev_faults::Service::OrganizationApi)),
            )
            .await?,
        ),
        (1, crate::stack::kube_api_proxy(&settings, &target.access, store.clone(), faults.as_ref()).await?),
        (
            1,
            crate::stack::plugin_proxy(&settings, &target.access, target.runtimes()?, store, faults.as_ref())
                .await?,
        ),
    ];
    for (stage, service) in services {
        staged.serve(stage, service);
    }
    let verifier = fundament_tokens::Verifier::from_jwks(&jwks)
        .map_err(|e| crate::stack::StackError::from(crate::services::ServiceError::from(e)))?;
    let credentials = fundament_authn_client::Credentials {
        keys: fundament_authn_client::Keys::fixed_then_follow(
            verifier,
            &format!("{}/.well-known/jwks.json", settings.urls.authn.as_str().trim_end_matches('/')),
        ),
        revoked: fundament_authn_client::RevokedSessions::follow(&format!(
            "{}/sessions/revocations",
            settings.urls.authn.as_str().trim_end_matches('/')
        )),
    };
    let sessions = crate::console_auth::AuthnSessions::new(settings.urls.authn.as_str(), credentials);
    sessions.spawn_refresh();
    let mut state =
        console::console_state(&settings, sessions, dev_sign_in).map_err(crate::stack::StackError::from)?;
    // The console's cluster list checks through the same OpenFGA switch as the services.
    state.fga = crate::services::with_faults(state.fga, faults.as_ref());
    let users: Vec<String> =
        crate::services::dev_users(&*state.directory).into_iter().map(|u| u.email).collect();
    let drain = Some(console::ending_streams(&state));
    let router = console::router(
        console::leptos_options(&settings),
        state,
        &settings.urls.console,
        &settings.cluster.plugin_sdk_dir,
    );
    let router = router.layer(axum::middleware::from_fn(crate::middleware::server_timing));
    staged.serve(0, crate::stack::Bound { name: "console", listener, router, drain, finish: None });

    tracing::info!(url = %settings.urls.console, listen = %settings.console_listen, "console listening");
    print_banner(&settings, &target.describe(), &users);
    shutdown.await;
    // The services within DRAIN_PERIOD (20 s, and kube-api-proxy's last writes, 5 s), then the
    // cluster, whose clients are gone by then (4 s): 29 s, within a Deployment's default 30 s
    // grace period (the Helm chart's mock mode runs this process).
    staged.stop().await;
    if let Some(cluster) = target.embedded.take() {
        cluster.shutdown(CLUSTER_DRAIN_PERIOD).await;
    }
    stop_runtimes.send_replace(true);
    tracing::info!("stopped");
    Ok(())
}

/// How long the embedded cluster drains once the services stopped: only clients from outside
/// the stack (kubectl, the runtimes' watches, which it ends) may still be there.
const CLUSTER_DRAIN_PERIOD: std::time::Duration = std::time::Duration::from_secs(4);

/// `fundament dev`'s directory outside mock mode when `--directory` is not given.
const DEV_DIRECTORY: &str = "fixtures/directory.yaml";

/// What the user sees in the terminal: where to go and as whom.
fn print_banner(settings: &Settings, cluster: &str, users: &[String]) {
    let text = format!(
        "\nFundament dev stack ({} mode) is running:\n  console           {}\n  kube-api-proxy    {}\n  plugin-proxy      {}\n  authn             {}\n  organization-api  {}\n  cluster           {}\n\nSign in as {}. Ctrl-C stops it.\n\n",
        settings.mode,
        settings.urls.console.as_str().trim_end_matches('/'),
        settings.urls.kube_api_proxy.as_str().trim_end_matches('/'),
        settings.urls.plugin_proxy.as_str().trim_end_matches('/'),
        settings.urls.authn.as_str().trim_end_matches('/'),
        settings.urls.organization_api.as_str().trim_end_matches('/'),
        cluster,
        if users.is_empty() { "a user of the directory".to_owned() } else { users.join(" or ") },
    );
    let authn = settings.urls.authn.as_str().trim_end_matches('/');
    let audit = settings.audit_log.as_ref().map_or_else(
        || "log only (--audit-log FILE adds a JSON-lines file)".to_owned(),
        |p| p.display().to_string(),
    );
    // The fault switches are mock mode's only (elsewhere they answer 404: docs/dev-switches.md).
    let switches = if settings.mode == Mode::Mock {
        format!(
            "Force PluginToken mints to fail: curl -X PUT -d '{{\"fail\": true}}' {authn}/dev/faults/mint-plugin-token\nTake a service down: curl -X PUT -d '{{\"fault\": \"down\"}}' {authn}/dev/faults/cluster (also authn, organization-api, openfga: docs/dev-switches.md)\nHang a plugin's runtime: curl -X PUT -d '{{\"fault\": \"hang\"}}' {authn}/dev/faults/plugin-runtimes/acme-corp--cert-manager\n"
        )
    } else {
        String::new()
    };
    let text = format!(
        "{}Plugin gateway audit: {audit}\n{switches}\n",
        text.trim_end_matches('\n').to_owned() + "\n"
    );
    // The banner is the command's output, not a log line: it goes to stderr so
    // stdout stays a clean stream of JSON logs when redirected.
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// What the stack runs against, and the plugin runtimes it started for it.
struct Target {
    access: ClusterAccess,
    /// Mock mode: the embedded cluster (kept running while the stack runs).
    embedded: Option<fundament_cluster::Running>,
    /// Sandbox mode: each installation's runtime on this machine.
    local_runtimes: Vec<(String, std::net::SocketAddr)>,
}

impl Target {
    async fn start(
        settings: &Settings,
        stopped: tokio::sync::watch::Receiver<bool>,
        faults: Option<&fundament_dev_faults::Switchboard>,
    ) -> Result<Self, DevError> {
        let (organization, _) =
            crate::services::single_cluster(settings).map_err(crate::stack::StackError::from)?;
        let organization = organization.as_str();
        match settings.mode {
            Mode::Mock => {
                let mut config = crate::cluster::config(settings);
                config.faults = faults.map(|f| f.switch(fundament_dev_faults::Service::Cluster));
                let cluster = crate::cluster::start(settings, config).await?;
                let runtimes = crate::plugins::start_runtimes(
                    &cluster.definitions.0,
                    organization,
                    stopped,
                    faults.map(fundament_dev_faults::Switchboard::runtimes),
                )
                .await
                .map_err(DevError::Runtimes)?;
                crate::plugins::register_in(&cluster, &runtimes);
                let access = ClusterAccess::Embedded(UpstreamConfig {
                    url: cluster.url.clone(),
                    ca_pem: cluster.ca_pem.clone(),
                    admin_token: cluster.admin_token.clone(),
                });
                Ok(Self { access, embedded: Some(cluster), local_runtimes: Vec::new() })
            }
            Mode::Sandbox => {
                let access = ClusterAccess::of(settings).map_err(crate::stack::StackError::from)?;
                let definitions = plugin_definitions(settings)?;
                crate::sandbox::install(settings, &definitions).await.map_err(Box::new)?;
                // No switches outside mock mode.
                let runtimes = crate::plugins::start_runtimes(&definitions, organization, stopped, None)
                    .await
                    .map_err(DevError::Runtimes)?;
                Ok(Self { access, embedded: None, local_runtimes: runtimes })
            }
            Mode::Real => {
                let access = ClusterAccess::of(settings).map_err(crate::stack::StackError::from)?;
                Ok(Self { access, embedded: None, local_runtimes: Vec::new() })
            }
        }
    }

    /// Where plugin-proxy finds the runtimes.
    fn runtimes(&self) -> Result<Runtimes, crate::stack::StackError> {
        if self.local_runtimes.is_empty() {
            return Ok(Runtimes::ServiceProxy);
        }
        Runtimes::local(self.local_runtimes.iter().cloned())
            .map_err(|e| crate::stack::StackError::from(crate::services::ServiceError::from(e)))
    }

    /// The cluster line of the banner.
    fn describe(&self) -> String {
        match (&self.access, &self.embedded) {
            (_, Some(cluster)) => format!(
                "{} (kubectl: fundament cluster kubeconfig > /tmp/kc; KUBECONFIG=/tmp/kc kubectl get ns)",
                cluster.url
            ),
            (ClusterAccess::Kubeconfig(path), _) => format!("the sandbox cluster of {}", path.display()),
            (ClusterAccess::Garden(path), _) => format!("the Shoots of the garden of {}", path.display()),
            (ClusterAccess::Embedded(config), None) => config.url.clone(),
        }
    }
}

/// The plugin folders the stack installs: every folder of the plugins directory and each
/// `--plugin` folder.
fn plugin_definitions(settings: &Settings) -> Result<Vec<PluginDefinition>, DevError> {
    let c = &settings.cluster;
    let mut definitions = Vec::new();
    for dir in fundament_cluster::fixtures::plugin_dirs(&c.plugins_dir).unwrap_or_default() {
        definitions.push(fundament_cluster::controller::read_definition(&dir)?);
    }
    for dir in &c.development_plugins {
        let mut def = fundament_cluster::controller::read_definition(dir)?;
        def.development = true;
        definitions.push(def);
    }
    Ok(definitions)
}
