// Tests of scripts/site-files.mjs (node --test; scripts/test runs it).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { sortSharedImports } from './site-files.mjs';

// The two lines of wasm_split_cli_support 0.2.3's loader that name the shared exports.
const loader = (names) => `import { initSync } from "./console.js";
let sharedImports = undefined;
function getSharedImports() {
    if (sharedImports === undefined) {
        sharedImports = { __wasm_split: {  } };
        const { ${names}  } = initSync(undefined, undefined);
        Object.assign(sharedImports.__wasm_split, { ${names}  });
    }
    return sharedImports;
}
function wrapAsyncCb(callee) { return async (callbackIndex, callbackData) => { callee(); }; }
`;

test('the shared imports come out in one order, whatever order the splitter wrote', () => {
  const a = sortSharedImports(loader('__indirect_function_table, __wasm_split_shared0, memory,'));
  const b = sortSharedImports(loader('memory, __indirect_function_table, __wasm_split_shared0,'));
  assert.equal(a, b);
  assert.equal(a, loader('__indirect_function_table, __wasm_split_shared0, memory,'));
  // Nothing else in the loader changes.
  assert.equal(sortSharedImports(a), a);
});

test('a loader without exactly the two lists stops the build', () => {
  assert.throws(() => sortSharedImports('export function x() {}'), /0 times, not twice/);
  const once = loader('memory,').replace(/\s*Object\.assign[^\n]*\n/, '\n');
  assert.throws(() => sortSharedImports(once), /1 times, not twice/);
});
