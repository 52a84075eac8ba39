//! The directory: organizations, projects (with their namespaces per cluster), clusters
//! and users, and who is a member of what. The console, authn and the gateway read the
//! same one, through [`Directory`]:
//!
//! - [`FileDirectory`], a YAML file (reloaded on change) for installations without a
//!   directory service of their own;
//! - [`FixedDirectory`], data held in memory: mock mode's seed ([`seed`]) and tests.
//!
//! Who may *view* a cluster is not the directory's to say: that is OpenFGA's `can_view`
//! (crates/fga), so the console and the gateway cannot disagree about it.
#![forbid(unsafe_code)]

mod file;
mod model;
mod validate;

use std::sync::Arc;

use sha2::{Digest, Sha256};

pub use file::{FileDirectory, RELOAD_INTERVAL, parse};
pub use model::{Cluster, DirectoryData, Identity, Membership, Organization, Project, User};
pub use validate::problems;

/// Where the directory's data comes from.
pub trait Directory: Send + Sync + 'static {
    /// One consistent read: callers look everything up in the same snapshot.
    fn current(&self) -> Arc<DirectoryData>;
}

/// A directory that does not change.
#[derive(Debug, Clone)]
pub struct FixedDirectory(Arc<DirectoryData>);

impl FixedDirectory {
    /// Checked like a file: an inconsistent directory is refused.
    pub fn new(data: DirectoryData) -> Result<FixedDirectory, DirectoryError> {
        let problems = validate::problems(&data);
        if problems.is_empty() {
            Ok(FixedDirectory(Arc::new(data)))
        } else {
            Err(DirectoryError::Invalid { path: "(in memory)".to_owned(), problems })
        }
    }
}

impl Directory for FixedDirectory {
    fn current(&self) -> Arc<DirectoryData> {
        Arc::clone(&self.0)
    }
}

/// Why a directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    #[error("cannot read the directory {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("the directory {path} is not directory YAML: {message}")]
    Parse { path: String, message: String },
    #[error("the directory {path} is inconsistent:\n  {}", problems.join("\n  "))]
    Invalid { path: String, problems: Vec<String> },
}

/// Mock mode's directory: the seed (docs/architecture.md, "Seed data").
pub fn seed() -> FixedDirectory {
    use fundament_seed as s;
    let org = s::ORGANIZATION;
    let data = DirectoryData {
        organizations: vec![Organization {
            id: org.to_owned(),
            display_name: "Acme Corp".to_owned(),
            default_cluster: Some(s::DEFAULT_CLUSTER_ID.to_owned()),
        }],
        clusters: s::CLUSTERS
            .iter()
            .map(|c| Cluster {
                id: c.id.to_owned(),
                name: c.name.to_owned(),
                display_name: None,
                organization: org.to_owned(),
            })
            .collect(),
        projects: s::PROJECTS
            .iter()
            .map(|p| Project {
                id: p.id.to_owned(),
                organization: org.to_owned(),
                display_name: p.display_name.to_owned(),
                cluster: p.cluster_id.to_owned(),
                namespaces: [(
                    p.cluster_id.to_owned(),
                    p.namespaces.iter().map(|n| (*n).to_owned()).collect(),
                )]
                .into(),
            })
            .collect(),
        users: s::USERS
            .iter()
            .map(|u| User {
                id: u.id.to_owned(),
                email: u.email.to_owned(),
                name: u.name.to_owned(),
                description: Some(u.role.to_owned()),
                identities: Vec::new(),
            })
            .collect(),
        memberships: s::USERS
            .iter()
            .map(|u| Membership { user: u.id.to_owned(), organization: org.to_owned(), projects: None })
            .collect(),
    };
    FixedDirectory::new(data).expect("the seed is a consistent directory")
}

/// The user id of an identity-provider account the directory does not list: stable (the
/// same account always gets the same id, on every replica), a DNS-1123 label, and not
/// guessable into another account's (160 bits of SHA-256 over issuer and subject).
pub fn derived_user_id(issuer: &str, subject: &str) -> String {
    let digest = Sha256::new().chain_update(issuer).chain_update("\n").chain_update(subject).finalize();
    format!("u-{}", base32_lower(&digest[..20]))
}

/// RFC 4648 base32, lower case, no padding (the input is a multiple of 5 bytes).
fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(bytes.len() * 8 / 5);
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = buf.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        for i in (0..8).rev() {
            out.push(char::from(ALPHABET[((n >> (i * 5)) & 31) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fundament_kube_core::validation::is_dns1123_label;

    #[test]
    fn derived_ids_are_stable_labels_and_differ_per_account() {
        let a = derived_user_id("https://idp.example.com", "248289761001");
        assert_eq!(a, derived_user_id("https://idp.example.com", "248289761001"));
        assert!(is_dns1123_label(&a) && a.len() == 34, "{a}");
        assert_ne!(a, derived_user_id("https://idp.example.com", "248289761002"));
        assert_ne!(a, derived_user_id("https://other.example.com", "248289761001"));
        // The separator keeps ("a\nb", "c") and ("a", "b\nc") apart only if subjects cannot
        // hold newlines — they can, so the pairs must still differ by where the split falls.
        assert_ne!(derived_user_id("ab", "c"), derived_user_id("a", "bc"));
    }

    #[test]
    fn base32_matches_rfc_4648() {
        assert_eq!(base32_lower(b"fooba"), "mzxw6ytb");
        assert_eq!(base32_lower(b"\0\0\0\0\0"), "aaaaaaaa");
    }

    #[test]
    fn the_seed_is_mock_modes_directory() {
        let d = seed().current();
        assert_eq!(d.user_by_email(" Alice@Acme-Corp.com ").map(|u| u.id.as_str()), Some("alice"));
        assert_eq!(d.organization_of("bob").map(|o| o.id.as_str()), Some("acme-corp"));
        let projects: Vec<_> = d.projects_for("alice", "acme-corp").iter().map(|p| p.id.as_str()).collect();
        assert_eq!(projects, ["webshop", "analytics"]);
        assert_eq!(d.default_cluster("acme-corp").map(|c| c.name.as_str()), Some("prod-eu"));
        assert!(d.organization_of("mallory").is_none());
    }
}
