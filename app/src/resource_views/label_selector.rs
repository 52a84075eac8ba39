//! Equality label selectors (`k=v,k2=v2`) built from what a user types into a
//! list filter, checked against the Kubernetes rules for label keys and values.

use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
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
}
