// The production topology's front door, as an ingress would be: one TLS port
// for every host name, routed by SNI to the service behind it on loopback.
// The certificate (made by production/tls.ts for the run) names
// console.example.test, kube.example.test, plugins.example.test and
// *.plugins.example.test; Chromium maps those names to 127.0.0.1 with
// --host-resolver-rules. Bytes are passed through untouched, so every service
// sees the browser's own Host, Origin and cookies.
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

const { TLS_CERT, TLS_KEY, TLS_PORT, CONSOLE_PORT, GATEWAY_PORT, PLUGINS_PORT } = process.env;

function backend(name) {
  if (name === 'console.example.test') return Number(CONSOLE_PORT);
  if (name === 'kube.example.test') return Number(GATEWAY_PORT);
  if (name === 'plugins.example.test' || name?.endsWith('.plugins.example.test')) return Number(PLUGINS_PORT);
  return null;
}

const server = tls.createServer(
  { cert: fs.readFileSync(TLS_CERT), key: fs.readFileSync(TLS_KEY), ALPNProtocols: ['http/1.1'] },
  (socket) => {
    const port = backend(socket.servername);
    if (!port) return socket.destroy();
    const upstream = net.connect(port, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    const close = () => { socket.destroy(); upstream.destroy(); };
    socket.on('error', close);
    upstream.on('error', close);
  },
);
server.on('tlsClientError', () => {});
server.listen(Number(TLS_PORT), '127.0.0.1');
