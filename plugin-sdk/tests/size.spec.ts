// The SDK stays small, and README.md states its real sizes: the readable source and the minified
// file that is served (bench/sdk.mjs measures the same for bench/results/sdk.json).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test, expect } from '@playwright/test';

const dir = path.join(__dirname, '..');

test('plugin-sdk.js stays under 12 KB, the served plugin-sdk.min.js at most 3 KB brotli, and README.md states the current sizes', () => {
  const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  for (const file of ['plugin-sdk.js', 'plugin-sdk.min.js', 'plugin-sdk.css']) {
    const bytes = fs.readFileSync(path.join(dir, file));
    const actual = [bytes.length, zlib.brotliCompressSync(bytes).length, zlib.gzipSync(bytes, { level: 9 }).length];
    if (file === 'plugin-sdk.js') expect(actual[0]).toBeLessThan(12 * 1024);
    if (file === 'plugin-sdk.min.js') expect(actual[1]).toBeLessThanOrEqual(3 * 1024);
    const row = readme.match(new RegExp(`^\\| ${file.replace(/\./g, '\\.')} \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|$`, 'm'));
    expect(row, `README.md needs the row "| ${file} | ${actual.join(' | ')} |"`).not.toBeNull();
    expect(row!.slice(1).map(Number), `update README.md: | ${file} | ${actual.join(' | ')} |`).toEqual(actual);
  }
});
