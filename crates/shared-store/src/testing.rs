//! For tests of this crate and of the services that use it: a real `redis-server` (Debian's
//! package, which scripts/setup installs) on a free port of loopback, stopped on drop.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A redis-server of a test, without persistence.
pub struct RedisServer {
    child: Child,
    /// `redis://127.0.0.1:<port>/0`
    pub url: String,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free TCP port of loopback (free when asked).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port").local_addr().expect("bound").port()
}

impl RedisServer {
    /// On a free port.
    pub async fn start() -> RedisServer {
        Self::start_on(free_port()).await
    }

    /// On `port`, once it answers.
    pub async fn start_on(port: u16) -> RedisServer {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is installed (scripts/setup installs Debian's redis-server)");
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return RedisServer { child, url: format!("redis://127.0.0.1:{port}/0"), port, _dir: dir };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server did not start on port {port}");
    }
}
