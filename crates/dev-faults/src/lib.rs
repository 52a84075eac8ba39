//! Mock mode's development fault switches for whole services: make authn, organization-api,
//! the embedded cluster or OpenFGA go down, restart, slow down or fail every request, and come
//! back, while `fundament dev` runs. The faults project of the Playwright suite and anyone trying the console
//! against a failing dependency flip them with a `PUT` (docs/dev-switches.md).
//!
//! A [`Switch`] holds one service's [`Fault`]. [`layer`] puts it in front of that service's
//! router: every request then gets what the fault says ([`Switch::effect`]), in the service's
//! own error format (a Kubernetes `Status`, a Connect error), chosen by the caller's `render`.
//! The embedded cluster also cuts its connections while it is down ([`Switch::until_unreachable`]),
//! so its clients see what a stopped process looks like. OpenFGA is no service of the stack but
//! a checker each service calls: [`FaultyCanView`] puts its switch in front of a checker, so
//! checks fail as the real OpenFGA client's would. [`Switchboard::routes`] serves the
//! switches; `fundament dev` mounts them on authn's port behind its local-tools-only guard.
//!
//! Each plugin runtime has a switch of its own, by installation name ([`runtime`]): it hangs,
//! answers garbage or goes down.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use http::StatusCode;
use serde::{Deserialize, Serialize};

pub mod runtime;

/// The prefix of every switch; requests under it are never faulted, so the switch that took a
/// service down can bring it back.
pub const PREFIX: &str = "/dev/faults";

/// A service a switch acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Authn,
    OrganizationApi,
    Cluster,
    /// The `can_view` checks of every service ([`FaultyCanView`]).
    OpenFga,
}

impl Service {
    pub const ALL: [Service; 4] =
        [Service::Authn, Service::OrganizationApi, Service::Cluster, Service::OpenFga];

    /// The name in the switch's path and in the messages a fault answers.
    pub fn name(self) -> &'static str {
        match self {
            Service::Authn => "authn",
            Service::OrganizationApi => "organization-api",
            Service::Cluster => "cluster",
            Service::OpenFga => "openfga",
        }
    }

    /// `/dev/faults/<name>`.
    pub fn path(self) -> String {
        format!("{PREFIX}/{}", self.name())
    }
}

/// What a service does while the switch is set. The JSON of a `PUT`, for example
/// `{"fault": "slow", "delay_ms": 3000}`; strict, so a typo is refused rather than ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "kebab-case", try_from = "FaultBody")]
pub enum Fault {
    /// Serving normally.
    None,
    /// Not reachable until switched back.
    Down,
    /// Down for `seconds`, then back by itself with its state, as after a process restart.
    Restarting { seconds: u64 },
    /// Every request waits `delay_ms` before it is handled.
    Slow { delay_ms: u64 },
    /// Every request is answered with this HTTP status (500, 429 …) in the service's format.
    Status { status: u16 },
}

/// A `PUT` body as sent: one flat object, so that a field the fault does not take (or a typo)
/// is named and refused, which serde's tagged enums do not do for faults without fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultBody {
    fault: String,
    seconds: Option<u64>,
    delay_ms: Option<u64>,
    status: Option<u16>,
}

impl TryFrom<FaultBody> for Fault {
    type Error = String;

    fn try_from(body: FaultBody) -> Result<Self, String> {
        let FaultBody { fault, seconds, delay_ms, status } = body;
        let given =
            [("seconds", seconds.is_some()), ("delay_ms", delay_ms.is_some()), ("status", status.is_some())];
        let (fault, takes) = match fault.as_str() {
            "none" => (Fault::None, None),
            "down" => (Fault::Down, None),
            "restarting" => (Fault::Restarting { seconds: seconds.unwrap_or_default() }, Some("seconds")),
            "slow" => (Fault::Slow { delay_ms: delay_ms.unwrap_or_default() }, Some("delay_ms")),
            "status" => (Fault::Status { status: status.unwrap_or_default() }, Some("status")),
            other => return Err(format!("unknown fault {other:?}")),
        };
        for (field, present) in given {
            if present && takes != Some(field) {
                return Err(format!("the {:?} fault takes no {field:?}", fault_name(fault)));
            }
            if !present && takes == Some(field) {
                return Err(format!("the {:?} fault needs {field:?}", fault_name(fault)));
            }
        }
        Ok(fault)
    }
}

fn fault_name(fault: Fault) -> &'static str {
    match fault {
        Fault::None => "none",
        Fault::Down => "down",
        Fault::Restarting { .. } => "restarting",
        Fault::Slow { .. } => "slow",
        Fault::Status { .. } => "status",
    }
}

/// The bounds a `PUT` is checked against: a switch that would stall a test for an hour is
/// more likely a unit mistake than intent.
const MAX_RESTART_SECONDS: u64 = 300;
const MAX_DELAY_MS: u64 = 120_000;

impl Fault {
    /// Why this fault cannot be set, if it cannot.
    fn invalid(self) -> Option<String> {
        match self {
            Fault::Restarting { seconds } if !(1..=MAX_RESTART_SECONDS).contains(&seconds) => {
                Some(format!("seconds must be 1 to {MAX_RESTART_SECONDS}, not {seconds}"))
            }
            Fault::Slow { delay_ms } if !(1..=MAX_DELAY_MS).contains(&delay_ms) => {
                Some(format!("delay_ms must be 1 to {MAX_DELAY_MS}, not {delay_ms}"))
            }
            Fault::Status { status } if !(400..=599).contains(&status) => {
                Some(format!("status must be an error status, 400 to 599, not {status}"))
            }
            _ => None,
        }
    }

    /// Down or restarting: nothing is answered.
    pub fn unreachable(self) -> bool {
        matches!(self, Fault::Down | Fault::Restarting { .. })
    }
}

/// What a request meets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Pass,
    /// Handled after this wait.
    Delay(Duration),
    Refuse(Refusal),
}

/// The answer a faulted request gets, for the service to render in its own format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    /// Seconds, for the `Retry-After` header and the body's own field.
    pub retry_after: Option<u32>,
    /// Names the service, what is wrong, and the switch that did it.
    pub message: String,
}

#[derive(Debug, Clone, Copy)]
struct Setting {
    fault: Fault,
    /// Bumped by each change, so a restart's timer does not undo a later setting.
    generation: u64,
    /// When a restart ends.
    back_at: Option<Instant>,
}

/// One service's switch. Clones share it.
#[derive(Debug, Clone)]
pub struct Switch {
    service: Service,
    setting: Arc<tokio::sync::watch::Sender<Setting>>,
}

impl Switch {
    pub fn new(service: Service) -> Self {
        let (setting, _) =
            tokio::sync::watch::channel(Setting { fault: Fault::None, generation: 0, back_at: None });
        Self { service, setting: Arc::new(setting) }
    }

    pub fn service(&self) -> Service {
        self.service
    }

    pub fn fault(&self) -> Fault {
        self.setting.borrow().fault
    }

    /// Sets the fault. A restart ends by itself after its seconds (needs a Tokio runtime).
    pub fn set(&self, fault: Fault) {
        let back_at = match fault {
            Fault::Restarting { seconds } => Some(Instant::now() + Duration::from_secs(seconds)),
            _ => None,
        };
        let mut generation = 0;
        let mut was = Fault::None;
        self.setting.send_modify(|s| {
            was = s.fault;
            s.generation += 1;
            generation = s.generation;
            s.fault = fault;
            s.back_at = back_at;
        });
        if was != fault {
            tracing::info!(service = self.service.name(), ?fault, "development fault switch flipped");
        }
        if let Fault::Restarting { seconds } = fault {
            let setting = Arc::clone(&self.setting);
            let service = self.service.name();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(seconds)).await;
                let back = setting.send_if_modified(|s| {
                    let still = s.generation == generation;
                    if still {
                        *s = Setting { fault: Fault::None, generation: s.generation + 1, back_at: None };
                    }
                    still
                });
                if back {
                    tracing::info!(service, "restart over: serving again");
                }
            });
        }
    }

    /// Down or restarting now.
    pub fn unreachable(&self) -> bool {
        self.fault().unreachable()
    }

    /// Resolves when the service becomes unreachable (at once if it is): the embedded cluster
    /// cuts its open connections then.
    pub async fn until_unreachable(&self) {
        let mut changes = self.setting.subscribe();
        if changes.wait_for(|s| s.fault.unreachable()).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// What a request meets now.
    pub fn effect(&self) -> Effect {
        let Setting { fault, back_at, .. } = *self.setting.borrow();
        if fault == Fault::None {
            // The path of every request while nothing is switched on: nothing to format.
            return Effect::Pass;
        }
        let name = self.service.name();
        let undo =
            format!("development fault switch: PUT {} {{\"fault\": \"none\"}} ends it", self.service.path());
        match fault {
            Fault::None => Effect::Pass,
            Fault::Slow { delay_ms } => Effect::Delay(Duration::from_millis(delay_ms)),
            Fault::Down => Effect::Refuse(Refusal {
                status: StatusCode::SERVICE_UNAVAILABLE,
                retry_after: None,
                message: format!("{name} is down ({undo})"),
            }),
            Fault::Restarting { .. } => {
                // Rounded up: "back in 0 s" would send clients back too early.
                let left = back_at.map_or(1, |at| {
                    at.saturating_duration_since(Instant::now()).as_millis().div_ceil(1000).max(1)
                });
                Effect::Refuse(Refusal {
                    status: StatusCode::SERVICE_UNAVAILABLE,
                    retry_after: Some(u32::try_from(left).unwrap_or(u32::MAX)),
                    message: format!("{name} is restarting, back in {left} s (development fault switch)"),
                })
            }
            Fault::Status { status } => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let retry_after = (status == StatusCode::TOO_MANY_REQUESTS).then_some(1);
                Effect::Refuse(Refusal {
                    status,
                    retry_after,
                    message: format!("{name} answers every request with HTTP {} ({undo})", status.as_u16()),
                })
            }
        }
    }
}

/// How a service writes a refusal in its own error format.
pub type Render = fn(&Refusal) -> Response;

/// Puts `switch` in front of `router`: each request meets [`Switch::effect`], a refusal
/// rendered by `render` with a `Retry-After` header when it has one. Requests under
/// [`PREFIX`] pass untouched.
pub fn layer(router: Router, switch: Switch, render: Render) -> Router {
    router.layer(axum::middleware::from_fn_with_state((switch, render), apply))
}

async fn apply(State((switch, render)): State<(Switch, Render)>, request: Request, next: Next) -> Response {
    if request.uri().path().starts_with(PREFIX) {
        return next.run(request).await;
    }
    match switch.effect() {
        Effect::Pass => next.run(request).await,
        Effect::Delay(wait) => {
            tokio::time::sleep(wait).await;
            next.run(request).await
        }
        Effect::Refuse(refusal) => {
            let mut response = render(&refusal);
            *response.status_mut() = refusal.status;
            if let Some(seconds) = refusal.retry_after {
                response.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
            }
            if refusal.status == StatusCode::SERVICE_UNAVAILABLE {
                // A service that is down keeps no connection open.
                response
                    .headers_mut()
                    .insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
            }
            response
        }
    }
}

/// The switches of a whole stack.
#[derive(Debug, Clone)]
pub struct Switchboard {
    switches: [Switch; 4],

    /// The plugin runtimes' switches (mock mode runs each runtime in process).
    runtimes: runtime::RuntimeSwitches,
}

impl Default for Switchboard {
    fn default() -> Self {
        Self { switches: Service::ALL.map(Switch::new), runtimes: runtime::RuntimeSwitches::default() }
    }
}

impl Switchboard {
    pub fn switch(&self, service: Service) -> Switch {
        // In the order of Service::ALL, which Default builds them in.
        let index = match service {
            Service::Authn => 0,
            Service::OrganizationApi => 1,
            Service::Cluster => 2,
            Service::OpenFga => 3,
        };
        self.switches[index].clone()
    }

    /// The plugin runtimes' switches; [`Switchboard::routes`] serves them too.
    pub fn runtimes(&self) -> &runtime::RuntimeSwitches {
        &self.runtimes
    }

    /// `GET /dev/faults/services` (every switch) and `GET`/`PUT /dev/faults/<service>`; the
    /// plugin runtimes' under [`runtime::PATH`].
    pub fn routes<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        let mut router = Router::new().route(
            &format!("{PREFIX}/services"),
            get({
                let board = self.clone();
                move || async move {
                    let all: serde_json::Map<String, serde_json::Value> = board
                        .switches
                        .iter()
                        .map(|s| {
                            (s.service.name().to_owned(), serde_json::to_value(s.fault()).unwrap_or_default())
                        })
                        .collect();
                    Json(all)
                }
            }),
        );
        for switch in &self.switches {
            router = router.route(&switch.service.path(), get(read).put(write).with_state(switch.clone()));
        }
        router.merge(self.runtimes.routes())
    }
}

async fn read(State(switch): State<Switch>) -> Json<Fault> {
    Json(switch.fault())
}

/// Any content type, so a bare `curl -d` works; browsers cannot send it (the guard in front
/// refuses pages, and a cross-origin PUT fails its CORS preflight).
async fn write(State(switch): State<Switch>, body: axum::body::Bytes) -> Response {
    let fault = match serde_json::from_slice::<Fault>(&body) {
        Ok(fault) => fault,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!(
                    "expected {{\"fault\": \"none\" | \"down\" | \"restarting\" (with \"seconds\") | \"slow\" (with \"delay_ms\") | \"status\" (with \"status\")}}: {e}\n"
                ),
            )
                .into_response();
        }
    };
    if let Some(why) = fault.invalid() {
        return (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response();
    }
    switch.set(fault);
    StatusCode::NO_CONTENT.into_response()
}

mod openfga;
pub use openfga::FaultyCanView;

#[cfg(test)]
mod tests;
