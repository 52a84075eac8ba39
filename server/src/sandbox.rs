//! Sandbox mode's set-up of its cluster: the platform (the PluginInstallation CRD, the seed
//! namespaces, the users' ServiceAccounts and RBAC) and every plugin folder, installed through
//! server-side apply with the kubeconfig's own (admin) identity; and `fundament uninstall`,
//! which removes exactly that again.

use fundament_cluster::controller::PluginDefinition;
use fundament_installer::{InstallError, Installer};
use fundament_kube_api_proxy::upstream::{Upstream, UpstreamError, load_kubeconfig};
use fundament_settings::Settings;

/// Why the sandbox could not be set up or cleaned up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "no sandbox cluster: set --kubeconfig FILE (or PLUGIN_SANDBOX_KUBECONFIG) to the kubeconfig of the cluster sandbox mode installs into"
    )]
    NoKubeconfig,
    #[error(transparent)]
    Cluster(#[from] UpstreamError),
    #[error("installing into the sandbox cluster at {server}: {source}")]
    Install { server: String, source: InstallError },
    #[error("uninstalling from the sandbox cluster at {server}: {source}")]
    Uninstall { server: String, source: InstallError },
    #[error(transparent)]
    Directory(#[from] crate::services::ServiceError),
}

/// The installer, on the kubeconfig's own identity (verified as the gateway verifies it), and
/// the API server's URL for messages (without any credentials it may carry).
async fn installer(settings: &Settings) -> Result<(Installer, String), SandboxError> {
    let path = settings.kubeconfig.as_ref().ok_or(SandboxError::NoKubeconfig)?;
    let verification = crate::services::verification(settings);
    let config = load_kubeconfig(path).await?;
    let server = fundament_kube_core::cause::server(&config.cluster_url);
    let upstream = Upstream::from_kube_config(config, verification)?;
    Ok((Installer::new(upstream.own_client()), server))
}

/// Installs the platform and `definitions` (idempotent: a second run changes nothing).
pub async fn install(settings: &Settings, definitions: &[PluginDefinition]) -> Result<(), SandboxError> {
    let (organization, _) = crate::services::single_cluster(settings)?;
    let (installer, server) = installer(settings).await?;
    let failed = |source| SandboxError::Install { server: server.clone(), source };
    let platform = installer.install_platform(&settings.cluster.fixtures_dir).await.map_err(failed)?;
    tracing::info!(%platform, "sandbox: platform installed");
    for def in definitions {
        let installed =
            installer.install_plugin(&organization, &def.dir, def.development).await.map_err(failed)?;
        tracing::info!(installation = %installed.installation, summary = %installed.summary, "sandbox: plugin installed");
    }
    Ok(())
}

/// `fundament uninstall`: removes what sandbox mode installed, nothing else.
pub async fn uninstall(settings: Settings) -> Result<(), SandboxError> {
    let (installer, server) = installer(&settings).await?;
    let summary = installer.uninstall().await.map_err(|source| SandboxError::Uninstall { server, source })?;
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "uninstalled: {summary}");
    Ok(())
}
