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

    /// The kind's objects in every namespace, as the tab's shared watch follows them.
    #[cfg(feature = "hydrate")]
    pub fn collection(&self) -> super::watch::Collection {
        super::watch::Collection {
            cluster_id: self.cluster_id.clone(),
            group: self.kind.group.clone(),
            version: self.kind.version.clone(),
            plural: self.kind.plural.clone(),
            namespace: None,
        }
    }
}
