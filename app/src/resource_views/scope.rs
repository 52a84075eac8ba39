//! Which kind a generated view shows, and where: what the list, the detail
//! view and the form all need first.

use crate::components::status::Missing;
use crate::plugins::model::{KindInfo, paths};
use crate::routes::not_found::BackLink;

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
    /// The generated view was asked for over the plugin's own page (`?generated=1`): the pages
    /// it links to and goes on to (the edit form, the object after a save, the list after a
    /// delete) are generated views too.
    pub generated: bool,
}

impl ResourceScope {
    /// The kind's list page.
    pub fn list_path(&self) -> String {
        paths::generated(paths::list(self.project.as_deref(), &self.installation, &self.crd), self.generated)
    }

    /// The detail page of one object of the kind.
    pub fn detail_path(&self, name: &str, namespace: Option<&str>) -> String {
        let path = paths::detail(self.project.as_deref(), &self.installation, &self.crd, name, namespace);
        paths::generated(path, self.generated)
    }

    /// What the not-found page of one object of the kind says: the object as
    /// `Kind namespace/name` (a cluster-scoped kind's as `Kind name`), and a link to the list.
    pub fn missing(&self, name: &str, namespace: Option<&str>) -> Missing {
        let what = match namespace.filter(|_| self.kind.namespaced) {
            Some(namespace) => format!("{} {namespace}/{name}", self.kind.kind),
            None => format!("{} {name}", self.kind.kind),
        };
        let back = BackLink { href: self.list_path(), label: format!("Back to the {} list", self.kind.kind) };
        Missing { what, back }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(namespaced: bool) -> ResourceScope {
        ResourceScope {
            cluster_id: "c".into(),
            project: Some("webshop".into()),
            installation: "acme-corp--demo".into(),
            crd: "demoitems.demo.fundament.io".into(),
            kind: KindInfo {
                kind: "DemoItem".into(),
                plural: "demoitems".into(),
                group: "demo.fundament.io".into(),
                version: "v1".into(),
                namespaced,
            },
            generated: false,
        }
    }

    #[test]
    fn a_missing_object_is_named_as_kind_namespace_and_name_with_a_link_to_its_list() {
        let missing = scope(true).missing("web", Some("default"));
        assert_eq!(missing.what, "DemoItem default/web");
        assert_eq!(
            missing.back,
            BackLink {
                href: "/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io".into(),
                label: "Back to the DemoItem list".into(),
            }
        );
        // A cluster-scoped kind has no namespace to name, whatever the URL said.
        assert_eq!(scope(false).missing("web", Some("default")).what, "DemoItem web");
    }
}
