// A certificate for the production topology's host names, made once per
// machine day with Debian's openssl, and the base64 SHA-256 of its public key
// that Chromium is told to trust (--ignore-certificate-errors-spki-list).
import { execFileSync, execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const tlsDir = path.join(os.tmpdir(), 'fundament-production-tls');
export const certFile = path.join(tlsDir, 'cert.pem');
export const keyFile = path.join(tlsDir, 'key.pem');

const NAMES = ['console.example.test', 'kube.example.test', 'plugins.example.test', '*.plugins.example.test'];

export function certificate(): { spki: string } {
  const fresh = fs.existsSync(certFile) && Date.now() - fs.statSync(certFile).mtimeMs < 12 * 3600 * 1000;
  if (!fresh) {
    fs.mkdirSync(tlsDir, { recursive: true });
    const tmpKey = `${keyFile}.${process.pid}`;
    const tmpCert = `${certFile}.${process.pid}`;
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=example.test', '-addext', `subjectAltName=${NAMES.map((n) => `DNS:${n}`).join(',')}`,
      '-keyout', tmpKey, '-out', tmpCert,
    ], { stdio: 'ignore' });
    fs.renameSync(tmpKey, keyFile);
    fs.renameSync(tmpCert, certFile);
  }
  const spki = execSync(
    `openssl x509 -in "${certFile}" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
    { encoding: 'utf8' },
  ).trim();
  return { spki };
}
