//! authn: who the user is, and what a plugin may do on their behalf.
//!
//! A Connect-compatible JSON unary service (`POST /<package>.<Service>/<Method>`):
//! - `authn.v1.AuthnService/DevSignIn` — mock mode's user picker: a UserToken and its cookie;
//! - `authn.v1.AuthnService/GetUserInfo` — the caller's identity, from their UserToken;
//! - `authn.v1.TokenService/MintPluginToken` — UserToken in, PluginToken out, behind gates checked
//!   in this order: request shape (both ids UUIDs, before any call), the caller's UserToken,
//!   `can_view(user, cluster)`, the installation lookup; a cluster the user cannot see and an
//!   installation that does not exist answer the same `not_found`;
//!
//! plus `GET /.well-known/jwks.json` (the public keys every verifier uses) and `GET /livez`.
//!
//! Mock mode also has a development fault switch, `GET`/`PUT /dev/faults/mint-plugin-token`
//! (`{"fail": true|false}`): while it is on, `MintPluginToken` answers `unavailable` (503) after
//! the request-shape and authentication gates. See `docs/dev-switches.md`.
//!
//! CORS is the caller's wiring. Build the service with [`router`].
#![forbid(unsafe_code)]

mod clock;
mod connect;
mod cookie;
mod credentials;
mod faults;
mod mint;
mod public;
mod router;
mod sign_in;
mod state;
mod user_info;
mod wire;

pub use router::router;
pub use state::{AuthnConfig, AuthnState, Installation, InstallationLookup, LookupError, User};
