//! CustomResourceDefinitions, and the custom resources they serve.

use serde_json::{Value, json};

use super::{Dependent, Derived, Strategy, Validation};
use crate::fields;
use crate::resource::{self, Registry, ResourceType, StorageKey};
use crate::status::{ApiError, Cause};
use crate::store::Store;

pub struct Definition;
pub static DEFINITION: Definition = Definition;

impl Strategy for Definition {
    fn validate(&self, obj: &mut Value, _: &Validation<'_>) -> Result<Vec<Cause>, ApiError> {
        let mut causes = fields::expect_all(
            obj,
            &[(&["spec"], "object"), (&["spec", "names"], "object"), (&["spec", "versions"], "array")],
        );
        causes.extend(fields::expect_elements(obj, &["spec", "versions"], "object"));
        Ok(causes)
    }

    fn validate_servable(&self, obj: &Value) -> Vec<Cause> {
        match resource::from_crd(obj) {
            Ok(_) => Vec::new(),
            Err(errors) => {
                errors.into_iter().map(|e| Cause::new("FieldValueInvalid", &e.field, e.message)).collect()
            }
        }
    }

    /// The names are accepted and the CRD established at once: there is no controller to wait for.
    fn canonicalize(&self, _: &ResourceType, _: &Registry, obj: &mut Value) {
        let status = crd_status(obj);
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), status);
        }
    }

    /// Its custom resources go with it, in every namespace.
    fn dependents(&self, store: &Store, _: &Registry, gone: &Value) -> Vec<Dependent> {
        let key = StorageKey {
            group: gone["spec"]["group"].as_str().unwrap_or_default().into(),
            resource: gone["spec"]["names"]["plural"].as_str().unwrap_or_default().into(),
        };
        let names: Vec<_> = store.iter(&key, "").map(|((n, o), _)| (n.clone(), o.clone())).collect();
        names.into_iter().map(|(n, o)| (key.clone(), n, o)).collect()
    }

    fn after_change(&self) -> Derived {
        Derived::REGISTRY
    }
}

fn crd_status(crd: &Value) -> Value {
    let now = crate::cluster::now_rfc3339();
    json!({
        "acceptedNames": crd["spec"]["names"],
        "storedVersions": crd["spec"]["versions"].as_array().map(|vs| vs.iter()
            .filter(|v| v["storage"].as_bool() == Some(true)).map(|v| v["name"].clone()).collect::<Vec<_>>()),
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
    })
}

/// Every custom resource: its CRD's schema prunes, defaults and validates it.
pub struct CustomResource;
pub static CUSTOM_RESOURCE: CustomResource = CustomResource;

impl Strategy for CustomResource {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate(&self, obj: &mut Value, on: &Validation<'_>) -> Result<Vec<Cause>, ApiError> {
        let Some(validator) = on.rt.crd.as_ref().and_then(|c| c.validator.as_ref()) else {
            return Ok(Vec::new());
        };
        let pruned = validator.prune(obj);
        if on.strict && !pruned.is_empty() {
            let fields: Vec<String> = pruned.iter().map(|f| format!("unknown field \"{f}\"")).collect();
            return Err(ApiError::bad_request(format!("strict decoding error: {}", fields.join(", "))));
        }
        validator.apply_defaults(obj);
        Ok(validator
            .validate(obj, on.old)
            .into_iter()
            .map(|e| Cause::new(e.reason(), &e.field, e.message_without_field()))
            .collect())
    }

    /// Stored at the storage version, whatever version it was written at.
    fn canonicalize(&self, rt: &ResourceType, registry: &Registry, obj: &mut Value) {
        if let Some(storage) = registry.storage_type(&rt.storage_key())
            && let Some(m) = obj.as_object_mut()
        {
            m.insert("apiVersion".into(), Value::String(storage.api_version()));
        }
    }
}
