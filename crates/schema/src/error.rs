//! Field errors shaped like `k8s.io/apimachinery/pkg/util/validation/field.Error`.
//!
//! The server turns them into a `Status` whose `details.causes` carry `reason`,
//! `message` and `field`, and whose message joins `Error()` of each: all three must read
//! as kube-apiserver's do for `kubectl apply` to print the same text.

use crate::gofmt;
use serde_json::Value;
use std::fmt;

/// `field.ErrorType`: what kind of problem a field has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// `FieldValueNotFound`.
    NotFound,
    /// `FieldValueRequired`: a required field is absent.
    Required,
    /// `FieldValueDuplicate`: a value that must be unique is repeated.
    Duplicate,
    /// `FieldValueInvalid`: the catch-all.
    Invalid,
    /// `FieldValueNotSupported`: not one of an enumeration.
    NotSupported,
    /// `FieldValueForbidden`: present where it must not be.
    Forbidden,
    /// `FieldValueTooLong`: a string too long.
    TooLong,
    /// `FieldValueTooMany`: too many items or properties.
    TooMany,
    /// `InternalError`: the server failed, not the request.
    Internal,
    /// `FieldValueTypeInvalid`: the wrong JSON type (or string format).
    TypeInvalid,
}

impl ErrorType {
    /// The `reason` of a `Status` cause (`metav1.CauseType`).
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// `ErrorType.String()`: the words that start a message.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }
}

/// The value a field error reports, printed as `field.Error` prints its `BadValue`.
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    /// Nothing is printed (`field.omitValue`).
    Omitted,
    /// A value decoded from JSON: strings quoted, numbers and bools bare, `null` as
    /// `"null"`, arrays and objects in Go's `%#v` syntax.
    Json(Value),
    /// Printed verbatim: Go syntax for what JSON can't express, e.g. the `%#v` of a
    /// Go struct in CRD validation messages.
    Raw(String),
}

impl BadValue {
    /// A string bad value.
    pub fn string(s: impl Into<String>) -> Self {
        BadValue::Json(Value::String(s.into()))
    }

    /// An integer bad value.
    pub fn int(i: i64) -> Self {
        BadValue::Json(Value::from(i))
    }

    fn render(&self) -> Option<String> {
        match self {
            BadValue::Omitted => None,
            BadValue::Raw(s) => Some(s.clone()),
            BadValue::Json(v) => Some(match v {
                Value::Null => "\"null\"".to_owned(),
                Value::String(s) => gofmt::quote(s),
                Value::Number(n) => gofmt::number(n),
                Value::Bool(b) => b.to_string(),
                Value::Array(_) | Value::Object(_) => gofmt::sharp_v(v),
            }),
        }
    }
}

/// One problem with one field, as `field.Error`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What kind of problem.
    pub error_type: ErrorType,
    /// The field's path, as `field.Path.String()` prints it (`spec.items[0].name`,
    /// `spec.labels[key]`, `<nil>` for the object itself).
    pub field: String,
    /// The offending value.
    pub bad_value: BadValue,
    /// What is wrong with it, may be empty.
    pub detail: String,
}

impl FieldError {
    /// Builds an error of any type.
    pub fn new(
        error_type: ErrorType,
        field: impl Into<String>,
        bad_value: BadValue,
        detail: impl Into<String>,
    ) -> Self {
        FieldError { error_type, field: field.into(), bad_value, detail: detail.into() }
    }

    /// `field.Required`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, BadValue::Json(Value::String(String::new())), detail)
    }

    /// `field.Invalid`.
    pub fn invalid(field: impl Into<String>, value: BadValue, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, value, detail)
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(field: impl Into<String>, value: BadValue, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::TypeInvalid, field, value, detail)
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, BadValue::Json(Value::String(String::new())), detail)
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: impl Into<String>, value: BadValue) -> Self {
        Self::new(ErrorType::Duplicate, field, value, "")
    }

    /// `field.NotSupported`: the supported values are quoted with `strconv.Quote`.
    pub fn not_supported<S: AsRef<str>>(field: impl Into<String>, value: BadValue, supported: &[S]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| gofmt::quote(s.as_ref())).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, value, detail)
    }

    /// `field.TooLong` (apiserver ≥ 1.31 wording, in bytes).
    pub fn too_long(field: impl Into<String>, value: BadValue, max: i64) -> Self {
        let detail = limit_detail(max, "may not be more than", "byte", "value is too long");
        Self::new(ErrorType::TooLong, field, value, detail)
    }

    /// `field.TooMany`.
    pub fn too_many(field: impl Into<String>, actual: i64, max: i64) -> Self {
        let detail = limit_detail(max, "must have at most", "item", "has too many items");
        let value = if actual >= 0 { BadValue::int(actual) } else { BadValue::Omitted };
        Self::new(ErrorType::TooMany, field, value, detail)
    }

    /// `field.InternalError`.
    pub fn internal(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Internal, field, BadValue::Omitted, detail)
    }

    /// The `reason` of the `Status` cause for this error.
    pub fn reason(&self) -> &'static str {
        self.error_type.reason()
    }

    /// `ErrorBody()`: the `message` of the `Status` cause, without the field.
    pub fn message_without_field(&self) -> String {
        let mut s = String::from(self.error_type.as_str());
        let omit = matches!(
            self.error_type,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        );
        if !omit && let Some(value) = self.bad_value.render() {
            s.push_str(": ");
            s.push_str(&value);
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The same error with `prefix` put before its field, as `field.Path` would have
    /// printed it with the prefix as parent: e.g. to report a schema compile error under
    /// `spec.versions[0].schema`.
    pub fn with_field_prefix(mut self, prefix: &str) -> Self {
        if prefix.is_empty() {
            return self;
        }
        self.field = if self.field == "<nil>" {
            prefix.to_owned()
        } else if self.field.starts_with('[') {
            format!("{prefix}{}", self.field)
        } else {
            format!("{prefix}.{}", self.field)
        };
        self
    }
}

/// The detail of `TooLong` and `TooMany`: `<words> <max> <unit>(s)`, or `unknown` when the
/// limit is negative (unknown), as `field.TooLong` and `field.TooMany` word them.
fn limit_detail(max: i64, words: &str, unit: &str, unknown: &str) -> String {
    if max < 0 {
        return unknown.to_owned();
    }
    let plural = if max == 1 { "" } else { "s" };
    format!("{words} {max} {unit}{plural}")
}

impl fmt::Display for FieldError {
    /// `field.Error.Error()`: `<field>: <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message_without_field())
    }
}

impl std::error::Error for FieldError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_read_as_field_error_prints_them() {
        assert_eq!(
            FieldError::required("spec.secretName", "").to_string(),
            "spec.secretName: Required value"
        );
        assert_eq!(
            FieldError::not_supported("spec.format", BadValue::string("x"), &["aws-iam-statement"])
                .to_string(),
            r#"spec.format: Unsupported value: "x": supported values: "aws-iam-statement""#
        );
        assert_eq!(
            FieldError::not_supported("f", BadValue::string("x"), &["a", "b"]).message_without_field(),
            r#"Unsupported value: "x": supported values: "a", "b""#
        );
        assert_eq!(
            FieldError::too_long("spec.x", BadValue::string("abc"), 10).to_string(),
            "spec.x: Too long: may not be more than 10 bytes"
        );
        assert_eq!(
            FieldError::too_many("spec.x", 5, 3).to_string(),
            "spec.x: Too many: 5: must have at most 3 items"
        );
        assert_eq!(
            FieldError::too_many("x", 2, 1).message_without_field(),
            "Too many: 2: must have at most 1 item"
        );
        assert_eq!(
            FieldError::invalid("spec.x", BadValue::Json(Value::Null), "d").to_string(),
            r#"spec.x: Invalid value: "null": d"#
        );
        assert_eq!(
            FieldError::duplicate("spec.x[1]", BadValue::Json(json!({"name": "a"}))).to_string(),
            r#"spec.x[1]: Duplicate value: map[string]interface {}{"name":"a"}"#
        );
        assert_eq!(FieldError::forbidden("spec.x", "no").to_string(), "spec.x: Forbidden: no");
        assert_eq!(
            FieldError::invalid("x", BadValue::Json(json!(true)), "").to_string(),
            "x: Invalid value: true"
        );
    }

    #[test]
    fn limits_of_unknown_size_are_not_counted() {
        assert_eq!(FieldError::too_long("x", BadValue::Omitted, -1).detail, "value is too long");
        assert_eq!(FieldError::too_many("x", -1, -1).message_without_field(), "Too many: has too many items");
    }

    #[test]
    fn reasons_are_status_cause_types() {
        assert_eq!(FieldError::required("a", "").reason(), "FieldValueRequired");
        assert_eq!(FieldError::type_invalid("a", BadValue::Omitted, "").reason(), "FieldValueTypeInvalid");
        assert_eq!(FieldError::too_long("a", BadValue::Omitted, 1).reason(), "FieldValueTooLong");
    }

    #[test]
    fn prefixes_join_as_paths_do() {
        let e = FieldError::required("openAPIV3Schema.type", "");
        assert_eq!(
            e.with_field_prefix("spec.versions[0].schema").field,
            "spec.versions[0].schema.openAPIV3Schema.type"
        );
    }
}
