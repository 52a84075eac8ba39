//! Every integration test of this package in one binary: one link and one codegen of the
//! shared dependencies instead of one per file (tests/<file>.rs would each be a binary).

mod common;

mod compile;
mod defaults_prune;
mod keywords;
mod no_panics;
mod rules;
