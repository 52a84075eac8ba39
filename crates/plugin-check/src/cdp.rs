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
    /// Starts `chromium` headless with a fresh profile, and connects to its DevTools endpoint.
    ///
    /// The pages it runs may be someone else's, so it reaches nothing but the check's own
    /// server, on 127.0.0.1:`port` (see [`network_args`], [`PREFERENCES`]). It runs in
    /// Chromium's sandbox, unless as root (see [`sandbox_args`]).
    pub async fn launch(chromium: &Path, port: u16) -> Result<Browser, CheckError> {
        let start_failed = |source| CheckError::ChromiumStart { path: chromium.to_path_buf(), source };
        let profile =
            tempfile::Builder::new().prefix("fundament-plugin-check-").tempdir().map_err(start_failed)?;
        let default = profile.path().join("Default");
        std::fs::create_dir(&default).map_err(start_failed)?;
        std::fs::write(default.join("Preferences"), PREFERENCES).map_err(start_failed)?;
        let mut child = Command::new(chromium)
            .args(sandbox_args())
            .args(network_args(port))
            .args([
                "--headless=new",
                "--remote-debugging-port=0",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--mute-audio",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(start_failed)?;
        let stderr = child.stderr.take().ok_or_else(|| CheckError::ChromiumEndpoint {
            path: chromium.to_path_buf(),
            stderr: String::new(),
        })?;
        let mut lines = BufReader::new(stderr).lines();
        // Chromium's last words, should it stop before it listens (a sandbox it cannot set up).
        let mut said = Vec::new();
        let endpoint = tokio::time::timeout(Duration::from_secs(20), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return Some(url.trim().to_string());
                }
                if said.len() == STDERR_KEPT {
                    said.remove(0);
                }
                said.push(line);
            }
            None
        })
        .await
        .ok()
        .flatten();
        let Some(endpoint) = endpoint else {
            return Err(CheckError::ChromiumEndpoint {
                path: chromium.to_path_buf(),
                stderr: said.join("\n"),
            });
        };
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

/// How many of Chromium's stderr lines a start failure shows.
const STDERR_KEPT: usize = 8;

/// The flags that keep the browser on the check's server, 127.0.0.1:`port`. CSP keeps the
/// pages there already (crate::server); these hold for what CSP does not govern, and should
/// a page find a way around it.
fn network_args(port: u16) -> Vec<String> {
    vec![
        // The check's origins are `console.`, `kube.` and `run-<n>.localhost`; no other name
        // resolves, so a page (or a prefetch of a link of it) cannot even reach a DNS server.
        "--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP localhost 127.0.0.1, MAP * ~NOTFOUND".into(),
        // Names do not cover IP literals (nor WebRTC's TURN over TCP): everything but the
        // check's origins goes to the check's server as to a proxy, which refuses it (404 to
        // an unknown host, 405 to CONNECT). The bypass list replaces Chromium's implicit one
        // (`<-loopback>`), which would let every loopback port, [::1] and link-local
        // addresses (169.254.169.254, a cloud's metadata service) go direct.
        format!("--proxy-server=http://127.0.0.1:{port}"),
        format!("--proxy-bypass-list=<-loopback>;*.localhost:{port}"),
    ]
}

/// The profile's preferences (the browser contexts of the runs inherit them). WebRTC goes
/// around CSP and the resolver: ICE sends STUN and TURN to literal addresses, and a TURN
/// username is the page's to choose. `disable_non_proxied_udp` leaves it no UDP and its TCP
/// through the proxy of [`network_args`]. As a preference, not the switch
/// `--force-webrtc-ip-handling-policy`: Chromium does not hand that switch to its renderers,
/// which kept sending STUN with it.
const PREFERENCES: &str = r#"{"webrtc": {"ip_handling_policy": "disable_non_proxied_udp", "multiple_routes_enabled": false, "nonproxied_udp_enabled": false}}"#;

/// `--no-sandbox` when running as root, and nothing otherwise. Chromium refuses to start as
/// root in its sandbox (containers and CI runners often run as root), so there it has to run
/// without; anyone else keeps the sandbox, which is what stands between a hostile page that
/// breaks the renderer and the files of the user running the check.
fn sandbox_args() -> Vec<&'static str> {
    if running_as_root() { vec!["--no-sandbox"] } else { vec![] }
}

/// Whether the effective user id is 0, from `/proc/self/status` (`Uid: real effective saved
/// fs`), which needs neither `libc` nor `unsafe`. Where it cannot be read, not root: Chromium
/// then says itself that it will not run as root without `--no-sandbox`.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| effective_uid_is_root(&status))
}

fn effective_uid_is_root(status: &str) -> bool {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .is_some_and(|uid| uid == "0")
}

/// The Chromium to use: `--chromium`, else `$CHROMIUM_PATH`, else Debian's.
pub fn chromium_path(flag: Option<PathBuf>) -> PathBuf {
    flag.or_else(|| std::env::var_os("CHROMIUM_PATH").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CHROMIUM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_the_effective_uid() {
        assert!(effective_uid_is_root("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t0\t0\t0\t0\n"));
        assert!(!effective_uid_is_root("Uid:\t0\t1000\t1000\t1000\n"));
        assert!(!effective_uid_is_root("Uid:\t1000\t1000\t1000\t1000\n"));
        assert!(!effective_uid_is_root("no such line"));
    }

    #[test]
    fn the_network_is_loopback_only() {
        let args = network_args(4242).join(" ");
        assert!(args.contains("MAP * ~NOTFOUND"), "{args}");
        assert!(args.contains("--proxy-server=http://127.0.0.1:4242"), "{args}");
        assert!(args.contains("--proxy-bypass-list=<-loopback>;*.localhost:4242"), "{args}");
        let prefs: Value = serde_json::from_str(PREFERENCES).unwrap();
        assert_eq!(prefs["webrtc"]["ip_handling_policy"], "disable_non_proxied_udp");
    }
}
