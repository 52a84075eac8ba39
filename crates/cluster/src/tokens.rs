//! ServiceAccount tokens the cluster issues (TokenRequest): JWTs signed with a
//! key kept in the state directory, bound to the ServiceAccount's uid, so a
//! token dies with its ServiceAccount as in Kubernetes.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::tls::{TlsError, read_optional, write_private};

pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub sub: String,
    pub aud: Vec<String>,
    pub exp: i64,
    pub iat: i64,
    pub nbf: i64,
    pub jti: String,
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubeClaims,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KubeClaims {
    pub namespace: String,
    pub serviceaccount: Ref,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ref {
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TokenError {
    #[error("malformed token")]
    Malformed,
    #[error("bad signature")]
    Signature,
    #[error("token expired")]
    Expired,
    #[error("token not valid yet")]
    NotYetValid,
}

/// Signs and checks ServiceAccount tokens.
pub struct TokenIssuer {
    key: Vec<u8>,
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

impl TokenIssuer {
    pub fn from_key(key: Vec<u8>) -> Self {
        Self { key }
    }

    /// The signing key of `dir`, made on first start.
    pub fn load_or_create(dir: &Path) -> Result<Self, TlsError> {
        let path = dir.join("serviceaccount-signing.key");
        match read_optional(&path)? {
            Some(hex) => {
                let key =
                    decode_hex(hex.trim()).filter(|k| k.len() >= 32).ok_or_else(|| TlsError::Corrupt {
                        path: path.clone(),
                        what: "signing key",
                        detail: "expected at least 64 hex characters".into(),
                    })?;
                Ok(Self { key })
            }
            None => {
                let hex = random_hex(32);
                write_private(&path, hex.as_bytes())?;
                Ok(Self { key: decode_hex(&hex).unwrap_or_default() })
            }
        }
    }

    fn sign(&self, data: &[u8]) -> Vec<u8> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(data);
        mac.finalize().into_bytes().to_vec()
    }

    pub fn issue(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        audiences: Vec<String>,
        now: i64,
        ttl: i64,
    ) -> String {
        let claims = Claims {
            iss: ISSUER.into(),
            sub: format!("system:serviceaccount:{namespace}:{name}"),
            aud: audiences,
            exp: now + ttl,
            iat: now,
            nbf: now,
            jti: random_hex(16),
            kubernetes: KubeClaims {
                namespace: namespace.into(),
                serviceaccount: Ref { name: name.into(), uid: uid.into() },
            },
        };
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","kid":"fundament-cluster","typ":"JWT"}"#);
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap_or_default());
        let signing_input = format!("{header}.{body}");
        let sig = URL_SAFE_NO_PAD.encode(self.sign(signing_input.as_bytes()));
        format!("{signing_input}.{sig}")
    }

    /// The claims of a token this cluster signed, if it is still valid.
    pub fn verify(&self, token: &str, now: i64) -> Result<Claims, TokenError> {
        let mut parts = token.split('.');
        let (Some(h), Some(b), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError::Malformed);
        };
        let sig = URL_SAFE_NO_PAD.decode(s).map_err(|_| TokenError::Malformed)?;
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).map_err(|_| TokenError::Signature)?;
        mac.update(format!("{h}.{b}").as_bytes());
        mac.verify_slice(&sig).map_err(|_| TokenError::Signature)?;
        let claims: Claims =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(b).map_err(|_| TokenError::Malformed)?)
                .map_err(|_| TokenError::Malformed)?;
        if now >= claims.exp {
            return Err(TokenError::Expired);
        }
        if now + 60 < claims.nbf {
            return Err(TokenError::NotYetValid);
        }
        Ok(claims)
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// The admin token of `dir` (made on first start), unless one is configured.
pub fn admin_token(dir: &Path, configured: Option<&str>) -> Result<String, TlsError> {
    if let Some(token) = configured {
        return Ok(token.to_string());
    }
    let path = dir.join("admin-token");
    match read_optional(&path)? {
        Some(t) if t.trim().len() >= 16 => Ok(t.trim().to_string()),
        Some(_) => {
            Err(TlsError::Corrupt { path, what: "admin token", detail: "shorter than 16 characters".into() })
        }
        None => {
            let token = random_hex(32);
            write_private(&path, token.as_bytes())?;
            Ok(token)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_verify_until_they_expire_and_not_after_tampering() {
        let issuer = TokenIssuer::from_key(vec![7; 32]);
        let t = issuer.issue("ns", "sa", "uid-1", vec!["api".into()], 1000, 600);
        let claims = issuer.verify(&t, 1500).unwrap();
        assert_eq!(claims.sub, "system:serviceaccount:ns:sa");
        assert_eq!(issuer.verify(&t, 1600), Err(TokenError::Expired));
        let other = TokenIssuer::from_key(vec![8; 32]);
        assert_eq!(other.verify(&t, 1500), Err(TokenError::Signature));
        let mut forged = t.clone();
        forged.insert(forged.find('.').unwrap() + 2, 'x');
        assert!(issuer.verify(&forged, 1500).is_err());
        assert_eq!(issuer.verify("a.b", 0), Err(TokenError::Malformed));
    }

    #[test]
    fn the_signing_key_and_admin_token_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let a = TokenIssuer::load_or_create(dir.path()).unwrap();
        let b = TokenIssuer::load_or_create(dir.path()).unwrap();
        let t = a.issue("n", "s", "u", vec![], 0, 100);
        assert!(b.verify(&t, 1).is_ok());
        assert_eq!(admin_token(dir.path(), None).unwrap(), admin_token(dir.path(), None).unwrap());
        assert_eq!(admin_token(dir.path(), Some("fixed")).unwrap(), "fixed");
    }
}
