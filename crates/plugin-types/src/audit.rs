//! The record of one plugin-path call as the audit view shows it, and the filters it takes.
//!
//! kube-api-proxy keeps the records ([`AuditEntry`], one per call through the PluginToken
//! path, refusals included) and answers queries with an [`AuditFilter`]; the console's audit
//! page writes the same filter into its URL, so a filtered view can be bookmarked, reloaded and
//! shared. The filter's query form is the one both read and write ([`AuditFilter::from_query`],
//! [`AuditFilter::to_query`]).

use fundament_kube_core::Query;
use serde::{Deserialize, Serialize};

/// One plugin-path call: who, through which installation, what, and what the gateway decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Increasing per gateway process: a live tail asks for the entries after the last it has.
    pub id: u64,
    /// When the call ended, RFC 3339 in UTC with milliseconds.
    pub time: String,
    /// Unix milliseconds of `time`, for range filters.
    pub at_ms: i64,
    pub user: String,
    pub cluster_id: String,
    pub installation_id: String,
    pub installation_name: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    pub namespace: String,
    pub verb: String,
    /// `allowed`, or `denied:<check>` / `error:<check>` naming the check that refused it.
    pub decision: String,
    pub status: u16,
    pub latency_ms: f64,
}

impl AuditEntry {
    /// The check that refused the call, if one did (`allowed-resources`, `invalid-token` …).
    pub fn refused_by(&self) -> Option<&str> {
        self.decision.split_once(':').map(|(_, check)| check)
    }

    /// `group/resource[/subresource]`, as RBAC names it (`cert-manager.io/certificates`).
    pub fn resource_path(&self) -> String {
        let mut path = if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.group, self.resource)
        };
        if !self.subresource.is_empty() {
            path.push('/');
            path.push_str(&self.subresource);
        }
        path
    }
}

/// The most entries one answer carries.
pub const MAX_LIMIT: usize = 1_000;
/// Entries per answer when the filter names no limit.
pub const DEFAULT_LIMIT: usize = 200;
/// The longest a live tail's query waits for a new call (below the console's call timeout).
pub const MAX_WAIT_MS: u64 = 5_000;

/// Which entries to show. Every text field matches exactly; `decision` also matches by its
/// part before the colon (`denied` matches every refusal). Empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditFilter {
    pub user: Option<String>,
    pub installation: Option<String>,
    pub plugin: Option<String>,
    pub version: Option<String>,
    pub verb: Option<String>,
    /// The resource (plural), with or without its group: `certificates` or `cert-manager.io/certificates`.
    pub resource: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub decision: Option<String>,
    pub status: Option<u16>,
    /// From this time on (unix milliseconds).
    pub since_ms: Option<i64>,
    /// Before this time (unix milliseconds).
    pub until_ms: Option<i64>,
    /// Only entries with a greater id (a live tail's position).
    pub after: Option<u64>,
    /// Only entries with a smaller id (the next page back, for an export of everything).
    pub before: Option<u64>,
    /// At most this many, the newest first (capped at [`MAX_LIMIT`]).
    pub limit: Option<usize>,
    /// With `after`: when nothing matches yet, wait up to this many milliseconds (capped at
    /// [`MAX_WAIT_MS`]) for a call that does — a live tail's long poll, so a call shows as
    /// soon as it is recorded instead of at the next tick of a timer.
    pub wait_ms: Option<u64>,
}

/// The query parameters of the text filters, in the order the page shows them.
const TEXT_KEYS: [&str; 9] =
    ["user", "installation", "plugin", "version", "verb", "resource", "namespace", "name", "decision"];

impl AuditFilter {
    fn text(&self, key: &str) -> Option<&String> {
        match key {
            "user" => self.user.as_ref(),
            "installation" => self.installation.as_ref(),
            "plugin" => self.plugin.as_ref(),
            "version" => self.version.as_ref(),
            "verb" => self.verb.as_ref(),
            "resource" => self.resource.as_ref(),
            "namespace" => self.namespace.as_ref(),
            "name" => self.name.as_ref(),
            "decision" => self.decision.as_ref(),
            _ => None,
        }
    }

    fn text_mut(&mut self, key: &str) -> Option<&mut Option<String>> {
        Some(match key {
            "user" => &mut self.user,
            "installation" => &mut self.installation,
            "plugin" => &mut self.plugin,
            "version" => &mut self.version,
            "verb" => &mut self.verb,
            "resource" => &mut self.resource,
            "namespace" => &mut self.namespace,
            "name" => &mut self.name,
            "decision" => &mut self.decision,
            _ => return None,
        })
    }

    /// Reads `?user=…&verb=…&status=403&since=<unix ms>&until=…&after=<id>&limit=…`. Empty
    /// values mean "any"; numbers that do not parse are an error naming the parameter.
    pub fn from_query(query: &Query) -> Result<AuditFilter, AuditFilterError> {
        let mut filter = AuditFilter::default();
        for key in TEXT_KEYS {
            if let Some(value) = query.get(key).map(str::trim).filter(|v| !v.is_empty())
                && let Some(slot) = filter.text_mut(key)
            {
                *slot = Some(value.to_owned());
            }
        }
        if let Some(decision) = filter.decision.as_deref().filter(|d| !is_decision(d)) {
            return Err(AuditFilterError::Decision(decision.to_owned()));
        }
        filter.status = number(query, "status")?;
        filter.since_ms = number(query, "since")?;
        filter.until_ms = number(query, "until")?;
        filter.after = number(query, "after")?;
        filter.before = number(query, "before")?;
        filter.limit = number(query, "limit")?;
        filter.wait_ms = number(query, "wait")?;
        Ok(filter)
    }

    /// The query string (without `?`) that [`AuditFilter::from_query`] reads back as `self`.
    pub fn to_query(&self) -> String {
        let mut query = Query::default();
        for key in TEXT_KEYS {
            if let Some(value) = self.text(key) {
                query.set(key, value);
            }
        }
        let numbers = [
            ("status", self.status.map(|s| s.to_string())),
            ("since", self.since_ms.map(|s| s.to_string())),
            ("until", self.until_ms.map(|s| s.to_string())),
            ("after", self.after.map(|s| s.to_string())),
            ("before", self.before.map(|s| s.to_string())),
            ("limit", self.limit.map(|s| s.to_string())),
            ("wait", self.wait_ms.map(|s| s.to_string())),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                query.set(key, &value);
            }
        }
        query.canonical(true)
    }

    /// The limit to apply: the filter's, capped, or the default.
    pub fn effective_limit(&self) -> usize {
        self.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
    }

    /// How long to wait for a first match: only a tail (`after`) waits, at most [`MAX_WAIT_MS`].
    pub fn effective_wait(&self) -> std::time::Duration {
        let ms = if self.after.is_some() { self.wait_ms.unwrap_or(0).min(MAX_WAIT_MS) } else { 0 };
        std::time::Duration::from_millis(ms)
    }

    /// Whether `entry` passes every filter given.
    pub fn matches(&self, entry: &AuditEntry) -> bool {
        let same = |filter: &Option<String>, value: &str| filter.as_deref().is_none_or(|f| f == value);
        same(&self.user, &entry.user)
            && same(&self.installation, &entry.installation_name)
            && same(&self.plugin, &entry.plugin_name)
            && same(&self.version, &entry.plugin_version)
            && same(&self.verb, &entry.verb)
            && self.resource.as_deref().is_none_or(|r| r == entry.resource || r == entry.resource_path())
            && same(&self.namespace, &entry.namespace)
            && same(&self.name, &entry.name)
            && self.decision.as_deref().is_none_or(|d| {
                d == entry.decision || entry.decision.split_once(':').is_some_and(|(kind, _)| kind == d)
            })
            && self.status.is_none_or(|s| s == entry.status)
            && self.since_ms.is_none_or(|t| entry.at_ms >= t)
            && self.until_ms.is_none_or(|t| entry.at_ms < t)
            && self.after.is_none_or(|a| entry.id > a)
            && self.before.is_none_or(|b| entry.id < b)
    }
}

fn number<T: std::str::FromStr>(query: &Query, key: &'static str) -> Result<Option<T>, AuditFilterError> {
    match query.get(key).map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(value) => value
            .parse()
            .map(Some)
            .map_err(|_| AuditFilterError::NotANumber { parameter: key, value: value.to_owned() }),
    }
}

/// A filter parameter the record could never match: a view that said "nothing matches" for a
/// typo would read as "nothing happened".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuditFilterError {
    #[error("the audit filter {parameter} must be a whole number, not {value:?}")]
    NotANumber { parameter: &'static str, value: String },
    #[error(
        "the audit filter decision must be allowed, denied or error, or denied:<check> or error:<check> for one check, not {0:?}"
    )]
    Decision(String),
}

/// Whether `value` is a decision an entry can have (see [`AuditEntry::decision`]): `allowed`,
/// or a refusal or failure, of any check or of one.
fn is_decision(value: &str) -> bool {
    match value.split_once(':') {
        None => matches!(value, "allowed" | "denied" | "error"),
        Some((kind, check)) => {
            matches!(kind, "denied" | "error")
                && !check.is_empty()
                && check.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        }
    }
}

/// What the gateway answers to an audit query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditPage {
    /// Newest first.
    pub items: Vec<AuditEntry>,
    /// Whether the caller sees everyone's calls on the cluster (else only their own).
    pub everyone: bool,
    /// The greatest id the gateway has recorded so far: where a live tail goes on from.
    pub last_id: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u64) -> AuditEntry {
        AuditEntry {
            id,
            time: "2026-12-04T10:00:00.000Z".into(),
            at_ms: 1_796_378_400_000 + id as i64,
            user: "alice".into(),
            cluster_id: "019b4000-2000-7000-8000-000000000001".into(),
            installation_id: "uid".into(),
            installation_name: "acme-corp--cert-manager".into(),
            plugin_name: "cert-manager".into(),
            plugin_version: "v1.17.2".into(),
            group: "".into(),
            resource: "secrets".into(),
            subresource: "".into(),
            name: "".into(),
            namespace: "default".into(),
            verb: "list".into(),
            decision: "denied:allowed-resources".into(),
            status: 403,
            latency_ms: 0.1,
        }
    }

    #[test]
    fn a_filter_round_trips_through_its_query() {
        let filter = AuditFilter {
            user: Some("bob".into()),
            resource: Some("cert-manager.io/certificates".into()),
            decision: Some("denied".into()),
            status: Some(403),
            since_ms: Some(1),
            after: Some(9),
            before: Some(90),
            limit: Some(50),
            ..AuditFilter::default()
        };
        let query = filter.to_query();
        assert_eq!(AuditFilter::from_query(&Query::parse(&query)).unwrap(), filter, "{query}");
        assert_eq!(AuditFilter::from_query(&Query::parse("user=&verb=%20")).unwrap(), AuditFilter::default());
    }

    #[test]
    fn bad_numbers_are_named() {
        let error = AuditFilter::from_query(&Query::parse("status=forbidden")).unwrap_err();
        assert_eq!(error.to_string(), "the audit filter status must be a whole number, not \"forbidden\"");
    }

    #[test]
    fn only_decisions_an_entry_can_have_are_filtered_by() {
        for good in ["allowed", "denied", "error", "denied:allowed-resources", "error:can-view", " denied "] {
            let query = format!("decision={good}");
            let filter = AuditFilter::from_query(&Query::parse(&query)).expect(good);
            assert_eq!(filter.decision.as_deref(), Some(good.trim()));
        }
        for bad in ["zzz", "Allowed", "allowed:x", "denied:", "refused", "denied:Path", "error:a b"] {
            let query = format!("decision={}", bad.replace(' ', "%20"));
            assert_eq!(
                AuditFilter::from_query(&Query::parse(&query)),
                Err(AuditFilterError::Decision(bad.to_owned())),
                "{bad}"
            );
        }
        assert!(
            AuditFilter::from_query(&Query::parse("decision=zzz"))
                .unwrap_err()
                .to_string()
                .contains("not \"zzz\""),
            "the message names what was given"
        );
    }

    #[test]
    fn decisions_match_exactly_or_by_kind_and_resources_with_or_without_group() {
        let e = entry(3);
        let with = |f: AuditFilter| f.matches(&e);
        assert!(with(AuditFilter { decision: Some("denied".into()), ..Default::default() }));
        assert!(with(AuditFilter {
            decision: Some("denied:allowed-resources".into()),
            ..Default::default()
        }));
        assert!(!with(AuditFilter { decision: Some("allowed".into()), ..Default::default() }));
        assert!(!with(AuditFilter { decision: Some("denied:invalid-token".into()), ..Default::default() }));
        assert!(with(AuditFilter { resource: Some("secrets".into()), ..Default::default() }));
        assert!(!with(AuditFilter { resource: Some("certificates".into()), ..Default::default() }));
        assert!(with(AuditFilter { after: Some(2), ..Default::default() }));
        assert!(!with(AuditFilter { after: Some(3), ..Default::default() }));
        assert!(!with(AuditFilter { until_ms: Some(e.at_ms), ..Default::default() }));
        assert!(with(AuditFilter { since_ms: Some(e.at_ms), ..Default::default() }));
        assert_eq!(e.refused_by(), Some("allowed-resources"));
    }
}
