//! The sign-in transaction: what authn must remember between sending the browser to the
//! provider and its return (state, nonce, PKCE verifier, where to go afterwards, when it
//! expires), sealed with authenticated encryption and kept by the browser in a short-lived
//! cookie of the console. No replica keeps anything: any authn replica with the same client
//! secret opens what any other sealed.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};

/// A sign-in must come back within ten minutes: enough to type a password and pass a second
/// factor, short enough that a sealed transaction found later in a log or cache is useless.
pub const TRANSACTION_TTL_SECS: i64 = 600;

/// Associated data: a sealed transaction cannot be passed off as anything else sealed with
/// a key derived from the same secret.
const AAD: &[u8] = b"fundament-oidc-transaction-v1";

/// What the transaction holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transaction {
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
    /// A path on the console (checked by the console before and after).
    pub return_path: String,
    /// Unix seconds.
    pub expires_at: i64,
    /// The session this sign-in replaces in the browser it started in, revoked once the new
    /// one is issued. Absent in transactions sealed before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<ReplacedSession>,
}

/// A live session that a sign-in replaces: its id and expiry (what revoking it needs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplacedSession {
    pub sid: String,
    /// Unix seconds.
    pub exp: i64,
}

/// Why a transaction was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransactionError {
    #[error("sign-in transaction is not one of ours (malformed or tampered with)")]
    Invalid,
    #[error("sign-in transaction expired")]
    Expired,
}

/// Seals and opens transactions with AES-256-GCM under a key derived (HKDF-SHA256) from the
/// OIDC client secret, which every authn replica already holds.
pub struct Sealer {
    key: LessSafeKey,
    rng: SystemRandom,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

struct KeyLen;

impl hkdf::KeyType for KeyLen {
    fn len(&self) -> usize {
        AES_256_GCM.key_len()
    }
}

impl Sealer {
    pub fn from_secret(secret: &[u8]) -> Sealer {
        let salt = hkdf::Salt::new(hkdf::HKDF_SHA256, b"fundament-authn");
        let mut bytes = [0u8; 32];
        salt.extract(secret)
            .expand(&[b"oidc transaction key"], KeyLen)
            .and_then(|okm| okm.fill(&mut bytes))
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        let key = UnboundKey::new(&AES_256_GCM, &bytes).expect("32 bytes is an AES-256 key");
        Sealer { key: LessSafeKey::new(key), rng: SystemRandom::new() }
    }

    /// `nonce || ciphertext || tag`, base64url: cookie-safe.
    pub fn seal(&self, transaction: &Transaction) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).expect("the system's random source works");
        let mut data = serde_json::to_vec(transaction).expect("a transaction serializes");
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(AAD), &mut data)
            .expect("a small message seals");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// The transaction, if it was sealed by us and has not expired at `now`.
    pub fn open(&self, sealed: &str, now: i64) -> Result<Transaction, TransactionError> {
        let bytes = URL_SAFE_NO_PAD.decode(sealed.trim()).map_err(|_| TransactionError::Invalid)?;
        if bytes.len() < NONCE_LEN + AES_256_GCM.tag_len() || bytes.len() > 4096 {
            return Err(TransactionError::Invalid);
        }
        let (nonce, rest) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| TransactionError::Invalid)?;
        let mut rest = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(AAD), &mut rest)
            .map_err(|_| TransactionError::Invalid)?;
        let transaction: Transaction =
            serde_json::from_slice(plain).map_err(|_| TransactionError::Invalid)?;
        if now >= transaction.expires_at {
            return Err(TransactionError::Expired);
        }
        Ok(transaction)
    }
}

/// 32 random bytes, base64url: state, nonce and PKCE verifier (43 characters, within RFC
/// 7636's 43–128 and of its unreserved alphabet).
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    SystemRandom::new().fill(&mut bytes).expect("the system's random source works");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// RFC 7636 S256: base64url(SHA-256(verifier)).
pub fn pkce_challenge(verifier: &str) -> String {
    use sha2::{Digest, Sha256};
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Compares secrets without telling, by timing, how much of a guess was right.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transaction(expires_at: i64) -> Transaction {
        Transaction {
            state: random_token(),
            nonce: random_token(),
            pkce_verifier: random_token(),
            return_path: "/clusters".into(),
            expires_at,
            replaces: Some(ReplacedSession { sid: "s-1".into(), exp: 2_000 }),
        }
    }

    #[test]
    fn a_sealed_transaction_opens_until_it_expires() {
        let sealer = Sealer::from_secret(b"client secret");
        let t = transaction(1_000);
        let sealed = sealer.seal(&t);
        assert!(
            !sealed.contains(&t.state) && !sealed.contains(&t.pkce_verifier),
            "encrypted, not just signed"
        );
        assert_eq!(sealer.open(&sealed, 999), Ok(t.clone()));
        assert_eq!(sealer.open(&sealed, 1_000), Err(TransactionError::Expired));
        // Another replica with the same secret opens it; one with another secret does not.
        assert_eq!(Sealer::from_secret(b"client secret").open(&sealed, 10), Ok(t));
        assert_eq!(Sealer::from_secret(b"other secret").open(&sealed, 10), Err(TransactionError::Invalid));
        // Each seal has its own nonce.
        assert_ne!(sealer.seal(&transaction(5)), sealer.seal(&transaction(5)));
    }

    #[test]
    fn a_tampered_transaction_is_refused() {
        let sealer = Sealer::from_secret(b"client secret");
        let sealed = sealer.seal(&transaction(1_000));
        let bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        for i in [0, NONCE_LEN, bytes.len() / 2, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[i] ^= 1;
            assert_eq!(
                sealer.open(&URL_SAFE_NO_PAD.encode(flipped), 10),
                Err(TransactionError::Invalid),
                "byte {i}"
            );
        }
        for junk in ["", "not base64!", "AAAA", &sealed[..sealed.len() - 4]] {
            assert_eq!(sealer.open(junk, 10), Err(TransactionError::Invalid), "{junk:?}");
        }
    }

    #[test]
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let token = random_token();
        assert_eq!(token.len(), 43);
        assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    }

    #[test]
    fn same_compares_whole_strings() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
        assert!(!same("", "a"));
    }
}
