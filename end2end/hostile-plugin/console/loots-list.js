// The hostile list page: waits for the console's init, then runs every attack of _attacks.js and
// exposes the ones the spec drives with material it brings (tokens) as window.hostile.
import { CERT_MANAGER_VERSION, finish, plantCookies, record, runAll, useForeignToken, useUserToken } from './_attacks.js';

const fundament = window.fundament;
window.hostile = { plantCookies, useForeignToken, useUserToken, record, certManagerVersion: CERT_MANAGER_VERSION };

try {
  if (!fundament) throw new Error('plugin-sdk.js did not load');
  const ctx = await fundament.init;
  await runAll(fundament, ctx);
} catch (err) {
  record('page-error', 'the attack run failed', false, `${err && err.name}: ${err && err.message}`);
} finally {
  finish();
}
