//! Server functions, by domain. Each is callable from the browser and runs on
//! the server; server-only helpers sit in `ssr` modules beside them.

pub mod codec;
pub mod directory;
#[cfg(feature = "ssr")]
pub mod error_status;
pub mod session;

/// Where the console's own route to the cluster is mounted (see `crate::cluster_route`): the
/// browser code's watches go to `<CLUSTER_ROUTE>/clusters/<cluster-id>/…` on the console's
/// own origin, never to kube-api-proxy directly.
pub const CLUSTER_ROUTE: &str = "/kube";
