//! The claims of each token kind, as they appear in the JWT payload.

use serde::{Deserialize, Deserializer, Serialize};

/// Declares the claims of one token kind: first the registered claims (RFC 7519 §4.1) that every
/// kind carries and `rules::check_registered` checks for all of them alike, then the kind's own.
/// One definition, so that the kinds cannot drift apart in those.
macro_rules! claims {
    ($(#[$meta:meta])* $name:ident { $($(#[$field_meta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// Who signed it: [`crate::ISSUER`].
            pub iss: String,
            /// The user id (e.g. `alice`); a DNS-1123 label because it becomes part of a
            /// ServiceAccount name.
            pub sub: String,
            /// The kind's audience, which tells the kinds apart.
            #[serde(deserialize_with = "one_or_many")]
            pub aud: Vec<String>,
            /// Issued at, in Unix seconds.
            pub iat: i64,
            /// Expires at, in Unix seconds.
            pub exp: i64,
            /// A random id, unique per token.
            pub jti: String,
            $($(#[$field_meta])* pub $field: $ty,)*
        }
    };
}

claims! {
    /// Claims of a UserToken: who signed in.
    UserClaims {
        email: String,
        name: String,
        /// The identity provider's groups of the user (OIDC sign-in); absent when there are none,
        /// so tokens of mock sign-in and of older authn versions read the same.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        groups: Vec<String>,
    }
}

claims! {
    /// Claims of a PluginToken: a user acting through one plugin installation on one cluster.
    PluginClaims {
        /// The cluster the token is bound to (lower-case UUID when minted by authn).
        cluster_id: String,
        /// The PluginInstallation's `metadata.uid`.
        installation_id: String,
        /// The PluginInstallation's `metadata.name`: names the plugin's namespace `plugin-<name>`.
        installation_name: String,
        plugin_name: String,
        plugin_version: String,
        definition_hash: String,
        /// The session it was minted in (the UserToken's `jti`): signing out revokes it too.
        sid: String,
    }
}

claims! {
    /// Claims of a frame ticket: lets one plugin frame's first navigation prove, without the
    /// console's session cookie, that this user may open this installation's pages on this
    /// cluster. Single-use, short-lived (its `jti` is accepted once); plugin-proxy exchanges it
    /// for a cookie of that installation's origin.
    FrameTicketClaims {
        /// The session it was minted in (the UserToken's `jti`).
        sid: String,
        /// When that session ends (the UserToken's `exp`): the frame's cookie lasts no longer.
        session_exp: i64,
        /// The cluster (lower-case UUID).
        cluster_id: String,
        /// The PluginInstallation's `metadata.uid`.
        installation_id: String,
        /// The PluginInstallation's `metadata.name`: the ticket works on its origin only.
        installation_name: String,
    }
}

/// RFC 7519 allows `aud` as a single string or an array; we always sign an array.
fn one_or_many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn audience_may_be_a_single_string() {
        let claims: UserClaims = serde_json::from_value(json!({
            "iss": "i", "sub": "alice", "aud": "fundament-user", "iat": 1, "exp": 2, "jti": "j",
            "email": "alice@example.com", "name": "Alice"
        }))
        .unwrap();
        assert_eq!(claims.aud, vec!["fundament-user".to_string()]);
    }

    #[test]
    fn plugin_claims_use_snake_case_keys() {
        let claims = PluginClaims {
            iss: "i".into(),
            sub: "alice".into(),
            aud: vec!["a".into()],
            iat: 1,
            exp: 2,
            jti: "j".into(),
            cluster_id: "c".into(),
            installation_id: "u".into(),
            installation_name: "n".into(),
            plugin_name: "p".into(),
            plugin_version: "v".into(),
            definition_hash: "h".into(),
            sid: "s".into(),
        };
        let value = serde_json::to_value(&claims).unwrap();
        for key in ["cluster_id", "installation_id", "installation_name", "plugin_name", "definition_hash"] {
            assert!(value.get(key).is_some(), "{key}");
        }
        assert_eq!(serde_json::from_value::<PluginClaims>(value).unwrap(), claims);
    }
}
