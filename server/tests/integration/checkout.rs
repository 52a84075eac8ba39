//! Where the checkout's files are.

use std::path::PathBuf;

/// The repository's root, found when the tests run: a path compiled in would name the clone
/// that built this binary, which every clone reuses (they share one target directory).
pub fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
        .join("..")
}
