//! Objects of any kind, typed where every kind agrees: `apiVersion`, `kind`
//! and `metadata` ([`ObjectMeta`]), with the rest (`spec`, `status`, `data`,
//! …) kept as JSON for the kind's own reader ([`DynamicObject`]).
//!
//! Reading is lenient where the API server's own decoding would not matter to
//! a reader: an absent or `null` field is its default. A field of the wrong
//! type is an error, as it is for the API server (`metadata.labels: "x"` is
//! not an object with no labels).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// `metav1.TypeMeta`: which kind an object is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeMeta {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub kind: String,
}

impl TypeMeta {
    /// The API group of `apiVersion` (`""` for the core group's `v1`).
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(group, _)| group)
    }

    /// The version of `apiVersion` (`v1` of `apps/v1`).
    pub fn version(&self) -> &str {
        self.api_version.rsplit_once('/').map_or(self.api_version.as_str(), |(_, version)| version)
    }
}

/// `metav1.ObjectMeta`, the fields every persisted object has. Fields the API
/// server sets (uid, resourceVersion, timestamps) are empty until it has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub generate_name: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// RFC 3339, as the API server writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
    /// Set once a delete waits for finalizers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<OwnerReference>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// Server-side apply's bookkeeping, passed through untouched.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub managed_fields: Vec<Value>,
}

impl ObjectMeta {
    /// Whether a delete is waiting for finalizers.
    pub fn is_terminating(&self) -> bool {
        self.deletion_timestamp.is_some()
    }

    /// The owner that controls this object, if one does.
    pub fn controller(&self) -> Option<&OwnerReference> {
        self.owner_references.iter().find(|owner| owner.controller == Some(true))
    }
}

/// `metav1.OwnerReference`: an object this one belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    #[serde(default, deserialize_with = "null_default")]
    pub api_version: String,
    #[serde(default, deserialize_with = "null_default")]
    pub kind: String,
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// An object of any kind: its type and metadata typed, everything else as
/// the JSON it came in (the kind's reader types `spec` and `status`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DynamicObject {
    #[serde(flatten)]
    pub types: TypeMeta,
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: ObjectMeta,
    /// Every other top-level field, in the order it came.
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

/// Why a JSON value is not an object of any kind.
#[derive(Debug, thiserror::Error)]
#[error("not a Kubernetes object: {0}")]
pub struct ObjectError(#[from] serde_json::Error);

impl DynamicObject {
    /// Reads an object from JSON (a body, a stored object, a parsed YAML file).
    pub fn from_value(value: Value) -> Result<DynamicObject, ObjectError> {
        Ok(serde_json::from_value(value)?)
    }

    /// The top-level field `key` (`spec`, `status`, `data`, …) read as `T`:
    /// `None` when absent or `null`, an error when of the wrong shape.
    pub fn field<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ObjectError> {
        match self.data.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => Ok(Some(T::deserialize(value)?)),
        }
    }

    /// Back to JSON, `apiVersion`, `kind` and `metadata` first.
    pub fn into_value(self) -> Value {
        let mut out = Map::new();
        if !self.types.api_version.is_empty() {
            out.insert("apiVersion".into(), Value::String(self.types.api_version));
        }
        if !self.types.kind.is_empty() {
            out.insert("kind".into(), Value::String(self.types.kind));
        }
        out.insert("metadata".into(), serde_json::to_value(self.metadata).unwrap_or_default());
        out.extend(self.data);
        Value::Object(out)
    }
}

/// An explicit `null` is an absent field, as the API server decodes it (and as
/// plugin-types reads definitions and installations).
pub fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_reads_its_metadata_typed_and_keeps_the_rest() {
        let object = DynamicObject::from_value(json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {
                "name": "web", "namespace": "team", "uid": "u-1", "resourceVersion": "7",
                "labels": {"app": "web"}, "annotations": null, "finalizers": ["x.io/keep"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u-0", "controller": true}],
                "creationTimestamp": "2026-01-01T00:00:00Z", "futureField": 1
            },
            "spec": {"secretName": "web-tls"},
            "status": {"conditions": []}
        }))
        .unwrap();
        assert_eq!((object.types.group(), object.types.version()), ("cert-manager.io", "v1"));
        assert_eq!(object.metadata.name, "web");
        assert_eq!(object.metadata.labels.get("app").map(String::as_str), Some("web"));
        assert!(object.metadata.annotations.is_empty());
        assert_eq!(object.metadata.controller().map(|o| o.name.as_str()), Some("s"));
        assert!(!object.metadata.is_terminating());
        assert_eq!(object.field::<Value>("spec").unwrap(), Some(json!({"secretName": "web-tls"})));
        assert_eq!(object.field::<Value>("data").unwrap(), None);
        let back = object.into_value();
        assert_eq!(back["spec"]["secretName"], "web-tls");
        assert_eq!(back["metadata"]["resourceVersion"], "7");
        assert!(back["metadata"].get("annotations").is_none());
    }

    #[test]
    fn the_core_group_has_no_group() {
        let types = TypeMeta { api_version: "v1".into(), kind: "Pod".into() };
        assert_eq!((types.group(), types.version()), ("", "v1"));
    }

    #[test]
    fn fields_of_the_wrong_type_are_errors_not_defaults() {
        for bad in [
            json!({"metadata": "x"}),
            json!({"metadata": {"labels": "x"}}),
            json!({"metadata": {"labels": {"a": 1}}}),
            json!({"metadata": {"finalizers": [1]}}),
            json!({"kind": 3}),
            json!([]),
        ] {
            assert!(DynamicObject::from_value(bad.clone()).is_err(), "{bad}");
        }
        let object = DynamicObject::from_value(json!({"spec": "x"})).unwrap();
        assert!(object.field::<Map<String, Value>>("spec").is_err());
    }

    #[test]
    fn missing_and_null_parts_are_empty() {
        let object = DynamicObject::from_value(json!({"metadata": null})).unwrap();
        assert_eq!(object.metadata, ObjectMeta::default());
        assert_eq!(object.into_value(), json!({"metadata": {}}));
    }
}
