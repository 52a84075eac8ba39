//! The private half: signs UserTokens and PluginTokens and publishes the public keys.

use std::fmt;
use std::path::Path;

use jsonwebtoken::{Algorithm, Header};
use serde::Serialize;
use serde_json::{Value, json};

use crate::keys::KeyPair;
use crate::{
    FRAME_AUDIENCE, FrameTicketClaims, ISSUER, KeyError, PLUGIN_AUDIENCE, PluginClaims, USER_AUDIENCE,
    UserClaims, store,
};

/// Signs tokens; holds the current key and (during a rotation) the previous one.
///
/// Only the current key signs. The previous one stays in the JWKS so that tokens it signed keep
/// verifying until they expire; the next rotation drops it.
pub struct Signer {
    current: KeyPair,
    /// Published, not signing: the previous key after [`Signer::rotate`], or every other key of
    /// a keys directory ([`Signer::from_keys_dir`]).
    others: Vec<KeyPair>,
}

impl Signer {
    /// A signer with one fresh key, kept in memory only (tests, throw-away dev stacks).
    pub fn generate() -> Signer {
        Signer { current: KeyPair::generate(), others: Vec::new() }
    }

    /// Loads the keys from `dir/authn-keys.json`, or creates that file with a fresh key when it
    /// does not exist, so tokens survive a restart. A file that exists but cannot be read is an
    /// error and is never overwritten.
    pub fn load_or_create(dir: &Path) -> Result<Signer, KeyError> {
        match store::load(dir)? {
            Some(mut keys) => {
                let current = keys.remove(0);
                Ok(Signer { current, others: keys })
            }
            None => {
                let signer = Signer::generate();
                signer.save(dir)?;
                Ok(signer)
            }
        }
    }

    /// Starts signing with a new key; the current one becomes the previous one (still in the
    /// JWKS) and the one before is dropped. In memory only: call [`Signer::save`] to persist.
    pub fn rotate(&mut self) {
        let old = std::mem::replace(&mut self.current, KeyPair::generate());
        self.others = vec![old];
    }

    /// The keys of a keys directory (see [`crate::keys_dir`]): the one `current` names signs,
    /// every key is published.
    pub fn from_keys_dir(dir: &Path) -> Result<Signer, KeyError> {
        let (current, others) = crate::keys_dir::load(dir)?;
        Ok(Signer { current, others })
    }

    /// Writes the keys to `dir/authn-keys.json` (mode 0600, atomically).
    pub fn save(&self, dir: &Path) -> Result<(), KeyError> {
        store::save(dir, self.keys())
    }

    /// The `kid` new tokens carry.
    pub fn current_kid(&self) -> &str {
        self.current.kid()
    }

    /// Every published `kid`, current first.
    pub fn published_kids(&self) -> Vec<String> {
        self.keys().map(|k| k.kid().to_owned()).collect()
    }

    /// A UserToken for `user_id`, valid from `now` for `ttl_secs`.
    pub fn sign_user(&self, user_id: &str, email: &str, name: &str, now: i64, ttl_secs: i64) -> String {
        self.sign_user_in_groups(user_id, email, name, &[], now, ttl_secs)
    }

    /// A UserToken that also names the user's groups (from the identity provider).
    pub fn sign_user_in_groups(
        &self,
        user_id: &str,
        email: &str,
        name: &str,
        groups: &[String],
        now: i64,
        ttl_secs: i64,
    ) -> String {
        let claims = UserClaims {
            iss: ISSUER.to_string(),
            sub: user_id.to_string(),
            aud: vec![USER_AUDIENCE.to_string()],
            iat: now,
            exp: now.saturating_add(ttl_secs),
            jti: new_jti(),
            email: email.to_string(),
            name: name.to_string(),
            groups: groups.to_vec(),
        };
        self.sign(&claims)
    }

    /// Signs the claims as given: the caller fills all of them (see [`Signer::plugin_claims`]).
    pub fn sign_plugin(&self, claims: &PluginClaims) -> String {
        self.sign(claims)
    }

    /// The claims of a PluginToken for a user, an installation and a cluster, with `iss`, `aud`,
    /// `iat`, `exp` and a random `jti` filled in.
    #[allow(clippy::too_many_arguments)] // one argument per claim reads better than a builder here
    pub fn plugin_claims(
        user_id: &str,
        cluster_id: &str,
        installation_id: &str,
        installation_name: &str,
        plugin_name: &str,
        plugin_version: &str,
        definition_hash: &str,
        sid: &str,
        now: i64,
        ttl_secs: i64,
    ) -> PluginClaims {
        PluginClaims {
            iss: ISSUER.to_string(),
            sub: user_id.to_string(),
            aud: vec![PLUGIN_AUDIENCE.to_string()],
            iat: now,
            exp: now.saturating_add(ttl_secs),
            jti: new_jti(),
            cluster_id: cluster_id.to_string(),
            installation_id: installation_id.to_string(),
            installation_name: installation_name.to_string(),
            plugin_name: plugin_name.to_string(),
            plugin_version: plugin_version.to_string(),
            definition_hash: definition_hash.to_string(),
            sid: sid.to_string(),
        }
    }

    /// Signs a frame ticket for the installation `installation_name` (uid `installation_id`) on
    /// `cluster_id`, for the session `sid` of `user_id` that ends at `session_exp`.
    #[allow(clippy::too_many_arguments)]
    pub fn sign_frame_ticket(
        &self,
        user_id: &str,
        sid: &str,
        session_exp: i64,
        cluster_id: &str,
        installation_id: &str,
        installation_name: &str,
        now: i64,
        ttl_secs: i64,
    ) -> String {
        self.sign(&FrameTicketClaims {
            iss: ISSUER.to_string(),
            sub: user_id.to_string(),
            aud: vec![FRAME_AUDIENCE.to_string()],
            iat: now,
            exp: now.saturating_add(ttl_secs).min(session_exp),
            jti: new_jti(),
            sid: sid.to_string(),
            session_exp,
            cluster_id: cluster_id.to_string(),
            installation_id: installation_id.to_string(),
            installation_name: installation_name.to_string(),
        })
    }

    /// The public keys, current first: `{"keys": [{"kty": "OKP", "crv": "Ed25519", …}]}`.
    pub fn jwks(&self) -> Value {
        json!({ "keys": self.keys().map(KeyPair::jwk).collect::<Vec<_>>() })
    }

    /// The signing key, for tests that craft tokens by hand.
    #[cfg(test)]
    pub(crate) fn current_key(&self) -> &KeyPair {
        &self.current
    }

    fn keys(&self) -> impl Iterator<Item = &KeyPair> {
        std::iter::once(&self.current).chain(self.others.iter())
    }

    fn sign<T: Serialize>(&self, claims: &T) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.current.kid().to_string());
        // Cannot fail: the claims are plain strings and integers, and the key is a valid
        // Ed25519 PKCS#8 document built by `KeyPair`.
        jsonwebtoken::encode(&header, claims, self.current.encoding())
            .expect("signing plain claims with a valid Ed25519 key cannot fail")
    }
}

impl fmt::Debug for Signer {
    /// Names the keys, never their secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signer")
            .field("current_kid", &self.current.kid())
            .field("other_kids", &self.others.iter().map(KeyPair::kid).collect::<Vec<_>>())
            .finish()
    }
}

/// A random 128-bit token id in hex, so that audit lines can tell two tokens apart.
fn new_jti() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::b64;

    fn payload(token: &str) -> Value {
        let part = token.split('.').nth(1).unwrap();
        serde_json::from_slice(&b64::decode(part).unwrap()).unwrap()
    }

    fn header(token: &str) -> Value {
        let part = token.split('.').next().unwrap();
        serde_json::from_slice(&b64::decode(part).unwrap()).unwrap()
    }

    #[test]
    fn user_token_has_all_claims_and_an_eddsa_header() {
        let signer = Signer::generate();
        let token = signer.sign_user("alice", "alice@acme-corp.com", "Alice", 1000, 60);
        assert_eq!(header(&token)["alg"], "EdDSA");
        assert_eq!(header(&token)["kid"], signer.current_kid());
        let claims: UserClaims = serde_json::from_value(payload(&token)).unwrap();
        assert_eq!(claims.iss, ISSUER);
        assert_eq!(claims.sub, "alice");
        assert_eq!(claims.aud, vec![USER_AUDIENCE]);
        assert_eq!((claims.iat, claims.exp), (1000, 1060));
        assert_eq!((claims.email.as_str(), claims.name.as_str()), ("alice@acme-corp.com", "Alice"));
        assert_eq!(claims.jti.len(), 32);
        assert!(claims.jti.bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn plugin_claims_fill_the_registered_claims() {
        let claims = Signer::plugin_claims("alice", "c", "i", "n", "p", "v", "h", "s", 1000, 900);
        assert_eq!(claims.iss, ISSUER);
        assert_eq!(claims.aud, vec![PLUGIN_AUDIENCE]);
        assert_eq!((claims.iat, claims.exp), (1000, 1900));
        let other = Signer::plugin_claims("alice", "c", "i", "n", "p", "v", "h", "s", 1000, 900);
        assert_ne!(claims.jti, other.jti);
        let token = Signer::generate().sign_plugin(&claims);
        assert_eq!(serde_json::from_value::<PluginClaims>(payload(&token)).unwrap(), claims);
    }

    #[test]
    fn rotation_keeps_one_previous_key() {
        let mut signer = Signer::generate();
        let first = signer.current_kid().to_string();
        signer.rotate();
        let second = signer.current_kid().to_string();
        assert_ne!(first, second);
        let kids = |s: &Signer| -> Vec<String> {
            s.jwks()["keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["kid"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(kids(&signer), vec![second.clone(), first]);
        signer.rotate();
        assert_eq!(kids(&signer), vec![signer.current_kid().to_string(), second]);
    }

    #[test]
    fn debug_shows_no_secret() {
        let signer = Signer::generate();
        let text = format!("{signer:?}");
        assert!(text.contains(signer.current_kid()));
        assert!(!text.contains(&b64::encode(&signer.current.seed())));
    }
}
