// Makes plugin-sdk.min.js, the bytes the console (/plugin-ui/plugin-sdk.js) and plugin-proxy
// (/plugins/sdk/v1/plugin-sdk.js) serve, from plugin-sdk.js, the readable source of truth.
// The minified file is committed so that a checkout serves the SDK without a build step;
// `--check` (run by scripts/test) fails when it is not what this script makes of the source now.
//
//   node plugin-sdk/minify.mjs          write plugin-sdk.min.js
//   node plugin-sdk/minify.mjs --check  exit 1 if plugin-sdk.min.js is stale
import fs from 'node:fs';
import path from 'node:path';
import { minify } from 'terser';

const dir = path.dirname(new URL(import.meta.url).pathname);
const source = path.join(dir, 'plugin-sdk.js');
const target = path.join(dir, 'plugin-sdk.min.js');

/** The minified SDK. terser is pinned in package.json, so the output is the same on every machine. */
export async function minified() {
  const { code } = await minify(fs.readFileSync(source, 'utf8'), {
    ecma: 2020,
    // Property names stay: they are the SDK's API, the protocol's fields and the test timings.
    compress: { passes: 3 },
    mangle: true,
    format: { comments: false, preamble: '/* Fundament plugin SDK v1, minified from plugin-sdk.js (the source; see README.md) */' },
  });
  return code + '\n';
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const code = await minified();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
    if (current !== code) {
      console.error('plugin-sdk/plugin-sdk.min.js is not the minified plugin-sdk.js: run node plugin-sdk/minify.mjs and commit it');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(target, code);
  }
}
