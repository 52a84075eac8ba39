//! Kubernetes RBAC (`rbac.authorization.k8s.io/v1`) for the embedded API server.
//!
//! The server authorizes every request here, and answers SubjectAccessReview,
//! SelfSubjectAccessReview and SelfSubjectRulesReview from the same policy,
//! so `kubectl auth can-i` and what requests actually get always agree. The
//! semantics are those of the Kubernetes RBAC authorizer (`RuleAllows`,
//! `appliesToUser`, the binding describers, the clusterrole-aggregation
//! controller), so RBAC objects written for a real cluster mean the same here.
//!
//! Objects come from the server's store as Kubernetes JSON; [`Policy`] is an
//! immutable snapshot the server rebuilds when an RBAC object changes, with
//! bindings resolved and indexed so a request only checks the bindings that
//! can apply to its user.
#![forbid(unsafe_code)]

mod aggregate;
mod error;
mod matching;
mod objects;
mod policy;
mod request;
mod review;
mod selector;

pub use error::RbacError;
pub use objects::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, RBAC_API_GROUP, Role, RoleBinding, RoleRef,
    Subject,
};
pub use policy::Policy;
pub use request::{
    Attributes, Decision, SERVICE_ACCOUNT_USERNAME_PREFIX, UserInfo, service_account_username,
};
pub use review::{NonResourceRule, ResourceRule, subject_access_review_status, subject_rules_review_status};
pub use selector::{LabelSelector, LabelSelectorOperator, LabelSelectorRequirement};
