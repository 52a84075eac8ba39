//! `fundament`: every service of the Fundament stack in one binary.
//! Run `fundament --help` for the subcommands.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    server::cli::main()
}
