//! `x-kubernetes-validations`: compiling the CEL rules of a node once, with the checks
//! kube-apiserver's CRD validation makes on them (syntax, fields the schema lacks,
//! `reason`, `fieldPath`, `oldSelf` where it can't be correlated).

use crate::check;
use crate::env::CelEnv;
use crate::error::{BadValue, FieldError};
use crate::gofmt;
use crate::schema::Node;
use cel::Program;
use serde_json::Value;

/// `reason` of a rule: which kind of field error a failed rule reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleReason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// One segment of a rule's `fieldPath`, resolved against the schema when compiled.
#[derive(Debug, Clone)]
pub(crate) enum FieldPathSegment {
    Child(String),
    Key(String),
}

/// A compiled `x-kubernetes-validations` entry.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) rule: String,
    pub(crate) program: Program,
    pub(crate) message: String,
    pub(crate) message_expression: Option<Program>,
    pub(crate) reason: RuleReason,
    /// `fieldPath` normalized as `field.Path` prints it (`foo[key].bar`).
    pub(crate) field_path: Option<String>,
    pub(crate) optional_old_self: bool,
    pub(crate) uses_old_self: bool,
}

impl Rule {
    /// `ruleErrorString`: the message if any, else the rule, trimmed.
    pub(crate) fn error_string(&self) -> &str {
        let m = self.message.trim();
        if m.is_empty() { self.rule.trim() } else { m }
    }

    /// `ruleMessageOrDefault`.
    pub(crate) fn message_or_default(&self) -> String {
        let m = self.message.trim();
        if m.is_empty() { format!("failed rule: {}", self.rule.trim()) } else { m.to_owned() }
    }
}

/// Where a node sits, for the compile-time checks of its rules.
pub(crate) struct RuleSite<'a> {
    /// The schema path of the node (`openAPIV3Schema.properties[spec]`).
    pub(crate) path: &'a str,
    /// The schema path of the nearest array that is not `x-kubernetes-list-type: map`
    /// above the node, where `oldSelf` can't be correlated.
    pub(crate) uncorrelatable: Option<&'a str>,
    /// Whether the node is the root of the resource.
    pub(crate) resource_root: bool,
}

/// Compiles the `x-kubernetes-validations` of `node`, reporting errors as the CRD
/// validation of kube-apiserver does.
pub(crate) fn compile_rules(
    env: &CelEnv,
    raw: &Value,
    node: &Node,
    site: &RuleSite<'_>,
    errors: &mut Vec<FieldError>,
) -> Vec<Rule> {
    let base = format!("{}.x-kubernetes-validations", site.path);
    let Some(list) = raw.as_array() else {
        errors.push(FieldError::type_invalid(
            base,
            BadValue::string(gofmt::json_type_name(raw)),
            "must be of type array",
        ));
        return Vec::new();
    };
    let mut rules = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let path = format!("{base}[{i}]");
        if let Some(rule) = compile_rule(env, entry, node, site, &path, errors) {
            rules.push(rule);
        }
    }
    rules
}

fn compile_rule(
    env: &CelEnv,
    entry: &Value,
    node: &Node,
    site: &RuleSite<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Option<Rule> {
    let Some(obj) = entry.as_object() else {
        errors.push(FieldError::type_invalid(
            path,
            BadValue::string(gofmt::json_type_name(entry)),
            "must be of type object",
        ));
        return None;
    };
    let before = errors.len();
    let mut text = |key: &str| -> String {
        match obj.get(key) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                errors.push(FieldError::type_invalid(
                    format!("{path}.{key}"),
                    BadValue::string(gofmt::json_type_name(other)),
                    "must be of type string",
                ));
                String::new()
            }
        }
    };
    let rule_src = text("rule");
    let message = text("message");
    let message_expression_src = text("messageExpression");
    let field_path_src = text("fieldPath");
    let reason_src = obj.get("reason").and_then(Value::as_str);
    let optional_old_self = match obj.get("optionalOldSelf") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            errors.push(FieldError::type_invalid(
                format!("{path}.optionalOldSelf"),
                BadValue::string(gofmt::json_type_name(other)),
                "must be of type boolean",
            ));
            None
        }
    };
    let printed = go_validation_rule(
        &rule_src,
        &message,
        &message_expression_src,
        reason_src.is_some(),
        &field_path_src,
        optional_old_self.is_some(),
    );

    if !message.is_empty() && message.trim().is_empty() {
        errors
            .push(FieldError::required(format!("{path}.message"), "message must be non-empty if specified"));
    } else if message.contains('\n') {
        errors.push(FieldError::invalid(
            format!("{path}.message"),
            BadValue::string(message.clone()),
            "message must not contain line breaks",
        ));
    }
    let reason = match reason_src {
        None => RuleReason::Invalid,
        Some("FieldValueInvalid") => RuleReason::Invalid,
        Some("FieldValueForbidden") => RuleReason::Forbidden,
        Some("FieldValueRequired") => RuleReason::Required,
        Some("FieldValueDuplicate") => RuleReason::Duplicate,
        Some(other) => {
            errors.push(FieldError::not_supported(
                format!("{path}.reason"),
                BadValue::string(other),
                &["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"],
            ));
            RuleReason::Invalid
        }
    };
    let field_path = if field_path_src.is_empty() {
        None
    } else {
        match resolve_field_path(&field_path_src, node, site.resource_root || node.embedded) {
            Ok(p) => Some(p),
            Err(e) => {
                errors.push(FieldError::invalid(
                    format!("{path}.fieldPath"),
                    BadValue::string(field_path_src.clone()),
                    format!("fieldPath must be a valid path: {e}"),
                ));
                None
            }
        }
    };

    if rule_src.trim().is_empty() {
        errors.push(FieldError::required(format!("{path}.rule"), "rule is not specified"));
        return None;
    }
    let program = match env.env.compile(&rule_src) {
        Ok(p) => p,
        Err(e) => {
            errors.push(FieldError::invalid(
                format!("{path}.rule"),
                BadValue::Raw(printed),
                format!("compilation failed: {}", check::display_parse_errors(&e, &rule_src)),
            ));
            return None;
        }
    };
    let uses_old_self = program.references().has_variable("oldSelf");
    let check_errors =
        check::check(&program, &rule_src, node, site.resource_root, optional_old_self == Some(true));
    if !check_errors.is_empty() {
        errors.push(FieldError::invalid(
            format!("{path}.rule"),
            BadValue::Raw(printed.clone()),
            format!("compilation failed: {check_errors}"),
        ));
    }
    if uses_old_self && let Some(within) = site.uncorrelatable {
        errors.push(FieldError::invalid(
            format!("{path}.rule"),
            BadValue::string(rule_src.clone()),
            format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"),
        ));
    }
    if optional_old_self.is_some() && !uses_old_self {
        errors.push(FieldError::invalid(
            format!("{path}.optionalOldSelf"),
            BadValue::Json(Value::Bool(optional_old_self == Some(true))),
            "may not be set if oldSelf is not used in rule",
        ));
    }
    let message_expression = if message_expression_src.trim().is_empty() {
        if !message_expression_src.is_empty() {
            errors.push(FieldError::required(
                format!("{path}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        None
    } else {
        match env.env.compile(&message_expression_src) {
            Ok(p) => {
                let check_errors = check::check(
                    &p,
                    &message_expression_src,
                    node,
                    site.resource_root,
                    optional_old_self == Some(true),
                );
                if check_errors.is_empty() {
                    Some(p)
                } else {
                    errors.push(FieldError::invalid(
                        format!("{path}.messageExpression"),
                        BadValue::Raw(printed.clone()),
                        format!("messageExpression compilation failed: {check_errors}"),
                    ));
                    None
                }
            }
            Err(e) => {
                errors.push(FieldError::invalid(
                    format!("{path}.messageExpression"),
                    BadValue::Raw(printed.clone()),
                    format!(
                        "messageExpression compilation failed: {}",
                        check::display_parse_errors(&e, &message_expression_src)
                    ),
                ));
                None
            }
        }
    };
    if errors.len() > before {
        return None;
    }
    Some(Rule {
        rule: rule_src,
        program,
        message,
        message_expression,
        reason,
        field_path,
        optional_old_self: optional_old_self == Some(true),
        uses_old_self,
    })
}

/// `%#v` of the Go `apiextensions.ValidationRule`, which kube-apiserver prints as the
/// bad value of a rule that doesn't compile. Pointers print as addresses in Go; a fixed
/// one stands in for them.
fn go_validation_rule(
    rule: &str,
    message: &str,
    message_expression: &str,
    has_reason: bool,
    field_path: &str,
    has_optional_old_self: bool,
) -> String {
    let ptr = |set: bool, ty: &str| {
        if set { format!("(*{ty})(0xc000000000)") } else { format!("(*{ty})(nil)") }
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        gofmt::quote(rule),
        gofmt::quote(message),
        gofmt::quote(message_expression),
        ptr(has_reason, "apiextensions.FieldValueErrorReason"),
        gofmt::quote(field_path),
        ptr(has_optional_old_self, "bool"),
    )
}

/// Resolves a rule's `fieldPath` (`.a.b`, `.a['b.c']`) against the schema of the node,
/// as `ValidFieldPath` does: properties are children, additionalProperties keys are
/// keys. Returns the path as `field.Path` prints it.
fn resolve_field_path(src: &str, node: &Node, resource_root: bool) -> Result<String, String> {
    let mut segments = Vec::new();
    let mut current = Some(node);
    // At a resource root, `metadata.name` and `metadata.generateName` are always there.
    let mut in_meta = false;
    let bytes: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let name = match bytes[i] {
            '.' => {
                i += 1;
                let start = i;
                while i < bytes.len() && bytes[i] != '.' && bytes[i] != '[' && bytes[i] != ']' {
                    i += 1;
                }
                if start == i {
                    return Err("unexpected end of JSON path".to_owned());
                }
                bytes[start..i].iter().collect::<String>()
            }
            '[' => {
                i += 1;
                let start = i;
                while i < bytes.len() && bytes[i] != ']' {
                    i += 1;
                }
                if i >= bytes.len() {
                    return Err("unexpected end of JSON path".to_owned());
                }
                let tok: String = bytes[start..i].iter().collect();
                i += 1;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                unescape_single_quoted(&tok[1..tok.len() - 1])?
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        if in_meta {
            if name != "name" && name != "generateName" {
                return Err("does not refer to a valid field".to_owned());
            }
            segments.push(FieldPathSegment::Child(name));
            current = None;
            in_meta = false;
            continue;
        }
        let Some(n) = current else {
            return Err("does not refer to a valid field".to_owned());
        };
        if resource_root && segments.is_empty() && name == "metadata" {
            segments.push(FieldPathSegment::Child(name));
            in_meta = true;
            current = None;
            continue;
        }
        if !n.properties.is_empty() {
            current = n.properties.get(&name);
            if current.is_none() {
                return Err("does not refer to a valid field".to_owned());
            }
            segments.push(FieldPathSegment::Child(name));
        } else if let Some(a) = &n.additional {
            current = Some(a);
            segments.push(FieldPathSegment::Key(name));
        } else {
            return Err("does not refer to a valid field".to_owned());
        }
    }
    let mut out = String::new();
    for s in segments {
        match s {
            FieldPathSegment::Child(c) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&c);
            }
            FieldPathSegment::Key(k) => {
                out.push('[');
                out.push_str(&k);
                out.push(']');
            }
        }
    }
    Ok(out)
}

fn unescape_single_quoted(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('\\' | '\'')) => out.push(e),
                Some(e) => return Err(format!("invalid string literal: invalid escape sequence '\\{e}'")),
                None => return Err("invalid string literal: unterminated escape".to_owned()),
            }
        } else if c == '\'' {
            return Err("invalid string literal: unescaped single quote".to_owned());
        } else {
            out.push(c);
        }
    }
    Ok(out)
}
