//! The example plugins of mock mode: each plugin folder's runtime runs in
//! process on a loopback port, behind its Service in the embedded cluster, so
//! plugin-proxy reaches its pages through the service proxy as on a real cluster.

use fundament_cluster::Running;
use fundament_plugin_runtime::{Assets, PluginInfo, Runtime};

/// Starts a runtime per installed plugin folder and registers it behind `plugin-<installation>`.
pub async fn start_runtimes(
    cluster: &Running,
    organization: &str,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    for def in cluster.definitions.0.iter() {
        let installation = fundament_cluster::controller::installation_name(organization, &def.name);
        let console = def.dir.join("console");
        let assets = if console.is_dir() { Assets::Directory(console) } else { Assets::None };
        let runtime = Runtime::new(
            PluginInfo {
                name: def.name.clone(),
                version: def.version.clone(),
                definition_hash: def.hash.clone(),
            },
            assets,
        );
        runtime.report_ready();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let service = format!("plugin-{installation}");
        cluster.backends.register(&service, &service, 8080, addr);
        tracing::info!(plugin = %def.name, %addr, "plugin runtime running");
        let mut stop = shutdown.clone();
        tokio::spawn(async move {
            let done = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            if let Err(error) = fundament_plugin_runtime::serve(runtime, listener, done).await {
                tracing::error!(%error, "plugin runtime stopped");
            }
        });
    }
    Ok(())
}
