//! Wiring of the `fundament` binary: command line, settings, and the axum
//! routers of each service. Logic lives in the crates under `crates/` and in
//! `app/`; this crate only connects them.
#![forbid(unsafe_code)]
#![recursion_limit = "256"]

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod console;
pub mod console_auth;
pub mod dev;
pub mod garden;
pub mod listen;
pub mod middleware;
pub mod plugins;
pub mod sandbox;
pub mod services;
pub mod signal;
pub mod stack;

/// The stack's state directory: `--state-dir`, else `$XDG_STATE_HOME/fundament`
/// or `~/.local/state/fundament`.
pub fn state_dir(settings: &fundament_settings::Settings) -> std::path::PathBuf {
    settings.state_dir.clone().unwrap_or_else(|| {
        fundament_cluster::default_state_dir().parent().map(std::path::Path::to_path_buf).unwrap_or_default()
    })
}
