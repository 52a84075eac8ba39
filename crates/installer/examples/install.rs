//! Installs the platform and plugin folders into the cluster of a kubeconfig
//! (sandbox mode), or checks the whole round trip there.
//!
//! ```text
//! cargo run --release -p fundament-installer --example install -- KUBECONFIG [options]
//!   --fixtures DIR      fixtures/cluster of this checkout unless given
//!   --plugin DIR        a plugin folder (repeatable; plugins/demo and plugins/cert-manager unless given)
//!   --organization ORG  acme-corp unless given
//!   --development       mark the installations as development folders'
//!   --uninstall         remove what the installer installed, and nothing else
//!   --check             install, check, install again (nothing may change), uninstall, check that
//!                       nothing is left; exits non-zero on the first failure (for scripts/test
//!                       against a real kube-apiserver, which must take server-side apply)
//! ```
//!
//! With `scripts/real-cluster start DIR`, the kubeconfig is the path it prints.

use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use fundament_installer::{Installer, Summary};
use fundament_plugin_types::PluginInstallation;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};

struct Args {
    kubeconfig: PathBuf,
    fixtures: PathBuf,
    plugins: Vec<PathBuf>,
    organization: String,
    development: bool,
    mode: Mode,
}

#[derive(PartialEq)]
enum Mode {
    Install,
    Uninstall,
    Check,
}

fn args() -> Result<Args> {
    let repo = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
    )
    .join("../..");
    // Messages name files by this path: without the `..` of the manifest's.
    let repo = repo.canonicalize().unwrap_or(repo);
    let mut args = std::env::args().skip(1);
    let mut kubeconfig = None;
    let (mut fixtures, mut plugins) = (repo.join("fixtures/cluster"), Vec::new());
    let (mut organization, mut development, mut mode) = ("acme-corp".to_string(), false, Mode::Install);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--fixtures" => fixtures = value()?.into(),
            "--plugin" => plugins.push(value()?.into()),
            "--organization" => organization = value()?,
            "--development" => development = true,
            "--uninstall" => mode = Mode::Uninstall,
            "--check" => mode = Mode::Check,
            other if other.starts_with("--") => bail!("unknown option {other}"),
            path if kubeconfig.is_none() => kubeconfig = Some(PathBuf::from(path)),
            extra => bail!("unexpected argument {extra}"),
        }
    }
    if plugins.is_empty() {
        plugins = vec![repo.join("plugins/demo"), repo.join("plugins/cert-manager")];
    }
    let kubeconfig = kubeconfig
        .context("usage: install KUBECONFIG [--fixtures DIR] [--plugin DIR]… [--check|--uninstall]")?;
    Ok(Args { kubeconfig, fixtures, plugins, organization, development, mode })
}

async fn client(path: &PathBuf) -> Result<kube::Client> {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

/// The platform, then every plugin folder; what they did, added up, and the installations.
async fn install(installer: &Installer, args: &Args) -> Result<(Summary, Vec<(String, String)>)> {
    let mut total = installer.install_platform(&args.fixtures).await?;
    let mut installations = Vec::new();
    for dir in &args.plugins {
        let installed = installer.install_plugin(&args.organization, dir, args.development).await?;
        total += installed.summary;
        installations.push((installed.installation, installed.definition_hash));
    }
    Ok((total, installations))
}

/// Each installation is Running and ready, pinned to its definition's hash.
async fn check_installations(client: &kube::Client, installations: &[(String, String)]) -> Result<()> {
    let resource =
        ApiResource::from_gvk(&GroupVersionKind::gvk("plugins.fundament.io", "v1", "PluginInstallation"));
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    for (name, hash) in installations {
        let value = serde_json::to_value(api.get(name).await?)?;
        let installation = PluginInstallation::from_value(&value)?;
        ensure!(installation.is_running(), "{name} is not Running and ready: {value}");
        ensure!(&installation.definition_ref().definition_hash == hash, "{name} pins another hash: {value}");
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "fundament_installer=info".into()),
        )
        .init();
    let args = args()?;
    let client = client(&args.kubeconfig).await?;
    let installer = Installer::new(client.clone());
    match args.mode {
        Mode::Install => {
            install(&installer, &args).await?;
        }
        Mode::Uninstall => {
            installer.uninstall().await?;
        }
        Mode::Check => {
            let (first, installations) = install(&installer, &args).await?;
            ensure!(
                installer.uses_server_side_apply(),
                "the API server refused server-side apply (the embedded cluster does: --check is for real API servers)"
            );
            ensure!(first.created + first.adopted > 0, "the first install made nothing: {first}");
            check_installations(&client, &installations).await?;
            let (second, _) = install(&Installer::new(client.clone()), &args).await?;
            ensure!(
                second.created == 0 && second.changed == 0,
                "the second install changed objects: {second}"
            );
            check_installations(&client, &installations).await?;
            let removed = installer.uninstall().await?;
            ensure!(
                removed.deleted >= first.created,
                "uninstall removed fewer objects than were made: {removed}"
            );
            let again = installer.uninstall().await?;
            ensure!(
                again.deleted == 0 && again.adopted == 0,
                "a second uninstall still found objects: {again}"
            );
            tracing::info!(%first, %second, %removed, "check passed");
        }
    }
    Ok(())
}
