//! Field paths as authors read them: `spec.menu.project[1].crd`.

/// `parent.key`, or `parent["key"]` when the key is not a plain word (CRD
/// references in `uiHints` contain dots), or just `key` at the top.
pub(crate) fn field(parent: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{key:?}]"),
    }
}

/// `parent[i]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spells_paths_like_kubectl_explain() {
        assert_eq!(field("", "spec"), "spec");
        assert_eq!(field("spec", "menu"), "spec.menu");
        assert_eq!(index("spec.menu.project", 1), "spec.menu.project[1]");
        assert_eq!(
            field("spec.uiHints", "certificates.cert-manager.io"),
            "spec.uiHints[\"certificates.cert-manager.io\"]"
        );
    }
}
