// MISTAKE (data-before-init): tells "the console" which object to open before init, to '*'.
window.parent.postMessage({ type: 'plugin:navigate', name: 'first', namespace: 'default' }, '*');

const { fundament } = window;
await fundament.init;
try {
  const { items } = await fundament.k8s.list({ group: 'broken.example.io', version: 'v1', resource: 'gadgets' });
  document.getElementById('list').append(...items.map((g) => Object.assign(document.createElement('li'), { textContent: g.metadata.name })));
  // MISTAKE (outside-allowed-resources): secrets are not in spec.allowedResources.
  await fundament.k8s.list({ version: 'v1', resource: 'secrets', namespace: 'default' });
} catch (err) {
  // MISTAKE (console-error): logs instead of telling the user.
  console.error('gadgets failed', err.message);
}
