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

/// `15m`, `900s`, `1h`, `-1m`, `900` (seconds).
pub fn parse_ttl(text: &str) -> Result<i64, CommandError> {
    let bad = || CommandError::BadTtl(text.to_string());
    let t = text.trim();
    let (sign, t) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t),
    };
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: i64 = digits.parse().map_err(|_| bad())?;
    let factor = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(bad()),
    };
    Ok(sign * n * factor)
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
    let ttl = ttl.map(parse_ttl).transpose()?.unwrap_or(fundament_tokens::USER_TOKEN_TTL_SECS);
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
    let ttl = ttl.map(parse_ttl).transpose()?.unwrap_or(fundament_tokens::PLUGIN_TOKEN_TTL_SECS);
    let cluster = uuid_lower(cluster)?;
    let access = services::ClusterAccess::of(settings)?;
    let clusters = services::clusters(settings, &access).await?;
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

    #[test]
    fn ttls_read_like_durations() {
        assert_eq!(parse_ttl("15m").unwrap(), 900);
        assert_eq!(parse_ttl("900").unwrap(), 900);
        assert_eq!(parse_ttl("-1m").unwrap(), -60);
        assert_eq!(parse_ttl("2h").unwrap(), 7200);
        assert!(parse_ttl("soon").is_err());
        assert!(parse_ttl("5d").is_err());
        assert!(uuid_lower("019B4000-2000-7000-8000-000000000001").is_ok());
        assert!(uuid_lower("nope").is_err());
    }
}
