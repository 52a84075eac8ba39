//! authn: who the user is, and what a plugin may do on their behalf.
//!
//! A Connect-compatible JSON unary service (`POST /<package>.<Service>/<Method>`):
//! - `authn.v1.AuthnService/DevSignIn` — the development user picker (mock mode, and
//!   `fundament dev` without an identity provider): a UserToken (the console keeps
//!   it in its own session cookie; authn sets none and reads none: bearer tokens only);
//! - `authn.v1.AuthnService/GetUserInfo` — the caller's identity, from their UserToken;
//! - `authn.v1.AuthnService/SignOut` — revokes the caller's session (see [`Revocations`]);
//! - `authn.v1.TokenService/MintPluginToken` — UserToken in, PluginToken out, behind gates checked
//!   in this order: request shape (both ids UUIDs, before any call), the caller's UserToken,
//!   `can_view(user, cluster)`, the installation lookup; a cluster the user cannot see and an
//!   installation that does not exist answer the same `not_found`;
//! - `authn.v1.TokenService/MintFrameTicket` — the same gates; a single-use, one-minute ticket
//!   with which one plugin frame opens its installation's pages on plugin-proxy; both mints
//!   together are bounded per user right after the UserToken gate ([`mint_budget`]);
//!
//! - `authn.v1.OidcService/StartSignIn`, `FinishSignIn`, `EndSessionUrl` — OpenID Connect
//!   sign-in (authorization code flow with PKCE, `state` and `nonce`), when an issuer is
//!   configured; see [`oidc`];
//!
//! plus `GET /.well-known/jwks.json` (the public keys every verifier uses),
//! `GET /sessions/revocations` (revoked sessions, streamed to verifiers) and `GET /livez`.
//!
//! Mock mode also has a development fault switch, `GET`/`PUT /dev/faults/mint-plugin-token`
//! (`{"fail": true|false}`): while it is on, `MintPluginToken` answers `unavailable` (503) after
//! the request-shape and authentication gates. See `docs/dev-switches.md`. Development endpoints
//! refuse requests from browser pages and for host names other than authn's own.
//!
//! CORS is the caller's wiring. Build the service with [`router`].
#![forbid(unsafe_code)]

mod clock;
mod credentials;
mod dev_guard;
mod faults;
pub mod keys_dir;
mod mint;
pub mod mint_budget;
pub mod oidc;
mod oidc_sign_in;
mod public;
mod revocation_stream;
mod revocations;
mod router;
mod sign_in;
mod sign_out;
mod state;
mod user_info;
mod wire;

pub use revocation_stream::HEARTBEAT as REVOCATION_HEARTBEAT;
pub use revocations::{Revocations, RevocationsError, Revoked};
pub use router::{router, router_with_dev_routes};
pub use state::{AuthnConfig, AuthnState, Installation, InstallationLookup, LookupError, User};
