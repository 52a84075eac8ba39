//! admissionregistration.k8s.io: ValidatingAdmissionPolicy and its binding.
//! Their validation (and defaulting) lives with the admission engine that
//! reads them (`crate::admission::policy`), so what is accepted is what runs.

use serde_json::Value;

use super::Strategy;
use crate::status::Cause;

pub struct Policy;
pub static POLICY: Policy = Policy;

impl Strategy for Policy {
    fn check(&self, obj: &mut Value) -> Vec<Cause> {
        crate::admission::policy::validate_policy(obj)
    }
}

pub struct Binding;
pub static BINDING: Binding = Binding;

impl Strategy for Binding {
    fn check(&self, obj: &mut Value) -> Vec<Cause> {
        crate::admission::policy::validate_binding(obj)
    }
}
