// Issue 16: over real HTTP, the HTML is kept by no cache (it is one user's page), and the files it names
// (content-hashed) are kept by browsers for a year, served precompressed (brotli, gzip).
import { test, expect } from '@playwright/test';

const IMMUTABLE = 'public, max-age=31536000, immutable';

test('the HTML is kept by no cache; its hashed scripts, wasm and CSS are immutable and precompressed', async ({ request }) => {
  const page = await request.get('/sign-in', { headers: { accept: 'text/html' } });
  expect(page.status()).toBe(200);
  expect(page.headers()['cache-control']).toBe('private, no-store');
  const html = await page.text();
  // The stylesheet, the modulepreloaded JS and the preloaded wasm.
  const files = new Set([...html.matchAll(/(?:href|src)="(\/pkg\/[^"]+)"/g)].map((m) => m[1]));
  for (const ext of ['.css', '.js', '.wasm']) {
    expect([...files].some((f) => f.endsWith(ext)), `a ${ext} in ${[...files].join(', ')}`).toBe(true);
  }
  for (const file of files) {
    expect(file, 'a content-hashed name').toMatch(/\.[A-Za-z0-9_-]{22}\.[a-z]+$/);
    for (const encoding of ['br', 'gzip']) {
      const res = await request.get(file, { headers: { 'accept-encoding': encoding } });
      expect(res.status(), file).toBe(200);
      expect(res.headers()['cache-control'], file).toBe(IMMUTABLE);
      expect(res.headers()['content-encoding'], `${file} ${encoding}`).toBe(encoding);
    }
  }
});

test('a file that keeps its name across builds is revalidated, not kept', async ({ request }) => {
  const res = await request.get('/pkg/does-not-exist.js');
  expect(res.status()).toBe(404);
  expect(res.headers()['cache-control'] ?? '').not.toContain('immutable');
  const icon = await request.get('/favicon.svg');
  expect(icon.status()).toBe(200);
  expect(icon.headers()['cache-control'] ?? '').not.toContain('immutable');
});
