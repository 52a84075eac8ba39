//! Name and label rules as the API server checks them (apimachinery's
//! `validation` package), with its messages word for word, so that every
//! crate — the embedded cluster, authn, the tokens, the plugin origins, the
//! organization API's lint and the console's forms — judges a name alike and
//! explains a refusal the way kubectl would print it.

pub const DNS1123_LABEL_MAX: usize = 63;
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
pub const LABEL_VALUE_MAX: usize = 63;
pub const QUALIFIED_NAME_MAX: usize = 63;

pub const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
pub const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
pub const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub const QUALIFIED_NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
pub const QUALIFIED_NAME_MSG: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
pub const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn max_len_msg(max: usize) -> String {
    format!("must be no more than {max} characters")
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` without the length rule.
fn label_shape(s: &str) -> bool {
    let lower_alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            lower_alnum(first) && lower_alnum(last) && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: a qualified name's name part and a
/// non-empty label value.
fn name_part_shape(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// A DNS-1123 label: a namespace, a Service, a user id in a ServiceAccount name.
pub fn is_dns1123_label(s: &str) -> bool {
    s.len() <= DNS1123_LABEL_MAX && label_shape(s)
}

/// A DNS-1123 subdomain: dot-separated labels, at most 253 characters (most object names).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= DNS1123_SUBDOMAIN_MAX && s.split('.').all(label_shape)
}

/// apimachinery's `IsDNS1123Label`: the reasons `s` is not a label (empty when it is one).
pub fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_msg(DNS1123_LABEL_MAX));
    }
    if !label_shape(s) {
        errs.push(DNS1123_LABEL_MSG.to_string());
    }
    errs
}

/// apimachinery's `IsDNS1035Label`: a CRD's version name and plural (the reasons `s` is not
/// one; empty when it is).
pub fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_msg(DNS1123_LABEL_MAX));
    }
    if !(label_shape(s) && s.as_bytes()[0].is_ascii_lowercase()) {
        errs.push(DNS1035_LABEL_MSG.to_string());
    }
    errs
}

/// apimachinery's `IsDNS1123Subdomain`.
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_msg(DNS1123_SUBDOMAIN_MAX));
    }
    if !s.split('.').all(label_shape) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

/// apimachinery's `IsQualifiedName`: label and annotation keys, `[prefix/]name`.
pub fn qualified_name_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(dns1123_subdomain_errors(prefix).into_iter().map(|e| format!("prefix part {e}")));
            }
            *name
        }
        _ => {
            errs.push(QUALIFIED_NAME_MSG.to_string());
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_msg(QUALIFIED_NAME_MAX)));
    }
    if !name_part_shape(name) {
        errs.push(QUALIFIED_NAME_PART_MSG.to_string());
    }
    errs
}

pub fn is_qualified_name(key: &str) -> bool {
    qualified_name_errors(key).is_empty()
}

/// apimachinery's `IsValidLabelValue`: empty, or at most 63 of `[-A-Za-z0-9_.]`,
/// alphanumeric at both ends.
pub fn label_value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > LABEL_VALUE_MAX {
        errs.push(max_len_msg(LABEL_VALUE_MAX));
    }
    if !v.is_empty() && !name_part_shape(v) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

pub fn is_label_value(v: &str) -> bool {
    label_value_errors(v).is_empty()
}

#[cfg(test)]
mod tests {

    #[test]
    fn dns1035_labels_start_with_a_letter() {
        assert!(dns1035_label_errors("v1beta1").is_empty());
        assert!(dns1035_label_errors("certificates").is_empty());
        for bad in ["1v", "v1/x", "V1", "v1-", "", &"a".repeat(64)] {
            assert!(!dns1035_label_errors(bad).is_empty(), "{bad:?}");
        }
        assert_eq!(dns1035_label_errors("v1?x"), [DNS1035_LABEL_MSG]);
    }

    use super::*;

    #[test]
    fn labels_and_subdomains() {
        for ok in ["a", "0", "my-name", "123-abc", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok), "{ok}");
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
        assert!(is_dns1123_subdomain("example.com"));
        for bad in ["", ".a", "a.", "a..b", "Example.com", &"a.".repeat(127)] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
        assert_eq!(
            dns1123_label_errors(&"A".repeat(64)),
            vec![max_len_msg(63), DNS1123_LABEL_MSG.to_string()]
        );
        assert_eq!(dns1123_subdomain_errors("a_b"), vec![DNS1123_SUBDOMAIN_MSG.to_string()]);
    }

    #[test]
    fn qualified_names() {
        for ok in ["app", "App.Name_1", "example.com/MyName", "plugins.camunda.io/registration"] {
            assert!(is_qualified_name(ok), "{ok}");
        }
        assert_eq!(qualified_name_errors("/x"), vec!["prefix part must be non-empty"]);
        assert_eq!(qualified_name_errors("a/b/c"), vec![QUALIFIED_NAME_MSG]);
        assert_eq!(qualified_name_errors("Ex.com/x"), vec![format!("prefix part {DNS1123_SUBDOMAIN_MSG}")]);
        assert_eq!(
            qualified_name_errors("x/"),
            vec!["name part must be non-empty".to_string(), QUALIFIED_NAME_PART_MSG.to_string()]
        );
        assert_eq!(qualified_name_errors(&"a".repeat(64)), vec![format!("name part {}", max_len_msg(63))]);
        assert_eq!(qualified_name_errors("-x"), vec![QUALIFIED_NAME_PART_MSG]);
    }

    #[test]
    fn label_values() {
        for ok in ["", "v", "My_value.1", &"a".repeat(63)] {
            assert!(is_label_value(ok), "{ok}");
        }
        assert_eq!(label_value_errors("-x"), vec![LABEL_VALUE_MSG]);
        assert_eq!(label_value_errors(&"a".repeat(64)), vec![max_len_msg(63)]);
    }
}
