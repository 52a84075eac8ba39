//! One Ed25519 signing key with its key id, and its public half as a JWK.

use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use serde_json::{Value, json};

use crate::b64;

/// A private key, the `kid` that names it in token headers and the JWKS, and the encoded form
/// jsonwebtoken signs with (built once, not per token).
pub(crate) struct KeyPair {
    kid: String,
    signing: SigningKey,
    encoding: EncodingKey,
}

impl KeyPair {
    /// A fresh key from the thread-local CSPRNG (ChaCha, seeded and reseeded from the OS).
    pub(crate) fn generate() -> KeyPair {
        KeyPair::from_seed(&rand::random::<[u8; 32]>())
    }

    pub(crate) fn from_seed(seed: &[u8; 32]) -> KeyPair {
        let signing = SigningKey::from_bytes(seed);
        let der = signing.to_pkcs8_der().expect("PKCS#8 encoding of an Ed25519 key cannot fail");
        let encoding = EncodingKey::from_ed_der(der.as_bytes());
        let kid = thumbprint(&public_x(&signing));
        KeyPair { kid, signing, encoding }
    }

    pub(crate) fn kid(&self) -> &str {
        &self.kid
    }

    pub(crate) fn seed(&self) -> [u8; 32] {
        self.signing.to_bytes()
    }

    pub(crate) fn encoding(&self) -> &EncodingKey {
        &self.encoding
    }

    /// The public key as published in the JWKS.
    pub(crate) fn jwk(&self) -> Value {
        json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": public_x(&self.signing),
            "kid": self.kid,
            "alg": "EdDSA",
            "use": "sig",
        })
    }
}

fn public_x(signing: &SigningKey) -> String {
    b64::encode(signing.verifying_key().as_bytes())
}

/// The RFC 7638 thumbprint of the public key: a `kid` that cannot drift from the key it names.
fn thumbprint(x: &str) -> String {
    let jwk: Jwk = serde_json::from_value(json!({"kty": "OKP", "crv": "Ed25519", "x": x}))
        .expect("an OKP JWK with a base64url x always parses");
    jwk.thumbprint(ThumbprintHash::SHA256).expect("SHA-256 thumbprints of OKP keys are supported")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kid_is_the_rfc7638_thumbprint() {
        // RFC 8037, appendix A.3: the thumbprint of the example Ed25519 key.
        let jwk_x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
        assert_eq!(thumbprint(jwk_x), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    }

    #[test]
    fn seed_round_trips_and_kid_is_stable() {
        let key = KeyPair::generate();
        let again = KeyPair::from_seed(&key.seed());
        assert_eq!(key.kid(), again.kid());
        assert_eq!(key.jwk(), again.jwk());
        assert_ne!(key.kid(), KeyPair::generate().kid());
    }

    #[test]
    fn jwk_has_only_public_fields() {
        let jwk = KeyPair::generate().jwk();
        let object = jwk.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["alg", "crv", "kid", "kty", "use", "x"]);
        assert_eq!(b64::decode(jwk["x"].as_str().unwrap()).unwrap().len(), 32);
    }
}
