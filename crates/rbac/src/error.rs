//! Why an RBAC object (or an access review) could not be read.

/// An object from the store that cannot be used as what its kind says.
///
/// The API server validates RBAC objects on write, so these mostly mean a
/// corrupted store or a hand-built object; [`crate::Policy::from_objects`]
/// reports them and builds the policy from the rest, so one bad object never
/// takes authorization down.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RbacError {
    /// The JSON does not have the shape of the kind (wrong field types, not an object…).
    #[error("{kind} {name:?} is malformed: {reason}")]
    Malformed {
        /// The kind being read.
        kind: &'static str,
        /// `metadata.name` if it could be read, else empty.
        name: String,
        /// The decoder's message.
        reason: String,
    },
    /// `kind` or `apiVersion` names something else than the expected RBAC kind.
    #[error("expected {expected} (rbac.authorization.k8s.io), found {found:?}")]
    WrongKind {
        /// The kind being read.
        expected: &'static str,
        /// The object's `apiVersion` and `kind`.
        found: String,
    },
    /// A required field is absent or empty (`metadata.name`, `metadata.namespace`, `roleRef`).
    #[error("{kind} {name:?} has no {field}")]
    Missing {
        /// The kind being read.
        kind: &'static str,
        /// `metadata.name`, empty when that is what is missing.
        name: String,
        /// The missing field's path.
        field: &'static str,
    },
    /// A ClusterRole's `aggregationRule` has a selector Kubernetes would reject.
    #[error("ClusterRole {name:?}: invalid aggregationRule selector: {reason}")]
    InvalidSelector {
        /// The ClusterRole.
        name: String,
        /// What is wrong with the selector.
        reason: String,
    },
    /// A SubjectAccessReview spec that the API server would reject.
    #[error("invalid access review spec: {0}")]
    InvalidReview(String),
}
