//! Headless Chromium, driven over the Chrome DevTools Protocol (a WebSocket of JSON messages):
//! start it with a throw-away profile, send commands, and route events by session, each
//! session to whoever attached it (a run); frames of other origins that attach under a
//! session (site isolation puts them in processes of their own) go to the same receiver.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use crate::CheckError;

/// Where Debian installs Chromium.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// How long a DevTools command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(15);

/// A DevTools event.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
    /// The session it came from.
    pub session: String,
}

type Reply = Result<Value, String>;

struct Inner {
    out: mpsc::UnboundedSender<Message>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    /// Event receivers by session id.
    routes: Mutex<HashMap<String, mpsc::UnboundedSender<Event>>>,
    next: AtomicU64,
}

impl Inner {
    fn pending(&self) -> MutexGuard<'_, HashMap<u64, oneshot::Sender<Reply>>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn routes(&self) -> MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Event>>> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A connection to the browser; cheap to clone.
#[derive(Clone)]
pub struct Cdp {
    inner: Arc<Inner>,
}

impl Cdp {
    /// Sends `method` to `session` (the browser itself when `None`) and waits for the result.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CheckError> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        self.inner.pending().insert(id, tx);
        let failed = |message: String| CheckError::Command { method: method.to_string(), message };
        self.inner
            .out
            .send(Message::text(message.to_string()))
            .map_err(|_| failed("the connection is closed".into()))?;
        match tokio::time::timeout(COMMAND_TIMEOUT, rx).await {
            Ok(Ok(reply)) => reply.map_err(failed),
            Ok(Err(_)) => Err(failed("the connection closed".into())),
            Err(_) => {
                self.inner.pending().remove(&id);
                Err(failed(format!("no answer within {} s", COMMAND_TIMEOUT.as_secs())))
            }
        }
    }

    /// Routes the events of `session` (and of the sessions attached under it) to `to`.
    pub fn route(&self, session: &str, to: mpsc::UnboundedSender<Event>) {
        self.inner.routes().insert(session.to_string(), to);
    }

    /// Stops routing the events of these sessions.
    pub fn unroute(&self, sessions: &[String]) {
        let mut routes = self.inner.routes();
        for s in sessions {
            routes.remove(s);
        }
    }

    fn dispatch(&self, text: &str) {
        let Ok(message) = serde_json::from_str::<Value>(text) else { return };
        if let Some(id) = message["id"].as_u64() {
            let reply = match message.get("error") {
                Some(error) => Err(error["message"].as_str().unwrap_or("unknown error").to_string()),
                None => Ok(message["result"].clone()),
            };
            if let Some(tx) = self.inner.pending().remove(&id) {
                let _ = tx.send(reply);
            }
            return;
        }
        let Some(method) = message["method"].as_str() else { return };
        let session = message["sessionId"].as_str().unwrap_or_default().to_string();
        let mut routes = self.inner.routes();
        let Some(to) = routes.get(&session).cloned() else { return };
        // A frame attached under a run's session belongs to that run.
        if method == "Target.attachedToTarget"
            && let Some(child) = message["params"]["sessionId"].as_str()
        {
            routes.insert(child.to_string(), to.clone());
        }
        let _ = to.send(Event { method: method.to_string(), params: message["params"].clone(), session });
    }
}

/// A running headless Chromium; killed when dropped.
pub struct Browser {
    pub cdp: Cdp,
    child: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `chromium` headless with a fresh profile, `*.localhost` mapped to 127.0.0.1, and
    /// connects to its DevTools endpoint.
    pub async fn launch(chromium: &Path) -> Result<Browser, CheckError> {
        let start_failed = |source| CheckError::ChromiumStart { path: chromium.to_path_buf(), source };
        let profile =
            tempfile::Builder::new().prefix("fundament-plugin-check-").tempdir().map_err(start_failed)?;
        let mut child = Command::new(chromium)
            .args([
                "--headless=new",
                "--remote-debugging-port=0",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--no-proxy-server",
                "--mute-audio",
                "--host-resolver-rules=MAP *.localhost 127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(start_failed)?;
        let stderr =
            child.stderr.take().ok_or_else(|| CheckError::ChromiumEndpoint(chromium.to_path_buf()))?;
        let mut lines = BufReader::new(stderr).lines();
        let endpoint = tokio::time::timeout(Duration::from_secs(20), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return Some(url.trim().to_string());
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or_else(|| CheckError::ChromiumEndpoint(chromium.to_path_buf()))?;
        // Chromium keeps writing to stderr: read it so it never blocks.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (socket, _) = tokio_tungstenite::connect_async(endpoint.as_str())
            .await
            .map_err(|e| CheckError::Devtools(e.to_string()))?;
        let (mut sink, mut stream) = socket.split();
        let (out, mut outbox) = mpsc::unbounded_channel::<Message>();
        let cdp = Cdp {
            inner: Arc::new(Inner {
                out,
                pending: Mutex::new(HashMap::new()),
                routes: Mutex::new(HashMap::new()),
                next: AtomicU64::new(1),
            }),
        };
        tokio::spawn(async move {
            while let Some(message) = outbox.recv().await {
                if sink.send(message).await.is_err() {
                    break;
                }
            }
        });
        let reader = cdp.clone();
        tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                if let Message::Text(text) = message {
                    reader.dispatch(text.as_str());
                }
            }
            // The browser is gone: fail whatever still waits.
            reader.inner.pending().clear();
        });
        Ok(Browser { cdp, child, _profile: profile })
    }

    /// Closes the browser (and waits a moment for it to exit).
    pub async fn close(mut self) {
        let _ = self.cdp.call(None, "Browser.close", json!({})).await;
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
    }
}

/// The Chromium to use: `--chromium`, else `$CHROMIUM_PATH`, else Debian's.
pub fn chromium_path(flag: Option<PathBuf>) -> PathBuf {
    flag.or_else(|| std::env::var_os("CHROMIUM_PATH").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CHROMIUM))
}
