//! Splits a wasm module built with `-Clink-args=--emit-relocs` at its lazy split points
//! (Leptos's `#[lazy]` and lazy routes), as `scripts/site.mjs` needs it:
//!
//!   fundament-wasm-split INPUT.wasm OUT_DIR MAIN_OUT.wasm MAIN_MODULE LINK_NAME
//!
//! Writes every chunk and the loader (`OUT_DIR/LINK_NAME`, which imports `initSync` from
//! MAIN_MODULE) into OUT_DIR, the main module (still to go through wasm-bindgen) to
//! MAIN_OUT.wasm, and `OUT_DIR/__wasm_split_manifest.json`: for each split point, the chunks
//! it needs, keys sorted so that the same input gives the same bytes. Prints the chunks'
//! paths, one per line.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: fundament-wasm-split INPUT.wasm OUT_DIR MAIN_OUT.wasm MAIN_MODULE LINK_NAME";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("fundament-wasm-split {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let [input, out_dir, main_out, main_module, link_name] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match split(input, out_dir, main_out, main_module, link_name) {
        Ok(chunks) => {
            for chunk in chunks {
                println!("{}", chunk.display());
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("fundament-wasm-split: {message}");
            ExitCode::FAILURE
        }
    }
}

fn split(
    input: &str,
    out_dir: &str,
    main_out: &str,
    main_module: &str,
    link_name: &str,
) -> Result<Vec<PathBuf>, String> {
    let wasm = std::fs::read(input).map_err(|e| format!("cannot read {input}: {e}"))?;
    let out_dir = PathBuf::from(out_dir);
    let main_out = PathBuf::from(main_out);
    let split = wasm_split_cli_support::transform({
        let mut opts = wasm_split_cli_support::Options::new(&wasm);
        opts.output_dir = &out_dir;
        opts.main_out_path = &main_out;
        opts.main_module = main_module;
        opts.link_name = link_name;
        opts
    })
    .map_err(|e| format!("cannot split {input}: {e:#}"))?;
    // Sorted: a HashMap's order differs from run to run, and so would the file's bytes.
    let manifest: BTreeMap<_, _> = split.prefetch_map.into_iter().collect();
    let manifest_path = out_dir.join("__wasm_split_manifest.json");
    let json = serde_json::to_string(&manifest).map_err(|e| format!("cannot write the manifest: {e}"))?;
    std::fs::write(&manifest_path, json)
        .map_err(|e| format!("cannot write {}: {e}", manifest_path.display()))?;
    Ok(split.split_modules)
}
