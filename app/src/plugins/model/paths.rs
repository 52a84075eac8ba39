//! Console paths of plugin pages (docs/architecture.md, "A plugin page, end to end").

use super::names::encode_segment;

/// `/[projects/<project>/]plugin-resources/<installation>/<crd>`.
pub fn list(project: Option<&str>, installation: &str, crd: &str) -> String {
    let base = project.map(|p| format!("/projects/{}", encode_segment(p))).unwrap_or_default();
    format!("{base}/plugin-resources/{}/{}", encode_segment(installation), encode_segment(crd))
}

/// The create page of a kind.
pub fn create(project: Option<&str>, installation: &str, crd: &str) -> String {
    format!("{}/create", list(project, installation, crd))
}

/// The detail page of an object; its namespace in `?ns=`.
pub fn detail(
    project: Option<&str>,
    installation: &str,
    crd: &str,
    name: &str,
    namespace: Option<&str>,
) -> String {
    let mut path = format!("{}/{}", list(project, installation, crd), encode_segment(name));
    if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
        path.push_str("?ns=");
        path.push_str(&encode_segment(ns));
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_paths() {
        assert_eq!(
            list(None, "acme-corp--cert-manager", "certificates.cert-manager.io"),
            "/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io"
        );
        assert_eq!(
            detail(Some("analytics"), "i", "databases.postgresql.cnpg.io", "app-db", Some("analytics")),
            "/projects/analytics/plugin-resources/i/databases.postgresql.cnpg.io/app-db?ns=analytics"
        );
        assert_eq!(create(None, "i", "k.g"), "/plugin-resources/i/k.g/create");
    }
}
