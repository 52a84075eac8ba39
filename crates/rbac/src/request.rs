//! What is being asked, by whom, and the answer.

use std::collections::BTreeMap;

/// The prefix of every service account's user name.
pub const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";

/// The authenticated user of a request (`user.Info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name; service accounts are `system:serviceaccount:<namespace>:<name>`.
    pub name: String,
    /// Groups, including the authenticator's `system:authenticated` and the like.
    pub groups: Vec<String>,
    /// Extra authenticator attributes; RBAC ignores them, reviews echo them.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with groups and no extra attributes.
    pub fn new<G: Into<String>>(name: impl Into<String>, groups: impl IntoIterator<Item = G>) -> Self {
        Self {
            name: name.into(),
            groups: groups.into_iter().map(Into::into).collect(),
            extra: BTreeMap::new(),
        }
    }
}

/// `system:serviceaccount:<namespace>:<name>`, the user name a service account authenticates as.
pub fn service_account_username(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}")
}

/// The request attributes RBAC looks at (`authorizer.Attributes`).
///
/// Borrowed, so the server can authorize from its parsed request without copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attributes<'a> {
    /// A request on an API resource.
    Resource {
        /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
        /// `deletecollection`, or a custom verb (`serve`, `impersonate`…).
        verb: &'a str,
        /// The API group, `""` for the core group.
        api_group: &'a str,
        /// The resource (plural), e.g. `pods`.
        resource: &'a str,
        /// The subresource, e.g. `log`, or empty.
        subresource: &'a str,
        /// The object's name, empty for list, watch of a collection, create.
        name: &'a str,
        /// The namespace, empty for cluster-scoped resources and all-namespace lists.
        namespace: &'a str,
    },
    /// A request on a path outside the resource APIs (`/healthz`, `/apis`…).
    NonResource {
        /// The lower-cased HTTP method as a verb (`get`, `post`…).
        verb: &'a str,
        /// The request path.
        path: &'a str,
    },
}

impl<'a> Attributes<'a> {
    /// The request's verb.
    pub fn verb(&self) -> &'a str {
        match self {
            Self::Resource { verb, .. } | Self::NonResource { verb, .. } => verb,
        }
    }

    /// The namespace RoleBindings are looked up in: empty for cluster-scoped
    /// and non-resource requests, which RoleBindings therefore never grant.
    pub fn namespace(&self) -> &'a str {
        match self {
            Self::Resource { namespace, .. } => namespace,
            Self::NonResource { .. } => "",
        }
    }
}

/// The authorizer's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Whether some binding grants the request.
    pub allowed: bool,
    /// On allow, which binding, role and subject granted it, worded as the
    /// Kubernetes RBAC authorizer does; empty on deny.
    pub reason: String,
}

impl Decision {
    /// The answer when nothing grants the request. RBAC has no explicit deny,
    /// so this is "no opinion"; the server writes its own Forbidden message.
    pub fn deny() -> Self {
        Self::default()
    }
}
