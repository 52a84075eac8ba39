//! Server functions, by domain. Each is callable from the browser and runs on
//! the server; server-only helpers sit in `ssr` modules beside them.

pub mod client;
pub mod codec;
pub mod directory;
#[cfg(feature = "ssr")]
pub mod error_status;
pub mod session;

/// Where the console's own route to the cluster is mounted (see `crate::cluster_route`): the
/// browser code's watches go to `<CLUSTER_ROUTE>/clusters/<cluster-id>/…` on the console's
/// own origin, never to kube-api-proxy directly.
pub const CLUSTER_ROUTE: &str = "/kube";

/// A watch through [`CLUSTER_ROUTE`] that has been quiet this long gets a blank line (which
/// a watch stream's reader skips), so the browser can tell a quiet watch from a connection the
/// network dropped without a word (a laptop's sleep, a NAT or proxy forgetting it): the watch hub
/// takes one silent for [`WATCH_SILENCE`] for dead and resumes it. It also keeps proxies with an
/// idle timeout (nginx's 60 s) from cutting quiet watches.
pub const WATCH_HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(15);

/// How long a watch (or the list before it) may stay silent before the browser takes its
/// connection for dead: three heartbeats, so a slow network does not trip it.
pub const WATCH_SILENCE: std::time::Duration = std::time::Duration::from_secs(45);
