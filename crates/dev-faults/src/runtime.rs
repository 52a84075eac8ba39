//! A switch per plugin runtime: make one installation's runtime hang, answer garbage or go
//! down, and come back, while `fundament dev` (mock mode) runs it in process.
//!
//! A [`RuntimeSwitch`] holds one runtime's [`RuntimeFault`]. [`RuntimeSwitch::wrap`] puts it
//! around the runtime's router and its listener: the router meets hang and garbage, the
//! listener cuts connections while the runtime is down (a stopped pod's port: nothing is ever
//! answered). [`RuntimeSwitches::routes`] serves the switches under [`PATH`], by installation
//! name; `fundament dev` mounts them beside the services' switches, on authn's port behind the
//! local-tools-only guard.
//!
//! Every request of the runtime meets the fault, its health endpoints and metadata API
//! included: a hung process hangs its `/readyz` too, which is what makes a kubelet restart it.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, PoisonError, RwLock};
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, StatusCode, header};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// `GET` lists every runtime's switch; `GET`/`PUT` `PATH/<installation-name>` reads or sets one.
pub const PATH: &str = "/dev/faults/plugin-runtimes";

/// How long a garbage answer is: enough to fill a frame with noise, small enough to log.
pub const GARBAGE_BYTES: usize = 2048;

/// What a plugin runtime does while its switch is set. The JSON of a `PUT`, for example
/// `{"fault": "hang"}`; strict, so a typo is refused rather than ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "kebab-case", try_from = "RuntimeFaultBody")]
pub enum RuntimeFault {
    /// Serving normally.
    None,
    /// Takes each request and answers nothing, until the switch moves on; then the waiting
    /// requests meet the new setting, as the requests of a resumed process do.
    Hang,
    /// Answers every request `200` with [`GARBAGE_BYTES`] random bytes (the first always
    /// `0xFF`, so never valid UTF-8) as `application/octet-stream`: not what was asked for.
    Garbage,
    /// A stopped pod: each new connection is closed at once and every open one is cut,
    /// before a byte of an answer is written.
    Down,
}

/// A `PUT` body as sent: one flat object, so that any other field is named and refused, which
/// serde's tagged enums do not do for variants without fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuntimeFaultBody {
    fault: String,
}

impl TryFrom<RuntimeFaultBody> for RuntimeFault {
    type Error = String;

    fn try_from(body: RuntimeFaultBody) -> Result<Self, String> {
        match body.fault.as_str() {
            "none" => Ok(RuntimeFault::None),
            "hang" => Ok(RuntimeFault::Hang),
            "garbage" => Ok(RuntimeFault::Garbage),
            "down" => Ok(RuntimeFault::Down),
            other => Err(format!("unknown fault {other:?}")),
        }
    }
}

/// One runtime's switch. Clones share it.
#[derive(Debug, Clone)]
pub struct RuntimeSwitch {
    installation: Arc<str>,
    fault: Arc<tokio::sync::watch::Sender<RuntimeFault>>,
}

impl RuntimeSwitch {
    pub fn new(installation: &str) -> Self {
        let (fault, _) = tokio::sync::watch::channel(RuntimeFault::None);
        Self { installation: installation.into(), fault: Arc::new(fault) }
    }

    /// The PluginInstallation whose runtime this is.
    pub fn installation(&self) -> &str {
        &self.installation
    }

    pub fn fault(&self) -> RuntimeFault {
        *self.fault.borrow()
    }

    /// Sets the fault; logged once when it changes.
    pub fn set(&self, fault: RuntimeFault) {
        let was = self.fault.send_replace(fault);
        if was != fault {
            tracing::info!(
                service = "plugin-runtime",
                installation = %self.installation,
                ?fault,
                "development fault switch flipped"
            );
        }
    }

    /// The runtime's `router` and `listener` with this switch in front: serve the pair
    /// together (`axum::serve(listener, router)`), for the router alone cannot cut a connection.
    pub fn wrap(&self, router: Router, listener: TcpListener) -> (Router, RuntimeListener) {
        let router = router.layer(axum::middleware::from_fn_with_state(self.clone(), apply));
        (router, RuntimeListener { inner: listener, switch: self.clone() })
    }

    /// The setting that ends a hang (at once if there is none).
    async fn after_hang(&self) -> RuntimeFault {
        let mut changes = self.fault.subscribe();
        // Copied out at once: the borrow holds the channel's lock.
        let fault = changes.wait_for(|f| *f != RuntimeFault::Hang).await.map(|f| *f);
        match fault {
            Ok(fault) => fault,
            // The sender lives as long as this switch: not reached.
            Err(_) => std::future::pending().await,
        }
    }

    /// Resolves when the runtime goes down (at once if it is).
    async fn until_down(self) {
        let mut changes = self.fault.subscribe();
        if changes.wait_for(|f| *f == RuntimeFault::Down).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

async fn apply(State(switch): State<RuntimeSwitch>, request: Request, next: Next) -> Response {
    let fault = match switch.fault() {
        RuntimeFault::Hang => switch.after_hang().await,
        other => other,
    };
    match fault {
        // after_hang never yields Hang.
        RuntimeFault::None | RuntimeFault::Hang => next.run(request).await,
        RuntimeFault::Garbage => garbage(),
        // Never sent: the connection refuses every write once the runtime is down
        // (RuntimeIo). A request only gets here if it was hung when the switch went to down.
        RuntimeFault::Down => {
            (StatusCode::SERVICE_UNAVAILABLE, "the plugin runtime is down (development fault switch)")
                .into_response()
        }
    }
}

/// `200`, random bytes that start with `0xFF`, as `application/octet-stream`.
fn garbage() -> Response {
    let mut bytes = vec![0u8; GARBAGE_BYTES];
    rand::Rng::fill(&mut rand::rng(), &mut bytes[..]);
    bytes[0] = 0xFF;
    let mut response = bytes.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    response
}

/// The runtime's listener behind its switch: while the runtime is down each connection is
/// closed as soon as it is accepted.
pub struct RuntimeListener {
    inner: TcpListener,
    switch: RuntimeSwitch,
}

impl axum::serve::Listener for RuntimeListener {
    type Io = RuntimeIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (RuntimeIo, SocketAddr) {
        loop {
            let (stream, peer) = axum::serve::Listener::accept(&mut self.inner).await;
            if self.switch.fault() == RuntimeFault::Down {
                drop(stream);
                continue;
            }
            // As the runtime's own server does (fundament-plugin-runtime): no Nagle delay.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY could not be set");
            }
            let until_down: Pin<Box<dyn Future<Output = ()> + Send>> =
                Box::pin(self.switch.clone().until_down());
            return (RuntimeIo { stream, switch: self.switch.clone(), until_down: Some(until_down) }, peer);
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// One connection of the runtime: once the runtime goes down every read and write fails, so
/// the server drops the connection without writing another byte, idle keep-alive ones included
/// (the pending read is woken by the switch).
pub struct RuntimeIo {
    stream: TcpStream,
    switch: RuntimeSwitch,
    /// `None` once the runtime went down: the connection stays cut even if it comes back.
    until_down: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl RuntimeIo {
    fn cut(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        let down = match &mut self.until_down {
            None => true,
            // The switch itself decides: the future only wakes a pending read. It can answer
            // Pending although the runtime is down, when the connection's task has used up its
            // cooperative budget (tokio's watch is budgeted), and a hung request's answer then
            // went out (`server/tests/integration/plugin_runtime_faults.rs` failed 1 run in 5).
            Some(until) => self.switch.fault() == RuntimeFault::Down || until.as_mut().poll(cx).is_ready(),
        };
        down.then(|| {
            self.until_down = None;
            io::Error::new(
                io::ErrorKind::ConnectionReset,
                "the development fault switch took the plugin runtime down",
            )
        })
    }
}

impl AsyncRead for RuntimeIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(e) = self.cut(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for RuntimeIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Some(e) = self.cut(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.cut(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(e) = self.cut(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The switches of every plugin runtime of a stack, by installation name. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct RuntimeSwitches {
    by_installation: Arc<RwLock<BTreeMap<String, RuntimeSwitch>>>,
}

impl RuntimeSwitches {
    /// The switch of `installation`'s runtime, made (off) if it has none yet.
    pub fn add(&self, installation: &str) -> RuntimeSwitch {
        let mut all = self.by_installation.write().unwrap_or_else(PoisonError::into_inner);
        all.entry(installation.to_owned()).or_insert_with(|| RuntimeSwitch::new(installation)).clone()
    }

    pub fn get(&self, installation: &str) -> Option<RuntimeSwitch> {
        self.by_installation.read().unwrap_or_else(PoisonError::into_inner).get(installation).cloned()
    }

    /// `GET` [`PATH`] (every runtime's switch) and `GET`/`PUT` `PATH/<installation-name>`.
    pub fn routes<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        Router::new()
            .route(PATH, get(list))
            .route(&format!("{PATH}/{{installation}}"), get(read).put(write))
            .with_state(self.clone())
    }

    fn all(&self) -> BTreeMap<String, RuntimeFault> {
        let all = self.by_installation.read().unwrap_or_else(PoisonError::into_inner);
        all.iter().map(|(name, switch)| (name.clone(), switch.fault())).collect()
    }
}

async fn list(State(switches): State<RuntimeSwitches>) -> axum::Json<BTreeMap<String, RuntimeFault>> {
    axum::Json(switches.all())
}

fn unknown(installation: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("no plugin runtime {installation:?} runs in this stack (GET {PATH} lists them)\n"),
    )
        .into_response()
}

async fn read(State(switches): State<RuntimeSwitches>, Path(installation): Path<String>) -> Response {
    match switches.get(&installation) {
        Some(switch) => axum::Json(switch.fault()).into_response(),
        None => unknown(&installation),
    }
}

/// Any content type, so a bare `curl -d` works (as for the services' switches).
async fn write(
    State(switches): State<RuntimeSwitches>,
    Path(installation): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Some(switch) = switches.get(&installation) else { return unknown(&installation) };
    match serde_json::from_slice::<RuntimeFault>(&body) {
        Ok(fault) => {
            switch.set(fault);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => (
            StatusCode::BAD_REQUEST,
            format!("expected {{\"fault\": \"none\" | \"hang\" | \"garbage\" | \"down\"}}: {e}\n"),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests;
