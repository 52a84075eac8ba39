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

// A failed test keeps its trace: every action's DOM snapshot, the network, the console. Not
// the screencast: capturing it cost 11% of the main suite's CPU on 2 cores, where every suite
// is bound by CPU, and the snapshots show what the page was.
export const traceOnFailure = { mode: 'retain-on-failure', screenshots: false } as const;
