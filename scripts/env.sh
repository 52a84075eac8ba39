# Sourced by the scripts: where tools and build output live. Not a command.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
# Tools this project installs (cargo-leptos, wasm-bindgen) live outside the clone,
# so every clone on the machine shares them.
export FUNDAMENT_TOOLS_DIR="${FUNDAMENT_TOOLS_DIR:-$HOME/.cache/fundament/tools}"
# Build output outside the clone too: a fresh clone (CI) reuses compiled dependencies.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fundament/target}"
export PATH="$FUNDAMENT_TOOLS_DIR/bin:$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# The Debian fallback toolchain (scripts/setup writes this file when it is in use).
if [ -f "$FUNDAMENT_TOOLS_DIR/debian-toolchain.env" ] && [ "${FUNDAMENT_TOOLCHAIN:-}" != "rustup" ]; then
  # shellcheck disable=SC1091
  . "$FUNDAMENT_TOOLS_DIR/debian-toolchain.env"
fi
export FUNDAMENT_BIN="$CARGO_TARGET_DIR/release/fundament"
export FUNDAMENT_SITE_ROOT="${FUNDAMENT_SITE_ROOT:-$ROOT/target/site}"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
