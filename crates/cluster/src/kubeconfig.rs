//! Kubeconfigs of a running cluster: the admin one (a bearer token) and one
//! for a client certificate the cluster's CA issued.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::tls::ClientCertificate;

/// A kubeconfig for `server` trusting `ca_pem` and authenticating with `token`.
pub fn admin(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: fundament
  cluster:
    server: {server}
    certificate-authority-data: {ca}
users:
- name: fundament-admin
  user:
    token: {token}
contexts:
- name: fundament
  context:
    cluster: fundament
    user: fundament-admin
current-context: fundament
preferences: {{}}
"
    )
}

/// A kubeconfig for `server` trusting `ca_pem` that authenticates with the
/// client certificate `cert`; `name` names its cluster, user and context
/// entries (as Gardener names them after the shoot), so kubeconfigs of
/// several clusters merge without clashing.
pub fn client_certificate(server: &str, ca_pem: &str, cert: &ClientCertificate, name: &str) -> String {
    let doc = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {
            "server": server,
            "certificate-authority-data": STANDARD.encode(ca_pem),
        }}],
        "users": [{"name": name, "user": {
            "client-certificate-data": STANDARD.encode(&cert.cert_pem),
            "client-key-data": STANDARD.encode(&cert.key_pem),
        }}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
        "preferences": {},
    });
    // Serialized rather than formatted: names such as `system:admin` need quoting.
    serde_yaml::to_string(&doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_valid_yaml_with_the_ca_and_token() {
        let text = super::admin("https://localhost:8090", "PEM", "tok");
        let v: serde_json::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(v["users"][0]["user"]["token"], "tok");
        assert_eq!(v["clusters"][0]["cluster"]["certificate-authority-data"], "UEVN");
        assert_eq!(v["current-context"], "fundament");
    }

    #[test]
    fn a_client_certificate_kubeconfig_carries_the_certificate_and_key() {
        let cert = crate::tls::ClientCertificate {
            cert_pem: "CERT".into(),
            key_pem: "KEY".into(),
            not_after: time::OffsetDateTime::UNIX_EPOCH,
        };
        let text = super::client_certificate("https://localhost:1", "PEM", &cert, "garden-x--y-external");
        let v: serde_json::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(v["users"][0]["user"]["client-certificate-data"], "Q0VSVA==");
        assert_eq!(v["users"][0]["user"]["client-key-data"], "S0VZ");
        assert_eq!(v["clusters"][0]["cluster"]["server"], "https://localhost:1");
        assert_eq!(v["contexts"][0]["context"]["user"], "garden-x--y-external");
        assert_eq!(v["current-context"], "garden-x--y-external");
    }
}
