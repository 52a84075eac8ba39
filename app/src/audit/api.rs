//! The audit page's server function: the gateway's record of plugin calls, asked as the
//! signed-in user (the gateway decides whether they see everyone's calls or their own).

use fundament_plugin_types::audit::AuditPage;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// The most calls one answer of a live tail lists (the newest of them).
pub const TAIL_ROWS: usize = fundament_plugin_types::audit::DEFAULT_LIMIT;

/// Live tails (long polls) one user may have waiting at once: two tabs. Each holds one of the
/// user's turns at kube-api-proxy ([`crate::plugins::call_limits`]) for up to
/// [`fundament_plugin_types::audit::MAX_WAIT_MS`]; without this bound a user's tabs could hold
/// every turn of theirs, and many users the console's.
pub const TAILS_PER_USER: usize = 2;

/// What the page shows: the calls and whose they are, on which cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditView {
    pub page: AuditPage,
    /// The cluster's name (organization-level pages show the selected cluster).
    pub cluster: String,
    /// A live tail's answer only: more calls came than it lists ([`TAIL_ROWS`], the newest), so
    /// some are not shown; the page says so.
    #[serde(default)]
    pub more: bool,
}

/// The calls the page's query (`query`, as in its URL) selects, newest first; with `after`,
/// only those recorded after that id (a live tail's next step); with `wait` too, the answer
/// comes when such a call is recorded or after a few seconds with none (a long poll).
#[server(endpoint = "audit", client = crate::api::client::PatientClient, output = crate::api::codec::Json)]
pub async fn audit_calls(query: String, after: Option<u64>, wait: bool) -> Result<AuditView, AppError> {
    ssr::calls(&query, after, wait).await
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex, PoisonError};

    use super::{AuditView, TAIL_ROWS, TAILS_PER_USER};
    use crate::error::AppError;
    use crate::plugins::api::ssr::{caller, user_error};

    /// The live tails waiting, per user, in this console process.
    static TAILS: LazyLock<Tails> = LazyLock::new(|| Tails::new(TAILS_PER_USER));

    pub async fn calls(query: &str, after: Option<u64>, wait: bool) -> Result<AuditView, AppError> {
        let mut filter =
            super::super::query::filter_of(query).map_err(|e| AppError::Invalid(e.to_string()))?;
        filter.after = after;
        let waits = wait && after.is_some();
        filter.wait_ms = waits.then_some(fundament_plugin_types::audit::MAX_WAIT_MS);
        // One more than a tail lists: whether more came than it shows.
        if after.is_some() {
            filter.limit = Some(TAIL_ROWS + 1);
        }
        let (state, token, user) = caller()?;
        let _tail = if waits {
            Some(TAILS.open(&user.id).map_err(|TooManyTails| AppError::Unavailable {
                message: format!(
                    "The live tail is open in {TAILS_PER_USER} other tabs or windows already; it goes on here once one of them is closed."
                ),
                retry_after: Some(5),
            })?)
        } else {
            None
        };
        let session = crate::api::session::ssr::session_of_request().ok_or(AppError::Unauthenticated)?;
        let mut page = state
            .backend
            .audit(&token, &session.selected_cluster_id, &filter)
            .await
            .map_err(|e| user_error(e, "the audit record of this cluster"))?;
        let more = after.is_some() && page.items.len() > TAIL_ROWS;
        page.items.truncate(if after.is_some() { TAIL_ROWS } else { page.items.len() });
        Ok(AuditView { page, cluster: session.selected_cluster, more })
    }

    /// Live tails waiting per user, at most `per_user` each.
    pub(crate) struct Tails {
        open: Mutex<HashMap<String, usize>>,
        per_user: usize,
    }

    /// A user's live tails are at their bound.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    #[error("too many live tails of the audit record at once")]
    pub(crate) struct TooManyTails;

    /// A waiting live tail; it counts until dropped.
    pub(crate) struct OpenTail<'a> {
        tails: &'a Tails,
        user: String,
    }

    impl Tails {
        pub(crate) fn new(per_user: usize) -> Tails {
            Tails { open: Mutex::new(HashMap::new()), per_user }
        }

        fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
            self.open.lock().unwrap_or_else(PoisonError::into_inner)
        }

        /// Counts one more tail of `user`, or refuses it past the bound. Only users with a tail
        /// waiting are in the map.
        pub(crate) fn open(&self, user: &str) -> Result<OpenTail<'_>, TooManyTails> {
            let mut open = self.lock();
            let count = open.entry(user.to_owned()).or_insert(0);
            if *count >= self.per_user {
                return Err(TooManyTails);
            }
            *count += 1;
            Ok(OpenTail { tails: self, user: user.to_owned() })
        }

        #[cfg(test)]
        fn users(&self) -> usize {
            self.lock().len()
        }
    }

    impl Drop for OpenTail<'_> {
        fn drop(&mut self) {
            let mut open = self.tails.lock();
            if let Some(count) = open.get_mut(&self.user) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    open.remove(&self.user);
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn audit_tails_are_bounded_per_user_and_freed_when_they_end() {
            let tails = Tails::new(2);
            let first = tails.open("alice").unwrap();
            let second = tails.open("alice").unwrap();
            assert_eq!(tails.open("alice").err(), Some(TooManyTails), "alice's third is refused");
            let bob = tails.open("bob").expect("bob's are his own");
            drop(first);
            let again = tails.open("alice").expect("a tail that ended frees its place");
            assert_eq!(tails.open("alice").err(), Some(TooManyTails));
            drop((again, second, bob));
            assert_eq!(tails.users(), 0, "users without a tail are forgotten");
        }
    }
}
