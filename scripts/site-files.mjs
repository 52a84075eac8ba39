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
