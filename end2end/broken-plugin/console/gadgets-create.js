// MISTAKE (unhandled-sdk-error): no try/catch; when the token cannot be minted or the call
// is refused, the SdkError goes nowhere and the page shows nothing.
const { fundament } = window;
const { items } = await fundament.k8s.list({ group: 'broken.example.io', version: 'v1', resource: 'gadgets' });
document.getElementById('count').textContent = `${items.length} gadgets exist`;
