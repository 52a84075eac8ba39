//! `fundament garden`: a simulated Gardener for `fundament dev --mode real` — a garden
//! cluster with a Shoot for each cluster of the directory (mock mode's seed, or
//! `--directory`), in the garden project of the cluster's organization, labelled with the
//! cluster's id; each Shoot an embedded cluster seeded like mock mode's (fixtures and the
//! example plugins, each plugin's runtime behind its Service). Writes the garden's admin kubeconfig and serves until SIGINT or SIGTERM.

use std::io::Write;

use fundament_cluster::garden::{self, GardenConfig, ShootConfig};
use fundament_cluster::{ClusterConfig, StartError};
use fundament_settings::Settings;

/// Why the garden could not start.
#[derive(Debug, thiserror::Error)]
pub enum GardenError {
    #[error(transparent)]
    Start(#[from] StartError),
    /// The garden's own address (`--cluster-listen`) could not be bound.
    #[error(transparent)]
    Listen(#[from] crate::listen::ListenError),
    #[error("a Shoot's cluster id must be a UUID (it is the Shoot's label): {0}")]
    ClusterId(String),
    #[error(transparent)]
    Directory(#[from] crate::services::ServiceError),
    #[error("cannot write the garden's kubeconfig: {0}")]
    Kubeconfig(#[from] fundament_cluster::tls::TlsError),
    #[error("cannot start the plugin runtimes: {0}")]
    Runtimes(std::io::Error),
}

/// A shoot's cluster: the settings' fixtures and plugins, its own state, any free port.
fn shoot_cluster(settings: &Settings, name: &str) -> ClusterConfig {
    let mut cluster = crate::cluster::config(settings);
    cluster.state_dir = crate::state_dir(settings).join("garden").join("shoots").join(name);
    cluster.listen = ([127, 0, 0, 1], 0).into();
    cluster.public_url = String::new();
    cluster.state_file = None;
    cluster.admin_token = None;
    cluster
}

pub async fn run(settings: Settings) -> Result<(), GardenError> {
    let shutdown = crate::signal::shutdown_signal();
    let directory = crate::services::directory(&settings)?.current();
    let mut shoots = Vec::new();
    for c in &directory.clusters {
        let cluster_id = uuid::Uuid::parse_str(&c.id).map_err(|_| GardenError::ClusterId(c.id.clone()))?;
        let mut cluster = shoot_cluster(&settings, &c.name);
        cluster.organization = c.organization.clone();
        shoots.push(ShootConfig {
            project: c.organization.clone(),
            name: c.name.clone(),
            cluster_id,
            provider: "gcp".to_owned(),
            region: "europe-west1".to_owned(),
            cluster,
            project_namespaces: Some(
                directory
                    .projects
                    .iter()
                    .filter_map(|p| p.namespaces.get(&c.id).map(|nss| (p.id.clone(), nss.clone())))
                    .collect(),
            ),
        });
    }
    // The garden itself: the settings' cluster address, no plugins of its own.
    let mut cluster = crate::cluster::config(&settings);
    cluster.state_dir = crate::state_dir(&settings).join("garden").join("garden");
    cluster.plugin_dirs = Vec::new();
    cluster.development_plugin_dirs = Vec::new();
    cluster.state_file = None;
    let running =
        garden::start(GardenConfig::new(cluster, shoots)).await.map_err(
            |e| match crate::cluster::start_error("garden", settings.cluster.listen, e) {
                crate::cluster::ClusterError::Listen(e) => GardenError::Listen(e),
                crate::cluster::ClusterError::Start(e) => GardenError::Start(e),
            },
        )?;
    let (_stop, stopped) = tokio::sync::watch::channel(false);
    for shoot in &running.shoots {
        let organization = directory
            .cluster(&shoot.cluster_id.to_string())
            .map_or_else(String::new, |c| c.organization.clone());
        let runtimes = crate::plugins::start_runtimes(
            &shoot.running.definitions.0,
            &organization,
            stopped.clone(),
            None,
        )
        .await
        .map_err(GardenError::Runtimes)?;
        crate::plugins::register_in(&shoot.running, &runtimes);
    }
    let path = crate::state_dir(&settings).join("garden").join("kubeconfig");
    fundament_cluster::tls::write_private(&path, running.kubeconfig().as_bytes())?;
    let shoots: String = running
        .shoots
        .iter()
        .map(|s| {
            format!("  shoot {}/{}  cluster-id {}  {}\n", s.namespace, s.name, s.cluster_id, s.running.url)
        })
        .collect();
    let text = format!(
        "\nSimulated Gardener is running at {}\n{shoots}  kubeconfig: {}\n\nRun the stack against it:\n  fundament dev --mode real --gardener-kubeconfig {}\n\nCtrl-C stops it.\n\n",
        running.garden.url,
        path.display(),
        path.display(),
    );
    let _ = std::io::stderr().write_all(text.as_bytes());
    shutdown.await;
    Ok(())
}
