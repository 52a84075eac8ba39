//! Field selectors: `metadata.name=web,metadata.namespace!=kube-system`.
//! Only `=`, `==` and `!=`; `\,`, `\=` and `\\` escape in values, as the API
//! server reads them. Which fields can be selected is the server's choice,
//! checked with [`FieldSelector::check_supported`].

/// One field condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// `true` for `=`/`==`, `false` for `!=`.
    pub equals: bool,
    /// The (unescaped) value.
    pub value: String,
}

/// A parsed field selector; requirements are ANDed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

/// Why a field selector is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldSelectorError {
    /// A requirement has no operator or no field.
    #[error("invalid selector: {0:?}; can't understand {1:?}")]
    Syntax(String, String),
    /// A field the server cannot select on.
    #[error("field label not supported: {0}")]
    Unsupported(String),
}

impl FieldSelector {
    /// Parses a selector.
    pub fn parse(text: &str) -> Result<Self, FieldSelectorError> {
        let mut requirements = Vec::new();
        if text.trim().is_empty() {
            return Ok(Self { requirements });
        }
        for part in split_unescaped(text, ',') {
            let syntax = || FieldSelectorError::Syntax(text.to_owned(), part.clone());
            let (field, equals, raw) = if let Some(i) = find_unescaped(&part, "!=") {
                (&part[..i], false, &part[i + 2..])
            } else if let Some(i) = find_unescaped(&part, "==") {
                (&part[..i], true, &part[i + 2..])
            } else if let Some(i) = find_unescaped(&part, "=") {
                (&part[..i], true, &part[i + 1..])
            } else {
                return Err(syntax());
            };
            let field = field.trim();
            if field.is_empty() || field.contains(char::is_whitespace) {
                return Err(syntax());
            }
            requirements.push(FieldRequirement { field: field.to_owned(), equals, value: unescape(raw) });
        }
        Ok(Self { requirements })
    }

    /// The requirements, in the order given.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Refuses fields outside `supported`.
    pub fn check_supported(&self, supported: &[&str]) -> Result<(), FieldSelectorError> {
        match self.requirements.iter().find(|r| !supported.contains(&r.field.as_str())) {
            Some(r) => Err(FieldSelectorError::Unsupported(r.field.clone())),
            None => Ok(()),
        }
    }

    /// Whether an object matches; `field` gives an object's value for a field
    /// path (`None` reads as the empty string, as the API server does).
    pub fn matches(&self, field: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|r| (field(&r.field).unwrap_or_default() == r.value) == r.equals)
    }
}

/// Splits on `sep` where it is not preceded by a backslash escape.
fn split_unescaped(text: &str, sep: char) -> Vec<String> {
    let (mut parts, mut current, mut escaped) = (Vec::new(), String::new(), false);
    for c in text.chars() {
        if escaped {
            current.push('\\');
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    if escaped {
        current.push('\\');
    }
    parts.push(current);
    parts
}

/// The byte index of the first `needle` not inside an escape. Walks by character: a byte
/// step would land inside a multi-byte character (`é=x` once panicked here).
fn find_unescaped(text: &str, needle: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            chars.next();
            continue;
        }
        if text[i..].starts_with(needle) {
            return Some(i);
        }
    }
    None
}

fn unescape(raw: &str) -> String {
    let (mut out, mut escaped) = (String::new(), false);
    for c in raw.chars() {
        if escaped || c != '\\' {
            out.push(c);
            escaped = false;
        } else {
            escaped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str, namespace: &str) -> impl Fn(&str) -> Option<String> {
        let (name, namespace) = (name.to_owned(), namespace.to_owned());
        move |field| match field {
            "metadata.name" => Some(name.clone()),
            "metadata.namespace" => Some(namespace.clone()),
            _ => None,
        }
    }

    #[test]
    fn equality_and_inequality() {
        let s = FieldSelector::parse("metadata.name=web,metadata.namespace!=kube-system").unwrap();
        assert!(s.matches(object("web", "default")));
        assert!(!s.matches(object("web", "kube-system")));
        assert!(!s.matches(object("db", "default")));
        assert!(FieldSelector::parse("metadata.name==web").unwrap().matches(object("web", "x")));
    }

    /// Found by tests/never_panics.rs: a byte-wise scan sliced inside a multi-byte character.
    #[test]
    fn non_ascii_text_is_parsed_not_a_panic() {
        let s = FieldSelector::parse("metadata.name=é,spec.nodeName!=ノード").unwrap();
        assert_eq!(s.requirements()[0].value, "é");
        assert_eq!(s.requirements()[1].value, "ノード");
        assert!(FieldSelector::parse("é=x").unwrap().matches(|_| Some("x".to_owned())));
        assert!(matches!(FieldSelector::parse("\\é"), Err(FieldSelectorError::Syntax(..))));
        assert!(matches!(FieldSelector::parse("ü"), Err(FieldSelectorError::Syntax(..))));
    }

    #[test]
    fn escapes_in_values() {
        let s = FieldSelector::parse(r"metadata.name=a\,b\=c\\d").unwrap();
        assert_eq!(s.requirements()[0].value, r"a,b=c\d");
        assert_eq!(s.requirements().len(), 1);
    }

    #[test]
    fn missing_fields_read_as_empty() {
        let s = FieldSelector::parse("involvedObject.name=").unwrap();
        assert!(s.matches(object("web", "x")));
    }

    #[test]
    fn empty_selector_matches() {
        assert!(FieldSelector::parse("").unwrap().matches(object("a", "b")));
    }

    #[test]
    fn errors() {
        assert_eq!(
            FieldSelector::parse("metadata.name").unwrap_err().to_string(),
            "invalid selector: \"metadata.name\"; can't understand \"metadata.name\""
        );
        assert!(FieldSelector::parse("=x").is_err());
        let s = FieldSelector::parse("spec.nodeName=n1").unwrap();
        assert_eq!(
            s.check_supported(&["metadata.name", "metadata.namespace"]).unwrap_err().to_string(),
            "field label not supported: spec.nodeName"
        );
    }
}
