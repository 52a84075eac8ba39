//! Claim rules shared by both token kinds. Kept apart from the JWT mechanics so each rule reads
//! on its own and is tested on its own.

pub(crate) use fundament_kube_core::validation::{is_dns1123_label, is_dns1123_subdomain};
use serde_json::{Map, Value};

use crate::{ISSUER, TokenError};

/// Accepted clock skew past `exp`: authn and the verifiers run on different machines.
pub const EXP_LEEWAY_SECS: i64 = 30;

/// Whether a token that expires at `exp` is still accepted at `now`, the leeway included. A
/// revocation of its session must be kept as long (authn, the shared store, every verifier):
/// dropped at `exp`, a signed-out token would verify again for the leeway's length.
pub fn accepted_at(exp: i64, now: i64) -> bool {
    now < exp.saturating_add(EXP_LEEWAY_SECS)
}
/// Accepted clock skew for `iat`/`nbf` in the future.
pub(crate) const IAT_LEEWAY_SECS: i64 = 60;

/// Checks the registered claims of a signature-verified payload, in a fixed order so that the
/// reported error is predictable: times, issuer, audience, subject.
pub(crate) fn check_registered(
    claims: &Map<String, Value>,
    audience: &str,
    now: i64,
) -> Result<(), TokenError> {
    let exp = int_claim(claims, "exp")?.ok_or(TokenError::Malformed)?;
    if !accepted_at(exp, now) {
        return Err(TokenError::Expired);
    }
    for name in ["iat", "nbf"] {
        if let Some(at) = int_claim(claims, name)?
            && at > now.saturating_add(IAT_LEEWAY_SECS)
        {
            return Err(TokenError::NotYetValid);
        }
    }
    if claims.get("iss").and_then(Value::as_str) != Some(ISSUER) {
        return Err(TokenError::WrongIssuer);
    }
    if !audiences(claims).contains(&audience) {
        return Err(TokenError::WrongAudience);
    }
    match claims.get("sub").and_then(Value::as_str) {
        Some(sub) if is_dns1123_label(sub) => Ok(()),
        _ => Err(TokenError::BadSubject),
    }
}

/// An absent claim is `None`; a present one that is not an integer makes the token malformed.
fn int_claim(claims: &Map<String, Value>, name: &str) -> Result<Option<i64>, TokenError> {
    match claims.get(name) {
        None => Ok(None),
        Some(value) => value.as_i64().map(Some).ok_or(TokenError::Malformed),
    }
}

/// The `aud` values of a payload, whether `aud` is a string or an array.
pub(crate) fn audiences(claims: &Map<String, Value>) -> Vec<&str> {
    match claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A UUID in its hyphenated 8-4-4-4-12 form, any case (the simple, braced and URN forms that
/// the uuid crate also parses are refused: ids in URLs and claims have one spelling).
pub(crate) fn is_hyphenated_uuid(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn valid() -> Value {
        json!({"iss": ISSUER, "aud": ["fundament-user"], "sub": "alice", "iat": NOW, "exp": NOW + 60})
    }

    fn check(patch: Value) -> Result<(), TokenError> {
        let mut value = valid();
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                value.as_object_mut().unwrap().remove(k);
            } else {
                value[k] = v.clone();
            }
        }
        check_registered(&claims(value), "fundament-user", NOW)
    }

    #[test]
    fn accepts_valid_claims() {
        assert_eq!(check(json!({})), Ok(()));
        assert_eq!(check(json!({"aud": "fundament-user"})), Ok(()));
        assert_eq!(check(json!({"aud": ["other", "fundament-user"]})), Ok(()));
    }

    #[test]
    fn exp_is_required_and_checked_with_leeway() {
        assert_eq!(check(json!({"exp": null})), Err(TokenError::Malformed));
        assert_eq!(check(json!({"exp": "soon"})), Err(TokenError::Malformed));
        assert_eq!(check(json!({"exp": 1.5})), Err(TokenError::Malformed));
        assert_eq!(check(json!({"exp": NOW - EXP_LEEWAY_SECS + 1})), Ok(()));
        assert_eq!(check(json!({"exp": NOW - EXP_LEEWAY_SECS})), Err(TokenError::Expired));
        assert_eq!(check(json!({"exp": NOW - 3600})), Err(TokenError::Expired));
        assert_eq!(check(json!({"exp": i64::MIN})), Err(TokenError::Expired));
        assert_eq!(check(json!({"exp": i64::MAX})), Ok(()));
    }

    #[test]
    fn iat_and_nbf_may_not_be_in_the_future() {
        assert_eq!(check(json!({"iat": NOW + IAT_LEEWAY_SECS})), Ok(()));
        assert_eq!(check(json!({"iat": NOW + IAT_LEEWAY_SECS + 1})), Err(TokenError::NotYetValid));
        assert_eq!(check(json!({"nbf": NOW + 3600})), Err(TokenError::NotYetValid));
        assert_eq!(check(json!({"nbf": NOW - 10})), Ok(()));
        assert_eq!(check(json!({"iat": "now"})), Err(TokenError::Malformed));
    }

    #[test]
    fn issuer_must_match() {
        assert_eq!(check(json!({"iss": "someone-else"})), Err(TokenError::WrongIssuer));
        assert_eq!(check(json!({"iss": null})), Err(TokenError::WrongIssuer));
    }

    #[test]
    fn audience_must_contain_the_expected_one() {
        assert_eq!(check(json!({"aud": ["fundament-plugin"]})), Err(TokenError::WrongAudience));
        assert_eq!(check(json!({"aud": "fundament-plugin"})), Err(TokenError::WrongAudience));
        assert_eq!(check(json!({"aud": []})), Err(TokenError::WrongAudience));
        assert_eq!(check(json!({"aud": null})), Err(TokenError::WrongAudience));
        assert_eq!(check(json!({"aud": 7})), Err(TokenError::WrongAudience));
    }

    #[test]
    fn subject_must_be_a_dns_label() {
        for bad in ["", "Alice", "alice@acme-corp.com", "-alice", "alice-", "a.b", "a/b", &"a".repeat(64)] {
            assert_eq!(check(json!({"sub": bad})), Err(TokenError::BadSubject), "{bad}");
        }
        assert_eq!(check(json!({"sub": 5})), Err(TokenError::BadSubject));
        assert_eq!(check(json!({"sub": null})), Err(TokenError::BadSubject));
        for good in ["alice", "a", "0", "user-42", &"a".repeat(63)] {
            assert_eq!(check(json!({"sub": good})), Ok(()), "{good}");
        }
    }

    #[test]
    fn subdomains() {
        assert!(is_dns1123_subdomain("acme-corp--cert-manager"));
        assert!(is_dns1123_subdomain("a.b-c"));
        for bad in ["", "A", "a..b", ".a", "a/b", "../x", &"a".repeat(254)] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }

    #[test]
    fn uuids_are_hyphenated_any_case() {
        assert!(is_hyphenated_uuid("019b4000-2000-7000-8000-000000000001"));
        assert!(is_hyphenated_uuid("019B4000-2000-7000-8000-00000000000A"));
        for bad in [
            "",
            "not-a-uuid",
            "019b4000200070008000000000000001",
            "{019b4000-2000-7000-8000-000000000001}",
            "urn:uuid:019b4000-2000-7000-8000-000000000001",
            "019b4000-2000-7000-8000-00000000000g",
        ] {
            assert!(!is_hyphenated_uuid(bad), "{bad}");
        }
    }
}
