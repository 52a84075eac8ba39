//! The views of kinds without a plugin page: list, detail, create and edit,
//! built at run time from the CRD schema (seed "Generated fallback UI"), with
//! what the plugin's guide of the kind says about conditions, labels and
//! refused writes.

pub mod api;
pub mod detail;
pub mod form;
pub mod form_post;
pub mod label_selector;
pub mod list;
pub mod schema_form;
pub mod scope;
pub mod stale;
pub mod table;
#[cfg(feature = "hydrate")]
pub(crate) mod watch;
// The watch's parsing, apart from the browser's streams: built for the browser and for tests.
#[cfg(any(feature = "hydrate", test))]
pub(crate) mod watch_event;
pub mod yaml_edit;
pub mod yaml_tab;
