//! `POST …/shoots/<name>/adminkubeconfig`: an `AdminKubeconfigRequest`
//! answered with a kubeconfig of a client certificate the shoot's CA signs,
//! validated and defaulted as Gardener does. RBAC (`create` on
//! `shoots/adminkubeconfig`) was checked on the way in, with every request.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::Shoots;
use crate::authn::User;
use crate::cluster::{Cluster, now_rfc3339};
use crate::path::ResourcePath;
use crate::resource::ResourceType;
use crate::status::{ApiError, Cause};

/// The subresource of a Shoot.
pub(crate) const ADMIN_KUBECONFIG: &str = "adminkubeconfig";
pub(super) const GROUP: &str = "authentication.gardener.cloud";
pub(super) const VERSION: &str = "v1alpha1";
pub(super) const KIND: &str = "AdminKubeconfigRequest";

/// Without `spec.expirationSeconds`, one hour.
const DEFAULT_EXPIRATION: Duration = Duration::from_secs(3600);
/// Longer requests get a day (Gardener's default maximum).
const MAXIMUM_EXPIRATION: Duration = Duration::from_secs(24 * 3600);
/// kube-apiserver's groups for the certificate: the shoot's superusers.
const GROUPS: &[&str] = &["system:masters"];
/// What Gardener puts before the requester's name in the certificate.
const USER_PREFIX: &str = "gardener.cloud:admin:";

fn invalid(field: &str, message: String) -> ApiError {
    ApiError::invalid(KIND, GROUP, "", vec![Cause::new("FieldValueInvalid", field, message)])
}

impl Shoots {
    /// The answer to `body`, an `AdminKubeconfigRequest` for the Shoot at `p`.
    pub(crate) fn admin_kubeconfig(
        &self,
        cluster: &Cluster,
        rt: &ResourceType,
        p: &ResourcePath,
        user: &User,
        body: Value,
    ) -> Result<Value, ApiError> {
        let expected = format!("{GROUP}/{VERSION}");
        if body["kind"].as_str().is_some_and(|k| k != KIND)
            || body["apiVersion"].as_str().is_some_and(|v| v != expected)
        {
            return Err(ApiError::bad_request(format!("the body must be a {KIND} of {expected}")));
        }
        let requested = match &body["spec"]["expirationSeconds"] {
            Value::Null => DEFAULT_EXPIRATION.as_secs(),
            value => {
                let seconds = value.as_i64().ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "spec.expirationSeconds must be an integer number of seconds, not {value}"
                    ))
                })?;
                match u64::try_from(seconds) {
                    Ok(s) if s >= self.minimum_expiration.as_secs() => s,
                    _ => {
                        return Err(invalid(
                            "spec.expirationSeconds",
                            format!(
                                "Invalid value: {seconds}: may not specify a duration less than {}",
                                minimum_text(self.minimum_expiration)
                            ),
                        ));
                    }
                }
            }
        };
        let seconds = requested.min(MAXIMUM_EXPIRATION.as_secs());
        // The Shoot must exist (404 as for any object); a Shoot someone created that no
        // cluster of this garden stands behind has no address to point at.
        cluster.get(rt, &p.namespace, &p.name)?;
        let shoot = self.clusters.get(&(p.namespace.clone(), p.name.clone())).ok_or_else(|| {
            ApiError::invalid(
                "Shoot",
                super::GROUP,
                &p.name,
                vec![Cause::new(
                    "FieldValueInvalid",
                    "status.advertisedAddresses",
                    "Invalid value: null: no suitable advertised address for kube-apiserver found in .status.advertisedAddresses",
                )],
            )
        })?;
        let common_name = format!("{USER_PREFIX}{}", user.name);
        let cert = shoot
            .ca
            .client_certificate(&common_name, GROUPS, Duration::from_secs(seconds))
            .map_err(|e| ApiError::internal(&e))?;
        let name = format!("{}--{}-external", p.namespace, p.name);
        let kubeconfig = crate::kubeconfig::client_certificate(&shoot.url, &shoot.ca_pem, &cert, &name);
        let expires = cert
            .not_after
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(|e| ApiError::internal(&e))?;
        tracing::info!(
            requester = %user.name,
            shoot = %format!("{}/{}", p.namespace, p.name),
            expires = %expires,
            "admin kubeconfig issued"
        );
        Ok(json!({
            "kind": KIND,
            "apiVersion": expected,
            "metadata": {"name": p.name, "namespace": p.namespace, "creationTimestamp": now_rfc3339()},
            "spec": {"expirationSeconds": seconds},
            "status": {
                "kubeconfig": base64::engine::general_purpose::STANDARD.encode(kubeconfig),
                "expirationTimestamp": expires,
            },
        }))
    }
}

/// `10 minutes`, as Gardener words its minimum; seconds for a minimum a test set.
fn minimum_text(minimum: Duration) -> String {
    match minimum.as_secs() {
        600 => "10 minutes".to_string(),
        secs => format!("{secs} seconds"),
    }
}
