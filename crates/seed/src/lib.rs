//! The seed data of the dev stack (docs/architecture.md, "Seed data"), so docs, demos and tests share
//! names. Pure data and look-ups; no I/O. Builds for the browser too.
#![forbid(unsafe_code)]

/// A seed user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct User {
    /// Stable id (used in ServiceAccount names and tokens later).
    pub id: &'static str,
    /// Sign-in email.
    pub email: &'static str,
    /// Display name.
    pub name: &'static str,
    /// What the user may do, in words, for the sign-in page.
    pub role: &'static str,
}

/// A seed cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cluster {
    /// The cluster id (a UUID).
    pub id: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Emails of the users who can view it (`can_view`); admins see all.
    pub viewers: &'static [&'static str],
}

/// A seed project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Project {
    /// URL id and name.
    pub id: &'static str,
    /// Display name.
    pub display_name: &'static str,
    /// The cluster the project runs on.
    pub cluster_id: &'static str,
    /// Its namespaces there.
    pub namespaces: &'static [&'static str],
}

/// The one organization of the dev stack.
pub const ORGANIZATION: &str = "acme-corp";

/// The seed users.
pub const USERS: [User; 2] = [
    User { id: "alice", email: "alice@acme-corp.com", name: "Alice", role: "Cluster admin on prod-eu" },
    User { id: "bob", email: "bob@acme-corp.com", name: "Bob", role: "Read-only on prod-eu" },
];

/// The cluster the console selects by default.
pub const DEFAULT_CLUSTER_ID: &str = "019b4000-2000-7000-8000-000000000001";

/// The seed clusters.
pub const CLUSTERS: [Cluster; 2] = [
    Cluster {
        id: DEFAULT_CLUSTER_ID,
        name: "prod-eu",
        viewers: &["alice@acme-corp.com", "bob@acme-corp.com"],
    },
    Cluster { id: "019b4000-2000-7000-8000-000000000002", name: "restricted", viewers: &[] },
];

/// The seed projects.
pub const PROJECTS: [Project; 2] = [
    Project {
        id: "webshop",
        display_name: "Webshop",
        cluster_id: DEFAULT_CLUSTER_ID,
        namespaces: &["prod", "staging"],
    },
    Project {
        id: "analytics",
        display_name: "Analytics",
        cluster_id: DEFAULT_CLUSTER_ID,
        namespaces: &["analytics"],
    },
];

/// The seed user with this email (exact, case-insensitive).
pub fn user_by_email(email: &str) -> Option<&'static User> {
    USERS.iter().find(|u| u.email.eq_ignore_ascii_case(email.trim()))
}

/// The clusters `email` can view.
pub fn clusters_visible_to(email: &str) -> impl Iterator<Item = &'static Cluster> + '_ {
    CLUSTERS.iter().filter(move |c| c.viewers.iter().any(|v| v.eq_ignore_ascii_case(email)))
}

/// The project with this id.
pub fn project(id: &str) -> Option<&'static Project> {
    PROJECTS.iter().find(|p| p.id == id)
}

/// The cluster with this id.
pub fn cluster(id: &str) -> Option<&'static Cluster> {
    CLUSTERS.iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_found_by_email_in_any_case() {
        assert_eq!(user_by_email("Alice@Acme-Corp.com").map(|u| u.id), Some("alice"));
        assert_eq!(user_by_email(" bob@acme-corp.com ").map(|u| u.id), Some("bob"));
        assert!(user_by_email("mallory@acme-corp.com").is_none());
    }

    #[test]
    fn nobody_but_an_admin_views_restricted() {
        for user in USERS {
            let names: Vec<_> = clusters_visible_to(user.email).map(|c| c.name).collect();
            assert_eq!(names, ["prod-eu"], "{}", user.email);
        }
    }

    #[test]
    fn projects_run_on_known_clusters() {
        for p in PROJECTS {
            assert!(cluster(p.cluster_id).is_some(), "{}", p.id);
        }
        assert_eq!(project("webshop").map(|p| p.display_name), Some("Webshop"));
    }
}
