// The plugin SDK's size as served (plugin-sdk/plugin-sdk.min.js: what /plugins/sdk/v1/plugin-sdk.js and
// /plugin-ui/plugin-sdk.js answer): bytes, brotli at quality 11, gzip at level 9, next to the readable
// source and the 3 KB brotli aim (DESIGN.md §10; the original SDK: 1.6 KB brotli). Writes
// bench/results/sdk.json and exits 1 when the served file is above 3,072 bytes brotli: scripts/test
// runs it as a size check (sizes do not vary between runs, so this is no timing test).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const LIMIT = 3072;

function sizes(file) {
  const bytes = fs.readFileSync(path.join(root, file));
  return {
    bytes: bytes.length,
    brotli: zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    gzip: zlib.gzipSync(bytes, { level: 9 }).length,
  };
}

const served = sizes('plugin-sdk/plugin-sdk.min.js');
const result = {
  what: 'plugin SDK as served (plugin-sdk.min.js, terser from plugin-sdk.js), brotli quality 11, gzip level 9',
  served,
  source: sizes('plugin-sdk/plugin-sdk.js'),
  css: sizes('plugin-sdk/plugin-sdk.css'),
  target: { served_brotli_max: LIMIT, original_sdk_brotli: 1600 },
  measured_at: new Date().toISOString(),
};
// Written only when a figure changed: sizes are deterministic, and scripts/test runs this on
// every run, which would otherwise leave the working tree dirty with a new date each time.
const file = path.join(root, 'bench/results/sdk.json');
const figures = ({ measured_at: _, ...rest }) => JSON.stringify(rest);
let recorded = null;
try { recorded = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { /* none yet */ }
if (!recorded || figures(recorded) !== figures(result)) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
}
console.log(`plugin SDK as served: ${served.bytes} bytes, ${served.brotli} brotli (limit ${LIMIT}), ${served.gzip} gzip`);
if (served.brotli > LIMIT) {
  console.error(`plugin-sdk.min.js is ${served.brotli} bytes brotli, above the ${LIMIT} limit`);
  process.exit(1);
}
