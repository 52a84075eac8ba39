// Runs in a nested same-origin frame (an iframe srcdoc of loots-list.html, which inherits the
// page's origin, sandbox and CSP): posts the console protocol messages its parent put in
// window.__hostileSpoof to the console's window, as if it were the plugin frame, then tells
// its parent it is done. The console must ignore them: they do not come from its frame's window.
(() => {
  let sent = 0;
  const messages = (window.parent && window.parent.__hostileSpoof) || [];
  for (const message of messages) {
    for (const target of [window.top, window.parent.parent]) {
      for (const origin of ['*', 'http://localhost:3000']) {
        try {
          target.postMessage(message, origin);
          sent += 1;
        } catch {
          // a message that cannot be cloned or a target that refuses it: count only what went out
        }
      }
    }
  }
  window.parent.postMessage({ type: 'hostile:spoof-done', sent }, '*');
})();
