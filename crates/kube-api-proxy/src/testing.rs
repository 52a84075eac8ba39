//! Test and benchmark support (feature `test-support`): the embedded cluster,
//! seeded with the repository's fixtures and reached as the gateway reaches a
//! cluster, and the fixtures the gateway's checks read. For this workspace's
//! tests and benchmarks (the gateway's and plugin-proxy's): each function
//! panics when a fixture does not load or the cluster does not start.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fundament_authn_client::{Credentials, Keys, RevokedSessions};
use fundament_fga::TupleStore;
use fundament_plugin_types::PluginInstallation;
use fundament_tokens::{PluginClaims, Signer, Verifier};
use serde_json::Value;

use crate::clusters::Clusters;
use crate::upstream::{Upstream, UpstreamConfig};

/// The id the gateway knows the seeded cluster by (the FGA fixtures' production cluster).
pub const CLUSTER_ID: &str = "019b4000-2000-7000-8000-000000000001";

/// The repository's root, where `fixtures/` and `plugins/` are.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
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

/// The embedded cluster with the repository's fixtures, its state in a
/// temporary directory that goes with it.
pub struct SeededCluster {
    pub running: fundament_cluster::Running,
    dir: tempfile::TempDir,
}

impl SeededCluster {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = fundament_cluster::ClusterConfig::seeded(dir.path().join("cluster"), &repo())
            .expect("the cluster fixtures load");
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

    /// The PluginInstallation `name` as stored.
    pub fn installation_object(&self, name: &str) -> Value {
        let cluster = &self.running.cluster;
        let registry = cluster.registry();
        let rt = registry.get("plugins.fundament.io", "v1", "plugininstallations").expect("the plugin CRDs");
        cluster.get(rt, "", name).expect("the installation exists")
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
        let installation = self.installation(name);
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
}
