//! The claims of both token kinds, as they appear in the JWT payload.

use serde::{Deserialize, Deserializer, Serialize};

/// Claims of a UserToken: who signed in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserClaims {
    pub iss: String,
    /// The user id (e.g. `alice`); a DNS-1123 label because it becomes part of a ServiceAccount name.
    pub sub: String,
    #[serde(deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
    pub email: String,
    pub name: String,
}

/// Claims of a PluginToken: a user acting through one plugin installation on one cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginClaims {
    pub iss: String,
    /// The user id the plugin acts for.
    pub sub: String,
    #[serde(deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
    /// The cluster the token is bound to (lower-case UUID when minted by authn).
    pub cluster_id: String,
    /// The PluginInstallation's `metadata.uid`.
    pub installation_id: String,
    /// The PluginInstallation's `metadata.name`: names the plugin's namespace `plugin-<name>`.
    pub installation_name: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub definition_hash: String,
    /// The session it was minted in (the UserToken's `jti`): signing out revokes it too.
    pub sid: String,
}

/// Claims of a frame ticket: lets one plugin frame's first navigation prove, without the
/// console's session cookie, that this user may open this installation's pages on this
/// cluster. Single-use, short-lived; plugin-proxy exchanges it for a cookie of that
/// installation's origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameTicketClaims {
    pub iss: String,
    /// The user id.
    pub sub: String,
    #[serde(deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    pub iat: i64,
    pub exp: i64,
    /// Unique per ticket: plugin-proxy accepts each one once.
    pub jti: String,
    /// The session it was minted in (the UserToken's `jti`).
    pub sid: String,
    /// When that session ends (the UserToken's `exp`): the frame's cookie lasts no longer.
    pub session_exp: i64,
    /// The cluster (lower-case UUID).
    pub cluster_id: String,
    /// The PluginInstallation's `metadata.uid`.
    pub installation_id: String,
    /// The PluginInstallation's `metadata.name`: the ticket works on its origin only.
    pub installation_name: String,
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
