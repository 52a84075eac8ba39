//! Wiring of the embedded cluster: settings to [`fundament_cluster::ClusterConfig`].

use fundament_cluster::{ClusterConfig, Running, StartError};
use fundament_settings::Settings;

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

/// Starts the embedded cluster.
pub async fn start(settings: &Settings) -> Result<Running, StartError> {
    fundament_cluster::start(config(settings)).await
}

/// `fundament cluster`: the embedded cluster alone, with the plugin runtimes behind its
/// Services (as `fundament dev` runs them), until SIGINT or SIGTERM; so plugin-proxy replicas of
/// their own reach the pages through its service proxy.
pub async fn run(settings: Settings) -> Result<(), StartError> {
    let shutdown = crate::signal::shutdown_signal();
    let running = start(&settings).await?;
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
