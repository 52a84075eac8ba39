// CI and first-run times, from the record every passing `scripts/test` appends to
// ~/.cache/fundament/test-runs.jsonl (kind: fresh = nothing installed yet, cold = tools but
// no build cache, warm = both). Writes bench/results/ci.json: the median of the last warm
// runs of a tree built before, the runs after a change apart, the latest cold and fresh runs,
// and the warm phases, next to the targets.
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const RECORD = join(homedir(), '.cache/fundament/test-runs.jsonl');
const OUT = process.argv[2] ?? 'bench/results/ci.json';
const LAST_WARM = 5;

const median = (xs) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

let runs = [];
try {
  runs = readFileSync(RECORD, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
} catch (e) {
  if (e.code !== 'ENOENT') throw e;
}
const ofKind = (kind) => runs.filter((r) => r.kind === kind);
const latest = (kind) => {
  const r = ofKind(kind).at(-1);
  return r ? { date: r.date, commit: r.commit, total_s: r.total_s, phases: r.phases } : null;
};
// A machine's record starts empty (a new machine, a cleared cache): a cold or fresh figure it
// does not have yet is kept from the last results, with its date and commit, not dropped.
let previous = {};
try {
  previous = JSON.parse(readFileSync(OUT, 'utf8'));
} catch (e) {
  if (e.code !== 'ENOENT') throw e;
}
const latestOrKept = (kind, key) => latest(kind) ?? previous[key] ?? null;
// Warm means the tree was built before (README): a warm run of the commit the run before it
// tested. A run after a change compiles the tests of the changed crates again; those runs are
// counted apart (`after_a_change`), not in the warm median.
const builtBefore = (r, i) => i > 0 && runs[i - 1].commit === r.commit;
const repeats = runs.filter((r, i) => r.kind === 'warm' && builtBefore(r, i));
const changed = runs.filter((r, i) => r.kind === 'warm' && !builtBefore(r, i)).slice(-LAST_WARM);
// The same for warm runs: the last results' runs and this machine's, each once (by date), the
// latest LAST_WARM of them. Kept runs carry their totals only: the phase medians are this machine's.
const recorded = new Set(ofKind('warm').map((r) => r.date));
const warm = [...(previous.warm?.runs ?? []).filter((r) => !recorded.has(r.date)), ...repeats]
  .sort((a, b) => a.date.localeCompare(b.date))
  .slice(-LAST_WARM);
const phaseNames = [...new Set(warm.flatMap((r) => Object.keys(r.phases ?? {})))];
const result = {
  date: new Date().toISOString(),
  what: 'scripts/test (what .ci/run runs) on this machine, from passing runs only',
  warm: {
    runs: warm.map((r) => ({ date: r.date, commit: r.commit, total_s: r.total_s })),
    total_s_median: median(warm.map((r) => r.total_s)),
    phases_s_median: Object.fromEntries(
      phaseNames.map((p) => [p, median(warm.map((r) => r.phases?.[p]).filter((x) => x !== undefined))]),
    ),
  },
  after_a_change: {
    what: 'warm runs whose commit differs from the run before: the changed crates\' tests compile again',
    runs: changed.map((r) => ({ date: r.date, commit: r.commit, total_s: r.total_s })),
    total_s_median: median(changed.map((r) => r.total_s)),
  },
  cold: latestOrKept('cold', 'cold'),
  fresh_machine: latestOrKept('fresh', 'fresh_machine'),
  targets: { warm_total_s_under: 300, fresh_machine_total_s_under: 1500 },
};
writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
console.log(`ci: warm median ${result.warm.total_s_median ?? '-'} s over ${warm.length} runs; ` +
  `cold ${result.cold?.total_s ?? '-'} s; fresh machine ${result.fresh_machine?.total_s ?? '-'} s -> ${OUT}`);
