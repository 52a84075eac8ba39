//! The small commands: `fundament token user|plugin` and `fundament plugin lint`.

use std::path::Path;

use fundament_plugin_types::PluginInstallation;
use fundament_settings::{Mode, Settings};
use fundament_tokens::Signer;

use crate::services::{self, ServiceError};

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("tokens are printed in mock mode only (the mode is {0})")]
    NotMock(Mode),
    #[error("no seed user has the email {0:?} (try alice@acme-corp.com or bob@acme-corp.com)")]
    UnknownUser(String),
    #[error("invalid --ttl {0:?}: expected a duration such as 15m, 900s, 1h or -1m")]
    BadTtl(String),
    /// Longer than the token kind lives anywhere else (README): such a token would outlive
    /// every session and key rotation the documented lifetimes are planned around.
    #[error(
        "invalid --ttl {ttl:?}: a {kind} lives at most {max}; give at most {max}, or a negative one for an already expired token"
    )]
    TtlTooLong { ttl: String, kind: &'static str, max: String },
    /// A negative lifetime past what a timestamp holds.
    #[error("invalid --ttl {0:?}: out of range")]
    TtlOutOfRange(String),
    #[error("invalid --cluster {0:?}: expected a cluster UUID")]
    BadCluster(String),
    #[error("cluster {0} is not the embedded cluster; mock mode can mint only for {1}")]
    NotEmbedded(String, String),
    #[error("no plugin installation {0:?} on the cluster")]
    NoInstallation(String),
    /// A token for an installation that pins no definition would be refused everywhere.
    #[error("plugin installation {0:?} cannot be used: {1}")]
    BadInstallation(String, fundament_plugin_types::InstallationError),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// A token kind's `--ttl` bound: its name and its documented lifetime, the longest allowed.
#[derive(Debug, Clone, Copy)]
pub struct TtlLimit {
    kind: &'static str,
    max_secs: i64,
}

/// UserTokens: 8 h.
pub const USER_TTL: TtlLimit =
    TtlLimit { kind: "UserToken", max_secs: fundament_tokens::USER_TOKEN_TTL_SECS };
/// PluginTokens: 15 min.
pub const PLUGIN_TTL: TtlLimit =
    TtlLimit { kind: "PluginToken", max_secs: fundament_tokens::PLUGIN_TOKEN_TTL_SECS };

/// `15m`, `900s`, `1h`, `-1m`, `900` (seconds), in seconds; at most `limit`'s lifetime. A
/// negative one (an already expired token, for tests) has no bound but the arithmetic's.
pub fn parse_ttl(text: &str, limit: TtlLimit) -> Result<i64, CommandError> {
    let bad = || CommandError::BadTtl(text.to_string());
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    if digits.is_empty() {
        return Err(bad());
    }
    let factor = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(bad()),
    };
    // Only digits are left, so a failed parse is a number past i64: out of range like an
    // overflowing product, never wrapped around into a token that expired long ago.
    let secs = digits.parse::<i64>().ok().and_then(|n| n.checked_mul(factor));
    match (negative, secs) {
        (true, Some(secs)) => Ok(-secs),
        (true, None) => Err(CommandError::TtlOutOfRange(text.to_string())),
        (false, Some(secs)) if secs <= limit.max_secs => Ok(secs),
        (false, _) => Err(CommandError::TtlTooLong {
            ttl: text.to_string(),
            kind: limit.kind,
            max: duration(limit.max_secs),
        }),
    }
}

/// `8h`, `15m` or `90s`: how `--ttl` is written.
fn duration(secs: i64) -> String {
    if secs % 3600 == 0 {
        format!("{}h", secs / 3600)
    } else if secs % 60 == 0 {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

fn user<'a>(email: &str) -> Result<&'a fundament_seed::User, CommandError> {
    fundament_seed::user_by_email(email).ok_or_else(|| CommandError::UnknownUser(email.to_string()))
}

fn mock_signer(settings: &Settings) -> Result<Signer, CommandError> {
    if settings.mode != Mode::Mock {
        return Err(CommandError::NotMock(settings.mode));
    }
    Ok(services::signer(settings)?)
}

pub fn user_token(settings: &Settings, email: &str, ttl: Option<&str>) -> Result<String, CommandError> {
    let signer = mock_signer(settings)?;
    let u = user(email)?;
    let ttl = ttl.map(|t| parse_ttl(t, USER_TTL)).transpose()?.unwrap_or(USER_TTL.max_secs);
    Ok(signer.sign_user(u.id, u.email, u.name, now(), ttl))
}

pub async fn plugin_token(
    settings: &Settings,
    email: &str,
    cluster: &str,
    installation: &str,
    ttl: Option<&str>,
) -> Result<String, CommandError> {
    let signer = mock_signer(settings)?;
    let u = user(email)?;
    let ttl = ttl.map(|t| parse_ttl(t, PLUGIN_TTL)).transpose()?.unwrap_or(PLUGIN_TTL.max_secs);
    let cluster = uuid_lower(cluster)?;
    let access = services::ClusterAccess::of(settings)?;
    let clusters = services::clusters(settings, &access, "fundament token plugin").await?;
    let up = clusters.get(&cluster).await.map_err(|_| {
        CommandError::NotEmbedded(cluster.clone(), fundament_seed::DEFAULT_CLUSTER_ID.to_string())
    })?;
    let stored = up
        .installation_shared(installation)
        .await
        .map_err(ServiceError::Upstream)?
        .ok_or_else(|| CommandError::NoInstallation(installation.to_string()))?;
    // Read again for an error of its own to keep (a command, once: not worth sharing the store's).
    let obj = PluginInstallation::from_value(stored.object())
        .map_err(|e| CommandError::BadInstallation(installation.to_string(), e))?;
    let r = obj.definition_ref();
    let claims = Signer::plugin_claims(
        u.id,
        &cluster,
        &obj.metadata.uid,
        installation,
        &r.plugin_name,
        &r.plugin_version,
        &r.definition_hash,
        // Not minted in a console session: a session id of its own, which nothing revokes.
        &format!("cli-{:032x}", rand::random::<u128>()),
        now(),
        ttl,
    );
    Ok(signer.sign_plugin(&claims))
}

fn uuid_lower(text: &str) -> Result<String, CommandError> {
    let t = text.trim();
    let ok = t.len() == 36
        && t.char_indices()
            .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() });
    if ok { Ok(t.to_ascii_lowercase()) } else { Err(CommandError::BadCluster(text.to_string())) }
}

/// `fundament plugin lint DIR`: the findings and whether any is an error.
pub fn lint(dir: &Path) -> (String, bool) {
    services::lint(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TTL past the token's documented lifetime is refused naming it, and one past what the
    /// arithmetic holds is refused too, never wrapped around into an already expired token.
    #[test]
    fn ttls_longer_than_the_documented_lifetime_are_refused() {
        let err = parse_ttl("9999999999999999h", USER_TTL).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid --ttl \"9999999999999999h\": a UserToken lives at most 8h; give at most 8h, or a negative one for an already expired token"
        );
        let err = parse_ttl("16m", PLUGIN_TTL).unwrap_err().to_string();
        assert!(err.contains("a PluginToken lives at most 15m"), "{err}");
        for long in ["9h", "28801", "481m", "99999999999999999999", "9223372036854775807m"] {
            let err = parse_ttl(long, USER_TTL).unwrap_err();
            assert!(matches!(err, CommandError::TtlTooLong { .. }), "{long}: {err}");
        }
        assert!(matches!(parse_ttl("901s", PLUGIN_TTL), Err(CommandError::TtlTooLong { .. })));
        assert_eq!(parse_ttl("-9999h", PLUGIN_TTL).unwrap(), -9999 * 3600, "expired, as long ago as asked");
        let err = parse_ttl("-9999999999999999h", PLUGIN_TTL).unwrap_err().to_string();
        assert_eq!(err, "invalid --ttl \"-9999999999999999h\": out of range");
    }

    #[test]
    fn ttls_read_like_durations() {
        assert_eq!(parse_ttl("15m", PLUGIN_TTL).unwrap(), 900);
        assert_eq!(parse_ttl("900", PLUGIN_TTL).unwrap(), 900);
        assert_eq!(parse_ttl("-1m", PLUGIN_TTL).unwrap(), -60);
        assert_eq!(parse_ttl("2h", USER_TTL).unwrap(), 7200);
        assert_eq!(parse_ttl("8h", USER_TTL).unwrap(), 8 * 3600);
        for bad in ["soon", "5d", "", "-", "h", "1.5h"] {
            let err = parse_ttl(bad, USER_TTL).unwrap_err();
            assert!(matches!(err, CommandError::BadTtl(_)), "{bad}: {err}");
        }
        assert!(uuid_lower("019B4000-2000-7000-8000-000000000001").is_ok());
        assert!(uuid_lower("nope").is_err());
    }
}
