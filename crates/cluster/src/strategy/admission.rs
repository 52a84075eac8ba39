//! admissionregistration.k8s.io: ValidatingAdmissionPolicy and its binding.
//! Their validation (and defaulting) lives with the admission engine that
//! reads them (`crate::admission::policy`), so what is accepted is what runs.

use super::{Derived, Rules};
use crate::admission::policy;

pub static POLICY: Rules =
    Rules { check: |obj, _| policy::validate_policy(obj), after_change: Derived::ADMISSION, ..Rules::NONE };

pub static BINDING: Rules =
    Rules { check: |obj, _| policy::validate_binding(obj), after_change: Derived::ADMISSION, ..Rules::NONE };
