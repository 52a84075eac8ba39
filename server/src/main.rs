//! `fundament`: every service of the Fundament stack in one binary.
//! Run `fundament --help` for the subcommands.
#![forbid(unsafe_code)]

/// mimalloc in place of glibc's malloc: under 64 concurrent plugin-path requests, glibc's
/// malloc and free took about 17 % of the gateway's CPU (perf; bench/gateway.sh's set-up).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    server::cli::main()
}
