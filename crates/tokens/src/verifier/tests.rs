//! Every verification rule, each with a token crafted to break exactly that rule.

use ed25519_dalek::Signer as _;
use jsonwebtoken::{EncodingKey, Header};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::Signer;
use crate::keys::KeyPair;

const NOW: i64 = 1_800_000_000;
const CLUSTER: &str = "019b4000-2000-7000-8000-000000000001";
const INSTALLATION: &str = "00000000-0000-0000-0000-000000000001";

fn verifier(signer: &Signer) -> Verifier {
    Verifier::from_jwks(&signer.jwks()).unwrap()
}

fn plugin_claims() -> PluginClaims {
    Signer::plugin_claims(
        "alice",
        CLUSTER,
        INSTALLATION,
        "acme-corp--cert-manager",
        "cert-manager",
        "v1.17.2",
        "sha256:abc",
        "00112233445566778899aabbccddeeff",
        NOW,
        crate::PLUGIN_TOKEN_TTL_SECS,
    )
}

fn user_payload() -> Value {
    json!({
        "iss": crate::ISSUER, "sub": "alice", "aud": ["fundament-user"], "iat": NOW, "exp": NOW + 600,
        "jti": "00112233445566778899aabbccddeeff", "email": "alice@acme-corp.com", "name": "Alice"
    })
}

fn part(value: &Value) -> String {
    b64::encode(value.to_string().as_bytes())
}

/// A token with any header and payload, signed (EdDSA) with `key`.
fn craft(header: Value, payload: Value, key: &KeyPair) -> String {
    let message = format!("{}.{}", part(&header), part(&payload));
    let signature = ed25519_dalek::SigningKey::from_bytes(&key.seed()).sign(message.as_bytes());
    format!("{message}.{}", b64::encode(&signature.to_bytes()))
}

fn eddsa_header(kid: &str) -> Value {
    json!({"alg": "EdDSA", "typ": "JWT", "kid": kid})
}

fn craft_user(signer: &Signer, patch: Value) -> String {
    let mut payload = user_payload();
    for (k, v) in patch.as_object().unwrap() {
        payload[k] = v.clone();
    }
    craft(eddsa_header(signer.current_kid()), payload, signer.current_key())
}

#[test]
fn accepts_a_user_token() {
    let signer = Signer::generate();
    let token = signer.sign_user("alice", "alice@acme-corp.com", "Alice", NOW, crate::USER_TOKEN_TTL_SECS);
    let claims = verifier(&signer).verify_user(&token, NOW + 10).unwrap();
    assert_eq!(claims.sub, "alice");
    assert_eq!(claims.email, "alice@acme-corp.com");
    assert_eq!(claims.name, "Alice");
    assert_eq!(claims.exp, NOW + crate::USER_TOKEN_TTL_SECS);
}

#[test]
fn accepts_a_plugin_token_with_all_claims() {
    let signer = Signer::generate();
    let claims = plugin_claims();
    let verified = verifier(&signer).verify_plugin(&signer.sign_plugin(&claims), NOW).unwrap();
    assert_eq!(verified, claims);
    assert_eq!(verified.installation_name, "acme-corp--cert-manager");
}

#[test]
fn refuses_expired_and_future_tokens() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    let token = signer.sign_user("alice", "a@b.c", "A", NOW, 60);
    assert!(v.verify_user(&token, NOW + 60).is_ok(), "within the clock-skew leeway");
    assert_eq!(v.verify_user(&token, NOW + 60 + rules::EXP_LEEWAY_SECS), Err(TokenError::Expired));
    assert_eq!(v.verify_user(&token, NOW + 3600), Err(TokenError::Expired));
    let plugin = signer.sign_plugin(&plugin_claims());
    assert_eq!(v.verify_plugin(&plugin, NOW + 900 + 30), Err(TokenError::Expired));
    assert_eq!(v.verify_user(&token, NOW - 3600), Err(TokenError::NotYetValid));
    let nbf = craft_user(&signer, json!({"nbf": NOW + 3600}));
    assert_eq!(v.verify_user(&nbf, NOW), Err(TokenError::NotYetValid));
    let no_exp = {
        let mut payload = user_payload();
        payload.as_object_mut().unwrap().remove("exp");
        craft(eddsa_header(signer.current_kid()), payload, signer.current_key())
    };
    assert_eq!(v.verify_user(&no_exp, NOW), Err(TokenError::Malformed));
}

#[test]
fn user_and_plugin_tokens_are_not_interchangeable() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    let user = signer.sign_user("alice", "a@b.c", "A", NOW, 60);
    let plugin = signer.sign_plugin(&plugin_claims());
    assert_eq!(v.verify_plugin(&user, NOW), Err(TokenError::WrongAudience));
    assert_eq!(v.verify_user(&plugin, NOW), Err(TokenError::WrongAudience));
    assert!(v.verify_user(&plugin, NOW).unwrap_err().to_string().contains("audience"));
}

#[test]
fn frame_tickets_verify_only_as_frame_tickets() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    let ticket = signer.sign_frame_ticket(
        "alice",
        "sid-1",
        NOW + 600,
        CLUSTER,
        INSTALLATION,
        "acme-corp--demo",
        NOW,
        crate::FRAME_TICKET_TTL_SECS,
    );
    let claims = v.verify_frame_ticket(&ticket, NOW).unwrap();
    assert_eq!((claims.sub.as_str(), claims.sid.as_str()), ("alice", "sid-1"));
    assert_eq!((claims.exp, claims.session_exp), (NOW + 60, NOW + 600));
    assert_eq!(claims.installation_name, "acme-corp--demo");
    assert_eq!(v.verify_user(&ticket, NOW), Err(TokenError::WrongAudience));
    assert_eq!(v.verify_plugin(&ticket, NOW), Err(TokenError::WrongAudience));
    let user = signer.sign_user("alice", "a@b.c", "A", NOW, 60);
    assert_eq!(v.verify_frame_ticket(&user, NOW), Err(TokenError::WrongAudience));
    let plugin = signer.sign_plugin(&plugin_claims());
    assert_eq!(v.verify_frame_ticket(&plugin, NOW), Err(TokenError::WrongAudience));
    assert_eq!(v.verify_frame_ticket(&ticket, NOW + 120), Err(TokenError::Expired));
    // A ticket never outlives its session.
    let late = signer.sign_frame_ticket("alice", "s", NOW + 10, CLUSTER, INSTALLATION, "a", NOW, 60);
    assert_eq!(v.verify_frame_ticket(&late, NOW).unwrap().exp, NOW + 10);
    let bad = signer.sign_frame_ticket("alice", "s", NOW + 600, "not-a-uuid", INSTALLATION, "a", NOW, 60);
    assert_eq!(v.verify_frame_ticket(&bad, NOW), Err(TokenError::Malformed));
}

#[test]
fn extra_audiences_are_allowed_but_mixed_tokens_never_pass() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    let mut claims = plugin_claims();
    claims.aud = vec!["fundament-user".into(), "fundament-plugin".into()];
    let mixed = signer.sign_plugin(&claims);
    assert_eq!(v.verify_plugin(&mixed, NOW), Err(TokenError::WrongAudience));
    assert_eq!(v.verify_user(&mixed, NOW), Err(TokenError::WrongAudience));
    claims.aud = vec!["fundament-plugin".into(), crate::FRAME_AUDIENCE.into()];
    assert_eq!(v.verify_plugin(&signer.sign_plugin(&claims), NOW), Err(TokenError::WrongAudience));
    claims.aud = vec!["fundament-plugin".into(), "elsewhere".into()];
    assert!(v.verify_plugin(&signer.sign_plugin(&claims), NOW).is_ok());
    let sessionless = craft_user(&signer, json!({"jti": ""}));
    assert_eq!(v.verify_user(&sessionless, NOW), Err(TokenError::Malformed));
    let extra = craft_user(&signer, json!({"aud": ["console", "fundament-user"]}));
    assert!(v.verify_user(&extra, NOW).is_ok());
    let single = craft_user(&signer, json!({"aud": "fundament-user"}));
    assert_eq!(v.verify_user(&single, NOW).unwrap().aud, vec!["fundament-user"]);
}

#[test]
fn refuses_a_wrong_issuer() {
    let signer = Signer::generate();
    let token = craft_user(&signer, json!({"iss": "https://evil.example"}));
    assert_eq!(verifier(&signer).verify_user(&token, NOW), Err(TokenError::WrongIssuer));
}

#[test]
fn refuses_a_subject_that_is_not_a_dns_label() {
    let signer = Signer::generate();
    for sub in ["", "Alice", "alice@acme-corp.com", "../admin"] {
        let token = craft_user(&signer, json!({"sub": sub}));
        assert_eq!(verifier(&signer).verify_user(&token, NOW), Err(TokenError::BadSubject), "{sub}");
    }
}

#[test]
fn refuses_unknown_keys() {
    let signer = Signer::generate();
    let other = Signer::generate();
    let v = verifier(&signer);
    let token = other.sign_user("alice", "a@b.c", "A", NOW, 60);
    assert_eq!(v.verify_user(&token, NOW), Err(TokenError::UnknownKey));
    let no_kid = craft(json!({"alg": "EdDSA"}), user_payload(), signer.current_key());
    assert_eq!(v.verify_user(&no_kid, NOW), Err(TokenError::UnknownKey));
    let numeric_kid = craft(json!({"alg": "EdDSA", "kid": 1}), user_payload(), signer.current_key());
    assert_eq!(v.verify_user(&numeric_kid, NOW), Err(TokenError::UnknownKey));
}

#[test]
fn refuses_a_foreign_key_that_borrows_our_kid() {
    let signer = Signer::generate();
    let attacker = KeyPair::generate();
    // The embedded `jwk` header names the attacker's key; it must be ignored.
    let mut header = eddsa_header(signer.current_kid());
    header["jwk"] = attacker.jwk();
    let token = craft(header, user_payload(), &attacker);
    assert_eq!(verifier(&signer).verify_user(&token, NOW), Err(TokenError::BadSignature));
}

#[test]
fn refuses_a_tampered_payload() {
    let signer = Signer::generate();
    let token = signer.sign_user("bob", "bob@acme-corp.com", "Bob", NOW, 60);
    let parts: Vec<&str> = token.split('.').collect();
    let mut payload = user_payload();
    payload["sub"] = json!("alice");
    let forged = format!("{}.{}.{}", parts[0], part(&payload), parts[2]);
    assert_eq!(verifier(&signer).verify_user(&forged, NOW), Err(TokenError::BadSignature));
    let truncated = format!("{}.{}.{}", parts[0], parts[1], &parts[2][..8]);
    assert_eq!(verifier(&signer).verify_user(&truncated, NOW), Err(TokenError::BadSignature));
}

#[test]
fn refuses_alg_none() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    for alg in ["none", "None", "NONE"] {
        let header = json!({"alg": alg, "kid": signer.current_kid()});
        for signature in ["", "AAAA"] {
            let token = format!("{}.{}.{signature}", part(&header), part(&user_payload()));
            assert_eq!(v.verify_user(&token, NOW), Err(TokenError::BadAlgorithm), "{alg}");
        }
    }
    let missing = format!("{}.{}.", part(&json!({"kid": signer.current_kid()})), part(&user_payload()));
    assert_eq!(v.verify_user(&missing, NOW), Err(TokenError::BadAlgorithm));
}

#[test]
fn refuses_hs256_keyed_with_the_public_key() {
    let signer = Signer::generate();
    let jwks = signer.jwks();
    let x = jwks["keys"][0]["x"].as_str().unwrap();
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(signer.current_kid().to_string());
    // Both spellings of the public key an attacker could use as the HMAC secret.
    for secret in [b64::decode(x).unwrap(), x.as_bytes().to_vec()] {
        let token =
            jsonwebtoken::encode(&header, &user_payload(), &EncodingKey::from_secret(&secret).unwrap())
                .unwrap();
        assert_eq!(verifier(&signer).verify_user(&token, NOW), Err(TokenError::BadAlgorithm));
    }
}

#[test]
fn refuses_other_algorithms_before_any_signature_check() {
    let signer = Signer::generate();
    for alg in ["RS256", "ES256", "HS512", "PS256", "eddsa", "Ed25519"] {
        let header = json!({"alg": alg, "typ": "JWT", "kid": signer.current_kid()});
        let token = format!("{}.{}.bm90LWEtc2lnbmF0dXJl", part(&header), part(&user_payload()));
        assert_eq!(verifier(&signer).verify_user(&token, NOW), Err(TokenError::BadAlgorithm), "{alg}");
    }
}

#[test]
fn refuses_malformed_tokens() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    let good = signer.sign_user("alice", "a@b.c", "A", NOW, 60);
    for token in ["", "a", "a.b", "a.b.c.d", "not.a.jwt", "....", &format!("{good}.x"), &"a".repeat(20_000)] {
        assert_eq!(v.verify_user(token, NOW), Err(TokenError::Malformed), "{token}");
    }
    let array_payload = craft(eddsa_header(signer.current_kid()), json!([1, 2]), signer.current_key());
    assert_eq!(v.verify_user(&array_payload, NOW), Err(TokenError::Malformed));
    let mut no_email = user_payload();
    no_email.as_object_mut().unwrap().remove("email");
    let token = craft(eddsa_header(signer.current_kid()), no_email, signer.current_key());
    assert_eq!(v.verify_user(&token, NOW), Err(TokenError::Malformed));
}

#[test]
fn refuses_plugin_tokens_with_bad_binding_claims() {
    let signer = Signer::generate();
    let v = verifier(&signer);
    type Break = fn(&mut PluginClaims);
    let cases: [(&str, Break); 8] = [
        ("no session", |c| c.sid = String::new()),
        ("no token id", |c| c.jti = String::new()),
        ("cluster not a uuid", |c| c.cluster_id = "prod-eu".into()),
        ("cluster simple uuid", |c| c.cluster_id = "019b4000200070008000000000000001".into()),
        ("installation not a uuid", |c| c.installation_id = "x".into()),
        ("empty installation name", |c| c.installation_name = String::new()),
        ("installation name with a path", |c| c.installation_name = "../kube-system".into()),
        ("bad subject", |c| c.sub = "Alice".into()),
    ];
    for (name, break_it) in cases {
        let mut claims = plugin_claims();
        break_it(&mut claims);
        assert!(v.verify_plugin(&signer.sign_plugin(&claims), NOW).is_err(), "{name}");
    }
    let mut upper = plugin_claims();
    upper.cluster_id = CLUSTER.to_uppercase();
    assert!(v.verify_plugin(&signer.sign_plugin(&upper), NOW).is_ok(), "upper-case UUIDs are UUIDs");
    let mut payload = serde_json::to_value(plugin_claims()).unwrap();
    payload.as_object_mut().unwrap().remove("installation_name");
    let token = craft(eddsa_header(signer.current_kid()), payload, signer.current_key());
    assert_eq!(v.verify_plugin(&token, NOW), Err(TokenError::Malformed));
}

#[test]
fn rotation_keeps_the_previous_key_for_one_rotation() {
    let mut signer = Signer::generate();
    let old = signer.sign_user("alice", "a@b.c", "A", NOW, 600);
    signer.rotate();
    let new = signer.sign_user("alice", "a@b.c", "A", NOW, 600);
    let v = verifier(&signer);
    assert!(v.verify_user(&old, NOW).is_ok(), "previous key still verifies");
    assert!(v.verify_user(&new, NOW).is_ok());
    signer.rotate();
    let v = verifier(&signer);
    assert_eq!(v.verify_user(&old, NOW), Err(TokenError::UnknownKey));
    assert!(v.verify_user(&new, NOW).is_ok());
}

#[test]
fn jwks_round_trips_through_text() {
    let mut signer = Signer::generate();
    signer.rotate();
    let text = serde_json::to_string(&signer.jwks()).unwrap();
    let v = Verifier::from_jwks(&serde_json::from_str(&text).unwrap()).unwrap();
    let expected: Vec<String> =
        signer.jwks()["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().into()).collect();
    assert_eq!(v.kids(), expected);
    assert_eq!(v.kids()[0], signer.current_kid());
    assert!(format!("{v:?}").contains(signer.current_kid()));
}

#[test]
fn from_jwks_skips_foreign_keys_and_refuses_broken_ones() {
    let signer = Signer::generate();
    let ours = signer.jwks()["keys"][0].clone();
    let rsa = json!({"kty": "RSA", "kid": "r", "n": "AQAB", "e": "AQAB"});
    let with = |change: &dyn Fn(&mut Value)| {
        let mut key = ours.clone();
        change(&mut key);
        json!({"keys": [key]})
    };
    let v = Verifier::from_jwks(&json!({"keys": [rsa, ours]})).unwrap();
    assert_eq!(v.kids(), [signer.current_kid()]);
    let encryption = with(&|k| k["use"] = json!("enc"));
    let bad = [
        json!({}),
        json!({"keys": {}}),
        json!({"keys": []}),
        json!({"keys": [rsa]}),
        json!({"keys": [7]}),
        json!({"keys": [ours, ours]}),
        encryption,
        with(&|k| k["x"] = json!("c2hvcnQ")),
        with(&|k| k["x"] = json!("not base64!")),
        with(&|k| k["kid"] = json!("")),
        with(&|k| {
            k.as_object_mut().unwrap().remove("kid");
        }),
        with(&|k| k["d"] = json!("c2VjcmV0")),
        // The identity point: a small-order key any signature could be forged for.
        with(&|k| {
            k["x"] = json!(b64::encode(&{
                let mut p = [0u8; 32];
                p[0] = 1;
                p
            }))
        }),
    ];
    for jwks in bad {
        assert!(matches!(Verifier::from_jwks(&jwks), Err(KeyError::BadJwks(_))), "{jwks}");
    }
}

#[test]
fn load_or_create_keeps_keys_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let mut signer = Signer::load_or_create(dir.path()).unwrap();
    let token = signer.sign_user("alice", "a@b.c", "A", NOW, 600);
    let again = Signer::load_or_create(dir.path()).unwrap();
    assert_eq!(again.current_kid(), signer.current_kid());
    assert!(verifier(&again).verify_user(&token, NOW).is_ok());
    signer.rotate();
    signer.save(dir.path()).unwrap();
    let reloaded = Signer::load_or_create(dir.path()).unwrap();
    assert_eq!(reloaded.jwks(), signer.jwks());
    assert!(verifier(&reloaded).verify_user(&token, NOW).is_ok(), "previous key survives a restart");
}

#[test]
fn load_or_create_refuses_and_keeps_a_corrupt_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(crate::store::FILE_NAME);
    std::fs::write(&path, "{\"version\": 1, \"keys\": [").unwrap();
    let err = Signer::load_or_create(dir.path()).unwrap_err();
    assert!(matches!(&err, KeyError::Corrupt { path: p, .. } if *p == path), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"version\": 1, \"keys\": [");
}

#[cfg(unix)]
#[test]
fn load_or_create_reports_io_errors_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the key file should be: reading it fails with something else than NotFound.
    std::fs::create_dir(dir.path().join(crate::store::FILE_NAME)).unwrap();
    let err = Signer::load_or_create(dir.path()).unwrap_err();
    assert!(matches!(err, KeyError::Io { .. }), "{err}");
    assert!(err.to_string().contains(crate::store::FILE_NAME));
}

/// Tokens that look like JWTs: base64url of arbitrary JSON-ish text in each part.
fn jwt_like() -> impl Strategy<Value = String> {
    let json_part = prop_oneof![
        any::<String>(),
        Just(r#"{"alg":"EdDSA","kid":"k"}"#.to_string()),
        Just(
            r#"{"aud":["fundament-plugin"],"exp":9223372036854775807,"iat":-9223372036854775808}"#
                .to_string()
        ),
    ];
    (json_part.clone(), json_part, any::<Vec<u8>>()).prop_map(|(h, p, s)| {
        format!("{}.{}.{}", b64::encode(h.as_bytes()), b64::encode(p.as_bytes()), b64::encode(&s))
    })
}

proptest! {
    #![proptest_config(fundament_fuzzing::config(256))]

    #[test]
    fn verify_never_panics_on_arbitrary_strings(token in any::<String>(), now in any::<i64>()) {
        let v = verifier(&Signer::generate());
        let _ = v.verify_user(&token, now);
        let _ = v.verify_plugin(&token, now);
        let _ = crate::peek_kind(&token);
    }

    #[test]
    fn verify_never_panics_on_jwt_shaped_strings(token in jwt_like(), now in any::<i64>()) {
        let v = verifier(&Signer::generate());
        prop_assert!(v.verify_user(&token, now).is_err());
        prop_assert!(v.verify_plugin(&token, now).is_err());
        let _ = crate::peek_kind(&token);
    }

    #[test]
    fn signed_tokens_with_extreme_times_never_panic(iat in any::<i64>(), exp in any::<i64>(), now in any::<i64>()) {
        let signer = Signer::generate();
        let token = craft_user(&signer, json!({"iat": iat, "exp": exp}));
        let _ = verifier(&signer).verify_user(&token, now);
    }
}
