// Helpers for specs that talk to the stack from Node: tokens from `fundament
// token`, frame tickets from authn, and requests to an installation's own
// plugin-proxy origin (`http://<installation>.localhost:8082`), which Node's
// resolver does not resolve (Chromium does): the lookup is pinned to loopback.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';

export const root = path.resolve(__dirname, '../..');
export const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
export const PROD = '019b4000-2000-7000-8000-000000000001';
export const RESTRICTED = '019b4000-2000-7000-8000-000000000002';
// The stack's URLs: the local topology's (DESIGN.md), unless a suite runs a stack of its own
// and says where (end2end/playwright.faults.config.ts sets these, as `fundament dev` reads them).
export const GATEWAY = process.env.FUNDAMENT_KUBE_API_PROXY_URL ?? 'http://localhost:8081';
export const AUTHN = process.env.FUNDAMENT_AUTHN_URL ?? 'http://localhost:8083';
export const ORGANIZATION_API = process.env.FUNDAMENT_ORGANIZATION_API_URL ?? 'http://localhost:8084';
export const CONSOLE = process.env.FUNDAMENT_CONSOLE_URL ?? 'http://localhost:3000';
const PLUGIN_PROXY = new URL(process.env.FUNDAMENT_PLUGIN_PROXY_URL ?? 'http://localhost:8082');

/** `http://<installation>.localhost:8082`: an installation's own origin. */
export const originOf = (installation: string) => `${PLUGIN_PROXY.protocol}//${installation}.${PLUGIN_PROXY.host}`;

export function token(...args: string[]): string {
  return execFileSync(bin, ['token', ...args], { cwd: root, encoding: 'utf8' }).trim();
}

export const userToken = (email: string) => token('user', '--email', email);

export function pluginToken(email: string, installation: string, ttl?: string): string {
  const extra = ttl ? ['--ttl', ttl] : [];
  return token('plugin', '--email', email, '--cluster', PROD, '--installation', installation, ...extra);
}

export type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** A request from Node, `*.localhost` pinned to 127.0.0.1, redirects not followed. */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        lookup: (_host, _opts, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }] as never, 4 as never),
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    if (options.body) request.write(options.body);
    request.end();
  });
}

/** The uid of an installation on prod-eu, read through the gateway as alice. */
export async function installationUid(installation: string): Promise<string> {
  const answer = await send(`${GATEWAY}/clusters/${PROD}/apis/plugins.fundament.io/v1/plugininstallations/${installation}`, {
    headers: { Authorization: `Bearer ${userToken('alice@acme-corp.com')}` },
  });
  return JSON.parse(answer.body).metadata.uid;
}

/** A frame ticket from authn, as the console mints one before it loads a frame. */
export async function frameTicket(user: string, installation: string): Promise<string> {
  const answer = await send(`${AUTHN}/authn.v1.TokenService/MintFrameTicket`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${user}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ clusterId: PROD, installationId: await installationUid(installation) }),
  });
  if (answer.status !== 200) throw new Error(`MintFrameTicket: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body).ticket;
}

/** The frame cookie of an installation's origin: a ticket exchanged as a frame's first load does. */
export async function frameCookie(email: string, installation: string, page: string): Promise<string> {
  const ticket = await frameTicket(userToken(email), installation);
  const answer = await send(`${originOf(installation)}${page}?fundament-ticket=${ticket}`);
  if (answer.status !== 303) throw new Error(`ticket exchange: ${answer.status} ${answer.body}`);
  const set = [answer.headers['set-cookie'] ?? []].flat()[0];
  return set.split(';')[0];
}
