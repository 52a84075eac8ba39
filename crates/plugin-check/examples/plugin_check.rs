//! Runs the check on a plugin folder and prints the report:
//! `cargo run -p fundament-plugin-check --example plugin_check -- plugins/cert-manager [--json]`
//! (`fundament plugin check` is the same, wired into the CLI).

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_else(|| ".".into());
    match fundament_plugin_check::check(std::path::Path::new(&dir), &Default::default()).await {
        Ok(report) if args.iter().any(|a| a == "--json") => {
            println!("{}", report.to_json());
            std::process::ExitCode::from(u8::from(report.failed()))
        }
        Ok(report) => {
            print!("{report}");
            std::process::ExitCode::from(u8::from(report.failed()))
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::from(2)
        }
    }
}
