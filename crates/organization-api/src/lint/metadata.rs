//! `metadata`: the name and version end up in resource names and URLs.

use fundament_kube_core::validation::is_dns1123_label;
use fundament_plugin_types::outline::MetadataOutline;

use super::Finding;

/// `metadata.name` names the installation (`<organization>--<name>`) and the
/// namespace `plugin-<installation>`, so it must be a DNS label; the version is
/// a path segment of every plugin page URL.
pub(super) fn check(metadata: &MetadataOutline, out: &mut Vec<Finding>) {
    // Values of the wrong type were reported by the schema check; missing ones
    // (empty here) are its business too.
    let (name, version) =
        (metadata.name.text().unwrap_or_default(), metadata.version.text().unwrap_or_default());
    if !name.is_empty() && !is_dns1123_label(name) {
        out.push(Finding::error(
            "metadata.name",
            format!(
                "metadata.name {name:?} must be a DNS label (at most 63 lower-case letters, digits and \"-\", \
                 starting and ending with a letter or digit): it names the plugin's installations and namespaces"
            ),
        ));
    }
    if !version.is_empty() && !is_url_safe_version(version) {
        out.push(Finding::error(
            "metadata.version",
            format!(
                "metadata.version {version:?} must be a version such as v1.2.3 (letters, digits, \".\", \"-\", \
                 \"+\" and \"_\"): it is a path segment of the plugin's page URLs"
            ),
        ));
    }
}

fn is_url_safe_version(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn run(metadata: Value) -> Vec<String> {
        let mut out = Vec::new();
        check(&serde_json::from_value(metadata).unwrap(), &mut out);
        out.into_iter().map(|f| f.path).collect()
    }

    #[test]
    fn names_are_dns_labels_and_versions_are_url_safe() {
        assert!(run(json!({"name": "cert-manager", "version": "v1.17.2+build_1"})).is_empty());
        assert_eq!(run(json!({"name": "Cert_Manager"})), vec!["metadata.name"]);
        assert_eq!(run(json!({"name": "-x"})), vec!["metadata.name"]);
        assert_eq!(run(json!({"name": "x".repeat(64)})), vec!["metadata.name"]);
        assert_eq!(run(json!({"version": "v1/2"})), vec!["metadata.version"]);
        assert_eq!(run(json!({"version": ".v1"})), vec!["metadata.version"]);
        // Missing ones are the schema check's business.
        assert!(run(json!({})).is_empty());
    }
}
