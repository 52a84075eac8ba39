//! Cluster access of users: may `user:<id>` see `cluster:<id>`?
//!
//! Every service that lets a user reach a cluster (kube-api-proxy, plugin-proxy,
//! the PluginToken mint) asks the same question, OpenFGA's `can_view`. This crate
//! answers it behind one trait, [`CanView`], with two implementations:
//!
//! - [`TupleStore`], an embedded, read-only tuple store for mock mode and tests,
//!   loaded from `fixtures/fga/tuples.yaml`;
//! - [`OpenFgaClient`], the Check API of a real OpenFGA server.
//!
//! Callers fail closed: an [`FgaError`] is never a "yes".
#![forbid(unsafe_code)]

mod error;
mod openfga;
mod store;
mod tuple;

use std::sync::Arc;

use futures::future::BoxFuture;

pub use error::{FgaError, UNANSWERED, UNAVAILABLE};
pub use openfga::{DEFAULT_TIMEOUT, OpenFgaClient};
pub use store::TupleStore;
pub use tuple::Tuple;

/// The one authorization question the console's services ask.
///
/// Object safe, so services hold an `Arc<dyn CanView>` and do not care which
/// mode they run in.
pub trait CanView: Send + Sync + 'static {
    /// Whether `user:<user_id>` has `can_view` on `cluster:<cluster_id>`.
    fn can_view<'a>(&'a self, user_id: &'a str, cluster_id: &'a str)
    -> BoxFuture<'a, Result<bool, FgaError>>;
}

/// Lets services share one checker without wrapping it again.
impl<T: CanView + ?Sized> CanView for Arc<T> {
    fn can_view<'a>(
        &'a self,
        user_id: &'a str,
        cluster_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, FgaError>> {
        (**self).can_view(user_id, cluster_id)
    }
}
