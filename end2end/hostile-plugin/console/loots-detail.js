// The hostile detail page: shows the loot the console opened, and (being a plugin page like the
// list) could attack too; the suite drives the list page, this one only has to work.
import { finish, LOOTS, record } from './_attacks.js';

const fundament = window.fundament;
try {
  if (!fundament) throw new Error('plugin-sdk.js did not load');
  const ctx = await fundament.init;
  const { name, namespace } = ctx.resource ?? {};
  document.getElementById('heading').textContent = `Loot · ${name ?? '?'}`;
  if (name) {
    const loot = await fundament.k8s.get({ ...LOOTS, namespace: namespace ?? LOOTS.namespace, name });
    document.getElementById('object').textContent = JSON.stringify(loot.spec ?? {}, null, 2);
  }
} catch (err) {
  record('page-error', 'the detail page failed', false, `${err && err.name}: ${err && err.message}`);
} finally {
  finish();
}
