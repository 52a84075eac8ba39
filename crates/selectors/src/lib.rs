//! Kubernetes label and field selectors, as `kubectl -l` and `--field-selector`
//! and the API server's `labelSelector` / `fieldSelector` parameters read them.
//!
//! Pure parsing and matching, no I/O, so the embedded cluster (which filters
//! lists with them) and the console (which checks a selector as the user types
//! it) share one implementation.
#![forbid(unsafe_code)]

mod field;
mod label;

pub use field::{FieldRequirement, FieldSelector, FieldSelectorError};
pub use label::{LabelSelector, LabelSelectorError, Operator, Requirement};
