// Builds the console's site for release: the browser bundle, split by route, its CSS and
// `public/`, every file named by its bytes and precompressed.
//
//   node scripts/site.mjs          writes target/site (pkg/ and hash.txt), replacing what was there
//
// Used by scripts/build, which then builds the `fundament` binary. The steps:
//   1. cargo builds `frontend` for wasm32 (profile wasm-release; `-Clink-args=--emit-relocs`
//      comes from .cargo/config.toml, the splitter needs the relocations);
//   2. `fundament-site-wasm split` (tools/site-wasm) cuts the module at its lazy split points: the
//      main module, one wasm per chunk, their loader (`__wasm_split.<hash>.js`) and a manifest
//      naming the chunks each split point needs (app/src/chunks.rs says which routes and views
//      have one);
//   3. `fundament-site-wasm bindgen` writes the JS glue of the main module (`console.js`,
//      `console.wasm`), as the wasm-bindgen CLI would;
//   4. wasm-opt (binaryen from npm) shrinks every wasm file, two at a time;
//   5. terser minifies the glue and the loader, Tailwind's CLI writes the minified CSS, `public/` is copied;
//   6. chunks and CSS are named `stem.<hash>.ext` by their bytes, and the loader and manifest
//      refer to those names; the four entry files (glue, main wasm, loader, manifest) import
//      each other, so scripts/content-hashes.mjs names them by one digest over all four;
//      hash.txt lists the entry files' hashes for the server (app/src/assets.rs) and Leptos;
//   7. every file gets a brotli (quality 11) and a gzip (level 9) copy beside it.
// Names always follow bytes: any change gives new names, and the same wasm gives the same names
// (the splitter lists the loader's shared imports in a HashMap's order; step 2 sorts them).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { nameEntries } from './content-hashes.mjs';
import { brotliOptions, GZIP_OPTIONS, hashName, replaceAll, resilientChunkLoads, sortSharedImports } from './site-files.mjs';
import { minify } from 'terser';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
const SITE = path.join(ROOT, 'target', 'site');
const PKG = path.join(SITE, 'pkg');
/** cargo's target directory of the browser bundle, apart from the server's (other features, same crates). */
const FRONT = path.join(TARGET, 'front');
/** The file stem of the glue, the main wasm and the CSS; leptos reads it at compile time too (.cargo/config.toml). */
const OUTPUT = 'console';
const HASH_LEN = 22;
/** The loader's name until it is named by its bytes: as long as a hash, so the wasm that imports it keeps its layout. */
const LOADER = `__wasm_split.${'_'.repeat(HASH_LEN)}.js`;
const MANIFEST = '__wasm_split_manifest.json';
const WASM_OPT = ['-Oz', '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
  '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue'];

// The time of day on each step's line, as scripts/env.sh's `log` writes it.
const log = (message) =>
  process.stderr.write(`\x1b[1m==> ${new Date().toTimeString().slice(0, 8)} ${message}\x1b[0m\n`);

/** Runs a command from the repository's root, its output passed through (or, `quiet`, kept
 * and shown only if it fails); rejects naming the command when it fails. */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const quiet = options.quiet ?? false;
    const child = spawn(command, args, { stdio: ['ignore', quiet ? 'pipe' : 'inherit', quiet ? 'pipe' : 'inherit'], cwd: ROOT });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    child.on('error', (e) => reject(new Error(`${command}: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(out);
      // A quiet command's output is shown only when it failed.
      if (quiet) process.stderr.write(out);
      reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** `items` through `task`, `width` at a time. */
async function pooled(items, width, task) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await task(items[next++]);
  }));
}

async function main() {
  const started = Date.now();
  fs.rmSync(SITE, { recursive: true, force: true });
  fs.mkdirSync(PKG, { recursive: true });

  // 1. The browser bundle.
  const libArgs = (process.env.FUNDAMENT_LIB_CARGO_ARGS ?? '').split(/\s+/).filter(Boolean);
  log(`cargo build -p frontend --target wasm32-unknown-unknown --profile wasm-release ${libArgs.join(' ')}`);
  await run('cargo', ['build', '--package=frontend', '--lib', `--target-dir=${FRONT}`, '--target=wasm32-unknown-unknown',
    '--profile=wasm-release', ...libArgs]);
  const built = path.join(FRONT, 'wasm32-unknown-unknown', 'wasm-release', 'frontend.wasm');
  const splitMain = path.join(FRONT, 'wasm32-unknown-unknown', 'wasm-release', 'frontend_split.wasm');

  // 2. Split at the lazy split points.
  log('fundament-site-wasm split');
  await run('fundament-site-wasm', ['split', built, PKG, splitMain, `./${OUTPUT}.js`, `./${LOADER}`], { quiet: true });
  // The same module, the same loader: the splitter lists the shared exports in a HashMap's order.
  // And a chunk that does not load must not abort the module (resilientChunkLoads).
  const loaderPath = path.join(PKG, LOADER);
  fs.writeFileSync(loaderPath, resilientChunkLoads(sortSharedImports(fs.readFileSync(loaderPath, 'utf8'))));

  // 3. The glue (the linker's export names kept: the chunks import the main module's functions by them).
  log('fundament-site-wasm bindgen');
  await run('fundament-site-wasm', ['bindgen', splitMain, PKG, OUTPUT]);
  fs.renameSync(path.join(PKG, `${OUTPUT}_bg.wasm`), path.join(PKG, `${OUTPUT}.wasm`));

  // 4. wasm-opt over every wasm file (binaryen in Node is single-threaded: one per core).
  const wasmFiles = fs.readdirSync(PKG).filter((f) => f.endsWith('.wasm'));
  log(`wasm-opt ${WASM_OPT.join(' ')} (${wasmFiles.length} files)`);
  // The largest first, so that no long one starts last.
  wasmFiles.sort((a, b) => fs.statSync(path.join(PKG, b)).size - fs.statSync(path.join(PKG, a)).size);
  // Quiet: it warns of every name subsection it does not know (the linker's), once per file.
  await pooled(wasmFiles, 2, (f) => run('wasm-opt', [...WASM_OPT, path.join(PKG, f), '-o', path.join(PKG, f)], { quiet: true }));

  // 5. The glue and the loader minified (both on every first load), the CSS, public/.
  log('terser, tailwindcss, public/');
  const glue = path.join(PKG, `${OUTPUT}.js`);
  for (const script of [glue, loaderPath]) {
    const { code } = await minify(fs.readFileSync(script, 'utf8'), { module: true, compress: true, mangle: true, format: { comments: false } });
    fs.writeFileSync(script, code);
  }
  await run('tailwindcss', ['--input', 'style/tailwind.css', '--output', path.join(PKG, `${OUTPUT}.css`), '--minify'], { quiet: true });
  fs.cpSync(path.join(ROOT, 'public'), SITE, { recursive: true });

  // 6. Names. Chunks and CSS first: nothing they contain names another file.
  const renamed = new Map(); // old file name → new, within pkg/
  for (const f of fs.readdirSync(PKG)) {
    const leaf = (f.endsWith('.wasm') && f !== `${OUTPUT}.wasm`) || f === `${OUTPUT}.css`;
    if (!leaf) continue;
    const dot = f.lastIndexOf('.');
    const name = `${f.slice(0, dot)}.${hashName(fs.readFileSync(path.join(PKG, f)))}${f.slice(dot)}`;
    fs.renameSync(path.join(PKG, f), path.join(PKG, name));
    renamed.set(f, name);
  }
  // The loader fetches chunks as `./<stem>.wasm`; the manifest lists their stems.
  const loader = fs.readFileSync(path.join(PKG, LOADER), 'utf8').replace(/\.\/([A-Za-z0-9_]+\.wasm)(?=["'`])/g, (_, file) => {
    if (!renamed.has(file)) throw new Error(`the loader names ${file}, which the split did not write`);
    return `./${renamed.get(file)}`;
  });
  const manifest = JSON.parse(fs.readFileSync(path.join(PKG, MANIFEST), 'utf8'));
  for (const [point, stems] of Object.entries(manifest)) {
    manifest[point] = stems.map((stem) => {
      const file = renamed.get(`${stem}.wasm`);
      if (!file) throw new Error(`the manifest names ${stem} for ${point}, which the split did not write`);
      return file.slice(0, -'.wasm'.length);
    });
  }
  // The entry files, named by their own bytes for now; content-hashes.mjs then names the four
  // by one digest, since the glue and the loader import each other.
  const entries = {
    js: { file: `${OUTPUT}.js`, bytes: fs.readFileSync(glue) },
    wasm: { file: `${OUTPUT}.wasm`, bytes: fs.readFileSync(path.join(PKG, `${OUTPUT}.wasm`)) },
    split: { file: LOADER, bytes: Buffer.from(loader) },
    manifest: { file: MANIFEST, bytes: Buffer.from(JSON.stringify(manifest)) },
  };
  for (const entry of Object.values(entries)) entry.hash = hashName(entry.bytes);
  const entryName = (key) => {
    const { file, hash } = entries[key];
    return key === 'split' ? file.replace('_'.repeat(HASH_LEN), hash) : file.replace(/\.([a-z]+)$/, `.${hash}.$1`);
  };
  // The main wasm imports the loader (a name of the same length: its layout stays); the glue
  // imports the loader, and the loader the glue.
  const toLoader = [`./${LOADER}`, `./${entryName('split')}`];
  const toGlue = [`./${OUTPUT}.js`, `./${entryName('js')}`];
  const references = { js: [toLoader], wasm: [toLoader], split: [toGlue], manifest: [] };
  for (const [key, entry] of Object.entries(entries)) {
    fs.rmSync(path.join(PKG, entry.file));
    fs.writeFileSync(path.join(PKG, entryName(key)), replaceAll(entry.bytes, references[key]));
  }
  const css = renamed.get(`${OUTPUT}.css`).split('.')[1];
  fs.writeFileSync(path.join(SITE, 'hash.txt'),
    `js: ${entries.js.hash}\nwasm: ${entries.wasm.hash}\ncss: ${css}\nmanifest: ${entries.manifest.hash}\nsplit: ${entries.split.hash}\n`);
  // nameEntries also precompresses the four files it renames.
  log(nameEntries(SITE));

  // 7. Every other file, brotli and gzip, on libuv's threads.
  const brotli = promisify(zlib.brotliCompress);
  const gzip = promisify(zlib.gzip);
  const files = fs.readdirSync(SITE, { recursive: true })
    .map((f) => path.join(SITE, f))
    .filter((f) => fs.statSync(f).isFile() && !/\.(br|gz)$/.test(f) && !fs.existsSync(`${f}.br`) && path.basename(f) !== 'hash.txt');
  log(`precompressing ${files.length} files`);
  await pooled(files, 4, async (f) => {
    const bytes = fs.readFileSync(f);
    const [br, gz] = await Promise.all([
      brotli(bytes, brotliOptions(bytes)),
      gzip(bytes, GZIP_OPTIONS),
    ]);
    fs.writeFileSync(`${f}.br`, br);
    fs.writeFileSync(`${f}.gz`, gz);
  });
  log(`site written to ${path.relative(ROOT, SITE)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  console.error(`site: ${e.message}`);
  process.exit(1);
});
