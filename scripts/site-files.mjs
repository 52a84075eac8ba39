// What scripts/site.mjs and scripts/content-hashes.mjs both do to the site's files: replace
// names inside them, name them by their bytes, and make their precompressed copies.
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';

/** `bytes` (a Buffer) with every occurrence of each `from` replaced by its `to`, in order. Inside
 *  a wasm module the two must have the same length: no length prefix is rewritten. */
export function replaceAll(bytes, pairs) {
  let out = bytes;
  for (const [from, to] of pairs) {
    const needle = Buffer.from(from);
    const replacement = Buffer.from(to);
    const parts = [];
    let at = 0;
    for (let i = out.indexOf(needle); i !== -1; i = out.indexOf(needle, at)) {
      parts.push(out.subarray(at, i), replacement);
      at = i + needle.length;
    }
    parts.push(out.subarray(at));
    out = Buffer.concat(parts);
  }
  return out;
}

/** A file name's hash for these parts: 16 bytes of their SHA-256 in base64url, 22 characters. */
export function hashName(...parts) {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest().subarray(0, 16).toString('base64url');
}

/** The options of the `.br` copy (quality 11) and of the `.gz` copy (level 9) of `bytes`. */
export const brotliOptions = (bytes) => ({
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
});
export const GZIP_OPTIONS = { level: 9 };

/** wasm-split's loader (`__wasm_split.js`) names the main module's shared exports twice, in the
 *  order of a HashMap inside wasm_split_cli_support, which differs from run to run: the same
 *  module gave a loader with other bytes, and so entry files with other names, in every build
 *  (two replicas built apart from one commit then served different names). Returns the loader
 *  with both lists sorted; throws if it does not hold exactly these two lists, so that a new
 *  version of the splitter that writes them otherwise stops the build instead of slipping by. */
export function sortSharedImports(loader) {
  let lists = 0;
  const sorted = loader.replace(
    /(const \{|Object\.assign\(sharedImports\.__wasm_split, \{)([^{}]*)\}/g,
    (_, head, list) => {
      lists += 1;
      const names = list.split(',').map((n) => n.trim()).filter(Boolean).sort();
      return `${head} ${names.map((n) => `${n}, `).join('')} }`;
    });
  if (lists !== 2) throw new Error(`the wasm-split loader lists its shared imports ${lists} times, not twice`);
  return sorted;
}

/** What wasm-split's loader does when a chunk does not load, replaced. As generated, it reports
 *  the failure to the module, whose generated code then panics; a panic aborts the whole wasm
 *  module (the browser bundle is built with `-Cpanic=immediate-abort`), so one failed fetch (a
 *  network blip, or a newer console deployed meanwhile, whose files have other names) left the
 *  page dead or half-working. Instead a failed load is never reported: it is tried again after
 *  250 ms, then at growing intervals (at most 10 s) for as long as the page stays, and at once
 *  when the user clicks. After three failures of a load the user's click is waiting for, the
 *  browser is sent to the clicked link: the server renders the page (a newer console's, if one
 *  was deployed). Unless the browser is offline: a page load would only show the browser's
 *  offline page in place of this one, so the page stays, says "You are offline: the page opens
 *  once the network is back." and tries again as soon as the browser is online. A prefetch (app/src/chunks.rs names its link in `__fundamentPrefetch` while it
 *  starts the load) waits for a click on that same link; any other load, for a click made as it
 *  began or while it is retried. Throws unless the loader holds the generated function once. */
export function resilientChunkLoads(loader) {
  const generated = /function wrapAsyncCb\(callee\) \{\n[\s\S]*?\n\}\n/g;
  const found = loader.match(generated) ?? [];
  if (found.length !== 1 || !found[0].includes('(callbackData, success)')) {
    throw new Error(`the wasm-split loader holds its load callback ${found.length} times, not once as expected`);
  }
  // A chunk's fetch starts beside its dependencies' loads; when one of those fails first, the
  // fetch's own failure was never looked at, and the page reported it as an uncaught error.
  // Marked as looked at here; the load that uses the fetch still sees it fail.
  const fetches = /const src = fetch\(([^;\n]*)\);\n/g;
  if (!fetches.test(loader)) throw new Error('the wasm-split loader starts no chunk fetch as expected');
  return loader
    .replace(generated, RESILIENT_WRAP_ASYNC_CB)
    .replace(fetches, (line) => `${line.trimEnd()} src.catch(() => {});\n`);
}

const RESILIENT_WRAP_ASYNC_CB = `// A chunk load that fails is never reported to the module (its generated code would panic,
// which aborts the module): scripts/site-files.mjs resilientChunkLoads.
let navigationIntent;
addEventListener('click', (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const link = e.target instanceof Element ? e.target.closest('a[href]') : null;
    if (!link || (link.target && link.target !== '_self') || link.hasAttribute('download')) return;
    const url = new URL(link.href, location.href);
    if (url.origin === location.origin) navigationIntent = { href: url.href, at: performance.now() };
}, true);
// A navigation the console starts itself (after a save, at a plugin page's request) names its
// target here first, as a click on a link does (app/src/chunks.rs \`use_navigate\`).
globalThis.__fundamentNavigating = (to) => {
    const url = new URL(to, location.href);
    if (url.origin === location.origin) navigationIntent = { href: url.href, at: performance.now() };
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Offline: the page stays (a page load would show the browser's offline page in its place) and
// says why the page asked for does not open yet; resolves once the browser is online. One
// notice for every load waiting (a route's chunks load side by side); the classes are the
// layout's "Updating…" notice's (app/src/components/layout.rs), which the stylesheet holds.
function untilOnline() {
    if (navigator.onLine !== false) return Promise.resolve();
    let notice = document.getElementById('offline-wait');
    if (!notice) {
        notice = document.createElement('p');
        notice.id = 'offline-wait';
        notice.setAttribute('role', 'status');
        notice.className = 'pointer-events-none fixed top-3 right-4 z-40 rounded-full border border-line bg-raised px-3 py-1 text-sm shadow-sm';
        notice.textContent = 'You are offline: the page opens once the network is back.';
        document.body.append(notice);
    }
    return new Promise((resolve) => addEventListener('online', () => { notice.remove(); resolve(); }, { once: true }));
}
function wrapAsyncCb(callee) {
    return async (callbackIndex, callbackData) => {
        const started = performance.now();
        const prefetched = globalThis.__fundamentPrefetch;
        const prefetchOf = typeof prefetched === 'string' ? new URL(prefetched, location.href).href : undefined;
        // The click this load is waiting for, if any.
        const waitedFor = () => {
            const intent = navigationIntent;
            if (!intent || intent.at < started - 1500) return undefined;
            return prefetchOf === undefined || prefetchOf === intent.href ? intent : undefined;
        };
        for (let failures = 1; ; failures++) {
            const tried = performance.now();
            try {
                await callee();
                break;
            } catch (e) {
                console.error(e);
            }
            const until = performance.now() + Math.min(10000, 250 * 2 ** (failures - 1));
            do {
                const intent = waitedFor();
                // A click since this try: try again at once (the network may be back).
                if (intent && intent.at > tried) break;
                if (intent && failures >= 3) {
                    if (navigator.onLine === false) {
                        await untilOnline();
                        break;
                    }
                    location.assign(intent.href);
                    return;
                }
                await sleep(100);
            } while (performance.now() < until);
        }
        getSharedImports().__wasm_split.__indirect_function_table.get(callbackIndex)(callbackData, true);
    }
}
`;
