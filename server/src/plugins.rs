//! The example plugins' runtimes: each plugin folder's runtime runs in process on a loopback
//! port. In mock mode each sits behind its Service in the embedded cluster, so plugin-proxy
//! reaches its pages through the service proxy as on a real cluster; in sandbox mode, whose
//! cluster may run no plugin pods, plugin-proxy reaches them directly.

use std::net::SocketAddr;

use fundament_cluster::controller::{PluginDefinition, installation_name};
use fundament_plugin_runtime::{Assets, PluginInfo, Runtime};

/// Starts a runtime for each of `definitions` installed in `organization`: the installation
/// names and where their runtimes listen. With `faults` (mock mode) each runtime gets a
/// development fault switch of its own, by installation name (docs/dev-switches.md).
pub async fn start_runtimes(
    definitions: &[PluginDefinition],
    organization: &str,
    shutdown: tokio::sync::watch::Receiver<bool>,
    faults: Option<&fundament_dev_faults::runtime::RuntimeSwitches>,
) -> std::io::Result<Vec<(String, SocketAddr)>> {
    let mut started = Vec::new();
    for def in definitions {
        let installation = installation_name(organization, &def.name);
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
        tracing::info!(plugin = %def.name, %addr, "plugin runtime running");
        let mut stop = shutdown.clone();
        let switch = faults.map(|f| f.add(&installation));
        tokio::spawn(async move {
            let done = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            let served = match switch {
                Some(switch) => {
                    let (router, listener) = switch.wrap(runtime.router(), listener);
                    fundament_plugin_runtime::serve_wrapped(router, listener, done).await
                }
                None => fundament_plugin_runtime::serve(runtime, listener, done).await,
            };
            if let Err(error) = served {
                tracing::error!(%error, "plugin runtime stopped");
            }
        });
        started.push((installation, addr));
    }
    Ok(started)
}

/// Registers each runtime behind its installation's Service `plugin-<installation>` of the
/// embedded cluster.
pub fn register_in(cluster: &fundament_cluster::Running, runtimes: &[(String, SocketAddr)]) {
    for (installation, addr) in runtimes {
        let service = format!("plugin-{installation}");
        cluster.backends.register(&service, &service, 8080, *addr);
    }
}
