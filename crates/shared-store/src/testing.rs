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

/// The lowest port [`free_port`] picks: above the ports services commonly claim.
const LOWEST_PORT: u16 = 10_000;

/// A port of loopback free now, outside the range the kernel hands out for port 0, and never the
/// same twice in this process. A port found by binding port 0 and letting go lies in that range,
/// where any test beside this one (or the stack it starts) may be given it by a bind to port 0
/// before the chosen server listens: the server then cannot listen, or a readiness probe finds
/// the other one. Below the range only another explicit choice can collide.
pub fn free_port() -> u16 {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, RandomState};
    use std::sync::Mutex;
    static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let ephemeral_low = port_0_range_start();
    let span = u64::from(ephemeral_low - LOWEST_PORT);
    let random = RandomState::new();
    let mut given = GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let given = given.get_or_insert_with(HashSet::new);
    for attempt in 0u64..10_000 {
        let port = LOWEST_PORT + (random.hash_one(attempt) % span) as u16;
        if !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free port between {LOWEST_PORT} and {ephemeral_low}");
}

/// A port of loopback that refuses every connection, the same one for the whole test process.
/// A socket bound to it and never listening holds it: connecting gets "connection refused", and
/// no server, nor a bind to port 0, can take it while the process runs. (Binding port 0 and
/// letting go, as tests of "nothing answers" used to, frees the port for whoever binds next.)
pub fn refused_port() -> u16 {
    use std::sync::OnceLock;
    static HELD: OnceLock<(tokio::net::TcpSocket, u16)> = OnceLock::new();
    HELD.get_or_init(|| {
        // Without SO_REUSEADDR (TcpSocket does not set it), no other socket can bind the port.
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket.bind(([127, 0, 0, 1], 0).into()).expect("bind a port of loopback");
        let port = socket.local_addr().expect("a bound socket's address").port();
        (socket, port)
    })
    .1
}

/// Where the kernel's range for port 0 begins (Linux's default when it cannot be read, or when
/// it leaves too few ports below it).
fn port_0_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next().and_then(|low| low.parse::<u16>().ok()))
        .filter(|low| *low > LOWEST_PORT + 1_000)
        .unwrap_or(32_768)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_lie_below_the_port_0_range_and_are_never_given_twice() {
        let ephemeral_low = port_0_range_start();
        let ports: Vec<u16> = (0..200).map(|_| free_port()).collect();
        let distinct: std::collections::HashSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), ports.len(), "a port was given twice");
        assert!(ports.iter().all(|p| (LOWEST_PORT..ephemeral_low).contains(p)), "{ports:?}");
        // What port 0 hands out is never among them, and they are free.
        let zero = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        assert!(zero >= ephemeral_low && !ports.contains(&zero));
        assert!(std::net::TcpListener::bind(("127.0.0.1", ports[0])).is_ok());
    }

    #[test]
    fn the_refused_port_refuses_connections_and_cannot_be_taken() {
        let port = refused_port();
        assert_eq!(refused_port(), port, "one port for the whole process");
        let err = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused, "{err}");
        // std's listener sets SO_REUSEADDR, as servers do: the port stays taken all the same.
        assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_err());
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        assert!(socket.bind(([127, 0, 0, 1], port).into()).is_err());
    }
}

/// A store that is never reachable: every call fails as a Redis that is down does.
#[derive(Debug)]
pub struct Unreachable;

impl Unreachable {
    fn down() -> crate::StoreError {
        crate::StoreError::Unavailable { store: "redis://down".into(), detail: "connection refused".into() }
    }
}

impl crate::SharedStore for Unreachable {
    fn describe(&self) -> String {
        "redis://down".into()
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn take_once<'a>(&'a self, _: &'a str, _: Duration) -> crate::StoreFuture<'a, bool> {
        Box::pin(async { Err(Self::down()) })
    }

    fn revoke<'a>(&'a self, _: &'a crate::Revoked) -> crate::StoreFuture<'a, ()> {
        Box::pin(async { Err(Self::down()) })
    }

    fn revoked(&self, _: i64) -> crate::StoreFuture<'_, Vec<crate::Revoked>> {
        Box::pin(async { Err(Self::down()) })
    }

    fn revocation_events(
        &self,
    ) -> crate::StoreFuture<'_, futures::stream::BoxStream<'static, crate::Revoked>> {
        Box::pin(async { Err(Self::down()) })
    }

    fn lease<'a>(&'a self, _: &'a str, _: &'a str, _: usize, _: Duration) -> crate::StoreFuture<'a, bool> {
        Box::pin(async { Err(Self::down()) })
    }

    fn release<'a>(&'a self, _: &'a str, _: &'a str) -> crate::StoreFuture<'a, ()> {
        Box::pin(async { Err(Self::down()) })
    }

    fn leases<'a>(&'a self, _: &'a str) -> crate::StoreFuture<'a, usize> {
        Box::pin(async { Err(Self::down()) })
    }

    fn append<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a [crate::LogRecord],
        _: crate::LogBounds,
    ) -> crate::StoreFuture<'a, u64> {
        Box::pin(async { Err(Self::down()) })
    }

    fn read_log<'a>(
        &'a self,
        _: &'a str,
        _: Option<&'a str>,
        _: u64,
        _: usize,
    ) -> crate::StoreFuture<'a, Vec<crate::Numbered>> {
        Box::pin(async { Err(Self::down()) })
    }

    fn log_head<'a>(&'a self, _: &'a str) -> crate::StoreFuture<'a, u64> {
        Box::pin(async { Err(Self::down()) })
    }
}
