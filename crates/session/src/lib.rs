//! The console's sign-in session: the value of the `fundament_auth` cookie.
//!
//! A session is `base64url(claims).base64url(HMAC-SHA256(claims))` under a key
//! that lives only in the console process, so a browser can hold it but not
//! forge or alter it, and a restart signs everybody out. The cookie itself is
//! HttpOnly, SameSite=Strict and Path=/ (see [`cookie_header`]).
#![forbid(unsafe_code)]

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Name of the session cookie (shared with authn and the gateway).
pub const COOKIE_NAME: &str = "fundament_auth";

/// How long a session lasts, in seconds.
pub const SESSION_TTL_SECS: u64 = 8 * 60 * 60;

/// What a session says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The signed-in user's email.
    pub sub: String,
    /// Expiry, unix seconds.
    pub exp: u64,
}

/// Why a session was refused. The reasons are for logs; users only learn that
/// they are signed out.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SessionError {
    /// Not two base64url parts.
    #[error("session is malformed")]
    Malformed,
    /// The signature does not match.
    #[error("session signature is invalid")]
    BadSignature,
    /// Past its expiry.
    #[error("session has expired")]
    Expired,
}

/// The key sessions are signed with.
#[derive(Clone)]
pub struct SessionKey([u8; 32]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// A fresh random key.
    pub fn generate() -> Self {
        Self(rand::random())
    }

    /// A fixed key, for tests.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// Signs a session for `email` valid from `now` (unix seconds) for `ttl` seconds.
    pub fn issue(&self, email: &str, now: u64, ttl: u64) -> String {
        let claims = Claims { sub: email.to_owned(), exp: now.saturating_add(ttl) };
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).expect("claims serialize"));
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        let sig = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{body}.{sig}")
    }

    /// Checks a session's signature and expiry at `now` (unix seconds).
    pub fn verify(&self, token: &str, now: u64) -> Result<Claims, SessionError> {
        let (body, sig) = token.split_once('.').ok_or(SessionError::Malformed)?;
        let sig = URL_SAFE_NO_PAD.decode(sig).map_err(|_| SessionError::Malformed)?;
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        // verify_slice compares in constant time.
        mac.verify_slice(&sig).map_err(|_| SessionError::BadSignature)?;
        let json = URL_SAFE_NO_PAD.decode(body).map_err(|_| SessionError::Malformed)?;
        let claims: Claims = serde_json::from_slice(&json).map_err(|_| SessionError::Malformed)?;
        if claims.exp <= now {
            return Err(SessionError::Expired);
        }
        Ok(claims)
    }
}

/// The `Set-Cookie` value that stores `token` (or clears the cookie when `None`).
pub fn cookie_header(token: Option<&str>, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match token {
        Some(token) => format!(
            "{COOKIE_NAME}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SESSION_TTL_SECS}{secure}"
        ),
        None => format!("{COOKIE_NAME}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}"),
    }
}

/// Finds a cookie's value in `Cookie` header values.
pub fn cookie_value<'a>(headers: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_800_000_000;

    #[test]
    fn round_trip() {
        let key = SessionKey::from_bytes([7; 32]);
        let token = key.issue("alice@acme-corp.com", NOW, 60);
        let claims = key.verify(&token, NOW + 59).unwrap();
        assert_eq!(claims.sub, "alice@acme-corp.com");
    }

    #[test]
    fn expired_is_refused() {
        let key = SessionKey::from_bytes([7; 32]);
        let token = key.issue("alice@acme-corp.com", NOW, 60);
        assert_eq!(key.verify(&token, NOW + 60), Err(SessionError::Expired));
    }

    #[test]
    fn another_key_or_an_altered_body_is_refused() {
        let key = SessionKey::from_bytes([7; 32]);
        let token = key.issue("bob@acme-corp.com", NOW, 60);
        assert_eq!(SessionKey::from_bytes([8; 32]).verify(&token, NOW), Err(SessionError::BadSignature));

        let forged_body = URL_SAFE_NO_PAD.encode(br#"{"sub":"alice@acme-corp.com","exp":1900000000}"#);
        let sig = token.split_once('.').unwrap().1;
        assert_eq!(key.verify(&format!("{forged_body}.{sig}"), NOW), Err(SessionError::BadSignature));
    }

    #[test]
    fn garbage_is_malformed() {
        let key = SessionKey::generate();
        for bad in ["", "abc", "a.b", "a.!!!", "..."] {
            assert!(key.verify(bad, NOW).is_err(), "{bad}");
        }
    }

    #[test]
    fn cookie_attributes() {
        let set = cookie_header(Some("t"), false);
        assert_eq!(set, "fundament_auth=t; HttpOnly; SameSite=Strict; Path=/; Max-Age=28800");
        assert!(cookie_header(None, true).ends_with("Max-Age=0; Secure"));
    }

    #[test]
    fn finds_cookie_among_others() {
        let headers = ["a=1; fundament_auth=xyz", "b=2"];
        assert_eq!(cookie_value(headers, COOKIE_NAME), Some("xyz"));
        assert_eq!(cookie_value(["fundament_auth_x=1"], COOKIE_NAME), None);
    }
}
