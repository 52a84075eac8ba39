//! `fundament garden`: a simulated Gardener for `fundament dev --mode real` — a garden
//! cluster whose Shoots are two embedded clusters seeded like mock mode's (fixtures and the
//! example plugins, each plugin's runtime behind its Service), labelled with the seed's
//! cluster ids. Writes the garden's admin kubeconfig and serves until SIGINT or SIGTERM.

use std::io::Write;

use fundament_cluster::garden::{self, GardenConfig, ShootConfig};
use fundament_cluster::{ClusterConfig, StartError};
use fundament_settings::Settings;

/// Why the garden could not start.
#[derive(Debug, thiserror::Error)]
pub enum GardenError {
    #[error(transparent)]
    Start(#[from] StartError),
    #[error("invalid seed cluster id {0}")]
    ClusterId(String),
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
    let mut shoots = Vec::new();
    for seed in &fundament_seed::CLUSTERS {
        let cluster_id =
            uuid::Uuid::parse_str(seed.id).map_err(|_| GardenError::ClusterId(seed.id.to_owned()))?;
        shoots.push(ShootConfig {
            project: fundament_seed::ORGANIZATION.to_owned(),
            name: seed.name.to_owned(),
            cluster_id,
            provider: "gcp".to_owned(),
            region: "europe-west1".to_owned(),
            cluster: shoot_cluster(&settings, seed.name),
        });
    }
    // The garden itself: the settings' cluster address, no plugins of its own.
    let mut cluster = crate::cluster::config(&settings);
    cluster.state_dir = crate::state_dir(&settings).join("garden").join("garden");
    cluster.plugin_dirs = Vec::new();
    cluster.development_plugin_dirs = Vec::new();
    cluster.state_file = None;
    let running = garden::start(GardenConfig::new(cluster, shoots)).await?;
    let (_stop, stopped) = tokio::sync::watch::channel(false);
    for shoot in &running.shoots {
        let runtimes = crate::plugins::start_runtimes(
            &shoot.running.definitions.0,
            fundament_seed::ORGANIZATION,
            stopped.clone(),
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
    crate::dev::shutdown_signal().await;
    Ok(())
}
