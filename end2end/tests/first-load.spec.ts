// Issue 16: the console's first load stays small. A first visit downloads the shell and
// the chunks of the page it shows, and no more; the signed-in home and a plugin page each
// stay within the budget (HTML + CSS + JS + wasm chunks at brotli 11). Sizes, not timings:
// the same build gives the same figures.
import { test, expect } from '@playwright/test';
import {
  GENERATED_PAGE, HOME_BUDGET_BYTES, PLUGIN_PAGE_BUDGET_BYTES, HOME, PLUGIN_PAGE, chunks, chunksOf, firstLoad, signedInContext,
  splitManifest, total, type Loaded,
} from '../first-load';

const report = (loaded: Loaded[]) => loaded.map((l) => `${l.path} ${l.brotli}`).join('\n');

test.describe('first load', () => {
  // Each signs in and loads pages in fresh contexts (no cache): more than a usual test's time.
  test.slow();
  test('the signed-in home stays within its budget and loads no chunk', async ({ browser, baseURL }) => {
    const context = await signedInContext(browser, baseURL!, 'alice@acme-corp.com');
    const loaded = await firstLoad(context, baseURL!, HOME);
    await context.close();
    expect(loaded.filter((l) => l.path.endsWith('.wasm')).length, report(loaded)).toBe(1);
    expect(chunks(loaded), report(loaded)).toEqual([]);
    expect(total(loaded), report(loaded)).toBeLessThanOrEqual(HOME_BUDGET_BYTES);
  });

  // The sign-in panel, which any page shows signed out, is a chunk of its own
  // (app/src/routes/sign_in.rs): the signed-in home above does without it, and the home
  // signed out loads it and nothing else, and hydrates with it.
  test('the signed-out home loads the sign-in panel\'s chunk and no other', async ({ browser, baseURL }) => {
    const own = chunksOf(splitManifest(), 'sign_in_panel_');
    const context = await browser.newContext({ baseURL });
    const loaded = await firstLoad(context, baseURL!, HOME);
    await context.close();
    const fetched = chunks(loaded);
    expect(fetched.some((c) => c.startsWith('split_sign_in_panel_')), report(loaded)).toBe(true);
    expect(fetched.filter((c) => !own.has(c)), report(loaded)).toEqual([]);
  });

  // The plugin's frame host is part of the plugin routes' chunk (app/src/routes/plugin_resource.rs).
  test("a plugin page stays within its budget and loads its route's chunks, not the generated views'",
    async ({ browser, baseURL }) => {
      const manifest = splitManifest();
      expect(Object.keys(manifest).some((k) => k.includes('plugin_host'))).toBe(false);
      const allowed = chunksOf(manifest, '__plugin_list_route_view_');
      const generatedOnly = [...chunksOf(manifest, 'generated_view_')].filter((c) => !allowed.has(c));
      expect(generatedOnly.some((c) => c.startsWith('split_generated_view_'))).toBe(true);

      const context = await signedInContext(browser, baseURL!, 'alice@acme-corp.com');
      const loaded = await firstLoad(context, baseURL!, PLUGIN_PAGE);
      await context.close();
      const own = chunks(loaded);
      expect(own.some((c) => c.startsWith('split___plugin_list_route_view_')), report(loaded)).toBe(true);
      expect(own.filter((c) => !allowed.has(c)), report(loaded)).toEqual([]);
      expect(own.filter((c) => generatedOnly.includes(c)), report(loaded)).toEqual([]);
      expect(total(loaded), report(loaded)).toBeLessThanOrEqual(PLUGIN_PAGE_BUDGET_BYTES);

      // The same check sees the generated views' chunk where a page does use it.
      const other = await signedInContext(browser, baseURL!, 'alice@acme-corp.com');
      const generated = chunks(await firstLoad(other, baseURL!, GENERATED_PAGE));
      await other.close();
      expect(generated.some((c) => c.startsWith('split_generated_view_')), generated.join('\n')).toBe(true);
    });

  // The server's HTML preloads the chunks of the lazy route it rendered. Leptos adds those links
  // after an `.await`, through the current reactive owner: before each request kept its own
  // (app/src/request_owner.rs), a page resumed on another worker wrote them into another page,
  // or lost them (once in CI, the home loaded a project's chunk this way).
  test("each page's HTML preloads its own route's chunks and no other, among concurrent loads",
    async ({ browser, baseURL }) => {
      const manifest = splitManifest();
      const pages: [string, Set<string>][] = [
        ['/', new Set()],
        ['/projects/webshop', chunksOf(manifest, '__project_route_view_')],
        ['/clusters', chunksOf(manifest, '__clusters_route_view_')],
        ['/plugins', chunksOf(manifest, '__plugins_route_view_')],
      ];
      const context = await signedInContext(browser, baseURL!, 'alice@acme-corp.com');
      const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      await context.close();
      const loads = await Promise.all(Array.from({ length: 160 }, async (_, i) => {
        const [path, own] = pages[i % pages.length];
        const answer = await fetch(new URL(path, baseURL), { headers: { cookie, accept: 'text/html' } });
        expect(answer.status, path).toBe(200);
        const html = await answer.text();
        const preloaded = [...html.matchAll(/<link\b[^>]*>/g)]
          .map(([link]) => /\bhref="\/pkg\/([^"]+)\.wasm"/.exec(link)?.[1])
          .filter((chunk): chunk is string => chunk !== undefined && !chunk.startsWith('console.'));
        return { path, own, preloaded };
      }));
      for (const { path, own, preloaded } of loads) {
        expect(preloaded.filter((chunk) => !own.has(chunk)), `${path} preloads another page's chunks`).toEqual([]);
        if (own.size > 0) {
          expect(preloaded.some((chunk) => chunk.startsWith('split___')), `${path} preloads its route's chunk`).toBe(true);
        }
      }
    });
});
