// How the Playwright suites (end2end/ and plugin-sdk/) start Debian's Chromium (Playwright cannot download
// its own here): the binary, the flags every suite shares, and what a failed test keeps.
export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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
