#!/usr/bin/env node
// Runs the workspace's Rust tests with several test binaries at once.
//
//   node scripts/unit-tests.mjs [--jobs N] [--before-run COMMAND] -- <cargo test arguments>
//
// --before-run: a shell command run once the binaries are built and before any runs; the run
// stops with its exit status if it fails. scripts/test waits there for what it started in the
// background: the tools' set-up (the build does not need it, some tests do) and the site's build.
//
// `cargo test` runs its test binaries one after another: the tests inside a binary run in
// parallel, but a binary whose tests wait (a server's restart, Chromium loading a plugin)
// holds up every binary after it. Here cargo builds the binaries (`cargo test --no-run`),
// and they run N at a time, each as cargo would run it: from its package's directory, with
// cargo's CARGO_* variables. Each binary's output is printed whole when it ends, so the log
// reads like cargo's. The binaries that took longest last time start first (their times are
// kept beside the build, in unit-test-seconds.json), so that no slow one starts last and runs
// alone. The doc tests run through cargo (`--doc`), beside the binaries. Examples are not built:
// no test runs one, and clippy (`--all-targets`) checks that they compile. Exits 1 if any binary
// failed, after naming each failure. The slowest binaries are listed at the end.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split === -1 ? [] : argv.slice(0, split);
const cargoArgs = split === -1 ? argv : argv.slice(split + 1);
const jobsAt = own.indexOf('--jobs');
// Twice the cores: most slow binaries wait on timers and child processes, not the CPU.
const jobs = jobsAt === -1 ? Math.max(2, os.availableParallelism() * 2) : Number(own[jobsAt + 1]);
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error(`unit-tests: --jobs must be a positive whole number, not ${own[jobsAt + 1]}`);
  process.exit(2);
}
const beforeRunAt = own.indexOf('--before-run');
const beforeRun = beforeRunAt === -1 ? undefined : own[beforeRunAt + 1];
if (beforeRunAt !== -1 && !beforeRun) {
  console.error('unit-tests: --before-run needs a command');
  process.exit(2);
}

/** Builds every test binary and returns what cargo says it built. */
function build() {
  // --lib --bins --tests: cargo's default targets without the examples (85 s of a cold build).
  const targets = ['--lib', '--bins', '--tests'];
  const result = spawnSync('cargo', ['test', ...cargoArgs, ...targets, '--no-run', '--message-format=json-render-diagnostics'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  const artifacts = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .filter((m) => m.reason === 'compiler-artifact');
  refuseClonePaths(artifacts);
  return artifacts
    .filter((m) => m.profile.test && m.executable)
    .map((m) => ({
      exe: m.executable,
      dir: path.dirname(m.manifest_path),
      label: `${m.target.kind.includes('lib') || m.target.kind.includes('bin') ? 'unittests ' : ''}${path.relative(path.dirname(m.manifest_path), m.target.src_path)}`,
      pkg: m.package_id,
      manifest: m.manifest_path,
    }));
}

/**
 * Every clone on the machine shares one target directory, and cargo (with checksum freshness)
 * reuses a workspace crate's build in a clone at another path, unless the build recorded a file
 * by this clone's absolute path: a file compiled in from outside its package
 * (`include_str!("../../../x")`). Such a crate, and every crate above it, is compiled again in
 * each new clone, minutes of a warm run. Cargo records those paths in the unit's dep-info
 * (`.fingerprint/<package>-<hash>/dep-*`); this stops the run when one names this clone.
 */
function refuseClonePaths(artifacts) {
  const root = Buffer.from(path.resolve(import.meta.dirname, '..') + '/');
  const offenders = new Set();
  for (const m of artifacts.filter((a) => a.package_id.startsWith('path+file://'))) {
    const hash = path.basename(m.filenames[0] ?? '').match(/-([0-9a-f]{16})(\.|$)/)?.[1];
    if (!hash) continue;
    const unit = path.join(path.dirname(m.filenames[0]), '..', '.fingerprint', `${packageName(m.package_id)}-${hash}`);
    for (const file of fs.existsSync(unit) ? fs.readdirSync(unit).filter((f) => f.startsWith('dep-')) : []) {
      if (fs.readFileSync(path.join(unit, file)).includes(root)) offenders.add(`${packageName(m.package_id)} (${m.target.src_path})`);
    }
  }
  if (offenders.size) {
    console.error(`unit-tests: these builds compile in a file of ${root} from outside their package, so every clone at another path compiles them again; move the file into the package or read it at run time:\n  ${[...offenders].join('\n  ')}`);
    process.exit(1);
  }
}

/** The package's name, from cargo's package id (`path+file:///…/server#0.1.0` or `…#name@0.1.0`). */
const packageName = (id) => id.match(/#([^@]+)@/)?.[1] ?? id.match(/\/([^/#]+)#/)?.[1] ?? '';

/** The variables cargo sets when it runs a test binary of this package. */
function cargoEnv(binary) {
  const name = packageName(binary.pkg);
  const version = binary.pkg.match(/[@#]([0-9][^@#\s]*)$/)?.[1] ?? '';
  return { ...process.env, CARGO_MANIFEST_DIR: binary.dir, CARGO_MANIFEST_PATH: binary.manifest, CARGO_PKG_NAME: name, CARGO_PKG_VERSION: version };
}

/** Runs a command, its output kept whole (stdout and stderr as they came) until it ends. */
function captured(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

async function run(binary) {
  const started = Date.now();
  const { code, signal, output } = await captured(binary.exe, [], { cwd: binary.dir, env: cargoEnv(binary) });
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`     Running ${binary.label} (${binary.exe}) [${seconds.toFixed(1)} s]\n${output}`);
  return { ...binary, ok: code === 0, code, signal, seconds };
}

/** A binary's name across builds: its package and target (the file name holds a hash). */
const key = (binary) => `${packageName(binary.pkg)} ${binary.label}`;

/** Last run's seconds per binary, kept in the target directory the binaries are in. */
function readTimes(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
}

/** cargo test --doc, beside the binaries; its output printed whole when it ends. */
async function docTests() {
  const { code, output } = await captured('cargo', ['test', ...cargoArgs, '--doc'], {});
  process.stdout.write(output);
  return { status: code };
}

const binaries = build();
if (beforeRun) {
  const result = spawnSync('bash', ['-c', beforeRun], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
const timesFile = binaries.length ? path.join(path.dirname(binaries[0].exe), '..', 'unit-test-seconds.json') : null;
const before = timesFile ? readTimes(timesFile) : {};
// Longest first; a binary not seen before counts as long (it may be new and slow).
binaries.sort((a, b) => (before[key(b)] ?? Number.MAX_VALUE) - (before[key(a)] ?? Number.MAX_VALUE));
const docs = docTests();
const results = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(jobs, binaries.length) }, async () => {
    while (next < binaries.length) results.push(await run(binaries[next++]));
  }),
);
const doc = await docs;
if (timesFile) {
  // Merged into what other runs wrote (scripts/test runs this twice, with other packages).
  const times = { ...before, ...Object.fromEntries(results.map((r) => [key(r), Math.round(r.seconds * 10) / 10])) };
  fs.writeFileSync(timesFile, `${JSON.stringify(times, null, 1)}\n`);
}
const failed = results.filter((r) => !r.ok);
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
console.log(`\n${results.length} test binaries, ${jobs} at a time; the slowest:`);
for (const r of slowest) console.log(`  ${r.seconds.toFixed(1).padStart(6)} s  ${key(r)} (${path.basename(r.exe)})`);
for (const r of failed) console.error(`FAILED: ${key(r)} (${r.exe}): ${r.signal ? `killed by ${r.signal}` : `exit ${r.code}`}`);
if (doc.status !== 0) console.error('FAILED: the doc tests');
process.exit(failed.length || doc.status !== 0 ? 1 : 0);
