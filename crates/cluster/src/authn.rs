//! Who is calling: bearer tokens (the admin token, ServiceAccount tokens the
//! cluster issued), anonymous otherwise, then impersonation for those allowed.

use http::HeaderMap;

use crate::cluster::Cluster;
use crate::status::ApiError;
use crate::tokens::TokenIssuer;

/// An authenticated identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub groups: Vec<String>,
    pub uid: String,
}

pub const ADMIN_USER: &str = "kubernetes-admin";

impl User {
    pub fn new(name: &str, groups: &[&str]) -> Self {
        Self { name: name.into(), groups: groups.iter().map(|g| g.to_string()).collect(), uid: String::new() }
    }

    /// The cluster acting on its own behalf (fixtures, the mock controller).
    pub fn system() -> Self {
        Self::new("system:apiserver", &["system:masters", "system:authenticated"])
    }

    pub fn anonymous() -> Self {
        Self::new("system:anonymous", &["system:unauthenticated"])
    }

    /// A ServiceAccount's username and the groups Kubernetes gives it.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
            uid: String::new(),
        }
    }

    pub fn rbac(&self) -> fundament_rbac::UserInfo {
        fundament_rbac::UserInfo::new(self.name.as_str(), self.groups.iter().map(String::as_str))
    }
}

/// The bearer token of a request, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Authenticates a request: no token is anonymous; a token nobody issued is 401.
pub fn authenticate(
    cluster: &Cluster,
    issuer: &TokenIssuer,
    admin_token: &str,
    headers: &HeaderMap,
    now: i64,
) -> Result<User, ApiError> {
    let Some(token) = bearer(headers) else {
        if headers.contains_key(http::header::AUTHORIZATION) {
            return Err(ApiError::unauthorized());
        }
        return Ok(User::anonymous());
    };
    if constant_time_eq(token.as_bytes(), admin_token.as_bytes()) {
        return Ok(User::new(ADMIN_USER, &["system:masters", "system:authenticated"]));
    }
    let claims = issuer.verify(token, now).map_err(|e| {
        tracing::debug!(reason = %e, "bearer token refused");
        ApiError::unauthorized()
    })?;
    let ns = &claims.kubernetes.namespace;
    let sa = &claims.kubernetes.serviceaccount;
    // A bound token dies with its ServiceAccount: same name is not enough, same uid is.
    let registry = cluster.registry();
    let rt = registry.get("", "v1", "serviceaccounts").ok_or_else(ApiError::unauthorized)?;
    let current = cluster.get(rt, ns, &sa.name).map_err(|_| ApiError::unauthorized())?;
    if crate::object::uid(&current) != sa.uid {
        return Err(ApiError::unauthorized());
    }
    let mut user = User::service_account(ns, &sa.name);
    user.uid = sa.uid.clone();
    Ok(user)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Applies `Impersonate-User` / `Impersonate-Group`, if the caller may.
pub fn impersonate(cluster: &Cluster, user: User, headers: &HeaderMap) -> Result<User, ApiError> {
    let target = headers.get("impersonate-user").and_then(|v| v.to_str().ok()).map(str::to_string);
    let groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    let Some(target) = target else {
        if groups.is_empty() {
            return Ok(user);
        }
        return Err(ApiError::bad_request("requested impersonation of groups without a user"));
    };
    let policy = cluster.policy();
    let allowed = |resource: &str, name: &str, namespace: &str| {
        policy
            .authorize(
                &user.rbac(),
                &fundament_rbac::Attributes::Resource {
                    verb: "impersonate",
                    api_group: "",
                    resource,
                    subresource: "",
                    name,
                    namespace,
                },
            )
            .allowed
    };
    let mut result = match target.strip_prefix("system:serviceaccount:").and_then(|r| r.split_once(':')) {
        Some((ns, name)) => {
            if !allowed("serviceaccounts", name, ns) {
                return Err(ApiError::forbidden(
                    &user.name,
                    "impersonate",
                    "",
                    "serviceaccounts",
                    "",
                    name,
                    ns,
                ));
            }
            let mut sa = User::service_account(ns, name);
            sa.groups.retain(|g| g != "system:authenticated");
            sa
        }
        None => {
            if !allowed("users", &target, "") {
                return Err(ApiError::forbidden(&user.name, "impersonate", "", "users", "", &target, ""));
            }
            User { name: target.clone(), groups: Vec::new(), uid: String::new() }
        }
    };
    for g in groups {
        if !allowed("groups", &g, "") {
            return Err(ApiError::forbidden(&user.name, "impersonate", "", "groups", "", &g, ""));
        }
        if !result.groups.contains(&g) {
            result.groups.push(g);
        }
    }
    if result.name != "system:anonymous" && !result.groups.iter().any(|g| g == "system:authenticated") {
        result.groups.push("system:authenticated".into());
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bearer_tokens() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(http::header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(http::header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn unknown_tokens_are_unauthorized_and_no_token_is_anonymous() {
        let cluster = Cluster::new();
        let issuer = TokenIssuer::from_key(vec![1; 32]);
        let mut h = HeaderMap::new();
        assert_eq!(
            authenticate(&cluster, &issuer, "admin-secret-token", &h, 0).unwrap().name,
            "system:anonymous"
        );
        h.insert(http::header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        assert_eq!(authenticate(&cluster, &issuer, "admin-secret-token", &h, 0).unwrap_err().code, 401);
        h.insert(http::header::AUTHORIZATION, "Bearer admin-secret-token".parse().unwrap());
        assert_eq!(authenticate(&cluster, &issuer, "admin-secret-token", &h, 0).unwrap().name, ADMIN_USER);
        // A well-signed token for a ServiceAccount that does not exist.
        let t = issuer.issue("ns", "ghost", "u", vec![], 0, 600);
        h.insert(http::header::AUTHORIZATION, format!("Bearer {t}").parse().unwrap());
        assert_eq!(authenticate(&cluster, &issuer, "admin-secret-token", &h, 1).unwrap_err().code, 401);
    }
}
