//! Routing by audience before verification.

use serde_json::Value;

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
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return TokenKind::Unknown;
    };
    // Every request is routed by this, before any check: its audience is read without building
    // the claims (a JSON value of every claim cost more than verifying a cached token).
    let is_object = |part: &str| {
        b64::decode(part).is_some_and(|json| serde_json::from_slice::<audience::Object>(&json).is_ok())
    };
    let Some(claims) =
        b64::decode(payload).and_then(|json| serde_json::from_slice::<audience::Claims>(&json).ok())
    else {
        return TokenKind::Unknown;
    };
    if !is_object(header) {
        return TokenKind::Unknown;
    }
    if claims.names_plugin { TokenKind::Plugin } else { TokenKind::User }
}

/// Reading only `aud` of a JWT's claims, and whether a part is a JSON object at all, with
/// nothing kept of the rest.
mod audience {
    use std::fmt;

    use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use crate::PLUGIN_AUDIENCE;

    /// A JSON object, its members skipped (an array or a scalar is refused).
    pub(super) struct Object;

    /// Whether a JSON object's `aud` (the last, if named twice, as a JSON value keeps it) is
    /// the plugin audience or an array holding it.
    pub(super) struct Claims {
        pub(super) names_plugin: bool,
    }

    impl<'de> de::Deserialize<'de> for Object {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(Members { read_aud: false }).map(|_| Object)
        }
    }

    impl<'de> de::Deserialize<'de> for Claims {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(Members { read_aud: true }).map(|names_plugin| Claims { names_plugin })
        }
    }

    struct Members {
        read_aud: bool,
    }

    impl<'de> Visitor<'de> for Members {
        type Value = bool;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut names_plugin = false;
            while let Some(key) = map.next_key::<Key>()? {
                if self.read_aud && key.is_aud {
                    names_plugin = map.next_value::<Audience>()?.0;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(names_plugin)
        }
    }

    /// A member's name: only whether it is `aud` (escaped or not).
    struct Key {
        is_aud: bool,
    }

    impl<'de> de::Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a member name")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                    Ok(Key { is_aud: v == "aud" })
                }
            }
            d.deserialize_str(V)
        }
    }

    /// `aud`: whether it is the plugin audience (a string) or holds it (an array of anything).
    /// Any other value names no audience.
    struct Audience(bool);

    impl<'de> de::Deserialize<'de> for Audience {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(AudienceVisitor { top: true }).map(Audience)
        }
    }

    /// Reads one value: true only for the plugin audience's string, or at the top an array
    /// holding it. Every other value (numbers, objects, nested arrays) is skipped as false.
    struct AudienceVisitor {
        top: bool,
    }

    impl<'de> Visitor<'de> for AudienceVisitor {
        type Value = bool;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
            Ok(v == PLUGIN_AUDIENCE)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            let mut holds = false;
            while let Some(element) = seq.next_element_seed(Element { top: self.top })? {
                holds |= element;
            }
            Ok(holds)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(false)
        }
    }

    /// An element of `aud`'s array: counts only at the top.
    struct Element {
        top: bool,
    }

    impl<'de> de::DeserializeSeed<'de> for Element {
        type Value = bool;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
            if self.top {
                d.deserialize_any(AudienceVisitor { top: false })
            } else {
                d.deserialize_ignored_any(IgnoredAny).map(|_| false)
            }
        }
    }
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

    #[test]
    fn reads_aud_as_a_json_value_would() {
        // The last `aud` counts, as a JSON value keeps the last of a repeated member.
        let raw = |payload: &str| format!("e30.{}.sig", b64::encode(payload.as_bytes()));
        assert_eq!(peek_kind(&raw(r#"{"aud":"fundament-plugin","aud":"x"}"#)), TokenKind::User);
        assert_eq!(peek_kind(&raw(r#"{"aud":"x","aud":["fundament-plugin"]}"#)), TokenKind::Plugin);
        // An escaped name or value is the same name or value.
        assert_eq!(peek_kind(&raw(r#"{"\u0061ud":"fundament-\u0070lugin"}"#)), TokenKind::Plugin);
        // Only the array's own strings: not nested arrays, objects or other types.
        for payload in [
            r#"{"aud":[["fundament-plugin"]]}"#,
            r#"{"aud":{"fundament-plugin":"fundament-plugin"}}"#,
            r#"{"aud":[1,true,null,{"a":"fundament-plugin"}]}"#,
            r#"{"aud":null}"#,
            r#"{"sub":"fundament-plugin","nested":{"aud":"fundament-plugin"}}"#,
        ] {
            assert_eq!(peek_kind(&raw(payload)), TokenKind::User, "{payload}");
        }
        assert_eq!(peek_kind(&raw(r#"{"aud":[1,{"x":[2]},"fundament-plugin"]}"#)), TokenKind::Plugin);
        // Not JSON, or trailing bytes, is no JWT.
        assert_eq!(peek_kind(&raw(r#"{"aud":"fundament-plugin"} x"#)), TokenKind::Unknown);
        assert_eq!(peek_kind(&raw(r#"{"aud":"fundament-plugin""#)), TokenKind::Unknown);
    }
}
