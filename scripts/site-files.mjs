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
