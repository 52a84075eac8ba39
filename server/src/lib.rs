//! Wiring of the `fundament` binary: command line, settings, and the axum
//! routers of each service. Logic lives in the crates under `crates/` and in
//! `app/`; this crate only connects them.
#![forbid(unsafe_code)]
#![recursion_limit = "256"]

pub mod cli;
pub mod cluster;
pub mod console;
pub mod dev;
pub mod listen;
pub mod middleware;
