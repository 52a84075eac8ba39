// Renames the site's entry files so that each hashed name stands for the bytes it names.
//
//   node scripts/content-hashes.mjs SITE_DIR
//
// scripts/site.mjs names the JS entry, the main wasm, wasm-split's loader and its manifest
// `stem.<hash>.ext`, each by its own bytes, and lists the hashes in hash.txt. But they import
// each other by those names: the JS entry and the main wasm import the loader, and the loader
// the JS entry, so a name taken from a file's own bytes can leave out what it imports. Served
// `immutable`, a browser that kept `console.<hash>.js` from one build would then ask the next
// for a loader it does not have, and the console would never start: after a rebuild, or behind
// replicas built apart. (cargo-leptos, which built the site before, even named the loader anew
// in every build.)
//
// Here the four files get names from their final bytes: one digest over all four (with their
// old names blanked, since the JS entry and the loader import each other), and from it one
// name per file. The same bytes give the same names; any change gives new ones. Each name keeps
// the length of the one it replaces (22 characters of base64url), so renaming inside the wasm's
// import section changes no length. Then hash.txt is rewritten and the .br and .gz files made again.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { brotliOptions, GZIP_OPTIONS, hashName, replaceAll } from './site-files.mjs';

/** Names the four entry files of the site in `site` by their final bytes (see above), rewrites
 *  hash.txt and their .br and .gz copies; returns a line saying the new hashes. */
export function nameEntries(site) {
  const pkg = path.join(site, 'pkg');
  const hashFile = path.join(site, 'hash.txt');

  // hash.txt: `key: hash` lines (js, wasm, css, manifest, split).
  const lines = fs.readFileSync(hashFile, 'utf8').split('\n').filter(Boolean);
  const hashes = Object.fromEntries(lines.map((l) => l.split(':').map((s) => s.trim())));
  const ENTRIES = [
    { key: 'js', ext: 'js' },
    { key: 'wasm', ext: 'wasm' },
    { key: 'split', ext: 'js' },
    { key: 'manifest', ext: 'json' },
  ];
  const HASH_LEN = 22;

  // Each entry's file in pkg/: `stem.<hash>.ext`, exactly one.
  const files = ENTRIES.map(({ key, ext }) => {
    const hash = hashes[key];
    if (!hash || hash.length !== HASH_LEN) throw new Error(`hash.txt has no ${HASH_LEN}-character ${key} hash`);
    const found = fs.readdirSync(pkg).filter((name) => name.endsWith(`.${hash}.${ext}`));
    if (found.length !== 1) throw new Error(`expected one pkg/*.${hash}.${ext}, found ${found.length}`);
    const name = found[0];
    return { key, ext, hash, stem: name.slice(0, -(`.${hash}.${ext}`.length)), bytes: fs.readFileSync(path.join(pkg, name)) };
  });


  const blank = '#'.repeat(HASH_LEN);
  const digest = createHash('sha256');
  for (const f of files) {
    digest.update(`${f.key}\0`);
    digest.update(replaceAll(f.bytes, files.map((g) => [g.hash, blank])));
  }
  const joint = digest.digest();
  const renamed = new Map(files.map((f) => [
    f.hash,
    hashName(joint, f.key),
  ]));

  for (const f of files) {
    const fresh = renamed.get(f.hash);
    const bytes = replaceAll(f.bytes, [...renamed]);
    const oldPath = path.join(pkg, `${f.stem}.${f.hash}.${f.ext}`);
    const newPath = path.join(pkg, `${f.stem}.${fresh}.${f.ext}`);
    for (const suffix of ['', '.br', '.gz']) fs.rmSync(oldPath + suffix, { force: true });
    fs.writeFileSync(newPath, bytes);
    fs.writeFileSync(`${newPath}.br`, zlib.brotliCompressSync(bytes, brotliOptions(bytes)));
    fs.writeFileSync(`${newPath}.gz`, zlib.gzipSync(bytes, GZIP_OPTIONS));
    hashes[f.key] = fresh;
  }
  fs.writeFileSync(hashFile, lines.map((l) => {
    const key = l.split(':')[0].trim();
    return `${key}: ${hashes[key]}`;
  }).join('\n') + '\n');
  return `content hashes: ${files.map((f) => `${f.key} ${hashes[f.key]}`).join(', ')}`;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const site = process.argv[2];
  if (!site) throw new Error('usage: node scripts/content-hashes.mjs SITE_DIR');
  console.log(nameEntries(site));
}
