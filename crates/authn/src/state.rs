//! What the service needs from its caller: keys, the authorization check, installations, config.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;

/// A user of mock mode's sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The user id, the `sub` of their tokens: a DNS-1123 label (e.g. `alice`), because it
    /// becomes part of a ServiceAccount name.
    pub id: String,
    pub email: String,
    pub name: String,
}

/// Finds an installation of a cluster by its uid (the PluginInstallation's metadata.uid).
pub trait InstallationLookup: Send + Sync + 'static {
    fn lookup<'a>(
        &'a self,
        cluster_id: &'a str,
        installation_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Installation>, LookupError>>;

    /// What the lookups found of the clusters they call, named for `/readyz?verbose`
    /// (`cluster 019b4000…0001`); none by default (a lookup that calls no cluster).
    fn dependencies(&self) -> Vec<(String, Arc<fundament_health::DependencyHealth>)> {
        Vec::new()
    }
}

/// The parts of a PluginInstallation a PluginToken carries.
#[derive(Debug, Clone)]
pub struct Installation {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `spec.definitionRef.pluginName`.
    pub plugin_name: String,
    /// `spec.definitionRef.pluginVersion`.
    pub plugin_version: String,
    /// `spec.definitionRef.definitionHash`.
    pub definition_hash: String,
}

impl From<fundament_plugin_types::PluginInstallation> for Installation {
    fn from(i: fundament_plugin_types::PluginInstallation) -> Installation {
        let r = i.spec.definition_ref;
        Installation {
            name: i.metadata.name,
            uid: i.metadata.uid,
            plugin_name: r.plugin_name,
            plugin_version: r.plugin_version,
            definition_hash: r.definition_hash,
        }
    }
}

/// Why an installation could not be looked up.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// Answered like a missing installation, so a caller learns nothing about which clusters exist.
    #[error("unknown cluster {0}")]
    UnknownCluster(String),
    /// Anything else; logged, and answered as `internal`.
    #[error("{0}")]
    Other(String),
}

/// Settings of the service.
#[derive(Debug, Clone, Default)]
pub struct AuthnConfig {
    /// `DevSignIn` signs in any user of `users` without a password: mock mode, and
    /// `fundament dev` in the other modes until an identity provider is configured.
    pub dev_sign_in: bool,
    /// Mock mode only: the development fault switches (`/dev/faults/…`). Never on in sandbox
    /// or real mode, even where `dev_sign_in` is (docs/dev-switches.md).
    pub fault_switches: bool,
    /// The users `DevSignIn` knows (empty unless `dev_sign_in`).
    pub users: Vec<User>,
    /// Host names (without port) the development endpoints answer on besides the loopback
    /// names: authn's configured URL's host.
    pub dev_hosts: Vec<String>,
}

/// Everything the handlers share.
pub struct AuthnState {
    /// Behind a lock so the caller can rotate keys while serving; tokens are signed with a read lock.
    pub signer: Arc<RwLock<fundament_tokens::Signer>>,
    pub fga: Arc<dyn fundament_fga::CanView>,
    /// What the mint's `can_view` checks found of OpenFGA, for `/readyz?verbose`.
    pub fga_health: fundament_health::DependencyHealth,
    pub installations: Arc<dyn InstallationLookup>,
    /// Revoked sessions (sign-out).
    pub revocations: Arc<crate::Revocations>,
    pub config: AuthnConfig,
    /// Mock mode's fault switch (`PUT /dev/faults/mint-plugin-token`): while set, `MintPluginToken`
    /// answers `unavailable`, so tests can drive the console's handling of a failing mint. Start
    /// it `false`; without `config.fault_switches` (outside mock mode) it is never read.
    pub fail_mint_plugin_token: AtomicBool,
    /// OpenID Connect sign-in, when an issuer is configured.
    pub oidc: Option<Arc<crate::oidc::Oidc>>,
    /// PluginTokens and frame tickets each user may still have minted (start it empty).
    pub mint_budget: crate::mint_budget::MintBudget,
}

impl AuthnState {
    /// Read access to the signer. A poisoned lock is used anyway: `Signer::rotate` replaces the
    /// key in one assignment, so a panic elsewhere cannot leave it half-written.
    pub(crate) fn signer(&self) -> std::sync::RwLockReadGuard<'_, fundament_tokens::Signer> {
        self.signer.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
