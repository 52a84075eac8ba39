// How the Playwright suites (end2end/ and plugin-sdk/) start Debian's Chromium (Playwright cannot download
// its own here): the binary, the flags every suite shares, and what a failed test keeps.
import fs from 'node:fs';

export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Chromium keeps its shared memory in /dev/shm. Where that is small (a container's 64 MiB
// default), it must use /tmp instead; where it is large, /tmp costs CPU: on this machine
// /tmp is a disk, and the main suite took about 9% more CPU with the flag than without.
const SHM_ENOUGH_BYTES = 1 << 30;
function shmIsSmall(): boolean {
  try {
    const shm = fs.statfsSync('/dev/shm');
    return shm.bavail * shm.bsize < SHM_ENOUGH_BYTES;
  } catch {
    return true;
  }
}

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  ...(shmIsSmall() ? ['--disable-dev-shm-usage'] : []),
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
