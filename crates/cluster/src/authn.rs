//! Who is calling, in kube-apiserver's order: a client certificate the
//! cluster's CA signed (common name the user, each organization a group), then
//! bearer tokens (the admin token, ServiceAccount tokens the cluster issued),
//! anonymous otherwise; then impersonation for those allowed.

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

/// What the verified client certificate of a connection says: the TLS
/// server reads it once per connection and hands it to each request as an
/// extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateIdentity {
    /// The subject's common name; empty when it has none.
    pub user: String,
    /// The subject's organizations, in order.
    pub groups: Vec<String>,
    /// Unix seconds.
    pub not_before: i64,
    pub not_after: i64,
}

#[derive(Debug, thiserror::Error)]
#[error("the client certificate cannot be read: {0}")]
pub struct CertificateError(String);

impl CertificateIdentity {
    pub fn from_der(der: &[u8]) -> Result<Self, CertificateError> {
        let (_, cert) =
            x509_parser::parse_x509_certificate(der).map_err(|e| CertificateError(e.to_string()))?;
        let text = |attr: &x509_parser::x509::AttributeTypeAndValue<'_>| {
            attr.as_str().map(str::to_string).map_err(|e| CertificateError(e.to_string()))
        };
        let subject = cert.subject();
        // As Go's pkix.Name, which kube-apiserver reads: the last common name counts.
        let user = match subject.iter_common_name().last() {
            Some(cn) => text(cn)?,
            None => String::new(),
        };
        let groups = subject.iter_organization().map(text).collect::<Result<_, _>>()?;
        let validity = cert.validity();
        Ok(Self {
            user,
            groups,
            not_before: validity.not_before.timestamp(),
            not_after: validity.not_after.timestamp(),
        })
    }

    /// The user the certificate names at `now`: `Ok(None)` for a certificate
    /// without a common name (it identifies nobody, and the next
    /// authenticator decides), `Err` for one outside its validity.
    fn user_at(&self, now: i64) -> Result<Option<User>, &'static str> {
        if now < self.not_before {
            return Err("the client certificate is not yet valid");
        }
        if now > self.not_after {
            return Err("the client certificate has expired");
        }
        if self.user.is_empty() {
            return Ok(None);
        }
        let mut groups = self.groups.clone();
        if !groups.iter().any(|g| g == "system:authenticated") {
            groups.push("system:authenticated".into());
        }
        Ok(Some(User { name: self.user.clone(), groups, uid: String::new() }))
    }
}

/// The bearer token of a request, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Authenticates a request as kube-apiserver's union of authenticators: a
/// client certificate that names a user wins over any bearer token; then the
/// token; a certificate out of its validity, or a token nobody issued, is 401
/// unless the other one identifies the caller; nothing at all is anonymous.
pub fn authenticate(
    cluster: &Cluster,
    issuer: &TokenIssuer,
    admin_token: &str,
    certificate: Option<&CertificateIdentity>,
    headers: &HeaderMap,
    now: i64,
) -> Result<User, ApiError> {
    let mut certificate_refused = false;
    if let Some(identity) = certificate {
        match identity.user_at(now) {
            Ok(Some(user)) => return Ok(user),
            Ok(None) => {}
            Err(reason) => {
                tracing::debug!(reason, "client certificate refused");
                certificate_refused = true;
            }
        }
    }
    let Some(token) = bearer(headers) else {
        if certificate_refused || headers.contains_key(http::header::AUTHORIZATION) {
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
            authenticate(&cluster, &issuer, "admin-secret-token", None, &h, 0).unwrap().name,
            "system:anonymous"
        );
        h.insert(http::header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        assert_eq!(authenticate(&cluster, &issuer, "admin-secret-token", None, &h, 0).unwrap_err().code, 401);
        h.insert(http::header::AUTHORIZATION, "Bearer admin-secret-token".parse().unwrap());
        assert_eq!(
            authenticate(&cluster, &issuer, "admin-secret-token", None, &h, 0).unwrap().name,
            ADMIN_USER
        );
        // A well-signed token for a ServiceAccount that does not exist.
        let t = issuer.issue("ns", "ghost", "u", vec![], 0, 600);
        h.insert(http::header::AUTHORIZATION, format!("Bearer {t}").parse().unwrap());
        assert_eq!(authenticate(&cluster, &issuer, "admin-secret-token", None, &h, 1).unwrap_err().code, 401);
    }

    fn identity_of(cert: &crate::tls::ClientCertificate) -> CertificateIdentity {
        let der = rustls_pemfile::certs(&mut cert.cert_pem.as_bytes()).next().unwrap().unwrap();
        CertificateIdentity::from_der(&der).unwrap()
    }

    #[test]
    fn a_client_certificate_names_its_user_and_groups_and_wins_over_a_token() {
        let dir = tempfile::tempdir().unwrap();
        let ca = crate::tls::CertificateAuthority::load_or_create(dir.path()).unwrap();
        let cert =
            ca.client_certificate("jane", &["dev", "ops"], std::time::Duration::from_secs(3600)).unwrap();
        let identity = identity_of(&cert);
        assert_eq!(identity.user, "jane");
        assert_eq!(identity.groups, ["dev", "ops"]);
        assert_eq!(identity.not_after, cert.not_after.unix_timestamp());
        let cluster = Cluster::new();
        let issuer = TokenIssuer::from_key(vec![1; 32]);
        let mut h = HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, "Bearer admin-secret-token".parse().unwrap());
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let user = authenticate(&cluster, &issuer, "admin-secret-token", Some(&identity), &h, now).unwrap();
        assert_eq!(user, User::new("jane", &["dev", "ops", "system:authenticated"]));
        // A refused token does not matter either: the certificate answered first.
        h.insert(http::header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        assert_eq!(
            authenticate(&cluster, &issuer, "admin-secret-token", Some(&identity), &h, now).unwrap().name,
            "jane"
        );
    }

    #[test]
    fn a_client_certificate_out_of_its_validity_is_401_unless_a_token_identifies_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let ca = crate::tls::CertificateAuthority::load_or_create(dir.path()).unwrap();
        let now = time::OffsetDateTime::now_utc();
        let hour = time::Duration::hours(1);
        let expired =
            identity_of(&ca.client_certificate_between("jane", &[], now - hour * 2, now - hour).unwrap());
        let future =
            identity_of(&ca.client_certificate_between("jane", &[], now + hour, now + hour * 2).unwrap());
        let cluster = Cluster::new();
        let issuer = TokenIssuer::from_key(vec![1; 32]);
        let mut h = HeaderMap::new();
        let at = now.unix_timestamp();
        for identity in [&expired, &future] {
            let refused = authenticate(&cluster, &issuer, "admin-secret-token", Some(identity), &h, at);
            assert_eq!(refused.unwrap_err().code, 401, "{identity:?}");
        }
        h.insert(http::header::AUTHORIZATION, "Bearer admin-secret-token".parse().unwrap());
        assert_eq!(
            authenticate(&cluster, &issuer, "admin-secret-token", Some(&expired), &h, at).unwrap().name,
            ADMIN_USER
        );
        // Without a common name a certificate names nobody: the token (or anonymity) decides.
        let nameless = CertificateIdentity { user: String::new(), ..expired.clone() };
        let within = expired.not_after - 1;
        assert_eq!(
            authenticate(&cluster, &issuer, "admin-secret-token", Some(&nameless), &h, within).unwrap().name,
            ADMIN_USER
        );
        assert!(matches!(
            ca.client_certificate("", &[], std::time::Duration::from_secs(60)),
            Err(crate::tls::TlsError::NoUser)
        ));
    }
}
