//! Serving authn, organization-api and kube-api-proxy: alone (`fundament
//! authn` …) or all together inside `fundament dev`.

use std::sync::{Arc, RwLock};

use axum::Router;
use fundament_settings::{Key, Settings};

use crate::listen::{self, ListenError};
use crate::services::{self, ClusterAccess, ServiceError};

#[derive(Debug, thiserror::Error)]
pub enum StackError {
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Listen(#[from] ListenError),
}

fn hint(key: Key) -> String {
    format!("--{} or {}", key.flag(), key.env())
}

/// A service bound to its port, ready to serve.
pub struct Bound {
    pub name: &'static str,
    pub listener: tokio::net::TcpListener,
    pub router: Router,
}

impl Bound {
    pub async fn serve(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let router = self.router.layer(fundament_telemetry::http_layer());
        if let Err(error) = axum::serve(self.listener, router).with_graceful_shutdown(shutdown).await {
            tracing::error!(service = self.name, %error, "service stopped with an error");
        }
    }
}

/// authn; `dev_sign_in`: seed users sign in by email (`fundament dev`, any mode).
pub async fn authn(
    settings: &Settings,
    access: &ClusterAccess,
    signer: Arc<RwLock<fundament_tokens::Signer>>,
    dev_sign_in: bool,
) -> Result<Bound, StackError> {
    let listener = listen::bind("authn", settings.listen.authn, hint(Key::AuthnListen)).await?;
    let state = services::authn_state(
        settings,
        signer,
        services::fga(settings)?,
        services::clusters(settings, access).await?,
        dev_sign_in,
    )?;
    // No CORS: no browser page calls authn (the console's server does).
    let router = fundament_authn::router(state);
    Ok(Bound { name: "authn", listener, router })
}

pub async fn organization_api(settings: &Settings) -> Result<Bound, StackError> {
    let listener =
        listen::bind("organization-api", settings.listen.organization_api, hint(Key::OrganizationApiListen))
            .await?;
    // No CORS: no browser page calls organization-api (the console's server does).
    let router = fundament_organization_api::router(services::catalog(settings)?);
    Ok(Bound { name: "organization-api", listener, router })
}

pub async fn kube_api_proxy(settings: &Settings, access: &ClusterAccess) -> Result<Bound, StackError> {
    let listener =
        listen::bind("kube-api-proxy", settings.listen.kube_api_proxy, hint(Key::KubeApiProxyListen)).await?;
    // Public keys only, from authn's JWKS (refetched when a token names an unknown key), and
    // the revoked sessions, followed from authn.
    let gateway = services::gateway(
        settings,
        services::credentials(settings),
        services::fga(settings)?,
        services::clusters(settings, access).await?,
        services::catalog(settings)?,
    )?;
    Ok(Bound { name: "kube-api-proxy", listener, router: fundament_kube_api_proxy::router(gateway) })
}

pub async fn plugin_proxy(
    settings: &Settings,
    access: &ClusterAccess,
    runtimes: fundament_plugin_proxy::Runtimes,
) -> Result<Bound, StackError> {
    let listener =
        listen::bind("plugin-proxy", settings.listen.plugin_proxy, hint(Key::PluginProxyListen)).await?;
    let origin = |u: &url::Url| fundament_kube_api_proxy::cors::origin_of(u.as_str());
    let frame_key =
        fundament_plugin_proxy::FrameKey::load_or_create(&crate::state_dir(settings).join("plugin-proxy"))
            .map_err(services::ServiceError::from)?;
    let proxy = fundament_plugin_proxy::PluginProxy {
        origins: fundament_plugin_proxy::Origins {
            console: origin(&settings.urls.console),
            kube_api_proxy: origin(&settings.urls.kube_api_proxy),
            plugins: services::plugin_origins(settings)?,
        },
        credentials: services::credentials(settings),
        fga: services::fga(settings)?,
        clusters: services::clusters(settings, access).await?,
        runtimes,
        sdk_dir: Some(settings.cluster.plugin_sdk_dir.clone()),
        frame_key,
        used_tickets: Default::default(),
    };
    Ok(Bound { name: "plugin-proxy", listener, router: fundament_plugin_proxy::router(Arc::new(proxy)) })
}

/// `fundament authn|organization-api|kube-api-proxy|plugin-proxy`: one service until SIGINT or SIGTERM.
/// A service that runs alone (`fundament <service>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Authn,
    OrganizationApi,
    KubeApiProxy,
    PluginProxy,
}

impl Service {
    /// Whether the service needs the mode's way to the clusters (a kubeconfig, a garden).
    pub fn reaches_clusters(self) -> bool {
        !matches!(self, Service::OrganizationApi)
    }

    pub fn name(self) -> &'static str {
        match self {
            Service::Authn => "authn",
            Service::OrganizationApi => "organization-api",
            Service::KubeApiProxy => "kube-api-proxy",
            Service::PluginProxy => "plugin-proxy",
        }
    }
}

pub async fn run_one(settings: Settings, service: Service) -> Result<(), StackError> {
    let bound = match service {
        Service::OrganizationApi => organization_api(&settings).await?,
        Service::PluginProxy => {
            plugin_proxy(
                &settings,
                &ClusterAccess::of(&settings)?,
                fundament_plugin_proxy::Runtimes::ServiceProxy,
            )
            .await?
        }
        Service::Authn => {
            let signer = Arc::new(RwLock::new(services::signer(&settings)?));
            let dev_sign_in = settings.mode == fundament_settings::Mode::Mock;
            authn(&settings, &ClusterAccess::of(&settings)?, signer, dev_sign_in).await?
        }
        Service::KubeApiProxy => kube_api_proxy(&settings, &ClusterAccess::of(&settings)?).await?,
    };
    let service = service.name();
    tracing::info!(service, addr = ?bound.listener.local_addr().ok(), "listening");
    bound.serve(crate::dev::shutdown_signal()).await;
    Ok(())
}
