//! Wiring of the embedded cluster: settings to [`fundament_cluster::ClusterConfig`].

use std::net::SocketAddr;

use fundament_cluster::{ClusterConfig, Running, StartError};
use fundament_settings::{Key, Settings};

use crate::listen::ListenError;

/// Why the embedded cluster could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Its address could not be bound: worded as every service's busy port.
    #[error(transparent)]
    Listen(#[from] ListenError),
    /// Anything else (its state, fixtures, plugins).
    #[error(transparent)]
    Start(StartError),
}

/// A start failure of `service`, an embedded cluster that was to listen on `listen`
/// (`--cluster-listen`): failing to bind that address is the server's [`ListenError`], which
/// names the setting that moves it (the cluster crate knows no settings). Any other address
/// (a simulated garden's Shoots take a free port each) is no setting's, and stays as it is.
pub fn start_error(service: &'static str, listen: SocketAddr, error: StartError) -> ClusterError {
    match error {
        StartError::Bind { addr, source } if addr == listen => {
            ListenError::new(service, addr, Key::ClusterListen, source).into()
        }
        other => ClusterError::Start(other),
    }
}

/// The cluster configuration the settings describe.
pub fn config(settings: &Settings) -> ClusterConfig {
    let c = &settings.cluster;
    ClusterConfig {
        listen: c.listen,
        public_url: settings.urls.cluster.as_str().trim_end_matches('/').to_string(),
        state_dir: crate::state_dir(settings).join("cluster"),
        state_file: c.state_file.clone(),
        admin_token: c.admin_token.clone(),
        fixtures_dir: c.fixtures_dir.clone(),
        plugin_dirs: fundament_cluster::fixtures::plugin_dirs(&c.plugins_dir).unwrap_or_default(),
        development_plugin_dirs: c.development_plugins.clone(),
        organization: fundament_seed::ORGANIZATION.to_string(),
        faults: None,
    }
}

/// Starts the embedded cluster from `config` (made by [`config`] from `settings`).
pub async fn start(settings: &Settings, config: ClusterConfig) -> Result<Running, ClusterError> {
    fundament_cluster::start(config).await.map_err(|e| start_error(SERVICE, settings.cluster.listen, e))
}

/// How errors name the embedded cluster.
const SERVICE: &str = "embedded cluster";

/// `fundament cluster`: the embedded cluster alone, with the plugin runtimes behind its
/// Services (as `fundament dev` runs them), until SIGINT or SIGTERM; so plugin-proxy replicas of
/// their own reach the pages through its service proxy.
pub async fn run(settings: Settings) -> Result<(), ClusterError> {
    let shutdown = crate::signal::shutdown_signal();
    crate::listen::warn_url_mismatches(&settings, &[Key::ClusterListen]);
    let running = start(&settings, config(&settings)).await?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    match crate::plugins::start_runtimes(&running.definitions.0, fundament_seed::ORGANIZATION, stopped, None)
        .await
    {
        Ok(runtimes) => crate::plugins::register_in(&running, &runtimes),
        // The API still serves; plugin pages answer 502 until a restart.
        Err(error) => tracing::error!(%error, "cannot start the plugin runtimes"),
    }
    let text = format!(
        "\nEmbedded cluster is running at {}\n  kubectl:  fundament cluster kubeconfig > /tmp/fundament.kubeconfig\n            KUBECONFIG=/tmp/fundament.kubeconfig kubectl get namespaces\n\nCtrl-C stops it.\n\n",
        running.url
    );
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
    shutdown.await;
    running.shutdown(crate::stack::DRAIN_PERIOD).await;
    let _ = stop.send(true);
    Ok(())
}

/// `fundament cluster kubeconfig`.
pub fn kubeconfig(settings: &Settings) -> Result<String, StartError> {
    let c = config(settings);
    fundament_cluster::kubeconfig_from_state(&c.state_dir, &c.public_url, c.admin_token.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded cluster's busy port reads as every other service's (server/src/listen.rs):
    /// the address, the port, and the setting that moves it.
    #[tokio::test]
    async fn a_taken_cluster_port_is_worded_as_every_services_busy_port() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut settings = fundament_settings::resolve(&[]).expect("defaults resolve");
        settings.cluster.listen = addr;
        settings.state_dir = Some(dir.path().to_owned());
        settings.cluster.fixtures_dir = dir.path().join("fixtures");
        settings.cluster.plugins_dir = dir.path().join("plugins");
        let Err(error) = start(&settings, config(&settings)).await else { panic!("started on a taken port") };
        assert!(matches!(error, ClusterError::Listen(ListenError::InUse { .. })), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!(
                "embedded cluster cannot listen on {addr}: port {} is already in use \
                 (set --cluster-listen or FUNDAMENT_CLUSTER_LISTEN)",
                addr.port()
            )
        );
    }
}
