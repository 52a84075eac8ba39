// A hand-rolled protocol instead of the SDK.
// MISTAKE (no-resize): never posts plugin:resize.
// MISTAKE (theme-ignored): ignores fundament:init's theme and fundament:theme-changed.
window.addEventListener('message', (event) => {
  if (event.source !== window.parent || event.data?.type !== 'fundament:init') return;
  document.getElementById('name').textContent = event.data.resource?.name ?? '—';
});
window.parent.postMessage({ type: 'plugin:ready', protocolVersion: 1 }, '*');
