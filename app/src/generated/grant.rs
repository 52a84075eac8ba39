//! Display rules for the Grant of the Camunda plugins (seed 003, "Grant"), and
//! for the condition reasons that grants and their requests report.
//!
//! The generated views know a kind only through its CRD. The CRD of Grant does
//! not describe its labels, what a reason means, or what a refused write asks
//! the user to do; the seed does. This module carries that knowledge as plain
//! data, so the list, detail and edit views (server and browser alike) can show
//! it without a page of their own for Grants.

use std::fmt;

/// The API group of Grant. Grants are served as `v1alpha1`; the version is left
/// out on purpose, so an alpha-to-beta move does not hide these rules.
pub const GRANT_GROUP: &str = "plugins.camunda.io";
/// The kind of a Grant.
pub const GRANT_KIND: &str = "Grant";

/// The label that the admission policy checks: only a requester with `serve` on
/// the registration it names may write the grant.
pub const LABEL_REGISTRATION: &str = "plugins.camunda.io/registration";
/// The label that ties a grant to the PluginRequest it was written for.
pub const LABEL_REQUEST: &str = "plugins.camunda.io/request";
/// The label that names the cluster whose identity gets the permission; the
/// seed's way to list the permissions of one cluster.
pub const LABEL_CLUSTER: &str = "plugins.camunda.io/cluster";

/// The labels every grant carries, in the seed's order, with the seed's
/// description. The CRD has no schema for labels, so without this the list
/// could not offer them as columns or filters.
pub const GRANT_LABELS: [(&str, &str); 3] = [
    (LABEL_REGISTRATION, "The name of the registration that holds the template."),
    (LABEL_REQUEST, "The name of the request that the grant belongs to."),
    (LABEL_CLUSTER, "The name of the CamundaCluster whose identity gets the permission."),
];

/// Whether a resource is a Grant, so a view can switch on these rules.
///
/// `group` may also be a full apiVersion (`plugins.camunda.io/v1alpha1`):
/// callers often hold that instead of the bare group, and the rules do not
/// depend on the version. Kinds are case-sensitive in Kubernetes, so `kind`
/// must be exactly `Grant`.
pub fn is_grant(group: &str, kind: &str) -> bool {
    let group = match group.split_once('/') {
        Some((group, version)) if !version.is_empty() && !version.contains('/') => group,
        Some(_) => return false,
        None => group,
    };
    group == GRANT_GROUP && kind == GRANT_KIND
}

/// What a condition reason means and what the user should do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReasonAdvice {
    pub condition_type: &'static str,
    pub reason: &'static str,
    pub meaning: &'static str,
    pub what_to_do: &'static str,
}

/// The Status table of the seed, row by row and word for word, followed by the
/// two reasons that grants cause on the Ready condition of their PluginRequest.
///
/// The seed gives those two only as prose, not as table rows: their `meaning`
/// is the seed's sentence, their `what_to_do` is derived from it (the seed's
/// own answer is "the row of the grant's reason", which the console can only
/// point to). The Ready row "the reason of the first False condition" is not
/// here as such: [`advice`] resolves it to the row of that reason.
pub static REASONS: [ReasonAdvice; 9] = [
    ReasonAdvice {
        condition_type: "Applied",
        reason: "Healthy",
        meaning: "The identity extension applied the fragment.",
        what_to_do: "Nothing.",
    },
    ReasonAdvice {
        condition_type: "Applied",
        reason: "OverCeiling",
        meaning: "The fragment asks for more than the ceiling of the identity extension allows.",
        what_to_do: "Ask the admin of the identity extension to raise the ceiling, or change the parameters of the request.",
    },
    ReasonAdvice {
        condition_type: "Applied",
        reason: "OverSizeLimit",
        meaning: "The fragment takes the policy of the identity over the size limit of the cloud.",
        what_to_do: "Select fewer options that ask for permissions for this cluster.",
    },
    ReasonAdvice {
        condition_type: "Applied",
        reason: "Rejected",
        meaning: "The identity extension or the cloud refused the fragment for another reason. The message says why.",
        what_to_do: "Read the message.",
    },
    ReasonAdvice {
        condition_type: "MatchesTemplate",
        reason: "Healthy",
        meaning: "The fragment matches its template in the registration.",
        what_to_do: "Nothing.",
    },
    ReasonAdvice {
        condition_type: "MatchesTemplate",
        reason: "TemplateChanged",
        meaning: "The fragment no longer matches its template in the registration.",
        what_to_do: "Wait for the plugin to write the grant again from the new template.",
    },
    ReasonAdvice {
        condition_type: "Ready",
        reason: "Healthy",
        meaning: "Applied and MatchesTemplate are both True.",
        what_to_do: "Nothing.",
    },
    // The PluginRequest's Ready condition, not the grant's: a grant never
    // reports these two.
    ReasonAdvice {
        condition_type: "Ready",
        reason: "GrantRejected",
        meaning: "A grant with Ready=False makes the Ready condition of its request False with reason GrantRejected. The outputs of the request stay usable.",
        what_to_do: "Open the grants of the request that have Ready=False: the reason of each says what to do.",
    },
    ReasonAdvice {
        condition_type: "Ready",
        reason: "WaitingForGrants",
        meaning: "When no grant of a request has Ready=False, a grant without Ready=True makes the Ready condition of the request False with reason WaitingForGrants. The outputs of the request stay usable.",
        what_to_do: "Wait for the identity extension to write the status of the grant.",
    },
];

/// The conditions that a grant's Ready condition summarises, in the order in
/// which Ready takes "the first False condition".
const READY_SOURCES: [&str; 2] = ["Applied", "MatchesTemplate"];

/// The advice for a condition of a Grant or of its PluginRequest, or `None`
/// for a reason the seed does not describe (a view then shows only the
/// condition's own message rather than guessing).
///
/// Types and reasons match exactly, as Kubernetes compares them.
///
/// A grant's Ready=False carries the reason of its first False condition, and
/// the seed answers it with "See the row of that reason". So when
/// `condition_type` is `Ready` and the reason has no Ready row of its own,
/// the Applied row, then the MatchesTemplate row of that reason is returned.
/// The returned `condition_type` then names the condition that the reason
/// really belongs to (`advice("Ready", "OverCeiling")` answers with the
/// `Applied` row), which lets a view say where the problem is. `Healthy` on
/// Ready keeps its own row, so it never resolves to a narrower one.
pub fn advice(condition_type: &str, reason: &str) -> Option<&'static ReasonAdvice> {
    let row = |ty: &str| REASONS.iter().find(|a| a.condition_type == ty && a.reason == reason);
    row(condition_type).or_else(|| {
        if condition_type == "Ready" { READY_SOURCES.iter().find_map(|ty| row(ty)) } else { None }
    })
}

/// Why a label selector could not be built. Every variant names the offending
/// key (and value), because the user has to find it among several filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelSelectorError {
    /// A filter without a key: `=v` would not parse on the API server.
    EmptyKey,
    /// The part before `/` is not a DNS subdomain.
    InvalidKeyPrefix { key: String, reason: &'static str },
    /// The part after `/` (or the whole key) is not a valid label name.
    InvalidKeyName { key: String, reason: &'static str },
    /// The value is not a valid label value.
    InvalidValue { key: String, value: String, reason: &'static str },
    /// The same key twice: equal values are redundant, different values match
    /// nothing, and neither is what a user means.
    DuplicateKey { key: String },
}

impl fmt::Display for LabelSelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyKey => f.write_str("a label key must not be empty"),
            Self::InvalidKeyPrefix { key, reason } => {
                write!(f, "label key {key:?}: the prefix (before '/') {reason}")
            }
            Self::InvalidKeyName { key, reason } => {
                write!(f, "label key {key:?}: the name part {reason}")
            }
            Self::InvalidValue { key, value, reason } => {
                write!(f, "value {value:?} of label {key:?}: a label value {reason}")
            }
            Self::DuplicateKey { key } => write!(f, "label key {key:?} is given more than once"),
        }
    }
}

impl std::error::Error for LabelSelectorError {}

const NAME_TOO_LONG: &str = "must be no more than 63 characters";
const NAME_CHARS: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const NAME_EMPTY: &str = "must not be empty";
const PREFIX_INVALID: &str =
    "must be a lowercase DNS subdomain of at most 253 characters, such as example.com";

/// Builds the equality selector (`k=v,k2=v2`) for a list filter.
///
/// The user types these labels, and a comma or `=` in a value would silently
/// change what the selector means rather than fail, so every key and value is
/// checked against the Kubernetes rules first and nothing is escaped or
/// trimmed. An empty list gives the empty selector, which selects everything.
pub fn label_selector_for(labels: &[(String, String)]) -> Result<String, LabelSelectorError> {
    let mut parts = Vec::with_capacity(labels.len());
    for (i, (key, value)) in labels.iter().enumerate() {
        check_key(key)?;
        if let Some(reason) = value_problem(value) {
            return Err(LabelSelectorError::InvalidValue { key: key.clone(), value: value.clone(), reason });
        }
        if labels[..i].iter().any(|(k, _)| k == key) {
            return Err(LabelSelectorError::DuplicateKey { key: key.clone() });
        }
        parts.push(format!("{key}={value}"));
    }
    Ok(parts.join(","))
}

fn check_key(key: &str) -> Result<(), LabelSelectorError> {
    if key.is_empty() {
        return Err(LabelSelectorError::EmptyKey);
    }
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if prefix.is_some_and(|p| !is_dns_subdomain(p)) {
        return Err(LabelSelectorError::InvalidKeyPrefix { key: key.to_owned(), reason: PREFIX_INVALID });
    }
    if let Some(reason) = name_problem(name) {
        return Err(LabelSelectorError::InvalidKeyName { key: key.to_owned(), reason });
    }
    Ok(())
}

/// A label name: 1–63 of `[A-Za-z0-9_.-]`, alphanumeric at both ends.
fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some(NAME_EMPTY);
    }
    if name.len() > 63 {
        return Some(NAME_TOO_LONG);
    }
    let inner_ok = name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let ends_ok =
        name.as_bytes()[0].is_ascii_alphanumeric() && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    (!(inner_ok && ends_ok)).then_some(NAME_CHARS)
}

/// A label value is a label name that may also be empty.
fn value_problem(value: &str) -> Option<&'static str> {
    if value.is_empty() { None } else { name_problem(value) }
}

/// RFC 1123 subdomain as Kubernetes checks it: at most 253 characters of
/// dot-separated `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// One refusal of the seed: the fixed pieces of its message in order (the
/// names the API server puts between them are skipped), and what to do.
struct AdmissionRule {
    pieces: &'static [&'static str],
    hint: &'static str,
}

/// The refusals that the seed describes for Grants: the author policy's table,
/// then the CEL rules of the CRD. Pieces are lowercase; messages are compared
/// in lowercase with whitespace collapsed, so kubectl's wrapping and case do
/// not matter. The immutability pieces include "the grant" so the same rule of
/// PluginRequest ("delete the request ...") does not match.
const ADMISSION_RULES: [AdmissionRule; 8] = [
    AdmissionRule {
        pieces: &["must carry the label plugins.camunda.io/registration"],
        hint: "Set the label to the name of the registration that holds the template.",
    },
    AdmissionRule {
        pieces: &[
            "the requester ",
            " does not have the verb serve on the pluginregistration ",
            ", so it cannot write a grant for it",
        ],
        hint: "Give the ServiceAccount of the controller serve on that registration, as in the role above. Or correct the label.",
    },
    AdmissionRule {
        pieces: &[
            "the requester ",
            " does not have the verb serve on the pluginregistration ",
            ", so it cannot change a grant of it",
        ],
        hint: "Change the label only as a requester with serve on both registrations. Or create a new grant for the new registration.",
    },
    AdmissionRule {
        pieces: &["spec.format: unsupported value: ", "supported values: "],
        hint: "Set spec.format: aws-iam-statement.",
    },
    AdmissionRule {
        pieces: &["cluster is immutable: delete the grant and create a new one"],
        hint: "Delete the grant and create a new one.",
    },
    AdmissionRule {
        pieces: &["template is immutable: delete the grant and create a new one"],
        hint: "Delete the grant and create a new one.",
    },
    AdmissionRule {
        pieces: &["format is immutable: delete the grant and create a new one"],
        hint: "Delete the grant and create a new one.",
    },
    AdmissionRule {
        pieces: &["metadata.name must be at most 63 characters, because it is used as a label value"],
        hint: "Choose a name of at most 63 characters: the name is used as a label value.",
    },
];

/// What to do about an API server refusal of a Grant write, or `None` if the
/// message is not one the seed describes.
///
/// The API server wraps the seed's sentence in its own text (the policy name,
/// which depends on the Helm release, and the grant's name), and puts the
/// requester and registration in the middle, so only the fixed pieces are
/// matched. A message may list several refusals; the hint of the first one in
/// the message is returned, as that is the one the user reads first.
///
/// The hints are the seed's "What to do", word for word. "As in the role
/// above" refers to the seed's example ClusterRole; the immutability and name
/// rules have no such column in the seed, so their hints restate the action
/// that the message itself names.
pub fn admission_hint(message: &str) -> Option<&'static str> {
    let normalized = normalize(message);
    ADMISSION_RULES
        .iter()
        .filter_map(|rule| find_pieces(&normalized, rule.pieces).map(|at| (at, rule.hint)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, hint)| hint)
}

/// Lowercase (ASCII only, so byte offsets stay meaningful) with every run of
/// whitespace turned into one space.
fn normalize(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for word in message.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().map(|c| c.to_ascii_lowercase()));
    }
    out
}

/// Where the pieces occur in order, each between one occurrence of the first
/// piece and the next. Bounding the search keeps two refusals in one message
/// from being stitched together into a third.
fn find_pieces(text: &str, pieces: &[&str]) -> Option<usize> {
    let (first, rest) = pieces.split_first()?;
    let starts: Vec<usize> = text.match_indices(first).map(|(at, _)| at).collect();
    starts.iter().enumerate().find_map(|(i, &start)| {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let mut cursor = start + first.len();
        for piece in rest {
            let found = text.get(cursor..end)?.find(piece)?;
            cursor += found + piece.len();
        }
        Some(start)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn labels_are_the_seeds_in_order() {
        let keys: Vec<&str> = GRANT_LABELS.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            ["plugins.camunda.io/registration", "plugins.camunda.io/request", "plugins.camunda.io/cluster"]
        );
        assert_eq!(GRANT_LABELS[0].1, "The name of the registration that holds the template.");
        assert_eq!(GRANT_LABELS[1].1, "The name of the request that the grant belongs to.");
        assert_eq!(GRANT_LABELS[2].1, "The name of the CamundaCluster whose identity gets the permission.");
        for (key, _) in GRANT_LABELS {
            assert_eq!(label_selector_for(&pairs(&[(key, "orders")])), Ok(format!("{key}=orders")));
        }
    }

    #[test]
    fn recognises_grants() {
        assert!(is_grant("plugins.camunda.io", "Grant"));
        assert!(is_grant("plugins.camunda.io/v1alpha1", "Grant"));
        assert!(is_grant("plugins.camunda.io/v1", "Grant"));
        assert!(!is_grant("plugins.camunda.io", "grant"));
        assert!(!is_grant("plugins.camunda.io", "PluginRequest"));
        assert!(!is_grant("camunda.io", "Grant"));
        assert!(!is_grant("", "Grant"));
        assert!(!is_grant("plugins.camunda.io/", "Grant"));
        assert!(!is_grant("plugins.camunda.io/v1/x", "Grant"));
    }

    /// The seed's Status table and request prose, as (type, reason, meaning, what to do).
    const SEED_ROWS: [(&str, &str, &str, &str); 7] = [
        ("Applied", "Healthy", "The identity extension applied the fragment.", "Nothing."),
        (
            "Applied",
            "OverCeiling",
            "The fragment asks for more than the ceiling of the identity extension allows.",
            "Ask the admin of the identity extension to raise the ceiling, or change the parameters of the request.",
        ),
        (
            "Applied",
            "OverSizeLimit",
            "The fragment takes the policy of the identity over the size limit of the cloud.",
            "Select fewer options that ask for permissions for this cluster.",
        ),
        (
            "Applied",
            "Rejected",
            "The identity extension or the cloud refused the fragment for another reason. The message says why.",
            "Read the message.",
        ),
        ("MatchesTemplate", "Healthy", "The fragment matches its template in the registration.", "Nothing."),
        (
            "MatchesTemplate",
            "TemplateChanged",
            "The fragment no longer matches its template in the registration.",
            "Wait for the plugin to write the grant again from the new template.",
        ),
        ("Ready", "Healthy", "Applied and MatchesTemplate are both True.", "Nothing."),
    ];

    #[test]
    fn every_row_of_the_seed_table_resolves_word_for_word() {
        for (ty, reason, meaning, what_to_do) in SEED_ROWS {
            let a = advice(ty, reason).unwrap_or_else(|| panic!("{ty}/{reason}"));
            assert_eq!(
                (a.condition_type, a.reason, a.meaning, a.what_to_do),
                (ty, reason, meaning, what_to_do)
            );
        }
    }

    #[test]
    fn ready_false_resolves_to_the_row_of_its_reason() {
        for (reason, source) in [
            ("OverCeiling", "Applied"),
            ("OverSizeLimit", "Applied"),
            ("Rejected", "Applied"),
            ("TemplateChanged", "MatchesTemplate"),
        ] {
            let a = advice("Ready", reason).unwrap_or_else(|| panic!("Ready/{reason}"));
            assert_eq!((a.condition_type, a.reason), (source, reason));
            assert!(std::ptr::eq(a, advice(source, reason).unwrap()));
        }
        // Ready=True keeps its own row.
        assert_eq!(advice("Ready", "Healthy").unwrap().meaning, "Applied and MatchesTemplate are both True.");
    }

    #[test]
    fn request_reasons_belong_to_the_requests_ready_condition() {
        let rejected = advice("Ready", "GrantRejected").unwrap();
        assert_eq!(rejected.condition_type, "Ready");
        assert!(rejected.meaning.starts_with(
            "A grant with Ready=False makes the Ready condition of its request False with reason GrantRejected."
        ));
        let waiting = advice("Ready", "WaitingForGrants").unwrap();
        assert_eq!(waiting.condition_type, "Ready");
        assert!(waiting.meaning.starts_with(
            "When no grant of a request has Ready=False, a grant without Ready=True makes the Ready condition of the request False with reason WaitingForGrants."
        ));
        for a in [rejected, waiting] {
            assert!(a.meaning.ends_with("The outputs of the request stay usable."));
            assert!(!a.what_to_do.is_empty());
        }
        // Not reasons of a grant's own conditions.
        assert_eq!(advice("Applied", "GrantRejected"), None);
        assert_eq!(advice("MatchesTemplate", "WaitingForGrants"), None);
    }

    #[test]
    fn unknown_reasons_and_mismatched_types_give_nothing() {
        assert_eq!(advice("Applied", "Exploded"), None);
        assert_eq!(advice("Ready", "Exploded"), None);
        assert_eq!(advice("Ready", ""), None);
        assert_eq!(advice("Applied", "TemplateChanged"), None);
        assert_eq!(advice("MatchesTemplate", "OverCeiling"), None);
        assert_eq!(advice("Synced", "Healthy"), None);
        assert_eq!(advice("Applied", "overceiling"), None);
        assert_eq!(advice("ready", "OverCeiling"), None);
    }

    #[test]
    fn table_has_one_row_per_type_and_reason() {
        for (i, a) in REASONS.iter().enumerate() {
            assert!(
                REASONS[..i].iter().all(|b| (b.condition_type, b.reason) != (a.condition_type, a.reason)),
                "{}/{}",
                a.condition_type,
                a.reason
            );
        }
    }

    /// Every (type, reason) that a fixture of the plugin carries has advice.
    #[test]
    fn every_reason_in_the_fixtures_resolves() {
        let fixtures = [
            include_str!("../../../plugins/camunda/fixtures/grants.yaml"),
            include_str!("../../../plugins/camunda/fixtures/pluginrequests.yaml"),
        ];
        let mut seen = 0;
        for text in fixtures {
            let mut ty = None;
            for line in text.lines().map(str::trim) {
                if let Some(t) = line.strip_prefix("- type: ") {
                    ty = Some(t.trim());
                } else if let (Some(r), Some(t)) = (line.strip_prefix("reason: "), ty) {
                    assert!(advice(t, r.trim()).is_some(), "{t}/{r}");
                    seen += 1;
                }
            }
        }
        assert!(seen >= 20, "{seen}");
    }

    #[test]
    fn builds_equality_selectors() {
        assert_eq!(label_selector_for(&[]), Ok(String::new()));
        assert_eq!(
            label_selector_for(&pairs(&[
                ("plugins.camunda.io/cluster", "orders"),
                ("plugins.camunda.io/request", "orders-backup-storage"),
            ])),
            Ok("plugins.camunda.io/cluster=orders,plugins.camunda.io/request=orders-backup-storage"
                .to_owned())
        );
        assert_eq!(label_selector_for(&pairs(&[("app", "")])), Ok("app=".to_owned()));
        assert_eq!(label_selector_for(&pairs(&[("A_b.c-D", "V_1.x-Y")])), Ok("A_b.c-D=V_1.x-Y".to_owned()));
        let max = "v".repeat(63);
        assert_eq!(label_selector_for(&pairs(&[("k", &max)])), Ok(format!("k={max}")));
        let long_prefix = format!("{}.io/k", "a".repeat(250));
        assert!(label_selector_for(&pairs(&[(&long_prefix, "v")])).is_ok());
    }

    #[test]
    fn refuses_hostile_labels() {
        let err = |k: &str, v: &str| label_selector_for(&pairs(&[(k, v)])).unwrap_err();

        assert_eq!(err("", "v"), LabelSelectorError::EmptyKey);
        // Commas and '=' would change the meaning of the selector.
        assert!(matches!(err("k", "a,b=c"), LabelSelectorError::InvalidValue { reason: NAME_CHARS, .. }));
        assert!(matches!(err("k", "a=b"), LabelSelectorError::InvalidValue { .. }));
        assert!(matches!(err("k", "orders,evil"), LabelSelectorError::InvalidValue { .. }));
        assert!(matches!(err("a,b", "v"), LabelSelectorError::InvalidKeyName { .. }));
        assert!(matches!(err("k=v", "v"), LabelSelectorError::InvalidKeyName { .. }));
        assert!(matches!(err("k!", "v"), LabelSelectorError::InvalidKeyName { .. }));
        assert!(matches!(err("k", "v "), LabelSelectorError::InvalidValue { .. }));
        assert!(matches!(err(" k", "v"), LabelSelectorError::InvalidKeyName { .. }));
        assert!(matches!(err("k", "-v"), LabelSelectorError::InvalidValue { .. }));
        assert!(matches!(err("k", "v."), LabelSelectorError::InvalidValue { .. }));
        assert!(matches!(err("k", "ü"), LabelSelectorError::InvalidValue { .. }));
        // Lengths.
        let v64 = "v".repeat(64);
        assert_eq!(
            err("k", &v64),
            LabelSelectorError::InvalidValue { key: "k".into(), value: v64.clone(), reason: NAME_TOO_LONG }
        );
        assert!(matches!(err(&v64, "v"), LabelSelectorError::InvalidKeyName { reason: NAME_TOO_LONG, .. }));
        let long_prefix = format!("{}.io/k", "a".repeat(251));
        assert!(matches!(err(&long_prefix, "v"), LabelSelectorError::InvalidKeyPrefix { .. }));
        // Prefixes.
        assert!(matches!(err("/k", "v"), LabelSelectorError::InvalidKeyPrefix { .. }));
        assert!(matches!(err("Example.com/k", "v"), LabelSelectorError::InvalidKeyPrefix { .. }));
        assert!(matches!(err("example..com/k", "v"), LabelSelectorError::InvalidKeyPrefix { .. }));
        assert!(matches!(err("-example.com/k", "v"), LabelSelectorError::InvalidKeyPrefix { .. }));
        assert!(matches!(
            err("example.com/", "v"),
            LabelSelectorError::InvalidKeyName { reason: NAME_EMPTY, .. }
        ));
        assert!(matches!(err("a/b/c", "v"), LabelSelectorError::InvalidKeyName { .. }));
        // Duplicates.
        assert_eq!(
            label_selector_for(&pairs(&[("k", "a"), ("j", "b"), ("k", "c")])),
            Err(LabelSelectorError::DuplicateKey { key: "k".into() })
        );
        // An error after a good pair still refuses the whole selector.
        assert!(label_selector_for(&pairs(&[("k", "v"), ("", "v")])).is_err());
    }

    #[test]
    fn selector_errors_read_clearly() {
        assert_eq!(LabelSelectorError::EmptyKey.to_string(), "a label key must not be empty");
        let e = label_selector_for(&pairs(&[("plugins.camunda.io/cluster", "a,b")])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "value \"a,b\" of label \"plugins.camunda.io/cluster\": a label value must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        );
        let e = label_selector_for(&pairs(&[("k", &"x".repeat(64))])).unwrap_err();
        assert!(e.to_string().ends_with("must be no more than 63 characters"), "{e}");
        let e = label_selector_for(&pairs(&[("Bad.io/k", "v")])).unwrap_err();
        assert!(e.to_string().contains("DNS subdomain"), "{e}");
        assert_eq!(
            LabelSelectorError::DuplicateKey { key: "k".into() }.to_string(),
            "label key \"k\" is given more than once"
        );
    }

    const PREFIX: &str = "Error from server (Forbidden): error when creating \"grant.yaml\": grants.plugins.camunda.io \"orders-backup-storage-bucket-access\" is forbidden: ValidatingAdmissionPolicy 'camunda-operator-plugins.camunda.io-grant-author' with binding 'camunda-operator-plugins.camunda.io-grant-author-binding' denied request: ";

    #[test]
    fn policy_refusals_map_to_the_seeds_hints() {
        let cases = [
            (
                "a Grant must carry the label plugins.camunda.io/registration with the name of the PluginRegistration that it belongs to",
                "Set the label to the name of the registration that holds the template.",
            ),
            (
                "the requester system:serviceaccount:camunda-plugins:stranger does not have the verb serve on the PluginRegistration s3-backup-bucket, so it cannot write a Grant for it",
                "Give the ServiceAccount of the controller serve on that registration, as in the role above. Or correct the label.",
            ),
            (
                "the requester alice@example.com does not have the verb serve on the PluginRegistration secrets-manager, so it cannot change a Grant of it",
                "Change the label only as a requester with serve on both registrations. Or create a new grant for the new registration.",
            ),
            (
                "spec.format: Unsupported value: \"gcp-iam-binding\": supported values: \"aws-iam-statement\"",
                "Set spec.format: aws-iam-statement.",
            ),
        ];
        for (message, hint) in cases {
            assert_eq!(admission_hint(message), Some(hint), "{message}");
            assert_eq!(admission_hint(&format!("{PREFIX}{message}")), Some(hint), "{message}");
        }
    }

    #[test]
    fn crd_rules_map_to_hints() {
        let delete = Some("Delete the grant and create a new one.");
        for field in ["cluster", "template", "format"] {
            let message = format!(
                "Grant.plugins.camunda.io \"orders-backup-storage-bucket-access\" is invalid: spec.{field}: Invalid value: \"object\": {field} is immutable: delete the grant and create a new one"
            );
            assert_eq!(admission_hint(&message), delete, "{message}");
        }
        let name = format!(
            "The Grant \"{}\" is invalid: metadata.name: Invalid value: \"object\": metadata.name must be at most 63 characters, because it is used as a label value",
            "g".repeat(64)
        );
        assert_eq!(
            admission_hint(&name),
            Some("Choose a name of at most 63 characters: the name is used as a label value.")
        );
    }

    #[test]
    fn matching_tolerates_wrapping_and_case() {
        let wrapped = "denied request: the requester\n  system:serviceaccount:camunda-plugins:stranger does not have\tthe verb serve on the pluginregistration s3-backup-bucket, so it cannot WRITE a Grant for it";
        assert_eq!(
            admission_hint(wrapped),
            Some(
                "Give the ServiceAccount of the controller serve on that registration, as in the role above. Or correct the label."
            )
        );
    }

    #[test]
    fn several_refusals_give_the_first_and_are_not_stitched() {
        // Two CEL errors in one message: the first one's hint.
        let both = "Grant.plugins.camunda.io \"g\" is invalid: [metadata.name: Invalid value: \"object\": metadata.name must be at most 63 characters, because it is used as a label value, spec.cluster: Invalid value: \"object\": cluster is immutable: delete the grant and create a new one]";
        assert_eq!(
            admission_hint(both),
            Some("Choose a name of at most 63 characters: the name is used as a label value.")
        );
        // A "change" refusal followed by a "write" refusal: the change hint, and the
        // write sentence's tail must not complete the first sentence.
        let two = "the requester bob does not have the verb serve on the PluginRegistration a, so it cannot change a Grant of it; the requester bob does not have the verb serve on the PluginRegistration b, so it cannot write a Grant for it";
        assert_eq!(
            admission_hint(two),
            Some(
                "Change the label only as a requester with serve on both registrations. Or create a new grant for the new registration."
            )
        );
        // A truncated sentence does not borrow the tail of a later one.
        let cut = "the requester bob does not have the verb; the requester carol lacks something, so it cannot write a Grant for it";
        assert_eq!(admission_hint(cut), None);
    }

    #[test]
    fn other_messages_give_nothing() {
        for message in [
            "",
            "grants.plugins.camunda.io \"x\" not found",
            "Operation cannot be fulfilled on grants.plugins.camunda.io \"x\": the object has been modified; please apply your changes to the latest version and try again",
            // The PluginRequest's own immutability rule has another remedy.
            "PluginRequest.plugins.camunda.io \"orders-backup-storage\" is invalid: spec.cluster: Invalid value: \"object\": cluster is immutable: delete the request and create a new one",
            "spec.format: Required value",
            "the requester bob does not have the verb get on the PluginRegistration s3-backup-bucket",
        ] {
            assert_eq!(admission_hint(message), None, "{message}");
        }
    }
}
