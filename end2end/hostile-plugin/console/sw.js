// A service worker that would intercept every request of the installation's origin (every
// installation's pages, the SDK) if it could be registered with scope "/". It cannot: its script
// lives under /clusters/…/console/ and plugin-proxy sends no Service-Worker-Allowed header.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('fetch', (event) => {
  event.respondWith(new Response('pwned by the hostile service worker', { headers: { 'content-type': 'text/plain' } }));
});
