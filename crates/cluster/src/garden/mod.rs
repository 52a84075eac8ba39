//! A simulated Gardener: an embedded cluster that acts as a *garden* for
//! other embedded clusters, its *shoots*, started in the same process.
//!
//! [`start`] starts every shoot (a normal embedded cluster: own state
//! directory, own port, the usual fixtures), then the garden cluster, which
//! serves `core.gardener.cloud/v1beta1` `Shoot`s and `Project`s (as CRDs, see
//! `crds.yaml`) and holds one `Shoot` per shoot in the project namespace
//! `garden-<project>`: a realistic spec (provider, region,
//! `kubernetes.version` = the embedded cluster's), a healthy status (last
//! operation `Reconcile Succeeded 100%`, the four health conditions `True`,
//! the shoot's URL as the `external` advertised address) and the labels
//! `shoot.gardener.cloud/status: healthy` and `fundament.io/cluster-id`.
//!
//! As in Gardener, `POST …/namespaces/<ns>/shoots/<name>/adminkubeconfig`
//! with an `authentication.gardener.cloud/v1alpha1` `AdminKubeconfigRequest`
//! answers a kubeconfig for the shoot: its URL and CA, and a client
//! certificate of the shoot's CA in `system:masters` (the common name
//! `gardener.cloud:admin:<requester>`) that expires after
//! `spec.expirationSeconds` (default one hour, at least ten minutes, at most a
//! day). The garden's RBAC decides who may ask: verb `create` on
//! `shoots/adminkubeconfig` in `core.gardener.cloud`.
//!
//! The garden keeps no key of a shoot's CA outside the process: it holds a
//! handle that signs with it, as Gardener holds each shoot's client CA.

mod admin_kubeconfig;
mod shoot;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::authn::User;
use crate::cluster::{Cluster, WriteOptions};
use crate::resource::ResourceType;
use crate::start::{ClusterConfig, Running, StartError, start_serving};
use crate::tls::CertificateAuthority;

pub(crate) use admin_kubeconfig::ADMIN_KUBECONFIG;

/// The API group of shoots and projects.
pub const GROUP: &str = "core.gardener.cloud";
/// The label that names the Fundament cluster a shoot is.
pub const CLUSTER_ID_LABEL: &str = "fundament.io/cluster-id";
/// The label Gardener keeps a shoot's health in.
pub const STATUS_LABEL: &str = "shoot.gardener.cloud/status";

/// A garden and its shoots.
#[derive(Debug, Clone)]
pub struct GardenConfig {
    /// The garden's own cluster.
    pub cluster: ClusterConfig,
    pub shoots: Vec<ShootConfig>,
    /// The shortest lifetime an `AdminKubeconfigRequest` may ask for:
    /// Gardener's ten minutes unless a test needs certificates that expire
    /// while it waits.
    pub minimum_kubeconfig_expiration: Duration,
}

/// One shoot: its Shoot object's place and spec, and the cluster behind it.
#[derive(Debug, Clone)]
pub struct ShootConfig {
    /// The Gardener project; the Shoot lives in `garden-<project>`.
    pub project: String,
    pub name: String,
    /// The `fundament.io/cluster-id` label.
    pub cluster_id: uuid::Uuid,
    /// `spec.provider.type` (and the cloud profile's name), e.g. `gcp`.
    pub provider: String,
    pub region: String,
    pub cluster: ClusterConfig,
    /// The namespaces of each project on this shoot, as the platform provisions them: once
    /// the shoot runs, exactly these carry `fundament.io/project=<project>` (created when
    /// missing). `None` keeps the fixtures' labels.
    pub project_namespaces: Option<BTreeMap<String, Vec<String>>>,
}

/// The label that puts a namespace in a project (the console lists a project's objects by it).
pub const PROJECT_LABEL: &str = "fundament.io/project";

impl GardenConfig {
    /// Gardener's minimum for `spec.expirationSeconds`.
    pub const MINIMUM_KUBECONFIG_EXPIRATION: Duration = Duration::from_secs(600);

    pub fn new(cluster: ClusterConfig, shoots: Vec<ShootConfig>) -> Self {
        Self { cluster, shoots, minimum_kubeconfig_expiration: Self::MINIMUM_KUBECONFIG_EXPIRATION }
    }

    /// A garden on a free loopback port with state in `state_dir/garden`,
    /// seeded from a checkout's `fixtures/cluster` (no plugins: a garden runs
    /// none), and `shoots`.
    pub fn seeded(state_dir: &Path, repo: &Path, shoots: Vec<ShootConfig>) -> Result<Self, StartError> {
        let mut cluster = ClusterConfig::seeded(state_dir.join("garden"), repo)?;
        cluster.plugin_dirs = Vec::new();
        Ok(Self::new(cluster, shoots))
    }
}

impl ShootConfig {
    /// A shoot on GCP in `europe-west1` whose cluster is seeded like the one of
    /// `fundament dev`, with state in `state_dir/shoots/<project>--<name>`.
    pub fn seeded(
        state_dir: &Path,
        repo: &Path,
        project: &str,
        name: &str,
        cluster_id: uuid::Uuid,
    ) -> Result<Self, StartError> {
        let dir: PathBuf = state_dir.join("shoots").join(format!("{project}--{name}"));
        Ok(Self {
            project: project.into(),
            name: name.into(),
            cluster_id,
            provider: "gcp".into(),
            region: "europe-west1".into(),
            cluster: ClusterConfig::seeded(dir, repo)?,
            project_namespaces: None,
        })
    }

    /// The project namespace, as Gardener names it.
    pub fn namespace(&self) -> String {
        format!("garden-{}", self.project)
    }
}

/// A started garden. Dropping it stops the garden and every shoot.
pub struct RunningGarden {
    pub garden: Running,
    pub shoots: Vec<RunningShoot>,
}

/// A started shoot and where its Shoot object is.
pub struct RunningShoot {
    pub namespace: String,
    pub name: String,
    pub cluster_id: uuid::Uuid,
    pub running: Running,
}

impl RunningGarden {
    /// The garden's admin kubeconfig (the garden cluster's admin token).
    pub fn kubeconfig(&self) -> String {
        self.garden.kubeconfig()
    }

    pub fn shoot(&self, namespace: &str, name: &str) -> Option<&RunningShoot> {
        self.shoots.iter().find(|s| s.namespace == namespace && s.name == name)
    }
}

/// Starts the shoots, then the garden that knows them.
pub async fn start(config: GardenConfig) -> Result<RunningGarden, StartError> {
    let mut shoots = Vec::with_capacity(config.shoots.len());
    let mut clusters = HashMap::new();
    for shoot in &config.shoots {
        let running = crate::start(shoot.cluster.clone()).await?;
        if let Some(projects) = &shoot.project_namespaces {
            label_project_namespaces(&running.cluster, projects)?;
        }
        clusters.insert(
            (shoot.namespace(), shoot.name.clone()),
            ShootCluster {
                url: running.url.clone(),
                ca_pem: running.ca_pem.clone(),
                ca: Arc::clone(&running.ca),
            },
        );
        shoots.push(RunningShoot {
            namespace: shoot.namespace(),
            name: shoot.name.clone(),
            cluster_id: shoot.cluster_id,
            running,
        });
    }
    let known = Arc::new(Shoots { clusters, minimum_expiration: config.minimum_kubeconfig_expiration });
    let garden = start_serving(config.cluster.clone(), Some(known)).await?;
    seed(&garden.cluster, &config, &shoots)?;
    tracing::info!(url = %garden.url, shoots = shoots.len(), "garden listening");
    Ok(RunningGarden { garden, shoots })
}

/// The Gardener kinds, the project namespaces and projects, and one Shoot per
/// shoot. Written over what a state file brought back: a shoot's URL changes
/// with its port.
fn seed(cluster: &Cluster, config: &GardenConfig, shoots: &[RunningShoot]) -> Result<(), StartError> {
    for crd in crate::fixtures::documents_in(Path::new("garden/crds.yaml"), include_str!("crds.yaml"))? {
        apply(cluster, crd)?;
    }
    let mut projects: Vec<&str> = config.shoots.iter().map(|s| s.project.as_str()).collect();
    projects.sort_unstable();
    projects.dedup();
    for project in projects {
        apply(cluster, shoot::namespace(project))?;
        apply(cluster, shoot::project(project))?;
    }
    for (shoot, running) in config.shoots.iter().zip(shoots) {
        apply(cluster, shoot::object(shoot, &running.running.url))?;
    }
    Ok(())
}

/// Makes `projects` the shoot's project namespaces: each listed namespace carries its
/// project's label (created when missing), no other namespace carries one.
fn label_project_namespaces(
    cluster: &Cluster,
    projects: &BTreeMap<String, Vec<String>>,
) -> Result<(), StartError> {
    let wanted: HashMap<&str, &str> =
        projects.iter().flat_map(|(p, nss)| nss.iter().map(move |ns| (ns.as_str(), p.as_str()))).collect();
    let fail = |what: &str, e: crate::status::ApiError| StartError::Garden {
        what: format!("namespace {what}"),
        detail: e.message,
    };
    let rt = cluster
        .registry()
        .by_kind("v1", "Namespace")
        .cloned()
        .ok_or_else(|| fail("kind", crate::status::ApiError::no_route()))?;
    let system = User::system();
    let existing = cluster.list(&rt, "", &Default::default()).map_err(|e| fail("list", e))?;
    let mut seen = std::collections::HashSet::new();
    for mut ns in existing.items {
        let name = crate::object::name(&ns).to_string();
        seen.insert(name.clone());
        let current = ns["metadata"]["labels"][PROJECT_LABEL].as_str().map(str::to_owned);
        let desired = wanted.get(name.as_str()).map(|p| (*p).to_owned());
        if current == desired {
            continue;
        }
        let labels = &mut ns["metadata"]["labels"];
        if !labels.is_object() {
            *labels = json!({});
        }
        let labels = labels.as_object_mut().expect("an object");
        match desired {
            Some(p) => labels.insert(PROJECT_LABEL.to_owned(), Value::String(p)),
            None => labels.remove(PROJECT_LABEL),
        };
        cluster
            .update(&system, &rt, "", &name, ns, false, WriteOptions::SYSTEM)
            .map_err(|e| fail(&name, e))?;
    }
    for (name, project) in wanted.iter().filter(|(n, _)| !seen.contains(**n)) {
        let ns = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {PROJECT_LABEL: project, "kubernetes.io/metadata.name": name}},
        });
        cluster.create(&system, &rt, "", ns, WriteOptions::SYSTEM).map_err(|e| fail(name, e))?;
    }
    Ok(())
}

/// Creates `obj` as the cluster itself, or replaces the one of its name.
fn apply(cluster: &Cluster, obj: Value) -> Result<(), StartError> {
    let what = format!("{} {}", obj["kind"].as_str().unwrap_or_default(), crate::object::name(&obj));
    let fail = |e: crate::status::ApiError| StartError::Garden { what: what.clone(), detail: e.message };
    let registry = cluster.registry();
    let rt = registry
        .by_kind(obj["apiVersion"].as_str().unwrap_or_default(), obj["kind"].as_str().unwrap_or_default())
        .cloned()
        .ok_or_else(|| fail(crate::status::ApiError::no_route()))?;
    let ns = crate::object::namespace(&obj).to_string();
    let name = crate::object::name(&obj).to_string();
    let system = User::system();
    match cluster.get(&rt, &ns, &name) {
        Ok(_) => cluster.update(&system, &rt, &ns, &name, obj, false, WriteOptions::SYSTEM).map_err(fail)?,
        Err(e) if e.code == 404 => {
            cluster.create(&system, &rt, &ns, obj, WriteOptions::SYSTEM).map_err(fail)?
        }
        Err(e) => return Err(fail(e)),
    };
    Ok(())
}

/// What a garden knows of its shoots: the cluster behind each Shoot object.
pub struct Shoots {
    clusters: HashMap<(String, String), ShootCluster>,
    minimum_expiration: Duration,
}

/// A shoot's API: where it is, the CA it serves with, and what signs its client certificates.
struct ShootCluster {
    url: String,
    ca_pem: String,
    ca: Arc<CertificateAuthority>,
}

/// Whether `rt` is the garden's Shoot resource.
pub(crate) fn is_shoots(rt: &ResourceType) -> bool {
    rt.group == GROUP && rt.plural == "shoots"
}

impl Shoots {
    /// Lists `shoots/adminkubeconfig` in the discovery of shoots' group version, as Gardener does.
    pub(crate) fn extend_discovery(&self, group: &str, version: &str, doc: &mut Value) {
        if group != GROUP || version != "v1beta1" {
            return;
        }
        if let Some(list) = doc["resources"].as_array_mut() {
            list.push(json!({
                "name": format!("shoots/{ADMIN_KUBECONFIG}"),
                "singularName": "",
                "namespaced": true,
                "group": admin_kubeconfig::GROUP,
                "version": admin_kubeconfig::VERSION,
                "kind": admin_kubeconfig::KIND,
                "verbs": ["create"],
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_again_replaces_what_a_state_file_brought_back() {
        let cluster = Cluster::new();
        let dir = tempfile::tempdir().unwrap();
        let shoot =
            ShootConfig::seeded(dir.path(), dir.path(), "acme-corp", "prod", uuid::Uuid::nil()).unwrap();
        for url in ["https://localhost:1", "https://localhost:2"] {
            for crd in
                crate::fixtures::documents_in(Path::new("crds.yaml"), include_str!("crds.yaml")).unwrap()
            {
                apply(&cluster, crd).unwrap();
            }
            apply(&cluster, shoot::namespace("acme-corp")).unwrap();
            apply(&cluster, shoot::object(&shoot, url)).unwrap();
        }
        let rt = cluster.resource(GROUP, "v1beta1", "shoots").unwrap();
        let stored = cluster.get(&rt, "garden-acme-corp", "prod").unwrap();
        assert_eq!(stored["status"]["advertisedAddresses"][0]["url"], "https://localhost:2");
        assert_eq!(stored["metadata"]["labels"][CLUSTER_ID_LABEL], uuid::Uuid::nil().to_string());
    }
}
