//! Label selectors: `app=web,tier!=db`, `env in (prod,staging)`, `!canary`,
//! `replicas>2`. Requirements are ANDed; an empty selector matches everything.

use std::{collections::BTreeMap, fmt};

/// How a requirement compares a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    /// `key` — the label is present.
    Exists,
    /// `!key` — the label is absent.
    DoesNotExist,
    /// `key=v` or `key==v`.
    Equals,
    /// `key!=v` (also true when the label is absent).
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)` (also true when the label is absent).
    NotIn,
    /// `key>n`: the label is an integer greater than n.
    GreaterThan,
    /// `key<n`: the label is an integer less than n.
    LessThan,
}

/// One condition of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The comparison.
    pub operator: Operator,
    /// The values compared with (none for `Exists`/`DoesNotExist`).
    pub values: Vec<String>,
}

/// A parsed label selector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// Why a label selector is invalid. Messages name the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelSelectorError {
    /// The text does not follow the grammar.
    #[error("unable to parse requirement: {0}")]
    Syntax(String),
    /// A key is not a valid label key.
    #[error("invalid label key {key:?}: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
    /// A value is not a valid label value.
    #[error("invalid label value {value:?}: {reason}")]
    InvalidValue {
        /// The value.
        value: String,
        /// Why.
        reason: String,
    },
}

impl LabelSelector {
    /// The requirements, in the order given.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether the selector has no requirement (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Parses a selector.
    pub fn parse(text: &str) -> Result<Self, LabelSelectorError> {
        let mut requirements = Vec::new();
        for part in split_top_level(text)? {
            let part = part.trim();
            if part.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(LabelSelectorError::Syntax(format!("empty requirement in {text:?}")));
            }
            requirements.push(parse_requirement(part)?);
        }
        Ok(Self { requirements })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl Requirement {
    /// Whether `labels` satisfy this requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Equals | Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotEquals | Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(Ok(actual)), Some(Ok(bound))) =
                    (value.map(|v| v.parse::<i64>()), self.values.first().map(|v| v.parse::<i64>()))
                else {
                    return false;
                };
                if self.operator == Operator::GreaterThan { actual > bound } else { actual < bound }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = &self.key;
        match self.operator {
            Operator::Exists => write!(f, "{key}"),
            Operator::DoesNotExist => write!(f, "!{key}"),
            Operator::Equals => write!(f, "{key}={}", self.values[0]),
            Operator::NotEquals => write!(f, "{key}!={}", self.values[0]),
            Operator::In => write!(f, "{key} in ({})", self.values.join(",")),
            Operator::NotIn => write!(f, "{key} notin ({})", self.values.join(",")),
            Operator::GreaterThan => write!(f, "{key}>{}", self.values[0]),
            Operator::LessThan => write!(f, "{key}<{}", self.values[0]),
        }
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

/// Splits on commas outside parentheses; unbalanced parentheses are errors.
fn split_top_level(text: &str) -> Result<Vec<&str>, LabelSelectorError> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| LabelSelectorError::Syntax(format!("unexpected ')' in {text:?}")))?;
            }
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(LabelSelectorError::Syntax(format!("missing ')' in {text:?}")));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_requirement(part: &str) -> Result<Requirement, LabelSelectorError> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement {
            key: checked_key(key.trim())?,
            operator: Operator::DoesNotExist,
            values: vec![],
        });
    }
    for (token, operator) in [("==", Operator::Equals), ("!=", Operator::NotEquals)] {
        if let Some((key, value)) = part.split_once(token) {
            return single(key, operator, value);
        }
    }
    for (token, operator) in
        [('=', Operator::Equals), ('>', Operator::GreaterThan), ('<', Operator::LessThan)]
    {
        if let Some((key, value)) = part.split_once(token) {
            return single(key, operator, value);
        }
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or_default();
    let rest = words.next().map(str::trim_start).unwrap_or_default();
    if rest.is_empty() {
        return Ok(Requirement { key: checked_key(key)?, operator: Operator::Exists, values: vec![] });
    }
    let (operator, list) = if let Some(list) = rest.strip_prefix("notin") {
        (Operator::NotIn, list)
    } else if let Some(list) = rest.strip_prefix("in") {
        (Operator::In, list)
    } else {
        return Err(LabelSelectorError::Syntax(format!(
            "{part:?}: expected one of =, ==, !=, in, notin, >, < after the key"
        )));
    };
    let list = list.trim();
    let inner = list.strip_prefix('(').and_then(|l| l.strip_suffix(')')).ok_or_else(|| {
        LabelSelectorError::Syntax(format!("{part:?}: expected a list of values in parentheses"))
    })?;
    let values = inner.split(',').map(|v| checked_value(v.trim())).collect::<Result<Vec<_>, _>>()?;
    if values.iter().all(String::is_empty) && values.len() == 1 {
        return Err(LabelSelectorError::Syntax(format!("{part:?}: the list of values is empty")));
    }
    Ok(Requirement { key: checked_key(key)?, operator, values })
}

fn single(key: &str, operator: Operator, value: &str) -> Result<Requirement, LabelSelectorError> {
    let value = value.trim();
    if matches!(operator, Operator::GreaterThan | Operator::LessThan) && value.parse::<i64>().is_err() {
        return Err(LabelSelectorError::InvalidValue {
            value: value.to_owned(),
            reason: "must be an integer for > and <".to_owned(),
        });
    }
    Ok(Requirement { key: checked_key(key.trim())?, operator, values: vec![checked_value(value)?] })
}

/// A name part: 1–63 characters, alphanumerics, '-', '_', '.', alphanumeric at both ends.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".to_owned());
    }
    if name.len() > 63 {
        return Some("must be no more than 63 characters".to_owned());
    }
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let ends_ok = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !name.chars().all(ok_char) || !ends_ok {
        return Some(
            "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
                .to_owned(),
        );
    }
    None
}

/// A DNS-1123 subdomain: lowercase alphanumerics, '-' and '.', at most 253 characters.
fn prefix_problem(prefix: &str) -> Option<String> {
    if prefix.is_empty() || prefix.len() > 253 {
        return Some("the prefix must be a DNS subdomain of 1 to 253 characters".to_owned());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    (!prefix.split('.').all(label_ok))
        .then(|| "the prefix must be a lowercase DNS subdomain (e.g. example.com)".to_owned())
}

fn checked_key(key: &str) -> Result<String, LabelSelectorError> {
    let invalid = |reason: String| LabelSelectorError::InvalidKey { key: key.to_owned(), reason };
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(reason) = prefix.and_then(prefix_problem) {
        return Err(invalid(reason));
    }
    if let Some(reason) = name_problem(name) {
        return Err(invalid(format!("the name part {reason}")));
    }
    Ok(key.to_owned())
}

fn checked_value(value: &str) -> Result<String, LabelSelectorError> {
    if value.is_empty() {
        return Ok(String::new());
    }
    match name_problem(value) {
        Some(reason) => Err(LabelSelectorError::InvalidValue { value: value.to_owned(), reason }),
        None => Ok(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn matches(selector: &str, pairs: &[(&str, &str)]) -> bool {
        LabelSelector::parse(selector).unwrap_or_else(|e| panic!("{selector}: {e}")).matches(&labels(pairs))
    }

    /// Which selectors match which labels.
    #[test]
    fn matching() {
        let web: &[(&str, &str)] = &[("app", "web"), ("tier", "frontend")];
        let prod: &[(&str, &str)] = &[("env", "prod"), ("plugins.camunda.io/cluster", "orders")];
        let three: &[(&str, &str)] = &[("replicas", "3")];
        let cases = [
            // Equality-based.
            ("app=web", web, true),
            ("app==web", web, true),
            ("app = web", web, true),
            ("app=db", web, false),
            ("app!=db", web, true),
            ("missing!=x", web, true), // != matches an absent label
            ("app=web,tier=frontend", web, true),
            ("app=web,tier=backend", web, false),
            // Set-based.
            ("env in (prod, staging)", prod, true),
            ("env in (dev)", prod, false),
            ("env notin (dev,qa)", prod, true),
            ("other notin (dev)", prod, true), // notin matches an absent label
            ("env", prod, true),
            ("!env", prod, false),
            ("!canary", prod, true),
            ("plugins.camunda.io/cluster=orders", prod, true),
            ("env in (prod),plugins.camunda.io/cluster", prod, true),
            // Numeric comparisons.
            ("replicas>2", three, true),
            ("replicas>3", three, false),
            ("replicas<4", three, true),
            ("missing>1", three, false),
            ("replicas>1", &[("replicas", "many")], false),
            // An empty value is allowed for equality.
            ("app=", &[("app", "")], true),
            ("app=", &[("app", "x")], false),
        ];
        for (selector, labels, expected) in cases {
            assert_eq!(matches(selector, labels), expected, "{selector} on {labels:?}");
        }
    }

    #[test]
    fn empty_selector_matches_everything() {
        let selector = LabelSelector::parse("").unwrap();
        assert!(selector.is_empty());
        assert!(selector.matches(&labels(&[])));
        assert!(LabelSelector::parse("  ").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_problem() {
        let err = |s: &str| LabelSelector::parse(s).unwrap_err().to_string();
        assert!(err("app=web,").starts_with("unable to parse requirement: empty requirement"));
        assert!(err("env in (prod").contains("missing ')'"));
        assert!(err("env in prod").contains("expected a list of values in parentheses"));
        assert!(err("env like prod").contains("expected one of =, ==, !=, in, notin, >, <"));
        assert!(err("-app=web").starts_with("invalid label key \"-app\""));
        assert!(err("Example.com/app=web").contains("the prefix must be a lowercase DNS subdomain"));
        assert!(err(&format!("{}=x", "k".repeat(64))).contains("no more than 63 characters"));
        assert!(err("app=we b").starts_with("invalid label value \"we b\""));
        assert!(err("replicas>three").contains("must be an integer"));
        assert!(err("env in ()").contains("the list of values is empty"));
    }

    #[test]
    fn display_round_trips() {
        for text in ["app=web", "app!=web", "env in (a,b)", "env notin (a)", "app", "!app", "n>1", "n<2"] {
            let selector = LabelSelector::parse(text).unwrap();
            assert_eq!(selector.to_string(), text);
            assert_eq!(LabelSelector::parse(&selector.to_string()).unwrap(), selector);
        }
    }
}
