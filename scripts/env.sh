# Sourced by the scripts: where tools and build output live. Not a command.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
# Tools this project installs (fundament-site-wasm, helm) live outside the clone,
# so every clone on the machine shares them.
export FUNDAMENT_TOOLS_DIR="${FUNDAMENT_TOOLS_DIR:-$HOME/.cache/fundament/tools}"
# Build output outside the clone too: a fresh clone (CI) reuses compiled dependencies.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fundament/target}"
export PATH="$FUNDAMENT_TOOLS_DIR/bin:$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# Cargo decides whether a crate is fresh by comparing file mtimes with its last build, so
# every fresh clone (CI) would recompile every workspace crate: its files are all newer than
# the shared target dir's artifacts. Checksum freshness compares content hashes instead, so
# an unchanged crate is not rebuilt, and a changed one always is (an mtime trick could not
# promise the second when several clones share one target dir). The flag is unstable on the
# pinned stable toolchain; RUSTC_BOOTSTRAP=1 allows it (the Debian fallback below already
# builds everything with it).
export RUSTC_BOOTSTRAP=1
export CARGO_UNSTABLE_CHECKSUM_FRESHNESS=true
# The browser bundle is built with its own std (scripts/build passes this to the wasm build
# only): std compiled with the bundle's flags (.cargo/config.toml: no panic locations, panics
# abort at once) is what lets those flags reach std's code too. Needs rust-src.
export FUNDAMENT_LIB_CARGO_ARGS="-Zbuild-std=std,panic_abort"

# The fallback toolchain: Debian's rustc-web and cargo (1.96), std for wasm
# built from rust-web-src with -Zbuild-std (scripts/build passes it to the
# wasm build only). Used when FUNDAMENT_TOOLCHAIN=debian, or when
# scripts/setup found that rustup cannot download and left a marker.
use_debian_toolchain() {
  mkdir -p "$FUNDAMENT_TOOLS_DIR/debian-bin"
  # Debian's cargo must come before rustup's proxy: scripts/site.mjs runs `cargo` from PATH.
  ln -sf /usr/bin/cargo "$FUNDAMENT_TOOLS_DIR/debian-bin/cargo"
  export PATH="$FUNDAMENT_TOOLS_DIR/debian-bin:$PATH"
  export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
  # -Zbuild-std is unstable: Debian's stable compiler allows it with this.
  export RUSTC_BOOTSTRAP=1
  export FUNDAMENT_LIB_CARGO_ARGS="-Zbuild-std=std,panic_abort"
  # Artifacts of another compiler: keep them apart from rustup's.
  if [ "${CARGO_TARGET_DIR:-}" = "$HOME/.cache/fundament/target" ]; then
    export CARGO_TARGET_DIR="$HOME/.cache/fundament/target-debian"
  fi
  export FUNDAMENT_BIN="$CARGO_TARGET_DIR/release/fundament"
}
export FUNDAMENT_BIN="$CARGO_TARGET_DIR/release/fundament"
if [ "${FUNDAMENT_TOOLCHAIN:-}" = "debian" ] || [ -f "$FUNDAMENT_TOOLS_DIR/toolchain-fallback" ]; then
  use_debian_toolchain
fi

# The service libraries (every workspace crate named fundament-*), as `-p` arguments.
lib_packages() {
  cargo metadata --no-deps --format-version 1 --offline | node -e '
    const ws = JSON.parse(require("fs").readFileSync(0, "utf8"));
    console.log(ws.packages.map((p) => p.name).filter((n) => n.startsWith("fundament-")).map((n) => "-p " + n).join(" "));'
}

# The cargo arguments of the unit tests' build (scripts/test; scripts/fuzz builds the same): every
# service library but fundament-dev-faults (built apart, see scripts/test), the server, and app
# with ssr, in the release profile the binary's build shares.
unit_test_cargo_args() {
  local packages; packages=$(lib_packages)
  echo "--release ${packages/-p fundament-dev-faults/} -p server -p app --features app/ssr"
}

# Each step's line carries the time of day, so a run's log shows what each step took.
log() { printf '\033[1m==> %s %s\033[0m\n' "$(date +%T)" "$*" >&2; }

# Runs a command in the background, detached from the caller's output (a CI log must not wait on
# it): its output goes to DIR/NAME.log and its exit status to DIR/NAME.status, written last
# through a rename so that await_background never reads half of it. scripts/test starts the
# set-up of its test tools and the site's build this way while it compiles and lints.
start_in_background() {
  local dir=$1 name=$2; shift 2
  mkdir -p "$dir"
  rm -f "$dir/$name.status" "$dir/$name.status.new"
  (
    set +e
    # set -e inside: a shell function stops at its first failing command, as in the foreground.
    (set -e; "$@") </dev/null >"$dir/$name.log" 2>&1
    echo $? >"$dir/$name.status.new"
    mv "$dir/$name.status.new" "$dir/$name.status"
  ) </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/$name.pid"
}

# Waits for what start_in_background DIR NAME started, prints its output, and returns its status.
await_background() {
  local dir=$1 name=$2 started; started=$(date +%s)
  while [ ! -f "$dir/$name.status" ]; do
    if ! kill -0 "$(cat "$dir/$name.pid" 2>/dev/null || echo 0)" 2>/dev/null && [ ! -f "$dir/$name.status" ]; then
      cat "$dir/$name.log" >&2 2>/dev/null || true
      echo "$name (in the background) ended without a status" >&2
      return 1
    fi
    sleep 0.5
  done
  cat "$dir/$name.log" >&2
  local status; status=$(cat "$dir/$name.status")
  if [ "$status" != 0 ]; then
    echo "$name (in the background) failed with exit status $status; its output is above" >&2
    return "$status"
  fi
  log "$name (in the background): done; waited $(( $(date +%s) - started )) s for it"
}

# Stops what start_in_background DIR NAME started, if it still runs, with everything it started.
stop_background() {
  local dir=$1 name=$2
  [ -f "$dir/$name.pid" ] && [ ! -f "$dir/$name.status" ] || return 0
  kill_tree "$(cat "$dir/$name.pid")"
}

# Sends SIGTERM to a process and all its descendants, the children first.
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

# Installs Debian packages that are not installed yet (apt-get update once per run).
apt_updated=false
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if ! $apt_updated; then $sudo apt-get update -qq; apt_updated=true; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
