//! The public half: verifies tokens with the keys of a JWKS.
//!
//! The header is inspected before any cryptography: the algorithm must be exactly `EdDSA` and
//! the `kid` must name a key we know. Everything else (`none`, HMAC keyed with our public key,
//! RSA) is refused before a signature is looked at, so algorithm-confusion attacks have nothing
//! to work with. Claims are checked by `rules` with the caller's clock: `exp` is required and
//! honoured with 30 s of leeway for clock skew between authn and the verifiers; `iat` and `nbf`
//! may be at most 60 s in the future.

use std::collections::HashSet;
use std::fmt;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::rules::{self, audiences, is_dns1123_subdomain, is_hyphenated_uuid};
use crate::{
    FRAME_AUDIENCE, FrameTicketClaims, KeyError, PLUGIN_AUDIENCE, PluginClaims, TokenError, USER_AUDIENCE,
    UserClaims, b64,
};

/// Larger inputs are not tokens we issued; refusing them early bounds the work per request.
const MAX_TOKEN_LEN: usize = 16 * 1024;

/// Verifies tokens with public keys only.
#[derive(Clone)]
pub struct Verifier {
    /// In JWKS order; a JWKS holds one or two keys, so a linear search is the fastest lookup.
    keys: Vec<(String, DecodingKey)>,
}

impl Verifier {
    /// Reads the Ed25519 keys of a JWKS (`{"keys": [...]}`). Keys of other types or uses are
    /// skipped, as a JWKS may announce more than this verifier understands; a malformed Ed25519
    /// key, a duplicate `kid`, private key material or a set without any usable key is an error.
    pub fn from_jwks(jwks: &Value) -> Result<Verifier, KeyError> {
        let entries = jwks
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| KeyError::BadJwks("no \"keys\" array".into()))?;
        let mut keys: Vec<(String, DecodingKey)> = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let Some(jwk) = entry.as_object() else {
                return Err(KeyError::BadJwks(format!("key {index} is not an object")));
            };
            if let Some((kid, key)) =
                ed25519_key(jwk).map_err(|reason| KeyError::BadJwks(format!("key {index}: {reason}")))?
            {
                if keys.iter().any(|(known, _)| *known == kid) {
                    return Err(KeyError::BadJwks(format!("duplicate kid {kid}")));
                }
                keys.push((kid, key));
            }
        }
        if keys.is_empty() {
            return Err(KeyError::BadJwks("no Ed25519 signing key".into()));
        }
        Ok(Verifier { keys })
    }

    /// The key ids this verifier accepts, in JWKS order.
    pub fn kids(&self) -> Vec<String> {
        self.keys.iter().map(|(kid, _)| kid.clone()).collect()
    }

    /// Verifies a UserToken. A token that also names the plugin or the frame audience is
    /// refused: such a token is meant for something narrower and must never act with the
    /// user's full rights.
    pub fn verify_user(&self, token: &str, now: i64) -> Result<UserClaims, TokenError> {
        let claims = self.verify(token, USER_AUDIENCE, now)?;
        if audiences(&claims).iter().any(|a| *a == PLUGIN_AUDIENCE || *a == FRAME_AUDIENCE) {
            return Err(TokenError::WrongAudience);
        }
        let claims: UserClaims = typed(claims)?;
        // Its `jti` is the session a sign-out revokes.
        if claims.jti.is_empty() {
            return Err(TokenError::Malformed);
        }
        Ok(claims)
    }

    /// Verifies a frame ticket, including the shape of its binding claims. Whether it was
    /// used before, and whether it fits the request, is the caller's to check.
    pub fn verify_frame_ticket(&self, token: &str, now: i64) -> Result<FrameTicketClaims, TokenError> {
        let claims = self.verify(token, FRAME_AUDIENCE, now)?;
        if audiences(&claims).iter().any(|a| *a == PLUGIN_AUDIENCE || *a == USER_AUDIENCE) {
            return Err(TokenError::WrongAudience);
        }
        let claims: FrameTicketClaims = typed(claims)?;
        let well_formed = is_hyphenated_uuid(&claims.cluster_id)
            && is_hyphenated_uuid(&claims.installation_id)
            && is_dns1123_subdomain(&claims.installation_name)
            && !claims.jti.is_empty()
            && !claims.sid.is_empty();
        if !well_formed {
            return Err(TokenError::Malformed);
        }
        Ok(claims)
    }

    /// Verifies a PluginToken, including the shape of its binding claims. It does not check
    /// that the cluster or installation are the ones of the request: callers do.
    /// Like the others it refuses a token that also names another kind's audience, and one
    /// without a session (`sid`) or an id (`jti`): a sign-out could not revoke it, nor a
    /// stream slot be counted against it.
    pub fn verify_plugin(&self, token: &str, now: i64) -> Result<PluginClaims, TokenError> {
        let claims = self.verify(token, PLUGIN_AUDIENCE, now)?;
        if audiences(&claims).iter().any(|a| *a == USER_AUDIENCE || *a == FRAME_AUDIENCE) {
            return Err(TokenError::WrongAudience);
        }
        let claims: PluginClaims = typed(claims)?;
        let well_formed = is_hyphenated_uuid(&claims.cluster_id)
            && is_hyphenated_uuid(&claims.installation_id)
            && is_dns1123_subdomain(&claims.installation_name)
            && !claims.sid.is_empty()
            && !claims.jti.is_empty();
        if !well_formed {
            return Err(TokenError::Malformed);
        }
        Ok(claims)
    }

    /// Header, signature and registered claims; returns the payload for the typed checks.
    fn verify(&self, token: &str, audience: &str, now: i64) -> Result<Map<String, Value>, TokenError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(TokenError::Malformed);
        }
        let header_part = match token.split('.').collect::<Vec<_>>()[..] {
            [header, _, _] => header,
            _ => return Err(TokenError::Malformed),
        };
        let header = json_object(header_part).ok_or(TokenError::Malformed)?;
        if header.get("alg").and_then(Value::as_str) != Some("EdDSA") {
            return Err(TokenError::BadAlgorithm);
        }
        let kid = header.get("kid").and_then(Value::as_str).ok_or(TokenError::UnknownKey)?;
        let (_, key) = self.keys.iter().find(|(known, _)| known == kid).ok_or(TokenError::UnknownKey)?;
        let data =
            jsonwebtoken::decode::<Value>(token, key, &signature_only()).map_err(|err| match err.kind() {
                ErrorKind::InvalidSignature => TokenError::BadSignature,
                ErrorKind::InvalidAlgorithm | ErrorKind::UnsupportedAlgorithm => TokenError::BadAlgorithm,
                _ => TokenError::Malformed,
            })?;
        let Value::Object(claims) = data.claims else { return Err(TokenError::Malformed) };
        rules::check_registered(&claims, audience, now)?;
        Ok(claims)
    }
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier").field("kids", &self.kids()).finish()
    }
}

/// jsonwebtoken checks the EdDSA signature only; the claim rules (with the caller's clock,
/// not the system's) are ours.
fn signature_only() -> Validation {
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.required_spec_claims = HashSet::new();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.leeway = 0;
    validation
}

fn typed<T: DeserializeOwned>(claims: Map<String, Value>) -> Result<T, TokenError> {
    serde_json::from_value(Value::Object(claims)).map_err(|_| TokenError::Malformed)
}

fn json_object(part: &str) -> Option<Map<String, Value>> {
    match serde_json::from_slice(&b64::decode(part)?).ok()? {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

/// `Ok(None)` for a key this verifier does not use, `Err` for an Ed25519 key that is broken.
fn ed25519_key(jwk: &Map<String, Value>) -> Result<Option<(String, DecodingKey)>, String> {
    let field = |name: &str| jwk.get(name).and_then(Value::as_str);
    let is_ed25519 = field("kty") == Some("OKP") && field("crv") == Some("Ed25519");
    let usable = field("alg").is_none_or(|alg| alg == "EdDSA") && field("use").is_none_or(|u| u == "sig");
    if !is_ed25519 || !usable {
        return Ok(None);
    }
    if jwk.contains_key("d") {
        return Err("contains private key material".into());
    }
    let kid = field("kid").filter(|kid| !kid.is_empty()).ok_or("missing kid")?;
    let bytes: [u8; 32] = field("x")
        .and_then(b64::decode)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or("x is not 32 base64url bytes")?;
    let point = ed25519_dalek::VerifyingKey::from_bytes(&bytes).map_err(|_| "x is not an Ed25519 point")?;
    if point.is_weak() {
        return Err("x is a weak (small-order) key".into());
    }
    Ok(Some((kid.to_string(), DecodingKey::from_ed_der(&bytes))))
}

#[cfg(test)]
mod tests;
