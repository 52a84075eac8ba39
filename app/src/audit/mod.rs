//! `/audit`: the plugin-path calls on the selected cluster, as kube-api-proxy recorded them
//! (`fundament_plugin_types::audit`): who, through which plugin, what, and which check
//! refused it. The filters live in the URL (a GET form, so every view can be bookmarked,
//! reloaded and works without JavaScript); with JavaScript a live tail adds new calls as they
//! happen; an export downloads what the filters select as JSON lines.

pub mod api;
pub mod export;
pub mod page;
pub mod query;

pub use page::AuditRoute;
