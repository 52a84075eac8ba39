// Byte-level replacement shared by scripts/site.mjs and scripts/content-hashes.mjs.

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
