//! A definition as a validator reads it: [`DefinitionOutline`].
//!
//! [`PluginDefinition`](crate::PluginDefinition) reads a document that is
//! right, and fails on the first part of the wrong shape. A linter must go on:
//! the schema check reports the wrong shapes with their paths, and the rules
//! look at every part that has the right one. So the outline reads each
//! section, each list item and each map value on its own ([`Lenient`]), with
//! the same item types as the definition, and items keep their positions for
//! the paths in the linter's findings.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::{CustomComponents, KindGuide, MenuItem, RbacRule};

/// One part of a document, read on its own.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Lenient<T> {
    /// Not there, or `null`.
    #[default]
    Absent,
    /// There, of the right shape.
    Read(T),
    /// There, of the wrong shape.
    Malformed,
}

impl<T> Lenient<T> {
    /// The part, if it is there with the right shape.
    pub fn get(&self) -> Option<&T> {
        match self {
            Lenient::Read(value) => Some(value),
            Lenient::Absent | Lenient::Malformed => None,
        }
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, Lenient::Absent)
    }
}

impl Lenient<String> {
    /// The text, `""` where it is absent; `None` where it is not a string.
    pub fn text(&self) -> Option<&str> {
        match self {
            Lenient::Absent => Some(""),
            Lenient::Read(text) => Some(text),
            Lenient::Malformed => None,
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Null => Lenient::Absent,
            value => serde_json::from_value(value).map_or(Lenient::Malformed, Lenient::Read),
        })
    }
}

/// A list read item by item.
pub type Items<T> = Lenient<Vec<Lenient<T>>>;

/// A map (keys in order) read value by value.
pub type Entries<T> = Lenient<BTreeMap<String, Lenient<T>>>;

impl<T> Items<T> {
    /// The items of the right shape, with their positions in the list.
    pub fn items(&self) -> impl Iterator<Item = (usize, &T)> {
        self.get().into_iter().flatten().enumerate().filter_map(|(i, item)| item.get().map(|item| (i, item)))
    }

    /// Whether the list is there with at least one item (of any shape).
    pub fn has_items(&self) -> bool {
        self.get().is_some_and(|items| !items.is_empty())
    }
}

impl<T> Entries<T> {
    /// The values of the right shape, by key.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &T)> {
        self.get()
            .into_iter()
            .flatten()
            .filter_map(|(key, value)| value.get().map(|value| (key.as_str(), value)))
    }
}

/// A plugin definition read part by part.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DefinitionOutline {
    pub api_version: Lenient<String>,
    pub kind: Lenient<String>,
    pub metadata: Lenient<MetadataOutline>,
    pub spec: Lenient<SpecOutline>,
}

impl DefinitionOutline {
    /// Reads any JSON value; parts of the wrong shape are [`Lenient::Malformed`].
    pub fn read(document: &Value) -> DefinitionOutline {
        DefinitionOutline::deserialize(document).unwrap_or_default()
    }

    /// `metadata`, or an empty one where it is absent or not a mapping.
    pub fn metadata(&self) -> MetadataOutline {
        self.metadata.get().cloned().unwrap_or_default()
    }

    /// `spec`, or an empty one where it is absent or not a mapping.
    pub fn spec(&self) -> SpecOutline {
        self.spec.get().cloned().unwrap_or_default()
    }
}

/// The parts of `metadata` that rules read: the name and version end up in
/// resource names and URLs.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MetadataOutline {
    pub name: Lenient<String>,
    pub version: Lenient<String>,
}

/// `spec`, section by section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SpecOutline {
    pub image: Lenient<String>,
    pub image_pull_policy: Lenient<String>,
    pub permissions: Lenient<PermissionsOutline>,
    pub menu: Lenient<MenuOutline>,
    pub crds: Items<String>,
    pub custom_components: Entries<CustomComponents>,
    pub allowed_resources: Items<AllowedResourceOutline>,
    pub guides: Entries<KindGuide>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PermissionsOutline {
    pub rbac: Items<RbacRule>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MenuOutline {
    pub organization: Items<MenuItem>,
    pub project: Items<MenuItem>,
}

impl MenuOutline {
    /// Both scopes, by their key.
    pub fn scopes(&self) -> [(&'static str, &Items<MenuItem>); 2] {
        [("organization", &self.organization), ("project", &self.project)]
    }
}

/// An `allowedResources` entry field by field: the linter tells a missing
/// `group` (a mistake) from the core group `""`, which
/// [`AllowedResource`](crate::AllowedResource) reads alike.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AllowedResourceOutline {
    pub group: Lenient<String>,
    pub version: Lenient<String>,
    pub resource: Lenient<String>,
    pub verbs: Items<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_of_the_wrong_shape_hides_nothing_else() {
        let outline = DefinitionOutline::read(&json!({
            "metadata": {"name": "demo", "version": "v1"},
            "spec": {
                "crds": ["a.x.io", 3, "b.x.io"],
                "menu": {"organization": "x", "project": [{"crd": "a.x.io"}, {"crd": 1}]},
                "customComponents": {"A": {"list": "a.html"}, "B": "x"},
                "permissions": null,
                "allowedResources": [{"group": "", "verbs": ["get", 1]}],
                "guides": 7,
                "image": 5
            }
        }));
        assert_eq!(outline.metadata().name.text(), Some("demo"));
        assert_eq!((outline.api_version.text(), outline.kind.text()), (Some(""), Some("")));
        let spec = outline.spec();
        assert_eq!(
            spec.crds.items().collect::<Vec<_>>(),
            [(0, &"a.x.io".to_string()), (2, &"b.x.io".to_string())]
        );
        let menu = spec.menu.get().unwrap();
        assert_eq!(menu.organization, Lenient::Malformed);
        assert_eq!(
            menu.project.items().map(|(i, item)| (i, item.crd.as_str())).collect::<Vec<_>>(),
            [(0, "a.x.io")]
        );
        assert_eq!(spec.custom_components.entries().map(|(kind, _)| kind).collect::<Vec<_>>(), ["A"]);
        assert!(spec.permissions.is_absent());
        let entry = spec.allowed_resources.items().next().unwrap().1;
        assert_eq!((entry.group.get().map(String::as_str), entry.version.is_absent()), (Some(""), true));
        assert_eq!(entry.verbs.items().map(|(i, v)| (i, v.as_str())).collect::<Vec<_>>(), [(0, "get")]);
        assert!(entry.verbs.has_items());
        assert_eq!(spec.guides, Lenient::Malformed);
        assert_eq!((spec.image.text(), spec.image_pull_policy.text()), (None, Some("")));
    }

    #[test]
    fn anything_reads_as_an_outline() {
        for document in [json!(null), json!("x"), json!([1]), json!({"spec": "x", "metadata": 1})] {
            let outline = DefinitionOutline::read(&document);
            assert_eq!(outline.spec(), SpecOutline::default());
            assert_eq!(outline.metadata(), MetadataOutline::default());
        }
    }
}
