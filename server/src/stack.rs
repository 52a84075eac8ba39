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
    #[error(transparent)]
    Site(#[from] crate::console::SiteMissing),
    #[error(transparent)]
    Settings(#[from] fundament_settings::SettingsError),
}

/// How long a service drains at shutdown: in-flight requests finish and open streams end
/// cleanly within it; what is still open then is cut. A Kubernetes Deployment's
/// `terminationGracePeriodSeconds` must exceed it (30 s, the default, does).
pub const DRAIN_PERIOD: std::time::Duration = std::time::Duration::from_secs(20);

/// A service bound to its port, ready to serve.
pub struct Bound {
    pub name: &'static str,
    pub listener: tokio::net::TcpListener,
    pub router: Router,
    /// Called at shutdown, once new connections are no longer accepted: ends the service's
    /// long-lived streams (watches, the revocation stream) so clients reconnect elsewhere.
    pub drain: Option<Box<dyn FnOnce() + Send>>,
    /// Awaited once the service stopped serving, for at most [`FINISH_PERIOD`]: writes out what
    /// it still holds (kube-api-proxy's audit calls on their way to the shared store).
    pub finish: Option<Finish>,
}

/// A service's last work at shutdown ([`Bound::finish`]).
pub type Finish = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// How long a service's [`Bound::finish`] may take.
pub const FINISH_PERIOD: std::time::Duration = std::time::Duration::from_secs(5);

impl Bound {
    /// Serves until `shutdown`, then drains: stops accepting, ends open streams, lets in-flight
    /// requests finish, for at most [`DRAIN_PERIOD`].
    pub async fn serve(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        self.serve_until(async move {
            shutdown.await;
            tokio::time::Instant::now() + DRAIN_PERIOD
        })
        .await
    }

    /// Serves until `stop` resolves, then drains until the deadline it resolves to (the stages
    /// of [`StagedStop`] share one).
    pub async fn serve_until(
        self,
        stop: impl std::future::Future<Output = tokio::time::Instant> + Send + 'static,
    ) {
        let router = self.router.layer(fundament_telemetry::http_layer());
        let (draining, drain_deadline) = tokio::sync::oneshot::channel();
        let (drain, finish) = (self.drain, self.finish);
        let name = self.name;
        let graceful = async move {
            let deadline = stop.await;
            tracing::info!(service = name, "draining: no new connections; open streams end");
            if let Some(drain) = drain {
                drain();
            }
            let _ = draining.send(deadline);
        };
        // TCP_NODELAY on every connection: an answer leaves in more than one write (its head,
        // then its body), and with Nagle's algorithm a small last write waits for the client's
        // delayed ACK, up to 40 ms on Linux. A plugin page's navigation fetches about twenty
        // small wasm chunks over five connections, and paid that wait on many of them.
        let listener = axum::serve::ListenerExt::tap_io(self.listener, |stream| {
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY could not be set");
            }
        });
        let server = axum::serve(listener, router).with_graceful_shutdown(graceful);
        tokio::select! {
            result = server => match result {
                Ok(()) => tracing::info!(service = name, "drained and stopped"),
                Err(error) => tracing::error!(service = name, %error, "service stopped with an error"),
            },
            () = async {
                match drain_deadline.await {
                    Ok(deadline) => tokio::time::sleep_until(deadline).await,
                    Err(_) => std::future::pending().await,
                }
            } => tracing::warn!(service = name, "drain period over; closing what is still open"),
        }
        if let Some(finish) = finish
            && tokio::time::timeout(FINISH_PERIOD, finish).await.is_err()
        {
            tracing::warn!(
                service = name,
                seconds = FINISH_PERIOD.as_secs(),
                "its last writes did not finish in time"
            );
        }
    }
}

/// Services of one process stopped in the order they call each other: a stage starts draining
/// once every service of the stages before it has stopped, so a request still in flight finds
/// the services it calls still serving. Every stage drains within the same [`DRAIN_PERIOD`],
/// counted from [`StagedStop::stop`]: the order costs no time beyond it.
pub struct StagedStop {
    stages: Vec<Stage>,
}

struct Stage {
    stop: tokio::sync::watch::Sender<Option<tokio::time::Instant>>,
    serving: tokio::task::JoinSet<()>,
}

impl StagedStop {
    /// `count` stages, stopped from the first to the last.
    pub fn new(count: usize) -> Self {
        let stages = (0..count)
            .map(|_| Stage {
                stop: tokio::sync::watch::Sender::new(None),
                serving: tokio::task::JoinSet::new(),
            })
            .collect();
        Self { stages }
    }

    /// Serves `bound` until its stage stops. Panics on a stage past the count: a wiring mistake.
    pub fn serve(&mut self, stage: usize, bound: Bound) {
        let stage = &mut self.stages[stage];
        let mut stopped = stage.stop.subscribe();
        stage.serving.spawn(bound.serve_until(async move {
            // Copied out at once: the guard `wait_for` gives must not be held across an await.
            let deadline = stopped.wait_for(Option::is_some).await.map(|deadline| *deadline);
            match deadline {
                Ok(deadline) => deadline.unwrap_or_else(tokio::time::Instant::now),
                // The StagedStop is gone without a stop: serve on, as a dropped signal would.
                Err(_) => std::future::pending().await,
            }
        }));
    }

    /// Stops every stage in order, within one [`DRAIN_PERIOD`] from now, and returns once all
    /// have stopped.
    pub async fn stop(self) {
        let deadline = tokio::time::Instant::now() + DRAIN_PERIOD;
        for mut stage in self.stages {
            stage.stop.send_replace(Some(deadline));
            while stage.serving.join_next().await.is_some() {}
        }
    }
}

/// authn; `dev_sign_in`: seed users sign in by email (`fundament dev`, any mode).
pub async fn authn(
    settings: &Settings,
    access: &ClusterAccess,
    signer: Arc<RwLock<fundament_tokens::Signer>>,
    store: Arc<dyn fundament_shared_store::SharedStore>,
    dev_sign_in: bool,
    faults: Option<&fundament_dev_faults::Switchboard>,
) -> Result<Bound, StackError> {
    let listener = listen::bind("authn", settings.listen.authn, Key::AuthnListen).await?;
    let state = services::authn_state(
        settings,
        signer,
        services::with_faults(services::fga(settings)?, faults),
        services::clusters(settings, access, "authn").await?,
        store,
        dev_sign_in,
    )?;
    // No CORS: no browser page calls authn (the console's server does).
    let router = match faults {
        // The switchboard of the whole stack sits on authn's port beside its own mint switch,
        // behind the same local-tools-only guard; authn's own switch faults the rest.
        Some(board) => fundament_dev_faults::layer(
            fundament_authn::router_with_dev_routes(Arc::clone(&state), board.routes()),
            board.switch(fundament_dev_faults::Service::Authn),
            connect_refusal,
        ),
        None => fundament_authn::router(Arc::clone(&state)),
    };
    let drain: Box<dyn FnOnce() + Send> = Box::new(move || state.revocations.close_streams());
    Ok(Bound { name: "authn", listener, router, drain: Some(drain), finish: None })
}

pub async fn organization_api(
    settings: &Settings,
    faults: Option<fundament_dev_faults::Switch>,
) -> Result<Bound, StackError> {
    let listener =
        listen::bind("organization-api", settings.listen.organization_api, Key::OrganizationApiListen)
            .await?;
    // No CORS: no browser page calls organization-api (the console's server does).
    let mut router = fundament_organization_api::router(services::catalog(settings)?);
    if let Some(switch) = faults {
        router = fundament_dev_faults::layer(router, switch, connect_refusal);
    }
    Ok(Bound { name: "organization-api", listener, router, drain: None, finish: None })
}

/// A faulted Connect service's answer (development fault switches).
fn connect_refusal(refusal: &fundament_dev_faults::Refusal) -> axum::response::Response {
    use axum::response::IntoResponse;
    let code = fundament_connect::Code::from_http_status(refusal.status);
    fundament_connect::ConnectError::new(code, refusal.message.clone()).into_response()
}

/// kube-api-proxy; `faults`: mock mode's switchboard, whose OpenFGA switch its checks go through.
pub async fn kube_api_proxy(
    settings: &Settings,
    access: &ClusterAccess,
    store: Arc<dyn fundament_shared_store::SharedStore>,
    faults: Option<&fundament_dev_faults::Switchboard>,
) -> Result<Bound, StackError> {
    let listener =
        listen::bind("kube-api-proxy", settings.listen.kube_api_proxy, Key::KubeApiProxyListen).await?;
    // Public keys only, from authn's JWKS (refetched when a token names an unknown key), and
    // the revoked sessions, followed from authn.
    let gateway = services::gateway(
        settings,
        services::credentials(settings),
        services::with_faults(services::fga(settings)?, faults),
        services::clusters(settings, access, "kube-api-proxy").await?,
        services::catalog(settings)?,
        store,
    )?;
    let watches = Arc::clone(&gateway.watches);
    let drain: Box<dyn FnOnce() + Send> = Box::new(move || watches.drain());
    // The audit view's calls still on their way to the shared store are written before exit.
    let audit = Arc::clone(&gateway.audit);
    let finish: Finish = Box::pin(async move {
        if let Some(store) = audit.store() {
            store.flush(FINISH_PERIOD.saturating_sub(std::time::Duration::from_secs(1))).await;
        }
    });
    Ok(Bound {
        name: "kube-api-proxy",
        listener,
        router: fundament_kube_api_proxy::router(gateway),
        drain: Some(drain),
        finish: Some(finish),
    })
}

/// plugin-proxy; `faults`: mock mode's switchboard, whose OpenFGA switch its checks go through.
pub async fn plugin_proxy(
    settings: &Settings,
    access: &ClusterAccess,
    runtimes: fundament_plugin_proxy::Runtimes,
    store: Arc<dyn fundament_shared_store::SharedStore>,
    faults: Option<&fundament_dev_faults::Switchboard>,
) -> Result<Bound, StackError> {
    settings.check_plugin_sdk()?;
    let listener = listen::bind("plugin-proxy", settings.listen.plugin_proxy, Key::PluginProxyListen).await?;
    let origin = |u: &url::Url| fundament_kube_api_proxy::cors::origin_of(u.as_str());
    let frame_key = services::frame_key(settings)?;
    let proxy = fundament_plugin_proxy::PluginProxy {
        origins: fundament_plugin_proxy::Origins {
            console: origin(&settings.urls.console),
            kube_api_proxy: origin(&settings.urls.kube_api_proxy),
            plugins: services::plugin_origins(settings)?,
        },
        credentials: services::credentials(settings),
        fga: services::with_faults(services::fga(settings)?, faults),
        fga_health: Default::default(),
        clusters: services::clusters(settings, access, "plugin-proxy").await?,
        runtimes,
        sdk_dir: Some(settings.cluster.plugin_sdk_dir.clone()),
        frame_key,
        streams: fundament_kube_api_proxy::limits::WatchLimits::new(Arc::clone(&store)),
        bodies: Default::default(),
        pages: Default::default(),
        used_tickets: fundament_plugin_proxy::tickets::UsedTickets::new(store),
        runtime_timeout: fundament_plugin_proxy::RUNTIME_ANSWER_TIMEOUT,
    };
    let proxy = Arc::new(proxy);
    // Page answers are bounded (10 s to the head, 30 s idle): in-flight ones finish in the
    // drain. Runtime calls may stream without end: the drain ends them cleanly.
    let draining = Arc::clone(&proxy);
    Ok(Bound {
        name: "plugin-proxy",
        listener,
        router: fundament_plugin_proxy::router(proxy),
        drain: Some(Box::new(move || draining.streams.drain())),
        finish: None,
    })
}

/// `fundament authn|organization-api|kube-api-proxy|plugin-proxy`: one service until SIGINT or SIGTERM.
/// A service that runs alone (`fundament <service>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Console,
    Authn,
    OrganizationApi,
    KubeApiProxy,
    PluginProxy,
}

impl Service {
    /// Whether the service needs the mode's way to the clusters (a kubeconfig, a garden); the
    /// console and organization-api reach none (the console calls kube-api-proxy).
    pub fn reaches_clusters(self) -> bool {
        !matches!(self, Service::OrganizationApi | Service::Console)
    }

    /// The setting of the address it listens on.
    pub fn listen_key(self) -> Key {
        match self {
            Service::Console => Key::ConsoleListen,
            Service::Authn => Key::AuthnListen,
            Service::OrganizationApi => Key::OrganizationApiListen,
            Service::KubeApiProxy => Key::KubeApiProxyListen,
            Service::PluginProxy => Key::PluginProxyListen,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Service::Console => "console",
            Service::Authn => "authn",
            Service::OrganizationApi => "organization-api",
            Service::KubeApiProxy => "kube-api-proxy",
            Service::PluginProxy => "plugin-proxy",
        }
    }
}

pub async fn run_one(settings: Settings, service: Service) -> Result<(), StackError> {
    listen::warn_url_mismatches(&settings, &[service.listen_key()]);
    let bound = match service {
        Service::OrganizationApi => organization_api(&settings, None).await?,
        Service::PluginProxy => {
            plugin_proxy(
                &settings,
                &ClusterAccess::of(&settings)?,
                fundament_plugin_proxy::Runtimes::ServiceProxy,
                services::shared_store(&settings)?,
                None,
            )
            .await?
        }
        Service::Authn => {
            let signer = services::live_signer(&settings)?;
            let dev_sign_in = settings.mode == fundament_settings::Mode::Mock;
            let store = services::shared_store(&settings)?;
            authn(&settings, &ClusterAccess::of(&settings)?, signer, store, dev_sign_in, None).await?
        }
        Service::KubeApiProxy => {
            kube_api_proxy(
                &settings,
                &ClusterAccess::of(&settings)?,
                services::shared_store(&settings)?,
                None,
            )
            .await?
        }
        Service::Console => return crate::console::run_alone(settings).await,
    };
    log_listening(service.name(), &bound.listener);
    bound.serve(crate::signal::shutdown_signal()).await;
    Ok(())
}

/// The `listening` line: the address itself (`127.0.0.1:8081`), which an operator or a script
/// reads the port from.
fn log_listening(service: &str, listener: &tokio::net::TcpListener) {
    match listener.local_addr() {
        Ok(addr) => tracing::info!(service, %addr, "listening"),
        Err(error) => tracing::info!(service, %error, "listening (its address is unknown)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_listening_line_gives_the_address_itself() {
        let buffer = fundament_telemetry::CapturedLogs::default();
        let lines = buffer.clone();
        let sub = fundament_telemetry::subscriber(
            fundament_telemetry::LogFormat::Json,
            tracing_subscriber::EnvFilter::new("info"),
            move || lines.clone(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tracing::subscriber::with_default(sub, || log_listening("authn", &listener));
        let text = buffer.text();
        let json: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(json["addr"], addr.to_string(), "{text}");
        assert_eq!(json["service"], "authn", "{text}");
    }

    /// A service's last writes run after it stopped serving, before `serve` returns (and the
    /// process with it).
    #[tokio::test]
    async fn the_last_writes_run_once_the_service_stopped() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (drained, finished) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let bound = Bound {
            name: "test",
            listener,
            router: Router::new(),
            drain: Some(Box::new({
                let drained = Arc::clone(&drained);
                move || drained.store(true, Ordering::SeqCst)
            })),
            finish: Some(Box::pin({
                let (drained, finished) = (Arc::clone(&drained), Arc::clone(&finished));
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    finished.store(drained.load(Ordering::SeqCst), Ordering::SeqCst);
                }
            })),
        };
        bound.serve(async {}).await;
        assert!(finished.load(Ordering::SeqCst), "finished after the drain, before serve returned");
    }

    /// A request in flight on the console finds the services it calls still serving: they stop
    /// only once it has been answered. (All stopped at once, the called service refused it.)
    #[tokio::test]
    async fn a_staged_stop_keeps_what_an_earlier_stage_calls_until_it_stopped() {
        let called = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let called_addr = called.local_addr().unwrap();
        let caller = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let caller_addr = caller.local_addr().unwrap();
        let (arrived, arrival) = tokio::sync::oneshot::channel::<()>();
        let arrived = Arc::new(std::sync::Mutex::new(Some(arrived)));
        let calls_on = move || {
            if let Some(arrived) = arrived.lock().unwrap().take() {
                let _ = arrived.send(());
            }
            async move {
                // The stop begins while this request waits.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                match tokio::net::TcpStream::connect(called_addr).await {
                    Ok(_) => "the called service answered",
                    Err(_) => "the called service had stopped",
                }
            }
        };
        let mut staged = StagedStop::new(2);
        staged.serve(
            0,
            Bound {
                name: "caller",
                listener: caller,
                router: Router::new().route("/", axum::routing::get(calls_on)),
                drain: None,
                finish: None,
            },
        );
        staged.serve(
            1,
            Bound { name: "called", listener: called, router: Router::new(), drain: None, finish: None },
        );
        let request = tokio::spawn(http(caller_addr, "GET", "/", ""));
        arrival.await.unwrap();
        staged.stop().await;
        assert_eq!(request.await.unwrap(), (200, "the called service answered".to_string()));
        assert!(tokio::net::TcpStream::connect(called_addr).await.is_err(), "the last stage stopped too");
    }

    /// One HTTP/1.1 request over a real socket: the status and the body.
    async fn http(addr: std::net::SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        (status, answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default())
    }

    /// `fundament dev --mode sandbox` without an identity provider, as `fundament dev` builds
    /// its authn: the seed users sign in, but the development fault switches are mock mode's
    /// only and answer 404 here (docs/dev-switches.md).
    #[tokio::test]
    async fn sandbox_dev_without_a_provider_signs_in_but_has_no_fault_switches() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        // Never called: authn only needs to know the cluster.
        std::fs::write(
            &kubeconfig,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:9\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\n",
        )
        .unwrap();
        let mut settings = fundament_settings::resolve(&[]).unwrap();
        settings.mode = fundament_settings::Mode::Sandbox;
        settings.kubeconfig = Some(kubeconfig);
        // Read at run time: a test binary outlives the clone that built it (scripts/test).
        let fixtures = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
        )
        .join("../fixtures");
        settings.directory = Some(fixtures.join("directory.yaml"));
        settings.fga.tuples = fixtures.join("fga/tuples.yaml");
        settings.state_dir = Some(dir.path().join("state"));
        settings.listen.authn = "127.0.0.1:0".parse().unwrap();
        let dev_sign_in = services::dev_sign_in(&settings);
        assert!(dev_sign_in, "no provider: the seed users sign in");
        let bound = authn(
            &settings,
            &ClusterAccess::of(&settings).unwrap(),
            services::live_signer(&settings).unwrap(),
            services::shared_store(&settings).unwrap(),
            dev_sign_in,
            None,
        )
        .await
        .unwrap();
        let addr = bound.listener.local_addr().unwrap();
        tokio::spawn(bound.serve(std::future::pending()));

        let (status, body) =
            http(addr, "POST", "/authn.v1.AuthnService/DevSignIn", r#"{"email":"alice@acme-corp.com"}"#)
                .await;
        assert_eq!(status, 200, "{body}");
        for (method, path, body) in [
            ("GET", "/dev/faults/mint-plugin-token", ""),
            ("PUT", "/dev/faults/mint-plugin-token", r#"{"fail":true}"#),
            ("POST", "/dev/faults/rotate-signing-key", ""),
        ] {
            let (status, answer) = http(addr, method, path, body).await;
            assert_eq!(status, 404, "{method} {path}: {answer}");
            assert!(answer.contains("unimplemented"), "{method} {path}: {answer}");
        }
    }
}
