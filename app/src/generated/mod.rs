//! Generated views for kinds without a plugin page: list, detail, create and
//! edit, built from the CRD (seed "Generated fallback UI").

pub mod api;
pub mod detail;
pub mod form;
pub mod grant;
pub mod list;
pub mod schema_form;
pub mod table;
#[cfg(feature = "hydrate")]
pub(crate) mod watch;
