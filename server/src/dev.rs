//! `fundament dev`: the whole stack in one process, in mock mode.

use std::io::Write;

use fundament_settings::{Key, Mode, Settings, SettingsError, Source};

use crate::{console, listen};

/// Why `fundament dev` could not start. All of these are bad settings or a
/// busy port: the process exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    /// A setting is invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The built site is missing.
    #[error(transparent)]
    Site(#[from] console::SiteMissing),
    /// A port could not be opened.
    #[error(transparent)]
    Listen(#[from] listen::ListenError),
    /// The embedded cluster could not start (state, fixtures, port).
    #[error(transparent)]
    Cluster(#[from] fundament_cluster::StartError),
    /// authn, organization-api or kube-api-proxy could not start.
    #[error(transparent)]
    Stack(#[from] crate::stack::StackError),
}

/// `dev` runs the embedded stack, which is mock mode by definition.
pub fn check_mode(settings: &Settings, source: Source) -> Result<(), SettingsError> {
    if settings.mode == Mode::Mock {
        return Ok(());
    }
    Err(SettingsError::Invalid {
        key: Key::Mode,
        origin: source,
        value: settings.mode.to_string(),
        reason: "fundament dev runs the embedded stack, which needs mode mock".to_owned(),
    })
}

fn hint(key: Key) -> String {
    format!("--{} or {}", key.flag(), key.env())
}

/// Starts the stack and serves until SIGINT or SIGTERM.
pub async fn run(settings: Settings) -> Result<(), DevError> {
    console::check_site(&settings)?;
    let listener = listen::bind("console", settings.console_listen, hint(Key::ConsoleListen)).await?;
    let cluster = crate::cluster::start(&settings).await?;
    let signer = crate::services::signer(&settings).map_err(crate::stack::StackError::from)?;
    let jwks = signer.jwks();
    let signer = std::sync::Arc::new(std::sync::RwLock::new(signer));
    let upstream = fundament_kube_api_proxy::upstream::UpstreamConfig {
        url: cluster.url.clone(),
        ca_pem: cluster.ca_pem.clone(),
        admin_token: cluster.admin_token.clone(),
    };
    let services = [
        crate::stack::authn(&settings, &upstream, signer).await?,
        crate::stack::organization_api(&settings).await?,
        crate::stack::kube_api_proxy(&settings, &upstream).await?,
        crate::stack::plugin_proxy(&settings, &upstream).await?,
    ];
    let (stop, stopped) = tokio::sync::watch::channel(false);
    crate::plugins::start_runtimes(&cluster, fundament_seed::ORGANIZATION, stopped.clone()).await.map_err(
        |source| listen::ListenError::Other {
            service: "plugin runtime",
            addr: ([127, 0, 0, 1], 0).into(),
            hint: String::new(),
            source,
        },
    )?;
    for service in services {
        let mut stopped = stopped.clone();
        tokio::spawn(service.serve(async move {
            let _ = stopped.wait_for(|s| *s).await;
        }));
    }
    let verifier = fundament_tokens::Verifier::from_jwks(&jwks)
        .map_err(|e| crate::stack::StackError::from(crate::services::ServiceError::from(e)))?;
    let credentials = fundament_authn_client::Credentials {
        keys: fundament_authn_client::Keys::fixed_then_follow(
            verifier,
            &format!("{}/.well-known/jwks.json", settings.urls.authn.as_str().trim_end_matches('/')),
        ),
        revoked: fundament_authn_client::RevokedSessions::follow(&format!(
            "{}/sessions/revocations",
            settings.urls.authn.as_str().trim_end_matches('/')
        )),
    };
    let sessions = crate::console_auth::AuthnSessions::new(settings.urls.authn.as_str(), credentials);
    sessions.spawn_refresh();
    let state = console::console_state(&settings, sessions).map_err(crate::stack::StackError::from)?;
    let router = console::router(
        console::leptos_options(&settings),
        state,
        &settings.urls.console,
        &settings.cluster.plugin_sdk_dir,
    );
    let router = router.layer(axum::middleware::from_fn(crate::middleware::server_timing));
    let router = router.layer(fundament_telemetry::http_layer());

    tracing::info!(url = %settings.urls.console, listen = %settings.console_listen, "console listening");
    print_banner(&settings, &cluster.url);
    axum::serve(listener, router).with_graceful_shutdown(shutdown_signal()).await.map_err(|source| {
        listen::ListenError::Other {
            service: "console",
            addr: settings.console_listen,
            hint: hint(Key::ConsoleListen),
            source,
        }
    })?;
    let _ = stop.send(true);
    tracing::info!("stopped");
    Ok(())
}

/// What the user sees in the terminal: where to go and as whom.
fn print_banner(settings: &Settings, cluster_url: &str) {
    let users: Vec<&str> = fundament_seed::USERS.iter().map(|u| u.email).collect();
    let text = format!(
        "\nFundament dev stack ({} mode) is running:\n  console           {}\n  kube-api-proxy    {}\n  plugin-proxy      {}\n  authn             {}\n  organization-api  {}\n  cluster           {} (kubectl: fundament cluster kubeconfig > /tmp/kc; KUBECONFIG=/tmp/kc kubectl get ns)\n\nSign in as {}. Ctrl-C stops it.\n\n",
        settings.mode,
        settings.urls.console.as_str().trim_end_matches('/'),
        settings.urls.kube_api_proxy.as_str().trim_end_matches('/'),
        settings.urls.plugin_proxy.as_str().trim_end_matches('/'),
        settings.urls.authn.as_str().trim_end_matches('/'),
        settings.urls.organization_api.as_str().trim_end_matches('/'),
        cluster_url,
        users.join(" or "),
    );
    let authn = settings.urls.authn.as_str().trim_end_matches('/');
    let audit = settings.audit_log.as_ref().map_or_else(
        || "log only (--audit-log FILE adds a JSON-lines file)".to_owned(),
        |p| p.display().to_string(),
    );
    let text = format!(
        "{}Plugin gateway audit: {audit}\nForce PluginToken mints to fail: curl -X PUT -d '{{\"fail\": true}}' {authn}/dev/faults/mint-plugin-token\n\n",
        text.trim_end_matches('\n').to_owned() + "\n"
    );
    // The banner is the command's output, not a log line: it goes to stderr so
    // stdout stays a clean stream of JSON logs when redirected.
    let _ = std::io::stderr().write_all(text.as_bytes());
}

pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
