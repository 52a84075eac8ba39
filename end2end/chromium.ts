// How the Playwright suites (end2end/ and plugin-sdk/) start Debian's Chromium (Playwright cannot download
// its own here): the binary, and the flags every suite shares.
export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
