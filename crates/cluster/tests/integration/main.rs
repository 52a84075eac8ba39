//! Every integration test of this package in one binary: one link and one codegen of the
//! shared dependencies instead of one per file (tests/<file>.rs would each be a binary).

mod common;

mod admission_policy;
mod bad_input;
mod body_fuzz;
mod client_certificates;
mod escalation;
mod garden;
mod kube_client;
mod kubectl;
mod plugin_folders;
mod removal;
mod routing;
mod service_proxy;
mod state_file;
mod write_fuzz;
