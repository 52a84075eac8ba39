//! admissionregistration.k8s.io: ValidatingAdmissionPolicy and its binding.
//! Their validation (and defaulting) lives with the admission engine that
//! reads them (`crate::admission::policy`), so what is accepted is what runs.

use serde_json::Value;

use super::Strategy;
use crate::resource::ResourceType;
use crate::status::{ApiError, Cause};

pub struct Policy;
pub static POLICY: Policy = Policy;

impl Strategy for Policy {
    fn validate(
        &self,
        _rt: &ResourceType,
        obj: &mut Value,
        _old: Option<&Value>,
        _strict: bool,
    ) -> Result<Vec<Cause>, ApiError> {
        Ok(crate::admission::policy::validate_policy(obj))
    }
}

pub struct Binding;
pub static BINDING: Binding = Binding;

impl Strategy for Binding {
    fn validate(
        &self,
        _rt: &ResourceType,
        obj: &mut Value,
        _old: Option<&Value>,
        _strict: bool,
    ) -> Result<Vec<Cause>, ApiError> {
        Ok(crate::admission::policy::validate_binding(obj))
    }
}
