//! The admin kubeconfig of a running cluster.

use base64::Engine;

/// A kubeconfig for `server` trusting `ca_pem` and authenticating with `token`.
pub fn admin(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
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
}
