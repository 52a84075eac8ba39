//! Every integration test of this package in one binary: one link and one codegen of the
//! shared dependencies instead of one per file (tests/<file>.rs would each be a binary).

#[path = "../common/mod.rs"]
mod common;

mod audit_view;
mod authn_down;
mod gateway;
mod kubeconfig;
mod readyz;
mod real_mode;
mod sandbox_mode;
mod scale_out;
