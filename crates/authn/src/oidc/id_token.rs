//! Verifying an ID token (OpenID Connect Core §3.1.3.7): signature with a key of the
//! provider's JWKS, issuer, audience (and `azp`), expiry and issue time with a small allowed
//! clock skew, and the nonce of this sign-in. Pure: time and keys are passed in.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::transaction::same;

/// How far the provider's clock and ours may disagree.
pub const ALLOWED_SKEW_SECS: i64 = 60;

/// What the token must say.
#[derive(Debug, Clone)]
pub struct Expected<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
}

/// Why an ID token was refused (never with the token in it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdTokenError {
    #[error("ID token is malformed")]
    Malformed,
    #[error("ID token algorithm {0} is not accepted")]
    Algorithm(String),
    #[error("ID token signed by a key the provider does not publish (kid {0:?})")]
    UnknownKey(Option<String>),
    #[error("ID token signature does not verify")]
    Signature,
    #[error("ID token issuer is not the configured issuer")]
    Issuer,
    #[error("ID token is not meant for this client (aud/azp)")]
    Audience,
    #[error("ID token expired {0} s ago (more than the allowed clock skew)")]
    Expired(i64),
    #[error("ID token issued {0} s in the future (more than the allowed clock skew)")]
    IssuedInFuture(i64),
    #[error("ID token nonce does not match this sign-in")]
    Nonce,
    #[error("ID token has no subject")]
    Subject,
}

/// Asymmetric algorithms only: `none` and the HMAC family (keyed with the client secret a
/// provider could share with other clients) are refused whatever the header says.
fn accepted(alg: Algorithm) -> bool {
    use Algorithm::*;
    matches!(alg, RS256 | RS384 | RS512 | PS256 | PS384 | PS512 | ES256 | ES384 | EdDSA)
}

/// The key id the token names, if its header can be read (to decide whether to refetch the JWKS).
pub fn key_id(token: &str) -> Option<String> {
    jsonwebtoken::decode_header(token).ok().and_then(|h| h.kid)
}

/// Verifies `token` with `keys` and returns its claims.
pub fn verify(
    token: &str,
    keys: &JwkSet,
    expected: &Expected<'_>,
    now: i64,
) -> Result<Map<String, Value>, IdTokenError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| IdTokenError::Malformed)?;
    if !accepted(header.alg) {
        return Err(IdTokenError::Algorithm(format!("{:?}", header.alg)));
    }
    let jwk = match &header.kid {
        Some(kid) => keys.find(kid),
        // Without a kid only a JWKS of exactly one key says which key is meant.
        None if keys.keys.len() == 1 => keys.keys.first(),
        None => None,
    }
    .ok_or_else(|| IdTokenError::UnknownKey(header.kid.clone()))?;
    let key = DecodingKey::from_jwk(jwk).map_err(|_| IdTokenError::UnknownKey(header.kid.clone()))?;
    // jsonwebtoken checks the signature (and that the key fits the algorithm); every claim is
    // checked below against the `now` given, so tests can move the clock.
    let mut validation = Validation::new(header.alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let data =
        jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).map_err(|err| {
            match err.kind() {
                jsonwebtoken::errors::ErrorKind::InvalidSignature => IdTokenError::Signature,
                jsonwebtoken::errors::ErrorKind::InvalidAlgorithm => {
                    IdTokenError::UnknownKey(header.kid.clone())
                }
                _ => IdTokenError::Malformed,
            }
        })?;
    check_claims(data.claims, expected, now)
}

/// The claim checks of §3.1.3.7 after the signature.
fn check_claims(
    claims: Map<String, Value>,
    expected: &Expected<'_>,
    now: i64,
) -> Result<Map<String, Value>, IdTokenError> {
    if claims.get("iss").and_then(Value::as_str) != Some(expected.issuer) {
        return Err(IdTokenError::Issuer);
    }
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&expected.client_id) {
        return Err(IdTokenError::Audience);
    }
    let azp = claims.get("azp").and_then(Value::as_str);
    if (audiences.len() > 1 || azp.is_some()) && azp != Some(expected.client_id) {
        return Err(IdTokenError::Audience);
    }
    let time = |name: &str| claims.get(name).and_then(Value::as_i64).ok_or(IdTokenError::Malformed);
    let exp = time("exp")?;
    if now > exp + ALLOWED_SKEW_SECS {
        return Err(IdTokenError::Expired(now - exp));
    }
    let iat = time("iat")?;
    if iat > now + ALLOWED_SKEW_SECS {
        return Err(IdTokenError::IssuedInFuture(iat - now));
    }
    if !claims.get("nonce").and_then(Value::as_str).is_some_and(|n| same(n, expected.nonce)) {
        return Err(IdTokenError::Nonce);
    }
    if claims.get("sub").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err(IdTokenError::Subject);
    }
    Ok(claims)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    /// A provider's Ed25519 key for tests: the JWK it publishes and a signer of tokens.
    pub(crate) struct TestKey {
        pub(crate) kid: String,
        signing: ed25519_dalek::SigningKey,
    }

    impl TestKey {
        pub(crate) fn new(kid: &str, seed: u8) -> TestKey {
            TestKey { kid: kid.into(), signing: ed25519_dalek::SigningKey::from_bytes(&[seed; 32]) }
        }

        pub(crate) fn jwk(&self) -> Value {
            json!({"kty": "OKP", "crv": "Ed25519", "kid": self.kid, "alg": "EdDSA", "use": "sig",
                   "x": URL_SAFE_NO_PAD.encode(self.signing.verifying_key().as_bytes())})
        }

        pub(crate) fn sign(&self, claims: &Value) -> String {
            let der = self.signing.to_pkcs8_der().unwrap();
            let mut header = Header::new(Algorithm::EdDSA);
            header.kid = Some(self.kid.clone());
            jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(der.as_bytes())).unwrap()
        }
    }

    pub(crate) fn jwks(keys: &[&TestKey]) -> JwkSet {
        serde_json::from_value(json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()})).unwrap()
    }

    const NOW: i64 = 1_800_000_000;
    const EXPECTED: Expected<'static> =
        Expected { issuer: "https://id.example.com", client_id: "console", nonce: "n-123" };

    fn claims() -> Value {
        json!({"iss": "https://id.example.com", "aud": "console", "sub": "s1", "iat": NOW, "exp": NOW + 300,
               "nonce": "n-123", "email": "a@example.com"})
    }

    fn with(mut base: Value, key: &str, value: Value) -> Value {
        base[key] = value;
        base
    }

    #[test]
    fn a_good_token_verifies() {
        let key = TestKey::new("k1", 1);
        let got = verify(&key.sign(&claims()), &jwks(&[&key]), &EXPECTED, NOW).unwrap();
        assert_eq!(got["email"], "a@example.com");
        // Within the skew either way.
        let late = verify(&key.sign(&claims()), &jwks(&[&key]), &EXPECTED, NOW + 300 + ALLOWED_SKEW_SECS);
        assert!(late.is_ok());
        assert!(verify(&key.sign(&claims()), &jwks(&[&key]), &EXPECTED, NOW - ALLOWED_SKEW_SECS).is_ok());
        let aud = with(with(claims(), "aud", json!(["console", "other"])), "azp", json!("console"));
        assert!(verify(&key.sign(&aud), &jwks(&[&key]), &EXPECTED, NOW).is_ok());
    }

    #[test]
    fn a_token_of_an_unknown_key_or_a_bad_signature_is_refused() {
        let (good, rogue) = (TestKey::new("k1", 1), TestKey::new("k2", 2));
        let keys = jwks(&[&good]);
        assert_eq!(
            verify(&rogue.sign(&claims()), &keys, &EXPECTED, NOW),
            Err(IdTokenError::UnknownKey(Some("k2".into())))
        );
        // The rogue key claiming the good key's id: the signature fails.
        let impostor = TestKey { kid: "k1".into(), signing: rogue.signing.clone() };
        assert_eq!(verify(&impostor.sign(&claims()), &keys, &EXPECTED, NOW), Err(IdTokenError::Signature));
        // A changed payload under a good signature.
        let token = good.sign(&claims());
        let parts: Vec<&str> = token.split('.').collect();
        let forged = URL_SAFE_NO_PAD.encode(with(claims(), "sub", json!("admin")).to_string());
        let forged = format!("{}.{}.{}", parts[0], forged, parts[2]);
        assert_eq!(verify(&forged, &keys, &EXPECTED, NOW), Err(IdTokenError::Signature));
        // alg none and HMAC are refused before any key is looked at.
        let none = format!("{}.{}.", URL_SAFE_NO_PAD.encode(r#"{"alg":"none","kid":"k1"}"#), parts[1]);
        assert!(matches!(
            verify(&none, &keys, &EXPECTED, NOW),
            Err(IdTokenError::Malformed | IdTokenError::Algorithm(_))
        ));
        let hs = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(),
            &EncodingKey::from_secret(b"s").unwrap(),
        )
        .unwrap();
        assert_eq!(verify(&hs, &keys, &EXPECTED, NOW), Err(IdTokenError::Algorithm("HS256".into())));
        assert_eq!(verify("not a jwt", &keys, &EXPECTED, NOW), Err(IdTokenError::Malformed));
        assert_eq!(key_id(&rogue.sign(&claims())).as_deref(), Some("k2"));
    }

    #[test]
    fn each_claim_is_checked() {
        let key = TestKey::new("k1", 1);
        let keys = jwks(&[&key]);
        let check = |c: Value, now: i64| verify(&key.sign(&c), &keys, &EXPECTED, now);
        assert_eq!(
            check(with(claims(), "iss", json!("https://evil.example.com")), NOW),
            Err(IdTokenError::Issuer)
        );
        assert_eq!(check(with(claims(), "aud", json!("another-client")), NOW), Err(IdTokenError::Audience));
        assert_eq!(
            check(with(claims(), "aud", json!(["console", "other"])), NOW),
            Err(IdTokenError::Audience)
        );
        assert_eq!(check(with(claims(), "azp", json!("other")), NOW), Err(IdTokenError::Audience));
        assert_eq!(check(with(claims(), "nonce", json!("n-456")), NOW), Err(IdTokenError::Nonce));
        assert_eq!(check(with(claims(), "nonce", Value::Null), NOW), Err(IdTokenError::Nonce));
        assert_eq!(check(with(claims(), "sub", json!("")), NOW), Err(IdTokenError::Subject));
        // Clock skew: expired beyond the allowance, or issued beyond it in the future.
        assert_eq!(
            check(claims(), NOW + 300 + ALLOWED_SKEW_SECS + 1),
            Err(IdTokenError::Expired(ALLOWED_SKEW_SECS + 1))
        );
        assert_eq!(
            check(claims(), NOW - ALLOWED_SKEW_SECS - 1),
            Err(IdTokenError::IssuedInFuture(ALLOWED_SKEW_SECS + 1))
        );
        assert_eq!(check(with(claims(), "exp", json!("soon")), NOW), Err(IdTokenError::Malformed));
    }
}
