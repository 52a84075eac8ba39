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

    /// Follows the kind's CRD while the view shows: when it changes (a new printer column,
    /// another schema), the console's copy of it is renewed first, then `changed` runs, so the
    /// view reads the new definition without a reload. One shared watch of the cluster's CRDs
    /// per tab. A resync or a refusal changes nothing: the console keeps a copy seconds only.
    #[cfg(feature = "hydrate")]
    pub fn follow_definition(&self, changed: impl Fn() + 'static) -> super::watch::Subscription {
        use super::watch::{Collection, Interest, Note, last_version, subscribe};
        let crds = Collection {
            cluster_id: self.cluster_id.clone(),
            group: "apiextensions.k8s.io".into(),
            version: "v1".into(),
            plural: "customresourcedefinitions".into(),
            namespace: None,
        };
        let interest = Interest { namespaces: None, name: Some(self.crd.clone()) };
        let (cluster_id, crd) = (self.cluster_id.clone(), self.crd.clone());
        let changed = std::rc::Rc::new(changed);
        let watched = crds.clone();
        subscribe(crds, interest, None, move |note| {
            if note != Note::Changed {
                return;
            }
            // The hub has just read the changed CRD's event: its version is the stream's last.
            let Some(resource_version) = last_version(&watched) else { return };
            let (cluster_id, crd, changed) = (cluster_id.clone(), crd.clone(), changed.clone());
            leptos::task::spawn_local(async move {
                let _ = super::api::definition_changed(cluster_id, crd, resource_version).await;
                changed();
            });
        })
    }
}
