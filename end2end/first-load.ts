// What a first visit to a console page downloads from the console's origin: the HTML,
// the CSS, the JS and every wasm chunk, each counted at brotli quality 11 (what
// scripts/site.mjs precompresses with), in a browser context with an empty cache.
// Shared by the budget and chunk specs (end2end/tests/first-load.spec.ts).
import { expect, type Browser, type BrowserContext } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export type Loaded = { path: string; kind: string; bytes: number; brotli: number };

/** The target of a first load, HTML + CSS + JS + wasm chunks at brotli 11 (issue 16): the
 *  original console's 142 KB. Not reached yet: the budgets below are the figures measured
 *  with the shared watches and a std built without panic machinery (239,093 and 314,233
 *  bytes), plus the dependency-failure states of issue 17 (the "not available right now"
 *  view with its countdown and retry, the paused-live banner, the registry's and the frame's
 *  retries: +7.4 KB and +6.2 KB, to 246,488 and 320,396 bytes), rounded up to the next 5 KB,
 *  so that they stop regressions; lower them as the bundle shrinks, down to the target.
 *  Raised once, on purpose: the plugin page's to 330,000 on 2026-12-07, when it reached
 *  327,745 bytes (+6.2 KB) with a tab's check of who its session is after another tab's
 *  sign-in or sign-out (app/src/session_end.rs, +1.7 KB in the main wasm and the frame's words)
 *  and a plugin detail page's check that its object exists (the plugin routes' chunk).
 *  Raised again, on purpose, on 2026-12-08 (stop 57), to the next 5 KB: the home to 255,000
 *  at 250,734 bytes (+5.6 KB) and the plugin page to 335,000 at 331,766 (+7.9 KB), for what
 *  happens when a connection goes silent or offline (the watch hub's silence check, its
 *  hidden-tab and online/offline handling, server calls given up after 45 s), the leave guard
 *  (links, Back and Forward), Back's scroll position and the "Updating…" notice. */
export const FIRST_LOAD_TARGET_BYTES = 142_000;
export const HOME_BUDGET_BYTES = 255_000;
export const PLUGIN_PAGE_BUDGET_BYTES = 335_000;

/** The signed-in home and a plugin page (cert-manager's own Certificates list) of the seed. */
export const HOME = '/';
export const PLUGIN_PAGE = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
export const GENERATED_PAGE = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

const brotli11 = (body: Buffer) =>
  zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

// Files under /pkg/ have content-hashed names: one name, one body. Their size is compressed once
// per run (the main module alone takes over a second at quality 11, and every first load fetches it).
const pkgBrotli = new Map<string, number>();
const brotliOf = (path: string, body: Buffer) => {
  if (!path.startsWith('/pkg/')) return brotli11(body);
  let size = pkgBrotli.get(path);
  if (size === undefined) {
    size = brotli11(body);
    pkgBrotli.set(path, size);
  }
  return size;
};

/** A context signed in as `email`, with nothing cached: the sign-in page's downloads
 *  stay in the context that signed in. */
export async function signedInContext(browser: Browser, baseURL: string, email: string): Promise<BrowserContext> {
  const signing = await browser.newContext({ baseURL });
  const page = await signing.newPage();
  await page.goto('/sign-in?next=%2F');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await page.getByRole('button', { name: `Sign in as ${email}` }).click();
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
  const storageState = await signing.storageState();
  await signing.close();
  return browser.newContext({ baseURL, storageState });
}

/** Loads `path` in a fresh page of `context` until it has hydrated, and returns what the
 *  console's origin served for it. Hydration ends after every chunk the page needs has
 *  loaded (frontend/src/lib.rs), and nothing is fetched on idle; "networkidle" would never
 *  come, since signed-in pages hold the registry's watch open. */
export async function firstLoad(context: BrowserContext, baseURL: string, path: string): Promise<Loaded[]> {
  const origin = new URL(baseURL).origin;
  const page = await context.newPage();
  const pending: Promise<Loaded | null>[] = [];
  page.on('response', (response) => {
    const url = new URL(response.url());
    const kind = response.request().resourceType();
    const asset = url.pathname.startsWith('/pkg/');
    if (url.origin !== origin || !(kind === 'document' || asset)) return;
    pending.push(response.body().then(
      (body) => ({ path: url.pathname, kind, bytes: body.length, brotli: brotliOf(url.pathname, body) }),
      () => null,
    ));
  });
  // Pointing at or focusing a link prefetches its route (app/src/chunks.rs `prefetch_on_intent`),
  // as it should; what is measured is a first visit nobody points at. A link pointed at or
  // focused during the load is named in the report, and so is every chunk the served HTML
  // preloads (once in CI the home loaded a project's chunk: another request's preload links, see
  // app/src/request_owner.rs).
  await page.addInitScript(() => {
    const seen: string[] = ((window as unknown as { __intents: string[] }).__intents = []);
    for (const type of ['pointerover', 'touchstart', 'focusin']) {
      addEventListener(type, (e) => {
        const link = (e.target as Element | null)?.closest?.('a[href]');
        if (link) seen.push(`${type} ${link.getAttribute('href')}${e.isTrusted ? '' : ' (untrusted)'}`);
      }, true);
    }
  });
  await page.goto(path);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await page.waitForLoadState('load');
  // And what the server's HTML asked to preload besides the main module (a lazy view it
  // rendered), the other way a chunk can come with a first load.
  const causes = await page.evaluate(() => [
    ...(window as unknown as { __intents: string[] }).__intents.map((i) => `pointed at or focused: ${i}`),
    ...[...document.querySelectorAll('link[rel="preload"][href$=".wasm"]')]
      .map((l) => l.getAttribute('href') ?? '')
      .filter((href) => !/\/console\.[^/]*wasm$/.test(href))
      .map((href) => `the page preloads ${href} (a lazy view the server rendered)`),
  ]);
  for (const cause of causes) pending.push(Promise.resolve({ path: cause, kind: 'cause', bytes: 0, brotli: 0 }));
  // A preloaded file is fetched once, whatever the events say: counted once.
  const loaded = (await Promise.all(pending)).filter((l): l is Loaded => l !== null);
  await page.close();
  return loaded.filter((l, i) => loaded.findIndex((m) => m.path === l.path) === i);
}

export const total = (loaded: Loaded[]) => loaded.reduce((sum, l) => sum + l.brotli, 0);

/** The wasm chunks fetched (not the main module), by file name without `.wasm`. */
export const chunks = (loaded: Loaded[]) =>
  loaded
    .map((l) => l.path)
    .filter((p) => p.endsWith('.wasm') && !/\/console\.[^/]*wasm$/.test(p))
    .map((p) => p.slice('/pkg/'.length, -'.wasm'.length));

const siteRoot = process.env.FUNDAMENT_SITE_ROOT ?? path.resolve(__dirname, '../target/site');

/** The built site's split manifest (scripts/site.mjs): for each split point (a lazy
 *  route's view, a #[lazy] view), the chunks that load with it: its own `split_<name>`
 *  and the `chunk_<n>` it shares with others. */
export function splitManifest(): Record<string, string[]> {
  const pkg = path.join(siteRoot, 'pkg');
  const file = fs.readdirSync(pkg).find((n) => /^__wasm_split_manifest\.[^.]+\.json$/.test(n));
  if (!file) throw new Error(`no split manifest in ${pkg}: build with scripts/build`);
  return JSON.parse(fs.readFileSync(path.join(pkg, file), 'utf8'));
}

/** The chunks of the split points whose names start with one of `points`. */
export function chunksOf(manifest: Record<string, string[]>, ...points: string[]): Set<string> {
  const keys = Object.keys(manifest).filter((k) => points.some((p) => k.startsWith(p)));
  if (keys.length !== points.length) throw new Error(`split points ${points} not all in ${Object.keys(manifest)}`);
  return new Set(keys.flatMap((k) => manifest[k]));
}
