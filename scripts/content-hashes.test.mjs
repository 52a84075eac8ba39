// Tests of scripts/content-hashes.mjs on a small site laid out as scripts/site.mjs writes one
// (node --test; scripts/test runs it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import zlib from 'node:zlib';

const script = path.join(import.meta.dirname, 'content-hashes.mjs');
const OLD = { js: 'tXk7U9XmbScuEratDygw3g', wasm: 'CBLttZvV4GNU8BzkqTRaDw', split: 'CL7AkTK72CYnAnKKl5K0_Q', manifest: 'iQWUQq71Tn2ZlPgW65SX4A' };
const CSS = 'WjwnwvHJok4TOL-F9XZ1eg';

const made = [];
after(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A site whose JS entry and loader import each other and whose wasm imports the loader;
 *  `order` stands for the loader's export order, which differs between builds. */
function site(order = 'memory, table') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'content-hashes-test-'));
  made.push(dir);
  const pkg = path.join(dir, 'pkg');
  fs.mkdirSync(pkg);
  const write = (name, bytes) => {
    fs.writeFileSync(path.join(pkg, name), bytes);
    fs.writeFileSync(path.join(pkg, `${name}.br`), 'stale');
    fs.writeFileSync(path.join(pkg, `${name}.gz`), 'stale');
  };
  write(`console.${OLD.js}.js`, `import * as n from "./__wasm_split.${OLD.split}.js"; const imports = { "./__wasm_split.${OLD.split}.js": n };`);
  // A wasm-like binary: the import's module name is a length-prefixed string.
  const module = Buffer.from(`./__wasm_split.${OLD.split}.js`);
  write(`console.${OLD.wasm}.wasm`, Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d, module.length]), module, Buffer.from([1, 2, 3])]));
  write(`__wasm_split.${OLD.split}.js`, `import { initSync } from "./console.${OLD.js}.js"; export { ${order} };`);
  write(`__wasm_split_manifest.${OLD.manifest}.json`, '{"route":["chunk_1.aaaaaaaaaaaaaaaaaaaaaa"]}');
  write(`console.${CSS}.css`, 'body{}');
  fs.writeFileSync(path.join(dir, 'hash.txt'), `js: ${OLD.js}\nwasm: ${OLD.wasm}\ncss: ${CSS}\nmanifest: ${OLD.manifest}\nsplit: ${OLD.split}`);
  return dir;
}

const run = (dir) => execFileSync('node', [script, dir], { encoding: 'utf8' });
const hashes = (dir) => Object.fromEntries(fs.readFileSync(path.join(dir, 'hash.txt'), 'utf8').trim().split('\n').map((l) => l.split(': ')));

test('entry files get names from their bytes, every reference follows, and hash.txt lists them', () => {
  const dir = site();
  run(dir);
  const h = hashes(dir);
  const pkg = path.join(dir, 'pkg');
  for (const key of Object.keys(OLD)) {
    assert.notEqual(h[key], OLD[key], key);
    assert.equal(h[key].length, 22, key);
  }
  assert.equal(h.css, CSS, 'the stylesheet is left as it is');
  const names = fs.readdirSync(pkg).sort();
  assert.ok(names.every((n) => !Object.values(OLD).some((old) => n.includes(old))), `old names left: ${names}`);
  const js = fs.readFileSync(path.join(pkg, `console.${h.js}.js`), 'utf8');
  assert.equal(js.split(`__wasm_split.${h.split}.js`).length, 3, js);
  assert.ok(fs.readFileSync(path.join(pkg, `__wasm_split.${h.split}.js`), 'utf8').includes(`./console.${h.js}.js`));
  const wasm = fs.readFileSync(path.join(pkg, `console.${h.wasm}.wasm`));
  const module = `./__wasm_split.${h.split}.js`;
  assert.equal(wasm[4], module.length, 'the name keeps its length prefix');
  assert.equal(wasm.subarray(5, 5 + module.length).toString(), module);
  // The precompressed files are made again from the new bytes.
  for (const name of [`console.${h.js}.js`, `console.${h.wasm}.wasm`, `__wasm_split.${h.split}.js`]) {
    const bytes = fs.readFileSync(path.join(pkg, name));
    assert.deepEqual(zlib.brotliDecompressSync(fs.readFileSync(path.join(pkg, `${name}.br`))), bytes, name);
    assert.deepEqual(zlib.gunzipSync(fs.readFileSync(path.join(pkg, `${name}.gz`))), bytes, name);
  }
});

test('the same bytes give the same names (again and in another build); other bytes, other names', () => {
  const first = site();
  run(first);
  const once = hashes(first);
  run(first);
  assert.deepEqual(hashes(first), once, 'a second run changes nothing');
  const same = site();
  run(same);
  assert.deepEqual(hashes(same), once);
  // Another build of the same tree: the loader's exports in another order.
  const other = site('table, memory');
  run(other);
  const h = hashes(other);
  for (const key of Object.keys(OLD)) assert.notEqual(h[key], once[key], key);
});

test('a hash.txt that does not match the files stops the build', () => {
  const dir = site();
  fs.rmSync(path.join(dir, 'pkg', `console.${OLD.wasm}.wasm`));
  assert.throws(() => execFileSync('node', [script, dir], { stdio: 'pipe' }), /expected one pkg\/\*\.CBLttZvV4GNU8BzkqTRaDw\.wasm, found 0/);
});
