//! Routing by audience before verification.

use serde_json::Value;

use crate::PLUGIN_AUDIENCE;
use crate::b64;

/// What a token claims to be, judged without verifying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    User,
    Plugin,
    Unknown,
}

/// Unverified peek at the audience, only to route a request (plugin if `aud` contains
/// fundament-plugin, also mixed; user otherwise; Unknown if not a JWT).
///
/// Never trust the answer: the route it picks must verify the token with its own verifier,
/// which refuses the other kind. Mixed audiences go to the plugin path, the narrower one.
pub fn peek_kind(token: &str) -> TokenKind {
    let [header, payload, _] = token.split('.').collect::<Vec<_>>()[..] else {
        return TokenKind::Unknown;
    };
    let object = |part: &str| -> Option<Value> {
        let value: Value = serde_json::from_slice(&b64::decode(part)?).ok()?;
        value.is_object().then_some(value)
    };
    let (Some(_), Some(claims)) = (object(header), object(payload)) else {
        return TokenKind::Unknown;
    };
    let is_plugin = match &claims["aud"] {
        Value::String(aud) => aud == PLUGIN_AUDIENCE,
        Value::Array(auds) => auds.iter().any(|aud| aud == PLUGIN_AUDIENCE),
        _ => false,
    };
    if is_plugin { TokenKind::Plugin } else { TokenKind::User }
}

/// Unverified peek at the header's `kid`: only to decide whether the keys at hand are worth
/// refreshing before verifying (a token just received from authn after a rotation).
pub fn peek_kid(token: &str) -> Option<String> {
    let header = token.split('.').next()?;
    let value: Value = serde_json::from_slice(&b64::decode(header)?).ok()?;
    value["kid"].as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn jwt(payload: Value) -> String {
        let header = b64::encode(br#"{"alg":"EdDSA"}"#);
        format!("{header}.{}.sig", b64::encode(payload.to_string().as_bytes()))
    }

    #[test]
    fn routes_by_audience() {
        assert_eq!(peek_kind(&jwt(json!({"aud": ["fundament-plugin"]}))), TokenKind::Plugin);
        assert_eq!(peek_kind(&jwt(json!({"aud": "fundament-plugin"}))), TokenKind::Plugin);
        assert_eq!(
            peek_kind(&jwt(json!({"aud": ["fundament-user", "fundament-plugin"]}))),
            TokenKind::Plugin
        );
        assert_eq!(peek_kind(&jwt(json!({"aud": ["fundament-user"]}))), TokenKind::User);
        assert_eq!(peek_kind(&jwt(json!({}))), TokenKind::User);
    }

    #[test]
    fn non_jwts_are_unknown() {
        for text in ["", "not.a.jwt", "a.b", "a.b.c.d", "....", "e30.e30", "W10.e30.x", "e30.W10.x"] {
            assert_eq!(peek_kind(text), TokenKind::Unknown, "{text}");
        }
        assert_eq!(peek_kind("e30.e30.x"), TokenKind::User);
    }
}
