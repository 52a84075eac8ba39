#![forbid(unsafe_code)]

//! Test and benchmark support for the gateway: the embedded cluster,
//! seeded with the repository's fixtures and reached as the gateway reaches a
//! cluster (its admin token, or a kubeconfig file of each credential kind), the
//! fixtures the gateway's checks read, and a gateway served on a loopback port.
//! For this workspace's tests and benchmarks (the gateway's and plugin-proxy's):
//! each function panics when a fixture does not load or the cluster does not start.
//!
//! A crate of its own rather than a feature of kube-api-proxy: a feature turned on by a
//! dev-dependency is on in every build of the test run, so the release binary's build, which
//! must not have it, compiled kube-api-proxy and everything above it (plugin-proxy, server) a
//! second time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use fundament_authn_client::{Credentials, Keys, RevokedSessions};
use fundament_cluster::Running;
use fundament_fga::{CanView, Tuple, TupleStore};
use fundament_plugin_types::PluginInstallation;
use fundament_tokens::{PluginClaims, Signer, Verifier};
use serde_json::Value;

use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::clusters::Clusters;
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy::upstream::{Upstream, UpstreamConfig};
use fundament_kube_api_proxy::{DefinitionSource, Gateway, PublishedDefinition};

/// The id the gateway knows the seeded cluster by (the FGA fixtures' production cluster).
pub const CLUSTER_ID: &str = "019b4000-2000-7000-8000-000000000001";

/// The repository's root, where `fixtures/` and `plugins/` are: the workspace (the directory with
/// `Cargo.lock`) around the running package. Found at run time, not compiled in: every clone
/// shares one target directory, so a test binary can outlive the clone that built it.
pub fn repo() -> PathBuf {
    let package = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
    );
    package
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .expect("the running package is inside the workspace")
        .to_path_buf()
}

/// `fixtures/fga/tuples.yaml`: who may view which cluster.
pub fn fga() -> Arc<TupleStore> {
    let tuples = repo().join("fixtures/fga/tuples.yaml");
    Arc::new(TupleStore::from_yaml_file(&tuples).expect("the FGA fixtures load"))
}

/// Credentials that trust `signer`'s keys, with `revoked` as the signed-out sessions.
pub fn credentials(signer: &Signer, revoked: &Arc<RevokedSessions>) -> Credentials {
    let verifier = Verifier::from_jwks(&signer.jwks()).expect("a signer's own JWKS verifies");
    Credentials { keys: Keys::fixed(verifier), revoked: Arc::clone(revoked) }
}

/// A can_view of exactly these `(user, cluster)` viewer grants (users and clusters the
/// fixtures do not know: a user without a ServiceAccount yet, a shoot's second cluster).
pub fn viewers(grants: &[(&str, &str)]) -> Arc<TupleStore> {
    let tuples = grants
        .iter()
        .map(|(user, cluster)| Tuple {
            user: format!("user:{user}"),
            relation: "viewer".into(),
            object: format!("cluster:{cluster}"),
        })
        .collect();
    Arc::new(TupleStore::from_tuples(tuples))
}

/// A UserToken of `user` for an hour, as authn signs it.
pub fn user_token(signer: &Signer, user: &str) -> String {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    signer.sign_user(user, &format!("{user}@acme-corp.com"), user, now, 3600)
}

/// The plugins' base URL of the dev stack (plugin pages' origins derive from it).
pub const PLUGINS_BASE: &str = "http://localhost:8082";

/// The definitions of the repository's plugin folders, as organization-api publishes them.
pub struct PluginFolders(HashMap<(String, String), PublishedDefinition>);

impl PluginFolders {
    pub fn load() -> Self {
        let dirs = fundament_cluster::fixtures::plugin_dirs(&repo().join("plugins")).expect("plugins/");
        let mut map = HashMap::new();
        for dir in dirs {
            let def = fundament_cluster::controller::read_definition(&dir).expect("a plugin definition");
            let docs = fundament_cluster::fixtures::documents(&dir.join("definition.yaml"))
                .expect("definition.yaml reads");
            let doc = docs.into_iter().next().expect("definition.yaml has a document");
            let allowed = fundament_plugin_types::PluginDefinition::from_value(&doc)
                .expect("a valid definition")
                .spec
                .allowed_resources;
            map.insert((def.name, def.version), PublishedDefinition { hash: def.hash, allowed });
        }
        Self(map)
    }
}

impl DefinitionSource for PluginFolders {
    fn definition(&self, name: &str, version: &str) -> Option<PublishedDefinition> {
        self.0.get(&(name.to_string(), version.to_string())).cloned()
    }
}

/// A gateway in front of `clusters` that trusts `signer`'s tokens (no session signed out),
/// asks `fga` for can_view, knows the plugin folders' definitions and audits into `audit`.
pub fn gateway(
    clusters: Clusters,
    fga: Arc<dyn CanView>,
    signer: &Signer,
    audit: Arc<MemoryAudit>,
) -> Gateway {
    let plugins = fundament_plugin_origin::PluginOrigins::from_base(PLUGINS_BASE).expect("a plugins base");
    Gateway {
        origins: Origins { plugins },
        credentials: credentials(signer, &RevokedSessions::none()),
        fga,
        fga_health: Default::default(),
        clusters,
        definitions: Arc::new(PluginFolders::load()),
        audit,
        watches: Default::default(),
        calls: Default::default(),
    }
}

/// Serves `gateway` over HTTP on a loopback port: its base URL.
pub async fn serve(gateway: Gateway) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("a bound port"));
    tokio::spawn(
        async move { axum::serve(listener, fundament_kube_api_proxy::router(Arc::new(gateway))).await },
    );
    url
}

/// How a kubeconfig file of [`SeededCluster::kubeconfig_file`] authenticates to the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// A client certificate of the cluster's CA in `system:masters` (as Gardener, kind or
    /// kubeadm hand out): the one an API server authenticates before any bearer token.
    ClientCertificate,
    /// The cluster's admin token.
    Token,
    /// An exec credential plugin: a shell script that prints an `ExecCredential` with the
    /// admin token.
    Exec,
}

/// The PluginInstallation `name` of `running` as stored.
pub fn installation_object(running: &Running, name: &str) -> Value {
    let cluster = &running.cluster;
    let registry = cluster.registry();
    let rt = registry.get("plugins.fundament.io", "v1", "plugininstallations").expect("the plugin CRDs");
    cluster.get(rt, "", name).expect("the installation exists")
}

/// The claims authn mints for `user` through the installation `name` of `running`: its
/// uid and the definition it pins, the cluster as given, `ttl` seconds from `now`.
pub fn plugin_claims(
    running: &Running,
    user: &str,
    cluster: &str,
    name: &str,
    session: &str,
    now: i64,
    ttl: i64,
) -> PluginClaims {
    let installation =
        PluginInstallation::from_value(&installation_object(running, name)).expect("a valid installation");
    let pinned = installation.definition_ref();
    Signer::plugin_claims(
        user,
        cluster,
        &installation.metadata.uid,
        name,
        &pinned.plugin_name,
        &pinned.plugin_version,
        &pinned.definition_hash,
        session,
        now,
        ttl,
    )
}

/// A PluginToken of `user` through the installation `name` of `running`, for 15 minutes.
pub fn plugin_token(signer: &Signer, running: &Running, user: &str, cluster: &str, name: &str) -> String {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    signer.sign_plugin(&plugin_claims(running, user, cluster, name, "session-1", now, 900))
}

/// The embedded cluster with the repository's fixtures, its state in a
/// temporary directory that goes with it.
pub struct SeededCluster {
    pub running: fundament_cluster::Running,
    dir: tempfile::TempDir,
}

impl SeededCluster {
    pub async fn start() -> Self {
        Self::start_configured(|_| {}).await
    }

    /// [`SeededCluster::start`] with its configuration changed by `change` first (a fault switch).
    pub async fn start_configured(change: impl FnOnce(&mut fundament_cluster::ClusterConfig)) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut config = fundament_cluster::ClusterConfig::seeded(dir.path().join("cluster"), &repo())
            .expect("the cluster fixtures load");
        change(&mut config);
        let running = fundament_cluster::start(config).await.expect("the seeded cluster starts");
        Self { running, dir }
    }

    /// A scratch directory beside the cluster's state, removed with it.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// How the gateway reaches the cluster, as its admin.
    pub fn upstream_config(&self) -> UpstreamConfig {
        UpstreamConfig {
            url: self.running.url.clone(),
            ca_pem: self.running.ca_pem.clone(),
            admin_token: self.running.admin_token.clone(),
        }
    }

    /// The clusters of a gateway (or plugin-proxy) that knows this one, as [`CLUSTER_ID`].
    pub fn clusters(&self) -> Clusters {
        Clusters::one(CLUSTER_ID, Upstream::new(&self.upstream_config()).expect("the cluster's CA is usable"))
    }

    /// A kubeconfig file for this cluster in [`SeededCluster::dir`], authenticating with
    /// `credential`, as sandbox mode reads one.
    pub fn kubeconfig_file(&self, credential: Credential) -> PathBuf {
        let running = &self.running;
        let (file, text) = match credential {
            Credential::ClientCertificate => {
                let valid_for = std::time::Duration::from_secs(3600);
                let cert = running
                    .issue_client_certificate("kubernetes-admin", &["system:masters"], valid_for)
                    .expect("the cluster's CA signs a client certificate");
                ("client-certificate.kubeconfig", running.client_certificate_kubeconfig(&cert, "sandbox"))
            }
            Credential::Token => ("token.kubeconfig", running.kubeconfig()),
            Credential::Exec => {
                let script = self.dir().join("credential-plugin.sh");
                let credential = serde_json::json!({
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "kind": "ExecCredential",
                    "status": {"token": running.admin_token},
                });
                // The admin token is hex: the JSON holds no single quote and is printed as it is.
                std::fs::write(&script, format!("#!/bin/sh\nprintf '%s' '{credential}'\n"))
                    .expect("the credential plugin is written");
                executable(&script);
                let ca = base64::engine::general_purpose::STANDARD.encode(&running.ca_pem);
                let text = format!(
                    "apiVersion: v1\nkind: Config\ncurrent-context: sandbox\nclusters:\n- name: sandbox\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\ncontexts:\n- name: sandbox\n  context:\n    cluster: sandbox\n    user: sandbox\nusers:\n- name: sandbox\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
                    running.url,
                    script.display()
                );
                ("exec.kubeconfig", text)
            }
        };
        let path = self.dir().join(file);
        std::fs::write(&path, text).expect("the kubeconfig is written");
        path
    }

    /// The PluginInstallation `name` as stored.
    pub fn installation_object(&self, name: &str) -> Value {
        installation_object(&self.running, name)
    }

    pub fn installation(&self, name: &str) -> PluginInstallation {
        PluginInstallation::from_value(&self.installation_object(name)).expect("a valid installation")
    }

    /// The claims authn mints for `user` through the installation `name`: its uid
    /// and the definition it pins, the cluster as given, `ttl` seconds from `now`.
    pub fn plugin_claims(
        &self,
        user: &str,
        cluster: &str,
        name: &str,
        session: &str,
        now: i64,
        ttl: i64,
    ) -> PluginClaims {
        plugin_claims(&self.running, user, cluster, name, session, now, ttl)
    }
}

/// Makes `path` executable by its owner (a credential plugin kube-rs runs).
fn executable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .expect("the script is made executable");
    }
    #[cfg(not(unix))]
    let _ = path;
}
