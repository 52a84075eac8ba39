//! Every integration test of this package in one binary: one link and one codegen of the
//! shared dependencies instead of one per file (tests/<file>.rs would each be a binary).

mod common;

mod camunda_guides;
mod catalog;
mod connect_fuzz;
mod lint;
mod router;
