//! Relationship tuples, in OpenFGA's spelling, and what a valid one grants.

use serde::{Deserialize, Serialize};

/// One relationship tuple, spelled as OpenFGA spells it, so the tuples file of
/// mock mode can be written to a real store unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuple {
    /// The subject: `user:<id>`, e.g. `user:alice`.
    pub user: String,
    /// `viewer` or `admin`.
    pub relation: String,
    /// The cluster: `cluster:<uuid>`, or `cluster:*` (admin only) for every cluster.
    pub object: String,
}

/// The relations of the model; both imply `can_view`.
const RELATIONS: [&str; 2] = ["viewer", "admin"];

/// Which clusters a tuple covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Clusters {
    /// One cluster, by its id in lower case.
    One(String),
    /// Every cluster (`admin` on `cluster:*`).
    All,
}

/// What a valid tuple grants: `can_view` for a user on some clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    pub user_id: String,
    pub clusters: Clusters,
}

impl Tuple {
    /// Checks the tuple against the model. The error says what is wrong in
    /// words a person editing the tuples file understands.
    pub(crate) fn grant(&self) -> Result<Grant, String> {
        let user_id = id_after(&self.user, "user:")
            .ok_or_else(|| format!("user {:?} must be \"user:<id>\"", self.user))?;
        if !RELATIONS.contains(&self.relation.as_str()) {
            return Err(format!("relation {:?} must be \"viewer\" or \"admin\"", self.relation));
        }
        let cluster = id_after(&self.object, "cluster:")
            .ok_or_else(|| format!("object {:?} must be \"cluster:<id>\"", self.object))?;
        let clusters = match cluster {
            "*" if self.relation == "admin" => Clusters::All,
            // A viewer of every cluster is an admin in disguise; make it explicit.
            "*" => return Err("\"cluster:*\" is only allowed with relation \"admin\"".to_string()),
            id => Clusters::One(id.to_ascii_lowercase()),
        };
        Ok(Grant { user_id: user_id.to_string(), clusters })
    }
}

/// The id after `prefix`, if it is there and not empty.
fn id_after<'a>(value: &'a str, prefix: &str) -> Option<&'a str> {
    value.strip_prefix(prefix).filter(|id| !id.is_empty() && !id.chars().any(char::is_whitespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(user: &str, relation: &str, object: &str) -> Tuple {
        Tuple { user: user.into(), relation: relation.into(), object: object.into() }
    }

    #[test]
    fn viewer_of_one_cluster_lower_cases_the_id() {
        let grant = tuple("user:alice", "viewer", "cluster:ABC-1").grant().unwrap();
        assert_eq!(grant, Grant { user_id: "alice".into(), clusters: Clusters::One("abc-1".into()) });
    }

    #[test]
    fn admin_of_every_cluster() {
        let grant = tuple("user:root", "admin", "cluster:*").grant().unwrap();
        assert_eq!(grant.clusters, Clusters::All);
    }

    #[test]
    fn rejects_what_the_model_does_not_know() {
        let cases = [
            (tuple("alice", "viewer", "cluster:c"), "user \"alice\" must be \"user:<id>\""),
            (tuple("user:", "viewer", "cluster:c"), "user \"user:\" must be \"user:<id>\""),
            (tuple("user:a", "owner", "cluster:c"), "relation \"owner\" must be \"viewer\" or \"admin\""),
            (tuple("user:a", "viewer", "project:p"), "object \"project:p\" must be \"cluster:<id>\""),
            (tuple("user:a", "viewer", "cluster:*"), "\"cluster:*\" is only allowed with relation \"admin\""),
        ];
        for (t, message) in cases {
            assert_eq!(t.grant().unwrap_err(), message);
        }
    }
}
