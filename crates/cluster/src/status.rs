//! Kubernetes `Status` errors: the one `Status` of `fundament-kube-core`,
//! under the names the cluster's code has always used for it.

use serde_json::Value;

use crate::resource::ResourceType;

/// A failed API call, rendered as a `Status` object.
pub use fundament_kube_core::status::Status as ApiError;
/// One field's complaint in an `Invalid` status.
pub use fundament_kube_core::status::StatusCause as Cause;
pub use fundament_kube_core::status::group_resource;

/// A `Status` of success, as delete answers for built-in kinds.
pub fn success(group: &str, kind: &str, name: &str, uid: &str) -> Value {
    ApiError::success(group, kind, name, uid).to_status()
}

/// An `Invalid` status of one cause, for the object `name` of `rt`.
pub fn invalid(rt: &ResourceType, name: &str, cause: Cause) -> ApiError {
    ApiError::invalid(&rt.kind, &rt.group, name, vec![cause])
}
