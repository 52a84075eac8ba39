// The SDK stays small, and README.md states its real size.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test, expect } from '@playwright/test';

const dir = path.join(__dirname, '..');

test('plugin-sdk.js stays under 12 KB (and under 4 KB brotli), and README.md states the current sizes', () => {
  const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  for (const file of ['plugin-sdk.js', 'plugin-sdk.css']) {
    const bytes = fs.readFileSync(path.join(dir, file));
    const actual = [bytes.length, zlib.brotliCompressSync(bytes).length, zlib.gzipSync(bytes, { level: 9 }).length];
    if (file === 'plugin-sdk.js') {
      expect(actual[0]).toBeLessThan(12 * 1024);
      expect(actual[1]).toBeLessThan(4 * 1024);
    }
    const row = readme.match(new RegExp(`^\\| ${file.replace('.', '\\.')} \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|$`, 'm'));
    expect(row, `README.md needs the row "| ${file} | ${actual.join(' | ')} |"`).not.toBeNull();
    expect(row!.slice(1).map(Number), `update README.md: | ${file} | ${actual.join(' | ')} |`).toEqual(actual);
  }
});
