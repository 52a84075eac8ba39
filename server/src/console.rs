//! The console service: Leptos pages, server functions and the built site.

use std::path::Path;

use app::{App, shell, state::ConsoleState};
use axum::{Router, middleware::from_fn_with_state, response::IntoResponse};
use std::sync::Arc;

use app::state::SessionAuthority;
use fundament_settings::Settings;
use http::{HeaderValue, header};
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, file_and_error_handler_with_context, generate_route_list};
use tower_http::{
    compression::CompressionLayer,
    services::{ServeDir, ServeFile},
    set_header::SetResponseHeaderLayer,
};

use crate::middleware::{ConsoleOrigin, no_foreign_reads, same_origin_writes};

/// The file name stem `scripts/site.mjs` gives the wasm, JS and CSS.
pub const OUTPUT_NAME: &str = match option_env!("LEPTOS_OUTPUT_NAME") {
    Some(name) => name,
    None => "console",
};

/// The site is not built where the settings say.
#[derive(Debug, thiserror::Error)]
#[error(
    "site root {root} has no pkg/{js}: build the site first (`scripts/build`, \
     or `scripts/dev`, which builds and runs) or set --site-root / FUNDAMENT_SITE_ROOT"
)]
pub struct SiteMissing {
    root: String,
    js: String,
}

/// Checks that the built site is where the settings say (with the hashed names its
/// `hash.txt` lists, when it has one).
pub fn check_site(settings: &Settings) -> Result<(), SiteMissing> {
    let hashes = app::assets::Hashes::of_site(&settings.site_root).unwrap_or_default();
    let js = hashes.js_name(OUTPUT_NAME);
    if settings.site_root.join("pkg").join(&js).is_file() {
        Ok(())
    } else {
        Err(SiteMissing { root: settings.site_root.display().to_string(), js })
    }
}

/// Leptos's options for the console. A site built with hashed file names has a
/// `hash.txt` in its root, from which Leptos names the scripts and wasm chunks.
pub fn leptos_options(settings: &Settings) -> LeptosOptions {
    let hash_file = app::assets::hash_file(&settings.site_root);
    LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_root(settings.site_root.display().to_string())
        .site_pkg_dir("pkg")
        .site_addr(settings.console_listen)
        .hash_files(hash_file.is_file())
        .hash_file(hash_file.display().to_string().into())
        .build()
}

/// The site's files under `/pkg`: hashed names are kept by browsers for a year, the rest
/// revalidated (`app::assets::cache_control`). Only on answers that carry the file.
async fn pkg_cache_control(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let cache = app::assets::cache_control(request.uri().path());
    let mut response = next.run(request).await;
    if response.status().is_success() || response.status() == http::StatusCode::NOT_MODIFIED {
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    }
    response
}

fn origin_of(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

/// What the console's pages and server functions get at run time.
/// `dev_sign_in`: the sign-in page offers the seed users by email (`fundament dev`: mock
/// mode, and the other modes until an identity provider is configured).
pub fn console_state(
    settings: &Settings,
    sessions: Arc<dyn SessionAuthority>,
    dev_sign_in: bool,
) -> Result<ConsoleState, crate::services::ServiceError> {
    let urls = &settings.urls;
    Ok(ConsoleState {
        sessions: Arc::clone(&sessions),
        mock: dev_sign_in,
        oidc_provider: settings.oidc.as_ref().map(|o| o.provider_name.clone()),
        console_origin: origin_of(&urls.console),
        // Every installation's origin, and nothing else: not plugin-proxy's own host, not the
        // console, not the gateway (a plugin frame cannot be navigated to any of them).
        frame_origins: vec![crate::services::plugin_origins(settings)?.wildcard()],
        backend: Arc::new(app::plugins::backend::Backend::new(
            urls.kube_api_proxy_internal.as_str(),
            urls.organization_api.as_str(),
            urls.authn.as_str(),
            sessions,
        )),
        endpoints: app::api::session::Endpoints {
            kube_api_proxy: urls.kube_api_proxy.as_str().trim_end_matches('/').to_owned(),
            plugin_proxy: urls.plugin_proxy.as_str().trim_end_matches('/').to_owned(),
        },
        directory: crate::services::directory(settings)?,
        fga: crate::services::fga(settings)?,
        open_streams: Default::default(),
    })
}

/// `/livez` (the process serves) and `/readyz`: sessions can be read (authn's keys fetched
/// and the revoked sessions received; `503` and the reason in plain text before). With
/// `?verbose`, every check as kube-apiserver lists them, the services the console calls
/// included as its own calls found them (`[-]organization-api failed: cannot be reached since
/// 12s (not gating)`): they never gate, since every replica shares them.
fn health_routes<S: Clone + Send + Sync + 'static>(
    sessions: Arc<dyn SessionAuthority>,
    backend: Arc<app::plugins::backend::Backend>,
) -> Router<S> {
    use axum::routing::get;
    Router::new().route("/livez", get(|| async { "ok" })).route(
        "/readyz",
        get(move |axum::extract::RawQuery(query): axum::extract::RawQuery| async move {
            let mut readiness = fundament_health::Readiness::new();
            readiness.gate("sessions", sessions.ready().await);
            for (service, health) in backend.dependencies() {
                readiness.observe(service, health);
            }
            readiness.answer(fundament_health::wants_verbose(query.as_deref()))
        }),
    )
}

/// `fundament console`: the console alone (any number of replicas), following authn at
/// `--authn-url` for its keys and revoked sessions, until SIGINT or SIGTERM.
pub async fn run_alone(settings: Settings) -> Result<(), crate::stack::StackError> {
    use fundament_settings::Key;
    check_site(&settings)?;
    settings.check_plugin_sdk()?;
    let listener = crate::listen::bind("console", settings.console_listen, Key::ConsoleListen).await?;
    let sessions = crate::console_auth::AuthnSessions::new(
        settings.urls.authn.as_str(),
        crate::services::credentials(&settings),
    );
    sessions.spawn_refresh();
    let dev_sign_in = settings.mode == fundament_settings::Mode::Mock;
    let state = console_state(&settings, sessions, dev_sign_in)?;
    let drain = ending_streams(&state);
    let router =
        router(leptos_options(&settings), state, &settings.urls.console, &settings.cluster.plugin_sdk_dir)
            .layer(axum::middleware::from_fn(crate::middleware::server_timing));
    tracing::info!(url = %settings.urls.console, listen = %settings.console_listen, "console listening");
    let bound = crate::stack::Bound { name: "console", listener, router, drain: Some(drain), finish: None };
    bound.serve(crate::signal::shutdown_signal()).await;
    Ok(())
}

/// The console's drain ([`crate::stack::Bound::drain`]): the watches it passes on end.
pub fn ending_streams(state: &ConsoleState) -> Box<dyn FnOnce() + Send> {
    let streams = state.open_streams.clone();
    Box::new(move || streams.close())
}

/// The console's router.
/// `sdk_dir`: the plugin SDK, served at `/plugin-ui/` (for the console's own tools and previews).
pub fn router(options: LeptosOptions, state: ConsoleState, console_url: &url::Url, sdk_dir: &Path) -> Router {
    let routes = generate_route_list(App);
    // The console's browser code reaches the cluster through its own origin only.
    let cluster_route = Router::new()
        .route(
            &format!("{}/{{*rest}}", app::cluster_route::PREFIX),
            axum::routing::any(app::cluster_route::handle),
        )
        .route(app::audit::export::PATH, axum::routing::get(app::audit::export::handle))
        .with_state(state.clone());
    let health = health_routes(Arc::clone(&state.sessions), Arc::clone(&state.backend));
    // OpenID Connect sign-in's navigations (the protocol itself is authn's).
    let oidc_routes = Router::new()
        .route(app::oidc_route::START_PATH, axum::routing::get(app::oidc_route::start))
        .route(app::oidc_route::CALLBACK_PATH, axum::routing::get(app::oidc_route::callback))
        .route(app::oidc_route::END_SESSION_PATH, axum::routing::get(app::oidc_route::end_session))
        .with_state(state.clone());
    // The generated form and delete confirmation post to their own pages without JavaScript.
    let form_posts =
        app::resource_views::form_post::FormPosts { console: state.clone(), options: options.clone() };
    let context = move || provide_context(state.clone());
    let pkg_dir = Path::new(&*options.site_root).join(&*options.site_pkg_dir);
    // Precompressed by scripts/site.mjs: brotli and gzip files beside each.
    let pkg = Router::new()
        .fallback_service(ServeDir::new(pkg_dir).precompressed_br().precompressed_gzip())
        .layer(axum::middleware::from_fn(pkg_cache_control));
    let shell_options = options.clone();
    // Any other path: a page's with a trailing slash goes to the page; the rest is a static file
    // of the site, or the not-found page.
    let pages = file_and_error_handler_with_context(context.clone(), shell);
    let mut page_routes =
        Router::new().leptos_routes_with_context(&options, routes, context.clone(), move || {
            shell(shell_options.clone())
        });
    for path in app::resource_views::form_post::PATHS {
        page_routes = page_routes.route(
            path,
            axum::routing::post(app::resource_views::form_post::handle).with_state(form_posts.clone()),
        );
    }
    page_routes
        .nest_service("/pkg", pkg)
        .merge(cluster_route)
        .merge(health)
        .merge(oidc_routes)
        // The minified SDK (plugin-sdk/minify.mjs), as plugin-proxy serves it.
        .route_service("/plugin-ui/plugin-sdk.js", ServeFile::new(sdk_dir.join("plugin-sdk.min.js")))
        .route_service("/plugin-ui/plugin-sdk.css", ServeFile::new(sdk_dir.join("plugin-sdk.css")))
        .route_service("/plugin-ui/plugin-sdk.d.ts", ServeFile::new(sdk_dir.join("plugin-sdk.d.ts")))
        .fallback(
            move |uri: http::Uri,
                  state: axum::extract::State<LeptosOptions>,
                  request: axum::extract::Request| {
                let pages = pages.clone();
                async move {
                    match crate::middleware::without_trailing_slash(request.method(), &uri) {
                        Some(to) => axum::response::Redirect::permanent(&to).into_response(),
                        None => pages(uri, state, request).await,
                    }
                }
            },
        )
        .with_state(options)
        // Innermost: every render and server function keeps its own reactive owner across
        // awaits (app/src/request_owner.rs says why).
        .layer(axum::middleware::from_fn(app::request_owner::own_owner))
        // A server function's error answers with the status of its kind, not always 500.
        .layer(axum::middleware::from_fn(app::api::error_status::with_error_status))
        // A handler that panics answers a plain 500 (the detail is in the log); the console
        // serves on, and the layers below still add their security headers.
        .layer(fundament_telemetry::catch_panics(fundament_telemetry::PanicAnswer(|| {
            (
                "text/plain; charset=utf-8",
                "Something went wrong in the console. The error is in its log.".to_string(),
            )
        })))
        .layer(from_fn_with_state(ConsoleOrigin(origin_of(console_url)), same_origin_writes))
        .layer(axum::middleware::from_fn(no_foreign_reads))
        .layer(CompressionLayer::new().br(true).gzip(true))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        ))
        // The console uses none of these, so it cannot hand them to a plugin frame either
        // (browsers already deny them to cross-origin frames unless allowed; this says so).
        .layer(SetResponseHeaderLayer::if_not_present(
            http::HeaderName::from_static("permissions-policy"),
            HeaderValue::from_static(PERMISSIONS_POLICY),
        ))
        // A window another origin opened or opens (a plugin page's popup, a link with an
        // opener) gets no handle on the console's window, nor the console on it.
        .layer(SetResponseHeaderLayer::if_not_present(
            http::HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        ))
        // Served over https, the console is asked for over https only from then on: the
        // session cookie is `Secure` already, and this stops a first plain-http request that
        // a network attacker could answer. Not for subdomains: the plugin origins are the
        // operator's to serve.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::STRICT_TRANSPORT_SECURITY,
            (console_url.scheme() == "https").then_some(HeaderValue::from_static(STRICT_TRANSPORT_SECURITY)),
        ))
}

/// How long browsers keep to https for the console once they saw it over https: a year.
const STRICT_TRANSPORT_SECURITY: &str = "max-age=31536000";

/// Powerful features nobody on the console's pages (its own or a plugin's frame) may use.
const PERMISSIONS_POLICY: &str =
    "camera=(), microphone=(), geolocation=(), payment=(), usb=(), display-capture=()";

#[cfg(test)]
mod tests {
    use super::*;
    use app::state::{IssuedSession, SessionUser, SignInError, SignOutOutcome};
    use std::future::Future;
    use std::pin::Pin;
    use tower::ServiceExt;

    /// Sessions that cannot be read yet, for the reason given.
    #[derive(Debug)]
    struct NotReady(&'static str);

    impl SessionAuthority for NotReady {
        fn dev_sign_in<'a>(
            &'a self,
            _: &'a str,
        ) -> Pin<Box<dyn Future<Output = Result<IssuedSession, SignInError>> + Send + 'a>> {
            Box::pin(async { Err(SignInError::Failed) })
        }
        fn verify(&self, _: &str) -> Option<SessionUser> {
            None
        }
        fn sign_out<'a>(&'a self, _: &'a str) -> Pin<Box<dyn Future<Output = SignOutOutcome> + Send + 'a>> {
            Box::pin(async { SignOutOutcome::Ended })
        }
        fn ready(&self) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
            Box::pin(async { Err(self.0.to_string()) })
        }
    }

    async fn get(sessions: Arc<dyn SessionAuthority>, path: &str) -> (u16, String) {
        // Nothing listens at these addresses: the calls below fail as an outage does.
        let backend = Arc::new(app::plugins::backend::Backend::new(
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            Arc::clone(&sessions),
        ));
        get_with(sessions, backend, path).await
    }

    async fn get_with(
        sessions: Arc<dyn SessionAuthority>,
        backend: Arc<app::plugins::backend::Backend>,
        path: &str,
    ) -> (u16, String) {
        let req = http::Request::get(path).body(axum::body::Body::empty()).unwrap();
        let res = health_routes::<()>(sessions, backend).oneshot(req).await.unwrap();
        let status = res.status().as_u16();
        let body = axum::body::to_bytes(res.into_body(), 1024).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn readyz_is_503_with_the_reason_until_sessions_can_be_read_and_livez_is_200() {
        let sessions: Arc<dyn SessionAuthority> = Arc::new(NotReady("authn's keys (JWKS) not fetched yet"));
        assert_eq!(
            get(Arc::clone(&sessions), "/readyz").await,
            (503, "authn's keys (JWKS) not fetched yet".into())
        );
        assert_eq!(get(sessions, "/livez").await, (200, "ok".into()));
    }

    #[tokio::test]
    async fn readyz_verbose_lists_the_services_as_the_consoles_calls_found_them_without_gating() {
        #[derive(Debug)]
        struct Ready;
        impl SessionAuthority for Ready {
            fn dev_sign_in<'a>(
                &'a self,
                _: &'a str,
            ) -> Pin<Box<dyn Future<Output = Result<IssuedSession, SignInError>> + Send + 'a>> {
                Box::pin(async { Err(SignInError::Failed) })
            }
            fn verify(&self, _: &str) -> Option<SessionUser> {
                None
            }
            fn sign_out<'a>(
                &'a self,
                _: &'a str,
            ) -> Pin<Box<dyn Future<Output = SignOutOutcome> + Send + 'a>> {
                Box::pin(async { SignOutOutcome::Ended })
            }
        }
        let sessions: Arc<dyn SessionAuthority> = Arc::new(Ready);
        let backend = Arc::new(app::plugins::backend::Backend::new(
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            Arc::clone(&sessions),
        ));
        let (status, text) = get_with(Arc::clone(&sessions), Arc::clone(&backend), "/readyz?verbose").await;
        assert_eq!(status, 200);
        assert_eq!(
            text,
            "[+]sessions ok\n[+]kube-api-proxy ok: no call yet\n[+]organization-api ok: no call yet\n[+]authn ok: no call yet\nreadyz check passed\n"
        );
        // organization-api cannot be reached: the console says so and stays ready.
        let _ = backend.definition("acme-corp", "cert-manager", "v1.17.2", "sha256:x").await;
        let (status, text) = get_with(Arc::clone(&sessions), Arc::clone(&backend), "/readyz?verbose").await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("[-]organization-api failed: cannot be reached since "), "{text}");
        assert!(text.contains("s (not gating)\n"), "{text}");
        assert_eq!(get_with(sessions, backend, "/readyz").await, (200, "ok".into()));
    }
}
