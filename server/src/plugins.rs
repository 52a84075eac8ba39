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
        let assets = match console_dir(&def.dir) {
            Some(console) => Assets::Directory(console),
            None => Assets::None,
        };
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

/// A plugin folder's `console/` directory, when it is a directory of the folder itself. A
/// `console` that is a symlink (`console -> /`) would make the runtime serve whatever it points
/// at to the plugin's own pages, so it is not served at all (and said so).
fn console_dir(plugin_dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let console = plugin_dir.join("console");
    let meta = std::fs::symlink_metadata(&console).ok()?;
    if meta.file_type().is_symlink() {
        tracing::warn!(path = %console.display(), "a plugin's console/ is a symlink: its pages are not served");
        return None;
    }
    meta.is_dir().then_some(console)
}

#[cfg(test)]
mod tests {
    use super::console_dir;

    #[test]
    fn a_console_that_is_a_symlink_is_not_served() {
        let plugin = tempfile::tempdir().unwrap();
        assert_eq!(console_dir(plugin.path()), None, "no console/: no pages");
        std::os::unix::fs::symlink("/", plugin.path().join("console")).unwrap();
        assert_eq!(console_dir(plugin.path()), None, "console -> / would serve the machine's files");
        let own = tempfile::tempdir().unwrap();
        std::fs::create_dir(own.path().join("console")).unwrap();
        assert_eq!(console_dir(own.path()), Some(own.path().join("console")));
    }
}
