//! Starting the embedded cluster: state directory (CA, keys, admin token),
//! state file or fixtures, the plugin controller, and the TLS listener.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::api::{self, Api};
use crate::cluster::Cluster;
use crate::controller::{self, Definitions};
use crate::proxy::ServiceBackends;
use crate::status::ApiError;
use crate::tls::{CertificateAuthority, ClientCertificate, TlsError};
use crate::tokens::{self, TokenIssuer};
use crate::{fixtures, journal, kubeconfig, snapshot};

/// Where the CA, signing key and admin token live unless configured:
/// `$XDG_STATE_HOME/fundament/cluster` or `~/.local/state/fundament/cluster`.
pub fn default_state_dir() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from(".fundament/state"));
    base.join("fundament/cluster")
}

#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// The URL clients use (kubeconfig `server`).
    pub public_url: String,
    pub state_dir: PathBuf,
    pub state_file: Option<PathBuf>,
    pub admin_token: Option<String>,
    /// `fixtures/cluster` (its `crds/` first).
    pub fixtures_dir: PathBuf,
    /// Plugin folders: CRDs, objects and an installation each.
    pub plugin_dirs: Vec<PathBuf>,
    /// Development plugin folders (`fundament dev --plugin`): installed the same way, marked as such.
    pub development_plugin_dirs: Vec<PathBuf>,
    /// Organization whose installations the plugin folders become.
    pub organization: String,
    /// Mock mode's development fault switch (`fundament dev`): down, restarting, slow or
    /// failing on purpose. `None` everywhere else.
    pub faults: Option<fundament_dev_faults::Switch>,
}

impl ClusterConfig {
    /// A cluster on a free loopback port, seeded from a checkout's `fixtures/cluster`
    /// and `plugins/` as `acme-corp` (tests, benchmarks).
    pub fn seeded(state_dir: PathBuf, repo: &Path) -> Result<Self, fixtures::FixtureError> {
        Ok(Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            public_url: String::new(),
            state_dir,
            state_file: None,
            admin_token: None,
            fixtures_dir: repo.join("fixtures/cluster"),
            plugin_dirs: fixtures::plugin_dirs(&repo.join("plugins"))?,
            development_plugin_dirs: Vec::new(),
            organization: "acme-corp".into(),
            faults: None,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    #[error(transparent)]
    Snapshot(#[from] snapshot::SnapshotError),
    #[error(transparent)]
    Fixture(#[from] fixtures::FixtureError),
    #[error(transparent)]
    Definition(#[from] controller::DefinitionError),
    #[error("cannot install plugin {plugin}: {detail}")]
    Install { plugin: String, detail: String },
    #[error("garden: cannot write {what}: {detail}")]
    Garden { what: String, detail: String },
    /// The listen address could not be bound. This crate knows no settings: the server maps
    /// this to its own listen error (server/src/cluster.rs), worded as every service's busy
    /// port and naming the setting that moves it.
    #[error("embedded cluster cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// A started cluster.
pub struct Running {
    pub cluster: Arc<Cluster>,
    pub addr: SocketAddr,
    pub url: String,
    pub ca_pem: String,
    pub admin_token: String,
    pub backends: ServiceBackends,
    pub definitions: Definitions,
    /// Kept inside: callers get certificates it signs, never its key.
    pub(crate) ca: Arc<CertificateAuthority>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The listener and its connections, until they have drained.
    serving: Option<tokio::task::JoinHandle<()>>,
    stop: tokio::sync::watch::Sender<bool>,
    /// Whether stopping folds the journal into the snapshot ([`Running::halt`] does not).
    save_at_stop: bool,
}

impl Running {
    /// Stops as a crash would: without folding the journal into the snapshot
    /// (for tests of what a restart finds).
    pub fn halt(mut self) {
        self.save_at_stop = false;
    }

    /// Stops gracefully: no new connections; open watches end (after a
    /// BOOKMARK, where allowed) so clients resume elsewhere or after the
    /// restart; in-flight requests finish, for at most `deadline`; then the
    /// journal is folded into the snapshot.
    pub async fn shutdown(mut self, deadline: std::time::Duration) {
        self.stop.send_replace(true);
        self.cluster.close_watches();
        if let Some(serving) = self.serving.take() {
            let abort = serving.abort_handle();
            if tokio::time::timeout(deadline, serving).await.is_err() {
                tracing::warn!(
                    seconds = deadline.as_secs(),
                    "cluster drain period over; closing what is still open"
                );
                abort.abort();
            } else {
                tracing::info!("cluster drained");
            }
        }
    }

    pub fn kubeconfig(&self) -> String {
        kubeconfig::admin(&self.url, &self.ca_pem, &self.admin_token)
    }

    /// A client certificate of this cluster's CA for `user` in `groups`, valid
    /// from now for `valid_for`: the cluster authenticates it as that user
    /// (`system:masters` among the groups makes a superuser).
    pub fn issue_client_certificate(
        &self,
        user: &str,
        groups: &[&str],
        valid_for: std::time::Duration,
    ) -> Result<ClientCertificate, TlsError> {
        self.ca.client_certificate(user, groups, valid_for)
    }

    /// A kubeconfig for this cluster that authenticates with `cert`; `name`
    /// names its cluster, user and context entries.
    pub fn client_certificate_kubeconfig(&self, cert: &ClientCertificate, name: &str) -> String {
        kubeconfig::client_certificate(&self.url, &self.ca_pem, cert, name)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for t in self.tasks.iter().chain(&self.serving) {
            t.abort();
        }
        // Every write is in the journal already; this folds it into the snapshot.
        if self.save_at_stop
            && let Err(error) = self.cluster.save_state()
        {
            tracing::warn!(%error, "state not saved at shutdown (the journal keeps every write)");
        }
    }
}

/// Builds the state (fixtures or snapshot) without listening: for tests and tools.
pub fn build(config: &ClusterConfig) -> Result<(Arc<Cluster>, Definitions), StartError> {
    let cluster = Arc::new(Cluster::new());
    let mut definitions: Vec<_> =
        config.plugin_dirs.iter().map(|d| controller::read_definition(d)).collect::<Result<_, _>>()?;
    for dir in &config.development_plugin_dirs {
        let mut def = controller::read_definition(dir)?;
        def.development = true;
        definitions.push(def);
    }
    let definitions = Definitions(Arc::new(definitions));
    let restored = match &config.state_file {
        Some(path) => match journal::read(path)? {
            Some(contents) => {
                let objects = contents.objects.into_iter().map(|((key, _, _), object)| (key, object));
                cluster.restore(objects, contents.resource_version);
                true
            }
            None => false,
        },
        None => false,
    };
    if !restored {
        // The definitions read above, in the same order as their folders (plain, then development).
        let count = fixtures::load_all(&cluster, &config.fixtures_dir, &definitions.0)?;
        for def in definitions.0.iter() {
            controller::install(&cluster, &config.organization, def)
                .map_err(|e| StartError::Install { plugin: def.name.clone(), detail: e.message })?;
        }
        tracing::info!(objects = count, plugins = definitions.0.len(), "embedded cluster seeded");
    }
    Ok((cluster, definitions))
}

/// Starts the cluster and its listener.
pub async fn start(config: ClusterConfig) -> Result<Running, StartError> {
    start_serving(config, None).await
}

/// Starts a cluster that, with `garden`, also answers for the shoots it names
/// (their `adminkubeconfig` subresource).
pub(crate) async fn start_serving(
    config: ClusterConfig,
    garden: Option<Arc<crate::garden::Shoots>>,
) -> Result<Running, StartError> {
    std::fs::create_dir_all(&config.state_dir)
        .map_err(|source| crate::tls::TlsError::Io { path: config.state_dir.clone(), source })?;
    let ca = Arc::new(CertificateAuthority::load_or_create(&config.state_dir)?);
    let issuer = TokenIssuer::load_or_create(&config.state_dir)?;
    let admin_token = tokens::admin_token(&config.state_dir, config.admin_token.as_deref())?;
    let (cluster, definitions) = build(&config)?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| StartError::Bind { addr: config.listen, source })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind { addr: config.listen, source })?;
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    if let Some(host) = url_host(&config.public_url)
        && !hosts.contains(&host)
    {
        hosts.push(host);
    }
    let tls = ca.server_config(&hosts)?;
    let backends = ServiceBackends::default();
    let url = if config.public_url.is_empty() {
        format!("https://localhost:{}", addr.port())
    } else {
        config.public_url.clone()
    };
    let api = Arc::new(Api {
        cluster: Arc::clone(&cluster),
        issuer,
        admin_token: admin_token.clone(),
        backends: backends.clone(),
        server_address: format!("localhost:{}", addr.port()),
        garden,
    });
    // A handler that panics answers the API server's 500 Status; the server serves on.
    let mut app =
        api::router(api).layer(fundament_telemetry::catch_panics(fundament_telemetry::PanicAnswer(|| {
            ("application/json", ApiError::internal_error().body())
        })));
    if let Some(switch) = &config.faults {
        app = fundament_dev_faults::layer(app, switch.clone(), fault_status);
    }
    let tasks = vec![controller::spawn(Arc::clone(&cluster), definitions.clone())];
    if let Some(path) = &config.state_file {
        // A snapshot now, so the state file exists from the first start and
        // the journal starts empty. If it cannot be written the cluster still
        // serves reads, and each write says why it is refused.
        if let Err(error) = cluster.keep_in(Arc::new(journal::Journal::new(path))) {
            tracing::error!(%error, "the state file cannot be written: writes are refused until it can");
        }
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let stopping = async move {
        let mut stopped = stopped;
        let _ = stopped.wait_for(|s| *s).await;
    };
    let serving = tokio::spawn(crate::serve::serve_tls(listener, tls, app, stopping, config.faults.clone()));
    tracing::info!(%addr, url = %url, state_dir = %config.state_dir.display(), "embedded cluster listening");
    Ok(Running {
        cluster,
        addr,
        url,
        ca_pem: ca.cert_pem.clone(),
        admin_token,
        backends,
        definitions,
        ca,
        tasks,
        serving: Some(serving),
        stop,
        save_at_stop: true,
    })
}

/// A faulted request's answer: the API server's Status, with `retryAfterSeconds` as a 429 or a
/// 503 from a real one carries it.
fn fault_status(refusal: &fundament_dev_faults::Refusal) -> axum::response::Response {
    use axum::response::IntoResponse;
    let details = fundament_kube_core::StatusDetails {
        retry_after_seconds: refusal.retry_after.unwrap_or_default(),
        ..Default::default()
    };
    ApiError::for_code(refusal.status.as_u16(), refusal.message.clone()).with_details(details).into_response()
}

fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host_port = rest.split('/').next()?;
    let host = if let Some(stripped) = host_port.strip_prefix('[') {
        stripped.split(']').next()?
    } else {
        host_port.rsplit_once(':').map_or(host_port, |(h, _)| h)
    };
    (!host.is_empty()).then(|| host.to_string())
}

/// Reads the kubeconfig pieces from a state directory (for `fundament cluster kubeconfig`).
pub fn kubeconfig_from_state(
    state_dir: &Path,
    url: &str,
    admin_token: Option<&str>,
) -> Result<String, StartError> {
    let ca = crate::tls::read_optional(&state_dir.join("ca.crt"))?.ok_or_else(|| {
        crate::tls::TlsError::Corrupt {
            path: state_dir.join("ca.crt"),
            what: "CA certificate",
            detail: "not found: start the cluster first (`fundament dev` or `fundament cluster`)".into(),
        }
    })?;
    let token = match admin_token {
        Some(t) => t.to_string(),
        None => crate::tls::read_optional(&state_dir.join("admin-token"))?
            .map(|t| t.trim().to_string())
            .ok_or_else(|| crate::tls::TlsError::Corrupt {
                path: state_dir.join("admin-token"),
                what: "admin token",
                detail: "not found: start the cluster first".into(),
            })?,
    };
    Ok(kubeconfig::admin(url, &ca, &token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_is_a_bind_error_with_the_address_and_the_cause() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = ClusterConfig {
            listen: addr,
            public_url: String::new(),
            state_dir: dir.path().join("state"),
            state_file: None,
            admin_token: None,
            fixtures_dir: dir.path().join("fixtures"),
            plugin_dirs: Vec::new(),
            development_plugin_dirs: Vec::new(),
            organization: "acme-corp".into(),
            faults: None,
        };
        let Err(error) = start(config).await else { panic!("started on a taken port") };
        // The address and the OS's cause, for the server to word (server/src/cluster.rs); no
        // flag of the server's, which this crate does not know.
        assert!(!error.to_string().contains("--cluster-listen"), "{error}");
        let StartError::Bind { addr: bound, source } = error else { panic!("{error}") };
        assert_eq!((bound, source.kind()), (addr, std::io::ErrorKind::AddrInUse));
    }
}
