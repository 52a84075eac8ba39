//! Every integration test of this package in one binary: one link and one codegen of the
//! shared dependencies instead of one per file (tests/<file>.rs would each be a binary).

mod checkout;
mod cli_exit;
mod cluster_crash;
mod console_http;
mod plugin_runtime_faults;
