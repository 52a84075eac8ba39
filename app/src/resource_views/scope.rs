//! Which kind a generated view shows, and where: what the list, the detail
//! view and the form all need first.

use crate::plugins::model::{KindInfo, paths};

/// A kind of a plugin installation on one cluster, seen from a project or
/// from the whole organization.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceScope {
    pub cluster_id: String,
    /// The project the page is in; `None` at organization level.
    pub project: Option<String>,
    /// The plugin installation that offers the kind.
    pub installation: String,
    /// The CRD, `<plural>.<group>`.
    pub crd: String,
    pub kind: KindInfo,
}

impl ResourceScope {
    /// The kind's list page.
    pub fn list_path(&self) -> String {
        paths::list(self.project.as_deref(), &self.installation, &self.crd)
    }

    /// The detail page of one object of the kind.
    pub fn detail_path(&self, name: &str, namespace: Option<&str>) -> String {
        paths::detail(self.project.as_deref(), &self.installation, &self.crd, name, namespace)
    }

    /// A watch of the kind's objects (in `namespace`, else in all) through the
    /// console's cluster route, from `resource_version` on, with bookmarks.
    #[cfg(feature = "hydrate")]
    pub fn watch_url(&self, namespace: Option<&str>, resource_version: &str) -> String {
        use crate::plugins::model::encode_segment;
        let kind = &self.kind;
        format!(
            "{}/clusters/{}/apis/{}/{}{}/{}?watch=1&allowWatchBookmarks=true&resourceVersion={}",
            crate::api::CLUSTER_ROUTE,
            self.cluster_id,
            kind.group,
            kind.version,
            namespace.map(|n| format!("/namespaces/{n}")).unwrap_or_default(),
            kind.plural,
            encode_segment(resource_version)
        )
    }
}
