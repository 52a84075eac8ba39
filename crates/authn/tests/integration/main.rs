//! Every integration test of this package in one binary: one link and one codegen of the
//! shared dependencies instead of one per file (tests/<file>.rs would each be a binary).

mod harness;

mod authn_service;
mod connect_fuzz;
mod dev_faults;
mod mint_plugin_token;
mod oidc_flow;
