//! The directory's data: what one consistent read of it holds, and its look-ups.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An organization: the tenant a user signs in to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Organization {
    /// URL id (a DNS-1123 label): it names plugin origins and installations.
    pub id: String,
    /// What the console shows.
    pub display_name: String,
    /// The cluster organization-level pages use; the organization's first cluster when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_cluster: Option<String>,
}

/// A cluster the gateway can reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cluster {
    /// The id in every URL (`/clusters/<id>/…`); in real mode, the Shoot's
    /// `fundament.io/cluster-id` label.
    pub id: String,
    /// Short name (`prod-eu`).
    pub name: String,
    /// What the console shows; the name when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The organization that owns it.
    pub organization: String,
}

impl Cluster {
    /// The display name, else the name.
    pub fn shown_name(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.name)
    }
}

/// A project: a team's slice of an organization, on one or more clusters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Project {
    /// URL id (a DNS-1123 label).
    pub id: String,
    /// The organization it belongs to.
    pub organization: String,
    /// What the console shows.
    pub display_name: String,
    /// The cluster the console opens the project on.
    pub cluster: String,
    /// The project's namespaces on each cluster it uses (keys are cluster ids).
    #[serde(default)]
    pub namespaces: BTreeMap<String, Vec<String>>,
}

/// A person who can sign in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct User {
    /// The stable user id, the `sub` of our tokens: a DNS-1123 label, because it names the
    /// user's ServiceAccount (`fundament-<id>`) and their OpenFGA subject (`user:<id>`).
    pub id: String,
    /// Email.
    pub email: String,
    /// Display name.
    pub name: String,
    /// What they may do, in words (shown by mock mode's sign-in page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The identity-provider accounts that are this user.
    #[serde(default)]
    pub identities: Vec<Identity>,
}

/// An account at an OpenID provider: the provider's issuer and the account's `sub`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
}

/// A user's membership of an organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Membership {
    /// The user id.
    pub user: String,
    /// The organization id.
    pub organization: String,
    /// The projects the user works in; every project of the organization when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projects: Option<Vec<String>>,
}

/// One consistent read of the directory. Cluster *access* is not here: who may view a
/// cluster is OpenFGA's `can_view` (crates/fga), asked by every service the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DirectoryData {
    #[serde(default)]
    pub organizations: Vec<Organization>,
    #[serde(default)]
    pub clusters: Vec<Cluster>,
    #[serde(default)]
    pub projects: Vec<Project>,
    #[serde(default)]
    pub users: Vec<User>,
    #[serde(default)]
    pub memberships: Vec<Membership>,
}

impl DirectoryData {
    /// The organization with this id.
    pub fn organization(&self, id: &str) -> Option<&Organization> {
        self.organizations.iter().find(|o| o.id == id)
    }

    /// The cluster with this id.
    pub fn cluster(&self, id: &str) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.id == id)
    }

    /// The clusters of an organization, in directory order.
    pub fn clusters_of<'a>(&'a self, organization: &'a str) -> impl Iterator<Item = &'a Cluster> + 'a {
        self.clusters.iter().filter(move |c| c.organization == organization)
    }

    /// The organization's default cluster: the one it names, else its first.
    pub fn default_cluster(&self, organization: &str) -> Option<&Cluster> {
        let org = self.organization(organization)?;
        match &org.default_cluster {
            Some(id) => self.cluster(id),
            None => self.clusters.iter().find(|c| c.organization == organization),
        }
    }

    /// The project with this id.
    pub fn project(&self, id: &str) -> Option<&Project> {
        self.projects.iter().find(|p| p.id == id)
    }

    /// The user with this id.
    pub fn user(&self, id: &str) -> Option<&User> {
        self.users.iter().find(|u| u.id == id)
    }

    /// The user with this email (case-insensitive, surrounding blanks ignored).
    pub fn user_by_email(&self, email: &str) -> Option<&User> {
        let email = email.trim();
        self.users.iter().find(|u| u.email.eq_ignore_ascii_case(email))
    }

    /// The user an identity-provider account is, when the directory lists it.
    pub fn user_by_identity(&self, issuer: &str, subject: &str) -> Option<&User> {
        self.users.iter().find(|u| u.identities.iter().any(|i| i.issuer == issuer && i.subject == subject))
    }

    /// The organization a user works in: their first membership's. A user without one
    /// signs in to nothing (the console says so).
    pub fn organization_of(&self, user_id: &str) -> Option<&Organization> {
        let m = self.memberships.iter().find(|m| m.user == user_id)?;
        self.organization(&m.organization)
    }

    /// [`Directory::projects_for`] on `cluster_id` alone (what the cluster list shows a user).
    pub fn projects_for_on(&self, user_id: &str, organization: &str, cluster_id: &str) -> Vec<&Project> {
        let mut projects = self.projects_for(user_id, organization);
        projects.retain(|p| p.cluster == cluster_id);
        projects
    }

    /// The projects of `organization` a user works in, in directory order.
    pub fn projects_for(&self, user_id: &str, organization: &str) -> Vec<&Project> {
        let Some(m) = self.memberships.iter().find(|m| m.user == user_id && m.organization == organization)
        else {
            return Vec::new();
        };
        self.projects
            .iter()
            .filter(|p| p.organization == organization)
            .filter(|p| m.projects.as_ref().is_none_or(|listed| listed.contains(&p.id)))
            .collect()
    }
}
