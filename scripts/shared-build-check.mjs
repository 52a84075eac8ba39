#!/usr/bin/env node
// Checks that the release binary's build (scripts/build: `cargo build --release -p server --bin
// fundament`) compiles nothing the unit tests' build did not already compile:
//
//   node scripts/shared-build-check.mjs -- <the unit tests' cargo test arguments>
//
// Cargo reuses a compiled crate only when its features and profile are the same. A feature
// turned on by a dev-dependency is on in every build of a test run (kube-api-proxy's old
// `test-support` was), so the release build then compiled that crate and every crate above it a
// second time: a minute of every cold run and of every warm run after a change below `server`.
// Compares cargo's unit graphs of both builds (nothing is compiled) and names each unit the
// release build would compile on its own. Exits 1 if there is one.
import { spawnSync } from 'node:child_process';

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const testArgs = split === -1 ? argv : argv.slice(split + 1);

/** Every unit cargo would build for these arguments, as comparable keys. */
function units(args) {
  const result = spawnSync('cargo', [...args, '--unit-graph', '-Zunstable-options'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  return new Map(
    JSON.parse(result.stdout).units.map((u) => [
      JSON.stringify([u.pkg_id, u.target.kind, u.target.name, u.platform, u.mode, [...u.features].sort(), u.profile]),
      `${u.pkg_id.replace(/^.*#/, '')} ${u.target.kind.join(',')} ${u.target.name} (features: ${u.features.join(', ') || 'none'})`,
    ]),
  );
}

// The same targets scripts/unit-tests.mjs builds.
const tested = units(['test', ...testArgs, '--lib', '--bins', '--tests', '--no-run']);
const release = units(['build', '--release', '--package=server', '--bin=fundament']);
const apart = [...release].filter(([key]) => !tested.has(key)).map(([, name]) => name);
if (apart.length) {
  console.error(
    `shared-build-check: the release build would compile ${apart.length} unit(s) the unit tests' build does not share ` +
      `(a feature or profile setting differs; a dev-dependency turning on a feature is the usual cause):\n  ${apart.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`shared-build-check: the release build's ${release.size} units are all in the unit tests' build`);
