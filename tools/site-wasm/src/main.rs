//! The wasm steps of `scripts/site.mjs`, on the libraries cargo-leptos and the wasm-bindgen CLI
//! are made of (without their downloaders, web servers and TLS stacks, which take minutes to
//! build):
//!
//!   fundament-site-wasm split INPUT.wasm OUT_DIR MAIN_OUT.wasm MAIN_MODULE LINK_NAME
//!   fundament-site-wasm bindgen INPUT.wasm OUT_DIR OUT_NAME
//!
//! `split` cuts a module built with `-Clink-args=--emit-relocs` at its lazy split points
//! (Leptos's `#[lazy]` and lazy routes). It writes every chunk and the loader
//! (`OUT_DIR/LINK_NAME`, which imports `initSync` from MAIN_MODULE) into OUT_DIR, the main
//! module to MAIN_OUT.wasm, and `OUT_DIR/__wasm_split_manifest.json`: for each split point,
//! the chunks it needs, keys sorted so that the same input gives the same bytes.
//!
//! `bindgen` writes the JS glue for the web (`OUT_NAME.js`, `OUT_NAME_bg.wasm`) of the main
//! module, keeping the linker's export names the chunks import (as `wasm-bindgen --target=web
//! --keep-lld-exports --no-demangle --no-typescript` does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage:
  fundament-site-wasm split INPUT.wasm OUT_DIR MAIN_OUT.wasm MAIN_MODULE LINK_NAME
  fundament-site-wasm bindgen INPUT.wasm OUT_DIR OUT_NAME";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--help" | "-h"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        ["--version" | "-V"] => {
            println!("fundament-site-wasm {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        ["split", input, out_dir, main_out, main_module, link_name] => {
            split(input, Path::new(out_dir), Path::new(main_out), main_module, link_name)
        }
        ["bindgen", input, out_dir, out_name] => bindgen(input, Path::new(out_dir), out_name),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("fundament-site-wasm: {message}");
            ExitCode::FAILURE
        }
    }
}

fn split(
    input: &str,
    out_dir: &Path,
    main_out: &Path,
    main_module: &str,
    link_name: &str,
) -> Result<(), String> {
    let wasm = std::fs::read(input).map_err(|e| format!("cannot read {input}: {e}"))?;
    let split = wasm_split_cli_support::transform({
        let mut opts = wasm_split_cli_support::Options::new(&wasm);
        opts.output_dir = out_dir;
        opts.main_out_path = main_out;
        opts.main_module = main_module;
        opts.link_name = link_name;
        opts
    })
    .map_err(|e| format!("cannot split {input}: {e:#}"))?;
    // Sorted: a HashMap's order differs from run to run, and so would the file's bytes.
    let manifest: BTreeMap<_, _> = split.prefetch_map.into_iter().collect();
    let manifest_path: PathBuf = out_dir.join("__wasm_split_manifest.json");
    let json = serde_json::to_string(&manifest).map_err(|e| format!("cannot write the manifest: {e}"))?;
    std::fs::write(&manifest_path, json).map_err(|e| format!("cannot write {}: {e}", manifest_path.display()))
}

fn bindgen(input: &str, out_dir: &Path, out_name: &str) -> Result<(), String> {
    let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
    bindgen
        .input_path(input)
        .out_name(out_name)
        .web(true)
        .map_err(|e| format!("{e:#}"))?
        // The chunks import the main module's functions by the names the linker gave them.
        .keep_lld_exports(true)
        .demangle(false)
        .typescript(false);
    bindgen.generate(out_dir).map_err(|e| format!("cannot generate the glue for {input}: {e:#}"))
}
