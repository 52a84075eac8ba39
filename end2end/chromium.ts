// How the Playwright suites (end2end/ and plugin-sdk/) start Debian's Chromium (Playwright cannot download
// its own here): the binary, the flags every suite shares, and what a failed test keeps.
import fs from 'node:fs';

// Two builds of the same Chromium (one Debian source package, one version; scripts/setup installs
// both):
// - `chromium-headless-shell`, for most suites: Chromium's own headless build (Blink, V8 and the
//   network stack without the browser's UI layer), which is what Playwright itself runs headless
//   tests in. On 2 cores every suite is bound by CPU, and it takes about 40 % less of it: the
//   accessibility and plugin suites took 18 CPU-seconds and 26 s against 31 and 41 s in
//   /usr/bin/chromium, over two runs each (2026-12-07).
// - `chromium`, the browser users run, for the suites that prove a defence against a hostile
//   plugin (fullChromium below): where the two builds could differ (process model, storage and
//   cookie policy), the proof must hold in the browser users have.
// CHROMIUM_PATH replaces the first (set it to /usr/bin/chromium to watch a run with --headed,
// which the headless shell cannot do); CHROMIUM_FULL_PATH the second. Where only the browser is
// installed (a plugin author's machine running the SDK's tests), every suite runs in it.
export const fullChromium = process.env.CHROMIUM_FULL_PATH ?? '/usr/bin/chromium';
const headlessShell = '/usr/bin/chromium-headless-shell';
export const executablePath = process.env.CHROMIUM_PATH ?? (fs.existsSync(headlessShell) ? headlessShell : fullChromium);

// Shared memory: Playwright launches Chromium with --disable-dev-shm-usage whatever the
// arguments here (one of its default arguments), so Chromium keeps it in /tmp. Without the flag
// (ignoreDefaultArgs) the plugin and generated-view suites took 52–59 CPU-seconds over four runs,
// and 45–62 with it (2026-12-07): no difference beyond this machine's noise, so Playwright's
// default stays, and it is safe where /dev/shm is a container's 64 MiB.
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

// What a failed test keeps: its trace (every action with its timing, the network, the console,
// the sources), a screenshot of the page as it failed, and Playwright's error-context.md (the
// page's accessibility tree). Not the trace's screencast, nor its DOM snapshot of every action:
// on 2 cores, where every suite is bound by CPU, the screencast cost 11% of the main suite's
// CPU, and the snapshots 10% of its time (110.8 and 114.5 s against 99.9 and 97.9 s without).
export const keptOnFailure = {
  trace: { mode: 'retain-on-failure', screenshots: false, snapshots: false },
  screenshot: 'only-on-failure',
} as const;
