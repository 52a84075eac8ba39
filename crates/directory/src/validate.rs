//! What makes a directory consistent. Every problem is reported, each with where it is
//! (`projects[1] (webshop).cluster`) and what is wrong, so an operator fixes a file in one go.

use std::collections::HashSet;

use fundament_kube_core::validation::dns1123_label_errors;

use crate::model::DirectoryData;

/// Every problem of `data`, empty when it is consistent.
pub fn problems(data: &DirectoryData) -> Vec<String> {
    let mut out = Vec::new();
    let mut label = |at: String, value: &str| {
        for e in dns1123_label_errors(value) {
            out.push(format!("{at}: {value:?}: {e}"));
        }
    };
    for (i, o) in data.organizations.iter().enumerate() {
        label(format!("organizations[{i}].id"), &o.id);
    }
    for (i, c) in data.clusters.iter().enumerate() {
        label(format!("clusters[{i}].id"), &c.id);
        label(format!("clusters[{i}] ({}).name", c.id), &c.name);
    }
    for (i, p) in data.projects.iter().enumerate() {
        label(format!("projects[{i}].id"), &p.id);
        for (cluster, namespaces) in &p.namespaces {
            for ns in namespaces {
                label(format!("projects[{i}] ({}).namespaces.{cluster}", p.id), ns);
            }
        }
    }
    for (i, u) in data.users.iter().enumerate() {
        label(format!("users[{i}].id"), &u.id);
    }

    // An installation is named `<organization>--<plugin>`, and that name is its pages' origin.
    // With `--` in an id, `acme` installing `labs--grafana` and `acme--labs` installing
    // `grafana` would share one origin (and its storage); without it, the first `--` of an
    // installation name always ends the organization.
    for (i, o) in data.organizations.iter().enumerate() {
        if o.id.contains("--") {
            out.push(format!(
                "organizations[{i}].id: {:?}: must not contain \"--\", which separates an organization from a plugin in installation names",
                o.id
            ));
        }
    }
    duplicates(&mut out, "organizations", data.organizations.iter().map(|o| o.id.clone()), "id");
    duplicates(&mut out, "clusters", data.clusters.iter().map(|c| c.id.clone()), "id");
    duplicates(&mut out, "projects", data.projects.iter().map(|p| p.id.clone()), "id");
    duplicates(&mut out, "users", data.users.iter().map(|u| u.id.clone()), "id");
    duplicates(&mut out, "users", data.users.iter().map(|u| u.email.to_ascii_lowercase()), "email");
    duplicates(
        &mut out,
        "users",
        data.users.iter().flat_map(|u| u.identities.iter().map(|i| format!("{} {}", i.issuer, i.subject))),
        "identity (issuer subject)",
    );
    duplicates(
        &mut out,
        "memberships",
        data.memberships.iter().map(|m| format!("{} in {}", m.user, m.organization)),
        "membership",
    );

    let orgs: HashSet<&str> = data.organizations.iter().map(|o| o.id.as_str()).collect();
    let clusters: HashSet<&str> = data.clusters.iter().map(|c| c.id.as_str()).collect();
    let users: HashSet<&str> = data.users.iter().map(|u| u.id.as_str()).collect();
    let mut unknown = |at: String, kind: &str, value: &str, known: &HashSet<&str>| {
        if !known.contains(value) {
            out.push(format!("{at}: {value:?}: no such {kind} in the directory"));
        }
    };
    for (i, o) in data.organizations.iter().enumerate() {
        if let Some(c) = &o.default_cluster {
            unknown(format!("organizations[{i}] ({}).defaultCluster", o.id), "cluster", c, &clusters);
        }
    }
    for (i, c) in data.clusters.iter().enumerate() {
        unknown(format!("clusters[{i}] ({}).organization", c.id), "organization", &c.organization, &orgs);
    }
    for (i, p) in data.projects.iter().enumerate() {
        let at = format!("projects[{i}] ({})", p.id);
        unknown(format!("{at}.organization"), "organization", &p.organization, &orgs);
        unknown(format!("{at}.cluster"), "cluster", &p.cluster, &clusters);
        for cluster in p.namespaces.keys() {
            unknown(format!("{at}.namespaces"), "cluster", cluster, &clusters);
        }
    }
    for (i, m) in data.memberships.iter().enumerate() {
        let at = format!("memberships[{i}]");
        unknown(format!("{at}.user"), "user", &m.user, &users);
        unknown(format!("{at}.organization"), "organization", &m.organization, &orgs);
    }
    // Cross-organization references: a project on another organization's cluster would hand
    // its members a cluster they have no business with.
    for (i, p) in data.projects.iter().enumerate() {
        for cluster in std::iter::once(&p.cluster).chain(p.namespaces.keys()) {
            if let Some(c) = data.cluster(cluster)
                && c.organization != p.organization
            {
                out.push(format!(
                    "projects[{i}] ({}): cluster {cluster:?} belongs to organization {:?}, not {:?}",
                    p.id, c.organization, p.organization
                ));
            }
        }
    }
    for (i, o) in data.organizations.iter().enumerate() {
        if let Some(c) = o.default_cluster.as_deref().and_then(|id| data.cluster(id))
            && c.organization != o.id
        {
            out.push(format!(
                "organizations[{i}] ({}).defaultCluster: cluster {:?} belongs to organization {:?}",
                o.id, c.id, c.organization
            ));
        }
    }
    for (i, m) in data.memberships.iter().enumerate() {
        for project in m.projects.iter().flatten() {
            match data.project(project) {
                None => out.push(format!(
                    "memberships[{i}].projects: {project:?}: no such project in the directory"
                )),
                Some(p) if p.organization != m.organization => out.push(format!(
                    "memberships[{i}].projects: project {project:?} belongs to organization {:?}, not {:?}",
                    p.organization, m.organization
                )),
                Some(_) => {}
            }
        }
    }
    for (i, u) in data.users.iter().enumerate() {
        if !u.email.contains('@') {
            out.push(format!("users[{i}] ({}).email: {:?}: not an email address", u.id, u.email));
        }
        for (j, identity) in u.identities.iter().enumerate() {
            if identity.issuer.is_empty() || identity.subject.is_empty() {
                out.push(format!(
                    "users[{i}] ({}).identities[{j}]: issuer and subject are both required",
                    u.id
                ));
            }
        }
    }
    out
}

fn duplicates(out: &mut Vec<String>, list: &str, values: impl Iterator<Item = String>, what: &str) {
    let mut seen = HashSet::new();
    for v in values {
        if !seen.insert(v.clone()) {
            out.push(format!("{list}: {what} {v:?} appears more than once"));
        }
    }
}
