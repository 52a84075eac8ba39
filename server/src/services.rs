//! Wiring of authn, organization-api and kube-api-proxy: settings and the
//! embedded cluster's state to the services' libraries.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use fundament_authn::{AuthnConfig, AuthnState, Installation, InstallationLookup, LookupError, User};
use fundament_authn_client::Credentials;
use fundament_directory::{Directory, FileDirectory};
use fundament_fga::CanView;
use fundament_kube_api_proxy::audit::{AuditSink, FileAudit, LogAudit, TeeAudit};
use fundament_kube_api_proxy::audit_store::{AuditStore, Retention};
use fundament_kube_api_proxy::clusters::{ClusterError, Clusters};
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy::garden::Garden;
use fundament_kube_api_proxy::upstream::{ServerVerification, Upstream, UpstreamConfig, load_kubeconfig};
use fundament_kube_api_proxy::{DefinitionSource, Gateway, PublishedDefinition};
use fundament_organization_api::Catalog;
use fundament_plugin_types::PluginInstallation;
use fundament_settings::{Key, Mode, Settings, SettingsError};
use fundament_shared_store::SharedStore;
use fundament_tokens::Signer;
use futures::future::BoxFuture;

/// Why a service could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot load the plugin catalog: {0}")]
    Catalog(#[from] fundament_organization_api::CatalogError),
    #[error("plugin {plugin} from {second} is already loaded from {first}")]
    DuplicatePlugin { plugin: String, first: String, second: String },
    #[error("cannot set up can_view: {0}")]
    Fga(#[from] fundament_fga::FgaError),
    #[error("authn keys: {0}")]
    Keys(#[from] fundament_tokens::KeyError),
    #[error("the cluster: {0}")]
    Upstream(#[from] fundament_kube_api_proxy::upstream::UpstreamError),
    #[error("mode {0} needs a kubeconfig")]
    NoKubeconfig(Mode),
    /// A setting the mode or another setting makes necessary is not set (worded by the
    /// settings crate, as those it finds itself).
    #[error(transparent)]
    Required(#[from] fundament_settings::SettingsError),
    #[error("the directory lists no organization with a cluster, so there is no cluster to serve")]
    NoCluster,
    #[error("{0}; set by --audit-log or FUNDAMENT_AUDIT_LOG")]
    AuditLog(#[from] fundament_kube_api_proxy::audit::AuditFileError),
    #[error(transparent)]
    Revocations(#[from] fundament_authn::RevocationsError),
    #[error(transparent)]
    FrameKey(#[from] fundament_plugin_proxy::FrameKeyError),
    #[error("{0} (set by --shared-store or FUNDAMENT_SHARED_STORE)")]
    SharedStore(#[from] fundament_shared_store::StoreError),
    #[error(
        "plugin-proxy URL {0} cannot give each installation an origin of its own: it needs a host name, not an IP address (set --plugin-proxy-url or FUNDAMENT_PLUGIN_PROXY_URL)"
    )]
    PluginHost(String),
    #[error("{0}; set by --directory or FUNDAMENT_DIRECTORY")]
    Directory(#[from] fundament_directory::DirectoryError),
    #[error(
        "the OIDC client secret file {path} {problem} (set --oidc-client-secret-file or FUNDAMENT_OIDC_CLIENT_SECRET_FILE)"
    )]
    OidcSecret { path: String, problem: String },
    #[error(
        "cannot read the embedded cluster's {what} from {path}: start the cluster first (`fundament dev` or `fundament cluster`)"
    )]
    ClusterState { what: &'static str, path: String },
}

/// `checker` behind mock mode's OpenFGA switch (`/dev/faults/openfga`) when there is a
/// switchboard (`fundament dev` in mock mode): every service's checker goes through the one
/// switch, so flipping it fails authn's mint, both gateways and the console's cluster list
/// alike. The switch bounds a slow check with the real client's timeout.
pub fn with_faults(
    checker: Arc<dyn CanView>,
    faults: Option<&fundament_dev_faults::Switchboard>,
) -> Arc<dyn CanView> {
    match faults {
        Some(board) => Arc::new(fundament_dev_faults::FaultyCanView::new(
            checker,
            board.switch(fundament_dev_faults::Service::OpenFga),
        )),
        None => checker,
    }
}

/// `can_view`: a real OpenFGA server when one is configured, else the embedded tuple store.
pub fn fga(settings: &Settings) -> Result<Arc<dyn CanView>, ServiceError> {
    let f = &settings.fga;
    Ok(match &f.openfga_url {
        Some(url) => Arc::new(fundament_fga::OpenFgaClient::new(
            url.as_str(),
            f.store_id.as_deref().unwrap_or_default(),
            f.model_id.clone(),
        )?),
        None => Arc::new(fundament_fga::TupleStore::from_yaml_file(&f.tuples)?),
    })
}

/// The published definitions: every plugin folder, plus development folders (`--plugin`).
pub fn catalog(settings: &Settings) -> Result<Arc<Catalog>, ServiceError> {
    let mut defs = Catalog::load(&settings.cluster.plugins_dir)?.all().to_vec();
    for dir in &settings.cluster.development_plugins {
        let def = fundament_organization_api::read_definition(dir)?;
        if let Some(first) = defs.iter().find(|d| d.name == def.name && d.version == def.version) {
            return Err(ServiceError::DuplicatePlugin {
                plugin: format!("{}@{}", def.name, def.version),
                first: first.dir.display().to_string(),
                second: dir.display().to_string(),
            });
        }
        defs.push(def);
    }
    Ok(Arc::new(Catalog::from_definitions(defs)))
}

/// authn's signing keys: from `--signing-keys-dir` (shared by every replica), else kept in
/// `<state-dir>/authn`.
pub fn signer(settings: &Settings) -> Result<Signer, ServiceError> {
    Ok(match &settings.scale.signing_keys_dir {
        Some(dir) => Signer::from_keys_dir(dir)?,
        None => Signer::load_or_create(&crate::state_dir(settings).join("authn"))?,
    })
}

/// The signer authn serves with; a keys directory is followed, so a rotation there takes
/// effect without a restart.
pub fn live_signer(settings: &Settings) -> Result<Arc<RwLock<Signer>>, ServiceError> {
    let signer = Arc::new(RwLock::new(signer(settings)?));
    if let Some(dir) = &settings.scale.signing_keys_dir {
        tracing::info!(dir = %dir.display(), "authn: signing keys from the keys directory, followed");
        fundament_authn::keys_dir::follow(dir.clone(), Arc::clone(&signer), fundament_authn::keys_dir::POLL);
    }
    Ok(signer)
}

/// What the replicas share (`--shared-store`): Redis, or this process's memory.
pub fn shared_store(settings: &Settings) -> Result<Arc<dyn SharedStore>, ServiceError> {
    let store = fundament_shared_store::from_setting(settings.scale.shared_store.as_deref())?;
    tracing::info!(store = %store.describe(), "shared store");
    Ok(store)
}

/// How kube-api-proxy and authn reach the embedded cluster: its URL, CA and admin token.
pub fn cluster_upstream(settings: &Settings) -> Result<UpstreamConfig, ServiceError> {
    let dir = crate::state_dir(settings).join("cluster");
    let read = |name: &str, what: &'static str| {
        std::fs::read_to_string(dir.join(name))
            .map(|s| s.trim().to_string())
            .map_err(|_| ServiceError::ClusterState { what, path: dir.join(name).display().to_string() })
    };
    let admin_token = match &settings.cluster.admin_token {
        Some(t) => t.clone(),
        None => read("admin-token", "admin token")?,
    };
    Ok(UpstreamConfig {
        url: settings.urls.cluster.as_str().trim_end_matches('/').to_string(),
        ca_pem: read("ca.crt", "CA certificate")? + "\n",
        admin_token,
    })
}

/// How the stack reaches Kubernetes, per mode.
#[derive(Debug, Clone)]
pub enum ClusterAccess {
    /// Mock: the embedded cluster.
    Embedded(UpstreamConfig),
    /// Sandbox: one cluster from a kubeconfig.
    Kubeconfig(PathBuf),
    /// Real: the Shoots of a Gardener, from the garden's kubeconfig.
    Garden(PathBuf),
}

impl ClusterAccess {
    /// The access the settings' mode describes; mock mode reads the embedded cluster's state.
    pub fn of(settings: &Settings) -> Result<Self, ServiceError> {
        let required = |path: &Option<PathBuf>| path.clone().ok_or(ServiceError::NoKubeconfig(settings.mode));
        Ok(match settings.mode {
            Mode::Mock => ClusterAccess::Embedded(cluster_upstream(settings)?),
            Mode::Sandbox => ClusterAccess::Kubeconfig(required(&settings.kubeconfig)?),
            Mode::Real => ClusterAccess::Garden(required(&settings.gardener_kubeconfig)?),
        })
    }
}

/// Whether kubeconfigs may skip verifying their server (`--allow-insecure-kubeconfig`).
pub fn verification(settings: &Settings) -> ServerVerification {
    if settings.allow_insecure_kubeconfig {
        ServerVerification::SkipAllowed
    } else {
        ServerVerification::Required
    }
}

/// The directory every service reads: the file of `--directory` (reloaded on change), else
/// mock mode's seed. Outside mock mode there is no default: a production console must not
/// come up with the demo's users.
pub fn directory(settings: &Settings) -> Result<Arc<dyn Directory>, ServiceError> {
    match &settings.directory {
        Some(path) => Ok(file_directory(path)?),
        None if settings.mode == Mode::Mock => Ok(Arc::new(fundament_directory::seed())),
        None => Err(SettingsError::required(
            Key::Directory,
            format!("in {} mode", settings.mode),
            "the directory of organizations, projects, clusters and users (fixtures/directory.yaml shows the format)",
        )
        .into()),
    }
}

/// One directory per file in this process, loaded once and reloaded by one task: `fundament
/// dev` runs every service, and each asked for its own, so one bad edit was refused (and
/// logged) once per service, and every ask left a reload task behind.
fn file_directory(path: &Path) -> Result<Arc<FileDirectory>, fundament_directory::DirectoryError> {
    static LOADED: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<PathBuf, Arc<FileDirectory>>>,
    > = std::sync::OnceLock::new();
    let mut loaded =
        LOADED.get_or_init(Default::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(directory) = loaded.get(path) {
        return Ok(Arc::clone(directory));
    }
    let directory = FileDirectory::load(path)?;
    directory.spawn_reload();
    loaded.insert(path.to_owned(), Arc::clone(&directory));
    Ok(directory)
}

/// The organization of a stack with one cluster (mock and sandbox mode): the directory's
/// first organization that has a cluster, and that cluster (its default one).
pub fn single_cluster(settings: &Settings) -> Result<(String, String), ServiceError> {
    let data = directory(settings)?.current();
    data.organizations
        .iter()
        .find_map(|o| data.default_cluster(&o.id).map(|c| (o.id.clone(), c.id.clone())))
        .ok_or(ServiceError::NoCluster)
}

/// The clusters behind the gateway: mock and sandbox mode have one, the directory's default
/// cluster; real mode has every Shoot of the garden. `service` is who reaches them, named in
/// what is logged about the garden: each service warns for itself, and `fundament dev` runs
/// three of them in one process.
pub async fn clusters(
    settings: &Settings,
    access: &ClusterAccess,
    service: &'static str,
) -> Result<Clusters, ServiceError> {
    let verification = verification(settings);
    Ok(match access {
        ClusterAccess::Embedded(config) => {
            Clusters::one(&single_cluster(settings)?.1, Upstream::new(config)?)
        }
        ClusterAccess::Kubeconfig(path) => Clusters::one(
            &single_cluster(settings)?.1,
            Upstream::from_kube_config(load_kubeconfig(path).await?, verification)?,
        ),
        ClusterAccess::Garden(path) => {
            let garden = Upstream::from_kube_config(load_kubeconfig(path).await?, verification)?;
            let namespaces = &settings.garden_namespaces;
            if namespaces.is_empty() {
                tracing::warn!(
                    service,
                    "clusters are found as Shoots in any namespace the garden's kubeconfig can list: whoever may label a Shoot there can claim a cluster id (--garden-namespaces restricts it)"
                );
            } else {
                tracing::info!(service, namespaces = %namespaces.join(","), "clusters are found as Shoots in these garden namespaces only");
            }
            let garden = Arc::new(Garden::new(garden, verification).in_namespaces(namespaces.clone()));
            // In the background: the service is ready without it (README "Readiness": the
            // garden never gates, or a garden outage would take every replica out at once).
            tokio::spawn(check_garden(Arc::clone(&garden), path.clone(), service));
            Clusters::Garden(garden)
        }
    })
}

/// Real mode, at start: one call to the garden, so that an operator learns at once from the
/// log (and `/readyz?verbose`'s `garden` line) that the clusters cannot be reached, instead of
/// from the first user's "cluster unavailable". The service serves either way.
async fn check_garden(garden: Arc<Garden>, kubeconfig: PathBuf, service: &'static str) {
    match garden.garden().check_reachable().await {
        Ok(()) => tracing::info!(service, kubeconfig = %kubeconfig.display(), "the garden answers"),
        Err(error) => tracing::warn!(
            service,
            kubeconfig = %kubeconfig.display(),
            %error,
            "the garden cannot be reached: every cluster is unavailable until it can (serving meanwhile; /readyz?verbose shows the garden's state)"
        ),
    }
}

/// organization-api's catalog, as the gateway reads allowedResources from it.
pub struct CatalogDefinitions(pub Arc<Catalog>);

impl DefinitionSource for CatalogDefinitions {
    fn definition(&self, plugin_name: &str, plugin_version: &str) -> Option<PublishedDefinition> {
        let d = self.0.get(plugin_name, plugin_version)?;
        Some(PublishedDefinition { hash: d.hash.clone(), allowed: d.allowed_resources().to_vec() })
    }
}

/// Installations found through the cluster API (authn's lookup for MintPluginToken).
pub struct ClusterInstallations(pub Clusters);

impl InstallationLookup for ClusterInstallations {
    fn lookup<'a>(
        &'a self,
        cluster_id: &'a str,
        installation_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Installation>, LookupError>> {
        Box::pin(async move {
            let up = self.0.get(cluster_id).await.map_err(|e| match e {
                ClusterError::Unknown(_) | ClusterError::NoShoot(_) => {
                    LookupError::UnknownCluster(cluster_id.to_string())
                }
                other => LookupError::Other(other.to_string()),
            })?;
            let items = up.installations().await.map_err(|e| LookupError::Other(e.to_string()))?;
            // An object that is not a PluginInstallation (no definitionRef) cannot be minted for: skipped.
            Ok(items
                .iter()
                .filter_map(|i| PluginInstallation::from_value(i).ok())
                .find(|i| i.metadata.uid == installation_id)
                .map(Installation::from))
        })
    }

    fn dependencies(&self) -> Vec<(String, Arc<fundament_health::DependencyHealth>)> {
        self.0.dependencies()
    }
}

/// The users `DevSignIn` knows: the directory's.
pub fn dev_users(directory: &dyn Directory) -> Vec<User> {
    directory
        .current()
        .users
        .iter()
        .map(|u| User { id: u.id.clone(), email: u.email.clone(), name: u.name.clone() })
        .collect()
}

/// Whether the sign-in page offers the seed users: always in mock mode, and in the other
/// modes of `fundament dev` only until an identity provider is configured.
pub fn dev_sign_in(settings: &Settings) -> bool {
    settings.mode == Mode::Mock || settings.oidc.is_none()
}

/// The OIDC client secret: the file's content without surrounding whitespace (a Secret
/// mounted from `kubectl create secret --from-file` often ends with a newline).
pub fn oidc_client_secret(path: &Path) -> Result<String, ServiceError> {
    let problem = |problem: String| ServiceError::OidcSecret { path: path.display().to_string(), problem };
    let text = std::fs::read_to_string(path).map_err(|e| problem(format!("cannot be read: {e}")))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(problem("is empty (or only whitespace)".to_owned()));
    }
    Ok(secret.to_owned())
}

/// authn's OIDC sign-in, when an issuer is configured.
pub fn oidc(
    settings: &Settings,
    directory: Arc<dyn fundament_directory::Directory>,
) -> Result<Option<Arc<fundament_authn::oidc::Oidc>>, ServiceError> {
    let Some(o) = &settings.oidc else { return Ok(None) };
    let console = settings.urls.console.as_str().trim_end_matches('/');
    let config = fundament_authn::oidc::OidcConfig {
        issuer: o.issuer.clone(),
        client_id: o.client_id.clone(),
        client_secret: oidc_client_secret(o.client_secret_file.as_deref().ok_or_else(|| {
            SettingsError::required(
                Key::OidcClientSecretFile,
                format!("for authn with --{}", Key::OidcIssuer.flag()),
                "the file holding the OIDC client secret",
            )
        })?)?,
        provider_name: o.provider_name.clone(),
        scopes: o.scopes.clone(),
        claims: fundament_authn::oidc::identity::ClaimNames {
            email: o.email_claim.clone(),
            name: o.name_claim.clone(),
            groups: o.groups_claim.clone(),
        },
        redirect_uri: format!("{console}{}", app::oidc_route::CALLBACK_PATH),
        post_logout_redirect_uri: format!("{console}/sign-in"),
    };
    tracing::info!(issuer = %o.issuer, client_id = %o.client_id, "OpenID Connect sign-in on");
    Ok(Some(Arc::new(fundament_authn::oidc::Oidc::new(config, directory))))
}

pub fn authn_state(
    settings: &Settings,
    signer: Arc<RwLock<Signer>>,
    fga: Arc<dyn CanView>,
    clusters: Clusters,
    store: Arc<dyn SharedStore>,
    dev_sign_in: bool,
) -> Result<Arc<AuthnState>, ServiceError> {
    // Shared: every replica follows the store. In-process: this replica's file, as before.
    let revocations = if store.is_shared() {
        fundament_authn::Revocations::shared(store)
    } else {
        Arc::new(fundament_authn::Revocations::load(
            &crate::state_dir(settings).join("authn").join("revoked-sessions.json"),
        )?)
    };
    Ok(Arc::new(AuthnState {
        signer,
        fga,
        fga_health: Default::default(),
        installations: Arc::new(ClusterInstallations(clusters)),
        revocations,
        config: AuthnConfig {
            dev_sign_in,
            // The fault switches break things on purpose: mock mode only, even where the seed
            // users may sign in (sandbox and real mode without a provider).
            fault_switches: settings.mode == Mode::Mock,
            users: if dev_sign_in { dev_users(&*directory(settings)?) } else { Vec::new() },
            dev_hosts: settings.urls.authn.host_str().map(str::to_owned).into_iter().collect(),
        },
        fail_mint_plugin_token: Default::default(),
        oidc: oidc(settings, directory(settings)?)?,
        mint_budget: Default::default(),
    }))
}

/// Each installation's origin, under plugin-proxy's URL.
pub fn plugin_origins(settings: &Settings) -> Result<fundament_plugin_origin::PluginOrigins, ServiceError> {
    let url = settings.urls.plugin_proxy.as_str();
    fundament_plugin_origin::PluginOrigins::from_base(url)
        .ok_or_else(|| ServiceError::PluginHost(url.to_owned()))
}

pub fn origins(settings: &Settings) -> Result<Origins, ServiceError> {
    Ok(Origins { plugins: plugin_origins(settings)? })
}

/// plugin-proxy's frame cookie key: `--frame-key-file` (shared by every replica), else kept in
/// `<state-dir>/plugin-proxy`.
pub fn frame_key(settings: &Settings) -> Result<fundament_plugin_proxy::FrameKey, ServiceError> {
    Ok(match &settings.scale.frame_key_file {
        Some(path) => fundament_plugin_proxy::FrameKey::from_file(path)?,
        None => fundament_plugin_proxy::FrameKey::load_or_create(
            &crate::state_dir(settings).join("plugin-proxy"),
        )?,
    })
}

/// authn's keys and revoked sessions, followed from authn.
pub fn credentials(settings: &Settings) -> Credentials {
    Credentials::from_authn(settings.urls.authn.as_str())
}

pub fn gateway(
    settings: &Settings,
    credentials: Credentials,
    fga: Arc<dyn CanView>,
    clusters: Clusters,
    catalog: Arc<Catalog>,
    store: Arc<dyn SharedStore>,
) -> Result<Arc<Gateway>, ServiceError> {
    Ok(Arc::new(Gateway {
        origins: origins(settings)?,
        credentials,
        fga,
        fga_health: Default::default(),
        clusters,
        definitions: Arc::new(CatalogDefinitions(catalog)),
        audit: audit_sink(settings, &store)?,
        watches: Arc::new(fundament_kube_api_proxy::limits::WatchLimits::new(store)),
        calls: Default::default(),
    }))
}

/// The log always; with `audit-log` set, the file too. The file is opened here, at start-up, so
/// a path that cannot be written stops the service instead of dropping the audit trail.
fn audit_sink(settings: &Settings, store: &Arc<dyn SharedStore>) -> Result<Arc<dyn AuditSink>, ServiceError> {
    let mut sinks: Vec<Arc<dyn AuditSink>> = vec![Arc::new(LogAudit), Arc::new(audit_store(settings, store))];
    if let Some(path) = &settings.audit_log {
        sinks.push(Arc::new(FileAudit::open(path)?));
        tracing::info!(path = %path.display(), "kube-api-proxy audit lines also go to the audit log file");
    }
    Ok(Arc::new(TeeAudit(sinks)))
}

/// The record the console's audit view reads. With a shared store (`--shared-store`), there,
/// so every replica's view shows every replica's calls. Else in the state directory, so it
/// survives a restart; in memory only (logged) when that directory cannot be written (a
/// read-only root file system without a volume for it), since the log and `--audit-log` keep
/// the audit trail.
fn audit_store(settings: &Settings, store: &Arc<dyn SharedStore>) -> AuditStore {
    let retention = Retention {
        entries: settings.audit_view.entries,
        age: std::time::Duration::from_secs(settings.audit_view.hours * 3600),
    };
    if store.is_shared() {
        tracing::info!(store = %store.describe(), "the audit view's record is in the shared store");
        return AuditStore::shared(Arc::clone(store), retention);
    }
    let path = crate::state_dir(settings).join("kube-api-proxy").join("plugin-calls.jsonl");
    match AuditStore::open(&path, retention) {
        Ok(store) => store,
        Err(error) => {
            tracing::warn!(%error, "the audit view keeps its record in memory only");
            AuditStore::in_memory(retention)
        }
    }
}

/// `fundament plugin lint DIR`: findings, one per line; whether there were errors.
pub fn lint(dir: &Path) -> (String, bool) {
    let findings = fundament_organization_api::lint::lint_dir(dir);
    let text: String = findings.iter().map(|f| format!("{f}\n")).collect();
    (text, fundament_organization_api::lint::has_errors(&findings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fundament_kube_api_proxy::audit::AuditLine;

    /// Settings with the audit log at `path`, and the audit view's record in `state_dir`: a
    /// directory of the test's own, not the user's state directory (and not beside the log
    /// file, which must not be created for it).
    fn settings_with_audit_log(path: &Path, state_dir: &Path) -> Settings {
        let mut settings = fundament_settings::resolve(&[]).expect("defaults resolve");
        settings.audit_log = Some(path.to_path_buf());
        settings.state_dir = Some(state_dir.to_path_buf());
        settings
    }

    /// Outside mock mode a service alone has no directory unless told: the error says the
    /// setting is required and names each of its spellings.
    #[test]
    fn a_directory_is_required_outside_mock_mode() {
        let mut settings = fundament_settings::resolve(&[]).expect("defaults resolve");
        settings.mode = Mode::Real;
        let Err(error) = directory(&settings) else { panic!("real mode without --directory") };
        assert_eq!(
            error.to_string(),
            "--directory (FUNDAMENT_DIRECTORY, or stack.directory in the settings file) is required in real \
             mode and is not set: the directory of organizations, projects, clusters and users \
             (fixtures/directory.yaml shows the format)"
        );
    }

    /// Every service of one process reads the same directory of a file: one load, one reload
    /// task, one line per refused edit.
    #[tokio::test]
    async fn the_services_of_one_process_share_a_files_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("directory.yaml");
        // Read at run time: a test binary outlives the clone that built it (scripts/test).
        let manifest =
            std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it");
        let fixtures = std::path::PathBuf::from(manifest).join("../fixtures/directory.yaml");
        std::fs::copy(fixtures, &path).unwrap();
        let mut settings = fundament_settings::resolve(&[]).unwrap();
        settings.directory = Some(path);
        let [a, b] = [directory(&settings).unwrap(), directory(&settings).unwrap()];
        assert!(std::ptr::addr_eq(Arc::as_ptr(&a), Arc::as_ptr(&b)), "one directory");
    }

    /// Real mode with a garden nobody answers at: the service is set up at once (it does not
    /// wait for the garden), and one call at start logs a WARN naming the garden's server and
    /// fails the garden's `/readyz?verbose` line (not gating) instead of leaving it "no call yet".
    #[tokio::test]
    async fn an_unreachable_garden_is_logged_at_start_and_shown_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let server = format!("http://127.0.0.1:{}", closed.port());
        let kubeconfig = dir.path().join("garden.kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: g\nclusters:\n- name: g\n  cluster:\n    server: {server}\ncontexts:\n- name: g\n  context:\n    cluster: g\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n"
            ),
        )
        .unwrap();
        let mut settings = fundament_settings::resolve(&[]).expect("defaults resolve");
        settings.mode = Mode::Real;
        settings.gardener_kubeconfig = Some(kubeconfig);
        let logs = fundament_telemetry::CapturedLogs::default();
        let lines = logs.clone();
        let _log = tracing::subscriber::set_default(fundament_telemetry::subscriber(
            fundament_telemetry::LogFormat::Json,
            tracing_subscriber::EnvFilter::new("info"),
            move || lines.clone(),
        ));
        let access = ClusterAccess::of(&settings).unwrap();
        let clusters = clusters(&settings, &access, "kube-api-proxy").await.unwrap();
        assert!(clusters.configured(), "ready without waiting for the garden");
        let garden = || clusters.dependencies().into_iter().find(|(name, _)| name == "garden").unwrap().1;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !matches!(garden().observed(), fundament_health::Observed::Failing { .. }) {
            assert!(
                std::time::Instant::now() < deadline,
                "the garden was never called: {:?}",
                garden().observed()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // The WARN is written after the failure is recorded: give it its moment.
        let warned = || {
            logs.text()
                .lines()
                .any(|l| l.contains("\"level\":\"WARN\"") && l.contains("the garden cannot be reached"))
        };
        while !warned() {
            assert!(std::time::Instant::now() < deadline, "no WARN: {}", logs.text());
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let text = logs.text();
        let line = text.lines().find(|l| l.contains("the garden cannot be reached")).unwrap();
        assert!(line.contains(&server), "names the garden's server: {line}");
        assert!(line.contains(r#""service":"kube-api-proxy""#), "names the service that warns: {line}");
    }

    /// Mock mode's one OpenFGA switch fails the checks of every checker put behind it, and
    /// without a switchboard (sandbox, real mode, a service alone) the checker is left as it is.
    #[tokio::test]
    async fn with_faults_puts_every_checker_behind_the_one_openfga_switch() {
        use fundament_dev_faults::{Fault, Service, Switchboard};
        let board = Switchboard::default();
        let seed = || -> Arc<dyn CanView> {
            let alice = fundament_fga::Tuple {
                user: "user:alice".into(),
                relation: "viewer".into(),
                object: "cluster:c".into(),
            };
            Arc::new(fundament_fga::TupleStore::from_tuples(vec![alice]))
        };
        let (first, second) = (with_faults(seed(), Some(&board)), with_faults(seed(), Some(&board)));
        let alone = with_faults(seed(), None);
        for checker in [&first, &second, &alone] {
            assert!(checker.can_view("alice", "c").await.unwrap());
        }
        board.switch(Service::OpenFga).set(Fault::Status { status: 500 });
        for checker in [&first, &second] {
            let error = checker.can_view("alice", "c").await.unwrap_err();
            assert!(matches!(error, fundament_fga::FgaError::Status { .. }), "{error}");
        }
        assert!(alone.can_view("alice", "c").await.unwrap(), "no switchboard, no switch");
        board.switch(Service::OpenFga).set(Fault::None);
        assert!(first.can_view("alice", "c").await.unwrap());
    }

    #[test]
    fn the_oidc_client_secret_file_must_hold_a_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, "  s3cret\n").unwrap();
        assert_eq!(oidc_client_secret(&path).unwrap(), "s3cret");
        std::fs::write(&path, " \n\t").unwrap();
        let err = oidc_client_secret(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "the OIDC client secret file {} is empty (or only whitespace) (set --oidc-client-secret-file or FUNDAMENT_OIDC_CLIENT_SECRET_FILE)",
                path.display()
            )
        );
        let missing = dir.path().join("missing");
        let err = oidc_client_secret(&missing).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("the OIDC client secret file {} cannot be read: ", missing.display())),
            "{err}"
        );
    }

    /// An IP address as plugin-proxy's URL stops start-up naming the setting, in every form the
    /// URL parser reads as one (it normalises them all to a dotted quad).
    #[test]
    fn an_ip_address_as_the_plugin_proxy_url_stops_start_up_naming_the_setting() {
        let mut settings = fundament_settings::resolve(&[]).unwrap();
        for ip in ["http://127.0.0.1:46082", "http://2130706433", "http://127.1", "http://[::1]:8082"] {
            settings.urls.plugin_proxy = url::Url::parse(ip).unwrap();
            let message = plugin_origins(&settings).unwrap_err().to_string();
            assert!(message.contains("needs a host name, not an IP address"), "{ip}: {message}");
            assert!(message.contains("--plugin-proxy-url or FUNDAMENT_PLUGIN_PROXY_URL"), "{ip}: {message}");
        }
        settings.urls.plugin_proxy = url::Url::parse("http://localhost:46082").unwrap();
        assert!(plugin_origins(&settings).is_ok());
    }

    #[test]
    fn dev_sign_in_is_offered_in_mock_mode_and_elsewhere_only_without_a_provider() {
        let mut settings = fundament_settings::resolve(&[]).unwrap();
        assert!(dev_sign_in(&settings));
        settings.mode = Mode::Sandbox;
        assert!(dev_sign_in(&settings), "no provider: the seed users, as before");
        settings.oidc = Some(fundament_settings::OidcSettings {
            issuer: "https://id.example.com".into(),
            client_id: "c".into(),
            client_secret_file: Some("s".into()),
            provider_name: "Example".into(),
            scopes: vec!["openid".into()],
            email_claim: "email".into(),
            name_claim: "name".into(),
            groups_claim: "groups".into(),
        });
        assert!(!dev_sign_in(&settings), "a provider in sandbox or real mode: OIDC only");
        settings.mode = Mode::Mock;
        assert!(dev_sign_in(&settings), "mock mode offers both");
    }

    #[test]
    fn the_audit_log_setting_adds_the_file_to_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let sink =
            audit_sink(&settings_with_audit_log(&path, &dir.path().join("state")), &in_process()).unwrap();
        assert!(path.is_file(), "created at start-up, before any request");
        sink.record(&AuditLine { audit: "plugin_request", user: "alice".into(), ..Default::default() });
        let text = std::fs::read_to_string(&path).unwrap();
        let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!((line["audit"].as_str(), line["user"].as_str()), (Some("plugin_request"), Some("alice")));
    }

    #[test]
    fn an_audit_log_in_a_missing_directory_stops_start_up_naming_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope").join("audit.jsonl");
        let err = audit_sink(&settings_with_audit_log(&path, &dir.path().join("state")), &in_process())
            .err()
            .expect("no directory");
        let message = err.to_string();
        assert!(matches!(err, ServiceError::AuditLog(_)), "{message}");
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.ends_with("; set by --audit-log or FUNDAMENT_AUDIT_LOG"), "{message}");
        let mut unset = fundament_settings::resolve(&[]).unwrap();
        unset.state_dir = Some(dir.path().to_path_buf());
        assert!(audit_sink(&unset, &in_process()).is_ok(), "unset: the log and the audit view only");
    }

    fn in_process() -> Arc<dyn SharedStore> {
        Arc::new(fundament_shared_store::InProcess::new())
    }

    #[tokio::test]
    async fn with_a_shared_store_the_audit_view_reads_every_replicas_calls_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = fundament_settings::resolve(&[]).unwrap();
        settings.state_dir = Some(dir.path().to_path_buf());
        let local = audit_sink(&settings, &in_process()).unwrap();
        assert_eq!(local.store().unwrap().describe(), "this process");
        let shared: Arc<dyn SharedStore> = Arc::new(fundament_shared_store::testing::Unreachable);
        let sink = audit_sink(&settings, &shared).unwrap();
        assert_eq!(sink.store().unwrap().describe(), "the shared store redis://down");
    }
}
