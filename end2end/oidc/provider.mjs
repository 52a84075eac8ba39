// A real OpenID Connect provider on loopback for the OIDC suite
// (end2end/playwright.oidc.config.ts): the npm package oidc-provider 9.x with
// one confidential client (the console: PKCE required, client secret,
// post-logout redirect) and one account (email, name, groups).
//
// oidc-provider's built-in development interactions accept any password, so
// they are off: this script serves the login and consent pages itself and
// checks the password (a wrong one is refused, and a test proves it).
//
// Test-only switches, on /test/ (loopback only, like everything here):
//   PUT /test/mode/<mode>  normal | rogue-key (ID tokens signed by a key the
//                          JWKS does not publish) | clock-ahead (ID tokens
//                          issued 10 minutes in the future) | down (every
//                          other request's connection is dropped, as a
//                          provider that is not there) | short-code
//                          (authorization codes expire after 1 s, and the
//                          token endpoint answers 1.5 s late)
//
// Run: node end2end/oidc/provider.mjs (settings from the environment below).
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

const PORT = Number(process.env.OIDC_PORT ?? 8099);
const ISSUER = `http://127.0.0.1:${PORT}`;
const CONSOLE = process.env.CONSOLE_URL ?? 'http://localhost:3000';
const CLIENT_ID = process.env.OIDC_CLIENT_ID ?? 'fundament-console';
const CLIENT_SECRET = process.env.OIDC_CLIENT_SECRET;
if (!CLIENT_SECRET) throw new Error('OIDC_CLIENT_SECRET is required');

// The one account. Its sub is the provider's own id, not the console's user id:
// the directory maps (issuer, sub) to the user alice.
export const ACCOUNT = {
  login: 'alice',
  password: 'correct horse battery staple',
  claims: {
    sub: 'acc-7f3a9c',
    email: 'alice@acme-corp.com',
    email_verified: true,
    name: 'Alice Anders (IdP)',
    groups: ['platform-admins', 'acme-corp'],
  },
};

const signing = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const rogue = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...signing.privateKey.export({ format: 'jwk' }), kid: 'good-key', alg: 'RS256', use: 'sig' };

let mode = 'normal';
const MODES = ['normal', 'rogue-key', 'clock-ahead', 'down', 'short-code'];

const b64url = (data) => Buffer.from(data).toString('base64url');

// Re-signs an ID token the provider issued: with the rogue key (a key id the
// JWKS does not have), or with the good key and the times moved ahead.
function tamper(idToken) {
  const [, payload] = idToken.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  let key = signing.privateKey;
  let kid = 'good-key';
  if (mode === 'rogue-key') {
    key = rogue.privateKey;
    kid = 'rogue-key';
  } else if (mode === 'clock-ahead') {
    claims.iat += 600;
    claims.exp += 600;
    if (claims.auth_time) claims.auth_time += 600;
  }
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
  const body = b64url(JSON.stringify(claims));
  const signature = crypto.sign('sha256', Buffer.from(`${head}.${body}`), key).toString('base64url');
  return `${head}.${body}.${signature}`;
}

const provider = new Provider(ISSUER, {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [`${CONSOLE}/sign-in/oidc/callback`],
      post_logout_redirect_uris: [`${CONSOLE}/sign-in`],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  // Codes live a minute (oidc-provider's default), one second in short-code mode.
  ttl: { AuthorizationCode: () => (mode === 'short-code' ? 1 : 60) },
  // PKCE for this confidential client too (oidc-provider requires it for public ones only).
  pkce: { required: () => true },
  jwks: { keys: [jwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  // The console reads the profile from the ID token (no userinfo call), as from most providers.
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: async (ctx, form) => {
        ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign out of the identity provider</title></head>
<body><h1>Sign out of the test identity provider?</h1>${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button></body></html>`;
      },
    },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, id) {
    if (id !== ACCOUNT.claims.sub) return undefined;
    return { accountId: id, claims: async () => ({ ...ACCOUNT.claims }) };
  },
});
provider.proxy = false;

// The token endpoint's answer, changed after the provider made it (the test switches).
provider.use(async (ctx, next) => {
  if (ctx.path === '/token' && mode === 'short-code') await new Promise((r) => setTimeout(r, 1500));
  await next();
  if (ctx.path === '/token' && ctx.status === 200 && ctx.body?.id_token && (mode === 'rogue-key' || mode === 'clock-ahead')) {
    ctx.body = { ...ctx.body, id_token: tamper(ctx.body.id_token) };
  }
});

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res, status, title, body) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${body}</body></html>`);
}

async function form(req) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return new URLSearchParams(raw);
}

function loginForm(uid, error) {
  return `${error ? `<p role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login">
<label>Username <input name="login" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>
<form method="post" action="/interaction/${escape(uid)}/abort"><button type="submit">Cancel</button></form>`;
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) return page(res, 400, 'Wrong interaction', '');
  const { prompt, params } = details;
  if (req.method === 'GET') {
    if (prompt.name === 'login') return page(res, 200, 'Sign in to the test identity provider', loginForm(uid));
    return page(
      res,
      200,
      'Allow access',
      `<p>${escape(params.client_id)} asks for: ${escape(params.scope)}</p>
<form method="post" action="/interaction/${escape(uid)}/confirm"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${escape(uid)}/abort"><button type="submit">Deny</button></form>`,
    );
  }
  if (action === 'login') {
    const fields = await form(req);
    // The password is checked here: oidc-provider's own form would take any.
    const ok =
      fields.get('login') === ACCOUNT.login &&
      crypto.timingSafeEqual(
        crypto.createHash('sha256').update(fields.get('password') ?? '').digest(),
        crypto.createHash('sha256').update(ACCOUNT.password).digest(),
      );
    if (!ok) return page(res, 401, 'Sign in to the test identity provider', loginForm(uid, 'Wrong username or password.'));
    return provider.interactionFinished(req, res, { login: { accountId: ACCOUNT.claims.sub } }, { mergeWithLastSubmission: false });
  }
  if (action === 'confirm') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    grant.addOIDCScope(params.scope);
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  if (action === 'abort') {
    return provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'End-User aborted interaction' },
      { mergeWithLastSubmission: false },
    );
  }
  return page(res, 404, 'Not found', '');
}

const handler = provider.callback();
const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, ISSUER);
    const control = url.pathname.match(/^\/test\/mode\/([a-z-]+)$/);
    if (control && req.method === 'PUT') {
      if (!MODES.includes(control[1])) return page(res, 400, 'Unknown mode', '');
      mode = control[1];
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === '/test/health') return res.writeHead(200).end('ok');
    if (mode === 'down') {
      req.socket.destroy();
      return;
    }
    const match = url.pathname.match(/^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|confirm|abort))?$/);
    if (match) return await interaction(req, res, match[1], match[2]);
    handler(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) page(res, 500, 'Provider error', `<p>${escape(error.message)}</p>`);
  }
});
server.listen(PORT, '127.0.0.1', () => console.log(`oidc-provider listening on ${ISSUER}`));
