const { fundament } = window;
const context = await fundament.init;
try {
  const gizmo = await fundament.k8s.get({ group: 'broken.example.io', version: 'v1', resource: 'gizmos', name: context.resource.name, namespace: context.resource.namespace });
  document.getElementById('name').textContent = gizmo.metadata.name;
} catch (err) {
  document.getElementById('name').textContent = `Failed: ${err.message}`;
}
// MISTAKE (uncaught-exception): a bug after drawing.
setTimeout(() => context.resource.labels.size.toString(), 0);
