//! Errors of verification and of key handling.

use std::path::PathBuf;

/// Why a token was refused. The texts are safe to log and to show: they never contain the token.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TokenError {
    #[error("token is malformed")]
    Malformed,
    #[error("token is signed with an unknown key")]
    UnknownKey,
    #[error("token signature is invalid")]
    BadSignature,
    #[error("token algorithm is not EdDSA")]
    BadAlgorithm,
    #[error("token has expired")]
    Expired,
    #[error("token is not valid yet")]
    NotYetValid,
    #[error("token issuer is not fundament-authn-api")]
    WrongIssuer,
    #[error(
        "token audience is not the one this verifier accepts (user and plugin tokens are not interchangeable)"
    )]
    WrongAudience,
    #[error("token subject is not a valid user id")]
    BadSubject,
    /// Not a verdict on the token: it names a key the verifier does not hold, and the issuer's
    /// keys could not be fetched to look it up (authn down or slow). Trying again may work.
    #[error("token is signed with a key that cannot be looked up now: authn's keys cannot be fetched")]
    KeysUnavailable,
}

impl TokenError {
    /// Whether the token may verify later without change ([`TokenError::KeysUnavailable`]):
    /// the caller answers "unavailable, try again", never "not signed in".
    pub fn is_passing(&self) -> bool {
        *self == TokenError::KeysUnavailable
    }
}

/// Why signing keys or a JWKS could not be loaded or stored.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The key file exists but cannot be used. It is left untouched: overwriting it would
    /// invalidate every token in circulation and hide the problem.
    #[error("corrupt key file {path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("bad JWKS: {0}")]
    BadJwks(String),
}

impl KeyError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        KeyError::Io { action, path: path.into(), source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_the_problem() {
        assert_eq!(TokenError::Expired.to_string(), "token has expired");
        assert!(TokenError::WrongAudience.to_string().contains("audience"));
        let err = KeyError::Corrupt { path: "/k/authn-keys.json".into(), reason: "bad json".into() };
        assert_eq!(err.to_string(), "corrupt key file /k/authn-keys.json: bad json");
        let err = KeyError::io("reading", "/k", std::io::Error::other("boom"));
        assert_eq!(err.to_string(), "reading /k: boom");
    }
}
