//! UserTokens and PluginTokens of Fundament: Ed25519-signed JWTs (`alg: EdDSA`).
//!
//! authn holds the private keys ([`Signer`]) and publishes the public ones as a JWKS; every other
//! service verifies with public keys only ([`Verifier`]), so a verifier that leaks grants nothing.
//! The two token kinds are told apart by their audience: a UserToken carries
//! [`USER_AUDIENCE`], a PluginToken [`PLUGIN_AUDIENCE`], a frame ticket [`FRAME_AUDIENCE`], and no
//! verifier accepts another kind's.
#![forbid(unsafe_code)]

mod b64;
mod claims;
mod error;
mod keys;
pub mod keys_dir;
mod peek;
mod rules;
mod signer;
mod store;
mod verifier;

pub use claims::{FrameTicketClaims, PluginClaims, UserClaims};
pub use error::{KeyError, TokenError};
pub use peek::{TokenKind, peek_kid, peek_kind};
pub use rules::{EXP_LEEWAY_SECS, accepted_at};
pub use signer::Signer;
pub use verifier::Verifier;

/// The `iss` of every token authn signs.
pub const ISSUER: &str = "fundament-authn-api";
/// The `aud` of UserTokens: accepted on the user path only.
pub const USER_AUDIENCE: &str = "fundament-user";
/// The `aud` of PluginTokens: accepted on the plugin gateway only.
pub const PLUGIN_AUDIENCE: &str = "fundament-plugin";
/// The `aud` of frame tickets: accepted by plugin-proxy on a frame's first navigation only.
pub const FRAME_AUDIENCE: &str = "fundament-plugin-frame";
/// Frame tickets live one minute: the console mints one right before it loads the frame.
pub const FRAME_TICKET_TTL_SECS: i64 = 60;
/// PluginTokens live 15 minutes: the console refreshes them, and a stolen one expires soon.
pub const PLUGIN_TOKEN_TTL_SECS: i64 = 900;
/// UserTokens live one working day.
pub const USER_TOKEN_TTL_SECS: i64 = 8 * 3600;
