//! The public [`JsonPath`] type.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::eval::{self, EvalError, Item};
use crate::parse::{self, Node, ParseError};
use crate::print;

/// A parsed kubectl (client-go) JSONPath expression, e.g.
/// `.status.conditions[?(@.type=="Ready")].status`.
///
/// Parse once, evaluate many times. Evaluation follows the API server's
/// printer columns: missing keys give no results rather than errors.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    source: String,
    nodes: Vec<Node>,
}

impl JsonPath {
    /// Parses an expression written either bare (`.status.phase`) or in
    /// kubectl's template braces (`{.status.phase}`); surrounding whitespace
    /// is ignored. Only a single expression is accepted (no template text).
    ///
    /// Meant for people typing paths; printer columns should use
    /// [`JsonPath::parse_column`], which rejects what the API server rejects.
    pub fn parse(expr: &str) -> Result<Self, ParseError> {
        let trimmed = expr.trim_start();
        let origin = expr.len() - trimmed.len();
        let trimmed = trimmed.trim_end();
        let nodes = if trimmed.starts_with('{') {
            parse::parse_braced(trimmed, origin)?
        } else {
            parse::parse_wrapped(trimmed, origin)?
        };
        Ok(Self { source: expr.to_owned(), nodes })
    }

    /// Parses a CRD printer column's `jsonPath` exactly as the API server
    /// does: as the template `{<jsonPath>}`. So `{.a}` is an error here (the
    /// server would see `{{.a}}`), as is anything else it rejects.
    pub fn parse_column(json_path: &str) -> Result<Self, ParseError> {
        Ok(Self { source: json_path.to_owned(), nodes: parse::parse_wrapped(json_path, 0)? })
    }

    /// The expression as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The values the path selects in `v`, in document order. A path that
    /// does not match (missing keys, or a type error such as indexing a
    /// string) selects nothing. Values that are not part of `v` — literals
    /// like `"x"`, or bytes of a string selected by a wildcard — are left out.
    pub fn find<'a>(&self, v: &'a Value) -> Vec<&'a Value> {
        self.try_find(v).unwrap_or_default()
    }

    /// Like [`find`](Self::find), but reports the errors that make kubectl
    /// fail (and the API server show an empty cell): an index out of range,
    /// a filter comparing a string with a number, and so on.
    pub fn try_find<'a>(&self, v: &'a Value) -> Result<Vec<&'a Value>, EvalError> {
        Ok(self
            .evaluate(v)?
            .into_iter()
            .filter_map(|item| match item {
                Item::Doc(value) => Some(value),
                _ => None,
            })
            .collect())
    }

    /// The text `kubectl get -o jsonpath='{<path>}'` prints for `v`: each
    /// result printed (strings raw, numbers and booleans as text, objects and
    /// arrays as compact JSON), separated by single spaces.
    pub fn render(&self, v: &Value) -> Result<String, EvalError> {
        let items = self.evaluate(v)?;
        Ok(items.into_iter().map(|item| print::item_text(item, "null")).collect::<Vec<_>>().join(" "))
    }

    /// Every result, including those that are not part of `v`.
    pub(crate) fn evaluate<'s, 'a>(&'s self, v: &'a Value) -> Result<Vec<Item<'a, 's>>, EvalError> {
        eval::evaluate(&self.nodes, v)
    }

    pub(crate) fn evaluate_within<'s, 'a>(
        &'s self,
        v: &'a Value,
        budget: &mut eval::Budget,
    ) -> Result<Vec<Item<'a, 's>>, EvalError> {
        eval::evaluate_within(&self.nodes, v, budget)
    }
}

impl FromStr for JsonPath {
    type Err = ParseError;

    /// Same as [`JsonPath::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod() -> Value {
        json!({
            "metadata": {"name": "web-0", "labels": {"app": "web", "plugins.camunda.io/cluster": "c1"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}, {"name": "sidecar", "image": "envoy"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        })
    }

    #[test]
    fn both_spellings() {
        let p = pod();
        for expr in [".status.phase", "{.status.phase}", "  { .status.phase }  ", "$.status.phase"] {
            let path = JsonPath::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
            assert_eq!(path.find(&p), [&json!("Running")], "{expr}");
            assert_eq!(path.as_str(), expr);
        }
        assert!(JsonPath::parse_column("{.status.phase}").is_err());
        assert!(JsonPath::parse("{.status.phase").is_err());
        assert!(JsonPath::parse("{.a}{.b}").is_err());
        assert_eq!(JsonPath::parse("{.a").unwrap_err().position, 3);
        assert_eq!(JsonPath::parse("  .a\t").map(|p| p.find(&json!({"a": 1})).len()), Ok(1));
        assert_eq!(JsonPath::parse("  .a[x]").unwrap_err().position, 5);
    }

    #[test]
    fn find_and_render() {
        let p = pod();
        let path: JsonPath = ".spec.containers[*].name".parse().unwrap();
        assert_eq!(path.find(&p), [&json!("app"), &json!("sidecar")]);
        assert_eq!(path.render(&p).unwrap(), "app sidecar");
        assert_eq!(path.to_string(), ".spec.containers[*].name");
        let all: JsonPath = ".spec.containers".parse().unwrap();
        assert_eq!(
            all.render(&p).unwrap(),
            r#"[{"image":"nginx","name":"app"},{"image":"envoy","name":"sidecar"}]"#
        );
        let ready: JsonPath = r#"{.status.conditions[?(@.type=="Ready")].status}"#.parse().unwrap();
        assert_eq!(ready.render(&p).unwrap(), "True");
        assert_eq!(JsonPath::parse(".nothing").unwrap().render(&p).unwrap(), "");
        assert_eq!(JsonPath::parse(".x").unwrap().render(&json!({"x": null})).unwrap(), "null");
    }

    #[test]
    fn bracket_keys_with_dots_are_paths() {
        let p = pod();
        // client-go reads ['a.b'] as .a.b, so this label is not found…
        assert!(
            JsonPath::parse(".metadata.labels['plugins.camunda.io/cluster']").unwrap().find(&p).is_empty()
        );
        // …unless its dots are escaped.
        assert_eq!(
            JsonPath::parse(r".metadata.labels['plugins\.camunda\.io/cluster']").unwrap().find(&p),
            [&json!("c1")]
        );
        assert_eq!(
            JsonPath::parse(r".metadata.labels.plugins\.camunda\.io/cluster").unwrap().find(&p),
            [&json!("c1")]
        );
        assert_eq!(JsonPath::parse(".metadata.labels['app']").unwrap().find(&p), [&json!("web")]);
    }

    #[test]
    fn find_hides_errors_try_find_reports_them() {
        let p = pod();
        let path = JsonPath::parse(".spec.containers[5]").unwrap();
        assert!(path.find(&p).is_empty());
        assert_eq!(path.try_find(&p), Err(EvalError::OutOfBounds { index: 5, length: 2 }));
        assert_eq!(
            path.try_find(&p).unwrap_err().to_string(),
            "array index out of bounds: index 5, length 2"
        );
        // Literals and string bytes are not part of the document.
        assert!(JsonPath::parse("'x'").unwrap().find(&p).is_empty());
        assert!(JsonPath::parse(".metadata.name.*").unwrap().find(&p).is_empty());
        assert_eq!(JsonPath::parse(".metadata.name.*").unwrap().render(&p).unwrap(), "119 101 98 45 48");
    }
}
