//! OpenAPI documents: v3 per group version (what `kubectl explain` and
//! kubectl's field-validation check read) and a v2 document for older tools.
//! CRD kinds carry their full schema; built-in kinds a short description.

use serde_json::{Map, Value, json};

use crate::resource::{Registry, ResourceType};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// `io.cert-manager.v1.Certificate`: reversed group, as the apiserver names CRD schemas.
pub fn definition_name(rt: &ResourceType) -> String {
    let group = if rt.group.is_empty() {
        "io.k8s.api.core".to_string()
    } else {
        rt.group.split('.').rev().collect::<Vec<_>>().join(".")
    };
    format!("{group}.{}.{}", rt.version, rt.kind)
}

fn object_meta() -> Value {
    let s = |d: &str| json!({"type": "string", "description": d});
    json!({
        "type": "object",
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "properties": {
            "name": s("Name must be unique within a namespace."),
            "generateName": s("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
            "namespace": s("Namespace defines the space within which each name must be unique."),
            "uid": s("UID is the unique in time and space value for this object. Populated by the system. Read-only."),
            "resourceVersion": s("An opaque value that represents the internal version of this object. Populated by the system. Read-only."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only."},
            "creationTimestamp": {"type": "string", "format": "date-time", "description": "CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only."},
            "deletionTimestamp": {"type": "string", "format": "date-time", "description": "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted."},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Map of string keys and values that can be used to organize and categorize (scope and select) objects."},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."},
            "finalizers": {"type": "array", "items": {"type": "string"}, "description": "Must be empty before the object is deleted from the registry."},
            "ownerReferences": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "description": "List of objects depended by this object."},
        },
    })
}

fn gvk(rt: &ResourceType) -> Value {
    json!([{"group": rt.group, "version": rt.version, "kind": rt.kind}])
}

/// The schema of a kind: its CRD schema with apiVersion, kind and metadata filled in.
pub fn kind_schema(rt: &ResourceType, meta_ref: &str) -> Value {
    let mut schema = rt
        .crd
        .as_ref()
        .and_then(|c| c.schema.clone())
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    if rt.crd.is_none() {
        schema["description"] =
            json!(format!("{} is a built-in Kubernetes kind, served by the embedded cluster.", rt.kind));
    }
    let props = schema.as_object_mut().map(|m| m.entry("properties").or_insert_with(|| json!({})));
    if let Some(Value::Object(props)) = props {
        props.insert("apiVersion".into(), json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}));
        props.insert("kind".into(), json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}));
        props.insert(
            "metadata".into(),
            json!({"allOf": [{"$ref": meta_ref}], "description": "Standard object's metadata."}),
        );
    }
    schema["x-kubernetes-group-version-kind"] = gvk(rt);
    schema
}

fn operation(rt: &ResourceType, action: &str, write: bool) -> Value {
    let mut op = json!({
        "operationId": format!("{action}{}", rt.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(rt)[0],
        "responses": {"200": {"description": "OK"}},
    });
    if write {
        op["parameters"] = json!([
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}, "description": "When present, indicates that modifications should not be persisted."},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}, "description": "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict."},
        ]);
    }
    op
}

fn paths(rt: &ResourceType) -> Vec<(String, Value)> {
    let prefix = if rt.group.is_empty() {
        "/api/v1".to_string()
    } else {
        format!("/apis/{}/{}", rt.group, rt.version)
    };
    let scope = if rt.namespaced { "/namespaces/{namespace}" } else { "" };
    let collection = format!("{prefix}{scope}/{}", rt.plural);
    let item = format!("{collection}/{{name}}");
    vec![
        (collection, json!({"get": operation(rt, "list", false), "post": operation(rt, "post", true)})),
        (
            item,
            json!({"get": operation(rt, "get", false), "put": operation(rt, "put", true),
                   "patch": operation(rt, "patch", true), "delete": operation(rt, "delete", false)}),
        ),
    ]
}

/// `/openapi/v3`: where each group version's document is.
pub fn v3_root(registry: &Registry, hash: &str) -> Value {
    let mut paths = Map::new();
    for (group, versions) in registry.groups() {
        for v in versions {
            let key = if group.is_empty() { format!("api/{v}") } else { format!("apis/{group}/{v}") };
            paths.insert(key.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}));
        }
    }
    json!({"paths": paths})
}

/// `/openapi/v3/apis/<group>/<version>`.
pub fn v3_group_version(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    if !registry.has_group_version(group, version) {
        return None;
    }
    let mut schemas = Map::new();
    let mut path_map = Map::new();
    schemas.insert(OBJECT_META.into(), object_meta());
    for rt in registry.all().iter().filter(|t| t.group == group && t.version == version) {
        schemas.insert(definition_name(rt), kind_schema(rt, &format!("#/components/schemas/{OBJECT_META}")));
        for (p, item) in paths(rt) {
            path_map.insert(p, item);
        }
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": crate::discovery::KUBE_VERSION},
        "paths": path_map,
        "components": {"schemas": schemas},
    }))
}

/// `/openapi/v2`: every kind in one Swagger 2.0 document.
pub fn v2(registry: &Registry) -> Value {
    let mut definitions = Map::new();
    definitions.insert(OBJECT_META.into(), object_meta());
    for rt in registry.all() {
        definitions.insert(definition_name(rt), kind_schema(rt, &format!("#/definitions/{OBJECT_META}")));
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": crate::discovery::KUBE_VERSION},
        "paths": {},
        "definitions": definitions,
    })
}
