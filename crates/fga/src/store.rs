//! The embedded tuple store of mock mode.

use std::collections::HashSet;
use std::path::Path;

use futures::future::{self, BoxFuture};
use serde::Deserialize;

use crate::tuple::{Clusters, Tuple};
use crate::{CanView, FgaError};

/// The embedded store of mock mode: the relationship tuples of the dev stack,
/// read once, answering `can_view` without a network hop.
///
/// The model is deliberately small: `can_view(user, cluster)` holds iff there is
/// a tuple `(user:<id>, viewer | admin, cluster:<id>)`, or `(user:<id>, admin,
/// cluster:*)`. User ids are compared exactly; cluster ids case-insensitively,
/// because cluster ids are UUIDs whose canonical form is lower case while URLs
/// and tokens may carry them in any case.
#[derive(Debug, Clone, Default)]
pub struct TupleStore {
    /// `(user id, lower-case cluster id)` pairs with `can_view`.
    viewers: HashSet<(String, String)>,
    /// Users that are admin of every cluster.
    admins: HashSet<String>,
}

/// The tuples file: `tuples: [ {user, relation, object}, ... ]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TuplesFile {
    tuples: Vec<Tuple>,
}

impl TupleStore {
    /// A store of these tuples. Tuples that do not fit the model (see
    /// [`TupleStore::from_yaml_file`] for the rules) grant nothing, so a typo
    /// can only ever deny access.
    pub fn from_tuples(tuples: Vec<Tuple>) -> TupleStore {
        let mut store = TupleStore::default();
        for grant in tuples.iter().filter_map(|t| t.grant().ok()) {
            match grant.clusters {
                Clusters::One(cluster) => {
                    store.viewers.insert((grant.user_id, cluster));
                }
                Clusters::All => {
                    store.admins.insert(grant.user_id);
                }
            }
        }
        store
    }

    /// Reads the tuples file of mock mode. Unlike [`TupleStore::from_tuples`],
    /// every tuple is checked: `user` is `user:<id>`, `relation` is `viewer` or
    /// `admin`, `object` is `cluster:<id>` (or `cluster:*` with `admin`). The
    /// first problem fails the load with the file and the entry (`tuples[2]`),
    /// so a broken seed is found at start-up, not as a puzzling 403 later.
    pub fn from_yaml_file(path: &Path) -> Result<TupleStore, FgaError> {
        let fail = |reason: String| FgaError::TuplesFile { path: path.to_path_buf(), reason };
        let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
        let file: TuplesFile = serde_yaml::from_str(&text).map_err(|e| fail(e.to_string()))?;
        for (i, tuple) in file.tuples.iter().enumerate() {
            tuple.grant().map_err(|reason| fail(format!("tuples[{i}]: {reason}")))?;
        }
        Ok(TupleStore::from_tuples(file.tuples))
    }

    fn allows(&self, user_id: &str, cluster_id: &str) -> bool {
        self.admins.contains(user_id)
            || self.viewers.contains(&(user_id.to_string(), cluster_id.to_ascii_lowercase()))
    }
}

impl CanView for TupleStore {
    fn can_view<'a>(
        &'a self,
        user_id: &'a str,
        cluster_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, FgaError>> {
        Box::pin(future::ready(Ok(self.allows(user_id, cluster_id))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROD_EU: &str = "019b4000-2000-7000-8000-000000000001";
    const RESTRICTED: &str = "019b4000-2000-7000-8000-000000000002";

    fn tuple(user: &str, relation: &str, object: &str) -> Tuple {
        Tuple { user: user.into(), relation: relation.into(), object: object.into() }
    }

    async fn check(store: &TupleStore, user: &str, cluster: &str) -> bool {
        store.can_view(user, cluster).await.unwrap()
    }

    fn write(dir: &Path, text: &str) -> std::path::PathBuf {
        let path = dir.join("tuples.yaml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("fundament-fga-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn load_error(name: &str, text: &str) -> String {
        let dir = temp_dir(name);
        let path = write(&dir, text);
        let err = TupleStore::from_yaml_file(&path).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        let message = err.to_string();
        let prefix = format!("tuples file {}: ", path.display());
        assert!(message.starts_with(&prefix), "{message}");
        message[prefix.len()..].to_string()
    }

    #[tokio::test]
    async fn viewer_and_admin_tuples_grant_can_view_on_their_cluster_only() {
        let store = TupleStore::from_tuples(vec![
            tuple("user:alice", "viewer", &format!("cluster:{PROD_EU}")),
            tuple("user:carol", "admin", &format!("cluster:{RESTRICTED}")),
        ]);
        assert!(check(&store, "alice", PROD_EU).await);
        assert!(!check(&store, "alice", RESTRICTED).await);
        assert!(check(&store, "carol", RESTRICTED).await);
        assert!(!check(&store, "carol", PROD_EU).await);
        assert!(!check(&store, "mallory", PROD_EU).await);
    }

    #[tokio::test]
    async fn cluster_ids_compare_case_insensitively_user_ids_exactly() {
        let store = TupleStore::from_tuples(vec![tuple("user:alice", "viewer", "cluster:019B4000-ABCD")]);
        assert!(check(&store, "alice", "019b4000-abcd").await);
        assert!(check(&store, "alice", "019B4000-abcd").await);
        assert!(!check(&store, "Alice", "019b4000-abcd").await);
    }

    #[tokio::test]
    async fn admin_of_every_cluster_views_all_of_them() {
        let store = TupleStore::from_tuples(vec![tuple("user:root", "admin", "cluster:*")]);
        assert!(check(&store, "root", PROD_EU).await);
        assert!(check(&store, "root", RESTRICTED).await);
        assert!(!check(&store, "alice", PROD_EU).await);
    }

    #[tokio::test]
    async fn invalid_tuples_grant_nothing() {
        let store = TupleStore::from_tuples(vec![
            tuple("alice", "viewer", &format!("cluster:{PROD_EU}")),
            tuple("user:bob", "owner", &format!("cluster:{PROD_EU}")),
            tuple("user:eve", "viewer", "cluster:*"),
        ]);
        assert!(!check(&store, "alice", PROD_EU).await);
        assert!(!check(&store, "bob", PROD_EU).await);
        assert!(!check(&store, "eve", PROD_EU).await);
    }

    #[tokio::test]
    async fn the_seed_file_matches_the_design() {
        let path = Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
        )
        .join("../../fixtures/fga/tuples.yaml");
        let store = TupleStore::from_yaml_file(&path).unwrap();
        assert!(check(&store, "alice", PROD_EU).await);
        assert!(check(&store, "bob", PROD_EU).await);
        assert!(!check(&store, "alice", RESTRICTED).await);
        assert!(!check(&store, "bob", RESTRICTED).await);
    }

    #[test]
    fn yaml_errors_name_the_entry() {
        let bad_relation = "tuples:\n- {user: user:a, relation: viewer, object: cluster:c}\n\
                            - {user: user:b, relation: owner, object: cluster:c}\n";
        assert_eq!(
            load_error("relation", bad_relation),
            "tuples[1]: relation \"owner\" must be \"viewer\" or \"admin\""
        );
        let bad_user = "tuples:\n- {user: alice, relation: viewer, object: cluster:c}\n";
        assert_eq!(load_error("user", bad_user), "tuples[0]: user \"alice\" must be \"user:<id>\"");
        let bad_object = "tuples:\n- {user: user:a, relation: viewer, object: project:p}\n";
        assert_eq!(
            load_error("object", bad_object),
            "tuples[0]: object \"project:p\" must be \"cluster:<id>\""
        );
    }

    #[test]
    fn yaml_shape_errors_are_reported() {
        let unknown =
            load_error("unknown", "tuples:\n- {user: user:a, relation: viewer, object: cluster:c, x: 1}\n");
        assert!(unknown.contains("unknown field `x`"), "{unknown}");
        let missing = load_error("missing", "tuples:\n- {user: user:a, relation: viewer}\n");
        assert!(missing.contains("missing field `object`"), "{missing}");
        let top = load_error("top", "grants: []\n");
        assert!(top.contains("unknown field `grants`"), "{top}");
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let path = Path::new("/nonexistent/fundament/tuples.yaml");
        let message = TupleStore::from_yaml_file(path).unwrap_err().to_string();
        assert!(
            message.starts_with("tuples file /nonexistent/fundament/tuples.yaml: cannot read:"),
            "{message}"
        );
    }
}
