//! Frame tickets are single-use: plugin-proxy takes each ticket it accepts in the shared store
//! until the ticket would have expired anyway (plus the verifier's leeway), so a ticket copied
//! from a URL, a log or a history entry opens nothing, at this replica or any other
//! (`fundament_shared_store`: `SET NX` with expiry in Redis; bounded in memory in-process).
//!
//! Fail closed: when the shared store cannot be asked, the ticket is refused (the frame shows
//! plugin-proxy's 404 and the console can mint another) rather than risk a second use.

use std::sync::Arc;
use std::time::Duration;

use fundament_shared_store::{InProcess, SharedStore};

/// The verifier's leeway past `exp`, during which a ticket still verifies.
const LEEWAY_SECS: i64 = 60;

#[derive(Debug, Clone)]
pub struct UsedTickets {
    store: Arc<dyn SharedStore>,
}

impl Default for UsedTickets {
    /// In this process only (one replica).
    fn default() -> Self {
        Self { store: Arc::new(InProcess::new()) }
    }
}

impl UsedTickets {
    /// Tickets taken in `store`, shared with every replica that uses it.
    pub fn new(store: Arc<dyn SharedStore>) -> Self {
        Self { store }
    }

    /// Takes the ticket `jti` (valid until `exp`): true the first time, false after, and false
    /// when the store cannot say (logged).
    pub async fn take(&self, jti: &str, exp: i64, now: i64) -> bool {
        let live = u64::try_from(exp + LEEWAY_SECS - now).unwrap_or(0).max(1);
        match self.store.take_once(&format!("frame-ticket:{jti}"), Duration::from_secs(live)).await {
            Ok(first) => first,
            Err(error) => {
                tracing::error!(%error, "plugin-proxy: cannot record a frame ticket as used; refusing it");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_ticket_is_taken_once_across_replicas_sharing_a_store() {
        let store: Arc<dyn SharedStore> = Arc::new(InProcess::new());
        let (a, b) = (UsedTickets::new(Arc::clone(&store)), UsedTickets::new(store));
        assert!(a.take("t", 100, 0).await);
        assert!(!a.take("t", 100, 0).await);
        assert!(!b.take("t", 100, 0).await, "the other replica refuses it too");
        assert!(b.take("u", 100, 0).await);
    }
}
