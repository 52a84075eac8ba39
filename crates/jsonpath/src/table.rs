//! Table output for custom resources, as
//! `k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor`
//! builds it from a CRD's `additionalPrinterColumns`, so `kubectl get` prints
//! the same against the embedded server as against a real one.

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::duration::age;
use crate::eval::{Budget, Item};
use crate::path::JsonPath;
use crate::{ParseError, print};

/// `metav1.ObjectMeta`'s documentation of `name`: the description of the
/// first column of every table.
pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating \
resources, although some resources may allow a client to request the generation of an appropriate name \
automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be \
updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// `metav1.ObjectMeta`'s documentation of `creationTimestamp`: the
/// description of the default `Age` column.
pub const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server \
time when this object was created. It is not guaranteed to be set in happens-before order across separate \
operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by \
the system. Read-only. Null for lists. More info: \
https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// A printer column's `type`, which decides how its value becomes a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// `integer`: JSON integers, and floats truncated.
    Integer,
    /// `number`: any JSON number, as a float.
    Number,
    /// `string`: any value, printed as text.
    String,
    /// `boolean`: JSON booleans.
    Boolean,
    /// `date`: RFC 3339 strings, shown as an age (`5m`, `3d`).
    Date,
    /// Any other type string: the API server leaves such cells empty.
    Unknown,
}

impl ColumnType {
    /// Reads a CRD column's `type` (case-sensitive, as the API server compares it).
    pub fn from_crd(type_name: &str) -> Self {
        match type_name {
            "integer" => Self::Integer,
            "number" => Self::Number,
            "string" => Self::String,
            "boolean" => Self::Boolean,
            "date" => Self::Date,
            _ => Self::Unknown,
        }
    }
}

impl From<&str> for ColumnType {
    fn from(type_name: &str) -> Self {
        Self::from_crd(type_name)
    }
}

/// One entry of a CRD version's `additionalPrinterColumns`
/// (`CustomResourceColumnDefinition`), deserializable from the CRD's JSON.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrinterColumn {
    /// The column header.
    #[serde(default)]
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date` (see [`ColumnType`]).
    #[serde(rename = "type", default)]
    pub type_name: String,
    /// An OpenAPI format hint, passed through to the table header.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    /// Help text, passed through to the table header.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// 0 shows the column by default; higher priorities only with `-o wide`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: i32,
    /// The JSONPath of the value, evaluated on each object (e.g. `.spec.replicas`).
    #[serde(default)]
    pub json_path: String,
}

fn is_zero(priority: &i32) -> bool {
    *priority == 0
}

/// A printer column whose path has been parsed, so a CRD's columns are parsed
/// once and evaluated for every object.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledColumn {
    /// The column as the CRD defines it.
    pub column: PrinterColumn,
    /// Its type.
    pub column_type: ColumnType,
    /// Its parsed `jsonPath`.
    pub path: JsonPath,
}

/// How many printer columns are shown, at most. The API server has no bound; a CRD from a
/// hostile plugin could list thousands, each evaluated on every object.
pub const MAX_COLUMNS: usize = 32;

/// Why printer columns are not all shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnError {
    /// A column whose `jsonPath` the API server cannot parse.
    #[error("unrecognized column definition {json_path:?}: {source}")]
    Unparsable {
        /// The column's `jsonPath`.
        json_path: String,
        /// Why it does not parse.
        #[source]
        source: ParseError,
    },
    /// More than [`MAX_COLUMNS`]: the first ones are shown.
    #[error("{count} printer columns: only the first {MAX_COLUMNS} are shown")]
    TooMany {
        /// How many the CRD defines.
        count: usize,
    },
}

impl PrinterColumn {
    /// Parses the column's path exactly as the API server does (as
    /// `{<jsonPath>}`, so a path may not carry its own braces).
    pub fn compile(&self) -> Result<CompiledColumn, ColumnError> {
        let path = JsonPath::parse_column(&self.json_path)
            .map_err(|source| ColumnError::Unparsable { json_path: self.json_path.clone(), source })?;
        Ok(CompiledColumn { column: self.clone(), column_type: ColumnType::from_crd(&self.type_name), path })
    }
}

impl AsRef<PrinterColumn> for PrinterColumn {
    fn as_ref(&self) -> &PrinterColumn {
        self
    }
}

impl AsRef<PrinterColumn> for CompiledColumn {
    fn as_ref(&self) -> &PrinterColumn {
        &self.column
    }
}

/// The columns served when a CRD version defines none: `Age`, from
/// `.metadata.creationTimestamp` (the API server's `serveDefaultColumnsIfEmpty`).
pub fn default_columns() -> Vec<PrinterColumn> {
    vec![PrinterColumn {
        name: "Age".into(),
        type_name: "date".into(),
        format: String::new(),
        description: CREATION_TIMESTAMP_DESCRIPTION.into(),
        priority: 0,
        json_path: ".metadata.creationTimestamp".into(),
    }]
}

/// Compiles a CRD version's printer columns the way the API server builds its
/// table convertor: no columns means [`default_columns`]; a column whose path
/// does not parse ends the list there — the server keeps the columns before
/// it and drops it and all after it, and logs the error (returned here).
pub fn compile_columns(columns: &[PrinterColumn]) -> (Vec<CompiledColumn>, Option<ColumnError>) {
    let defaults;
    let columns = if columns.is_empty() {
        defaults = default_columns();
        &defaults
    } else {
        columns
    };
    let mut compiled = Vec::with_capacity(columns.len().min(MAX_COLUMNS));
    for column in columns.iter().take(MAX_COLUMNS) {
        match column.compile() {
            Ok(c) => compiled.push(c),
            Err(e) => return (compiled, Some(e)),
        }
    }
    let error = (columns.len() > MAX_COLUMNS).then_some(ColumnError::TooMany { count: columns.len() });
    (compiled, error)
}

/// The table's `columnDefinitions` (`meta.k8s.io/v1` `TableColumnDefinition`
/// objects): `Name` first, then one per column. A column without a
/// description gets the API server's generated one, naming its JSONPath.
/// Pass [`PrinterColumn`]s or the [`CompiledColumn`]s of [`compile_columns`].
pub fn column_definitions<C: AsRef<PrinterColumn>>(columns: &[C]) -> Vec<Value> {
    let name = json!({
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": NAME_DESCRIPTION,
        "priority": 0,
    });
    std::iter::once(name)
        .chain(columns.iter().map(|c| {
            let c = c.as_ref();
            let description = if c.description.is_empty() {
                format!("Custom resource definition column (in JSONPath format): {}", c.json_path)
            } else {
                c.description.clone()
            };
            json!({
                "name": c.name,
                "type": c.type_name,
                "format": c.format,
                "description": description,
                "priority": c.priority,
            })
        }))
        .collect()
}

/// One row's `cells`: the object's `metadata.name` (`""` if absent), then one
/// [`cell`] per column.
pub fn row_cells(columns: &[CompiledColumn], obj: &Value, now: OffsetDateTime) -> Vec<Value> {
    row_cells_within(columns, obj, now, &mut Budget::new(usize::MAX))
}

/// [`row_cells`], the evaluations (and, if it bounds it, the printed text) taken from `budget`
/// (a table's): once it is spent, the remaining cells are `null`, as for a failed evaluation.
pub fn row_cells_within(
    columns: &[CompiledColumn],
    obj: &Value,
    now: OffsetDateTime,
    budget: &mut Budget,
) -> Vec<Value> {
    let name = obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    std::iter::once(Value::String(name.to_owned()))
        .chain(columns.iter().map(|c| cell_within(&c.path, c.column_type, obj, now, budget)))
        .collect()
}

/// The cell of one column for one object, as the API server computes it:
///
/// - no result, or an evaluation error (e.g. an index out of range): `null`;
/// - otherwise only the *first* result counts (the API server ignores the rest);
/// - `string` columns: the result as kubectl's JSONPath printer writes it —
///   strings raw, numbers and booleans as text, objects and arrays as compact
///   JSON, and JSON null as `<no value>`;
/// - `integer`: integers, and floats truncated toward zero; `number`: any
///   number as a float; `boolean`: booleans; `date`: an RFC 3339 string as an
///   age (see [`age`](crate::age)) — anything else, and JSON null, is `null`;
/// - unknown types: `null`.
///
/// `now` is a parameter so callers control the clock (and the browser build
/// needs no system time).
pub fn cell(path: &JsonPath, column_type: ColumnType, obj: &Value, now: OffsetDateTime) -> Value {
    cell_within(path, column_type, obj, now, &mut Budget::new(usize::MAX))
}

/// [`cell`], its evaluation taken from `budget`, and a `string` cell's text too where the
/// budget bounds it ([`Budget::with_text`]): cut, and `null` once the text is spent.
pub fn cell_within(
    path: &JsonPath,
    column_type: ColumnType,
    obj: &Value,
    now: OffsetDateTime,
    budget: &mut Budget,
) -> Value {
    let text_limit = budget.cell_chars();
    if column_type == ColumnType::String && text_limit.is_none() {
        return Value::Null;
    }
    let first = match path.evaluate_within(obj, budget) {
        Ok(items) => match items.into_iter().next() {
            Some(first) => first,
            None => return Value::Null,
        },
        Err(_) => return Value::Null,
    };
    if let (ColumnType::String, Some(limit)) = (column_type, text_limit) {
        let text = print::item_text_within(first, "<no value>", limit);
        budget.printed(text.len());
        return Value::String(text);
    }
    typed_cell(column_type, first, now)
}

/// The API server's `cellForJSONValue`, for the first result.
fn typed_cell(column_type: ColumnType, value: Item<'_, '_>, now: OffsetDateTime) -> Value {
    match (column_type, value) {
        (ColumnType::Integer, Item::Doc(Value::Number(n))) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(go_f64_to_i64(n.as_f64().unwrap_or(f64::NAN))),
        },
        (ColumnType::Integer, Item::Float(f)) => Value::from(go_f64_to_i64(f)),
        (ColumnType::Number, Item::Doc(Value::Number(n))) => n.as_f64().map_or(Value::Null, Value::from),
        (ColumnType::Number, Item::Float(f)) => Value::from(f),
        (ColumnType::Boolean, Item::Doc(Value::Bool(b))) => Value::Bool(*b),
        (ColumnType::Boolean, Item::Bool(b)) => Value::Bool(b),
        (ColumnType::String, Item::Doc(Value::String(s))) => Value::String(s.clone()),
        (ColumnType::String, Item::Text(t)) => Value::String(String::from_utf8_lossy(t).into_owned()),
        (ColumnType::Date, Item::Doc(Value::String(s))) => Value::String(age(s, now)),
        (ColumnType::Date, Item::Text(t)) => Value::String(age(&String::from_utf8_lossy(t), now)),
        _ => Value::Null,
    }
}

/// Go's `int64(f)` on amd64: truncation toward zero, and the "integer
/// indefinite" value (`i64::MIN`) for NaN and out-of-range values.
fn go_f64_to_i64(f: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) { i64::MIN } else { f as i64 }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::{Date, Month, PrimitiveDateTime, Time};

    use super::*;

    fn now() -> OffsetDateTime {
        let date = Date::from_calendar_date(2024, Month::May, 10).unwrap();
        PrimitiveDateTime::new(date, Time::from_hms(12, 0, 0).unwrap()).assume_utc()
    }

    fn path(p: &str) -> JsonPath {
        JsonPath::parse_column(p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn cell_of(p: &str, t: &str, obj: &Value) -> Value {
        cell(&path(p), ColumnType::from_crd(t), obj, now())
    }

    fn certificate() -> Value {
        json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": "web-tls", "namespace": "default", "creationTimestamp": "2024-05-08T11:00:00Z"},
            "spec": {"secretName": "web-tls", "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}},
            "status": {
                "conditions": [
                    {"type": "Issuing", "status": "False", "message": "done"},
                    {"type": "Ready", "status": "True", "message": "Certificate is up to date and has not expired"}
                ],
                "notAfter": "2024-08-01T00:00:00Z",
                "revision": 3
            }
        })
    }

    /// cert-manager's `Certificate` columns.
    fn certificate_columns() -> Vec<PrinterColumn> {
        serde_json::from_value(json!([
            {"jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "name": "Ready", "type": "string"},
            {"jsonPath": ".spec.secretName", "name": "Secret", "type": "string"},
            {"jsonPath": ".spec.issuerRef.name", "name": "Issuer", "type": "string", "priority": 1},
            {"jsonPath": ".status.conditions[?(@.type==\"Ready\")].message", "name": "Status", "type": "string",
             "priority": 1},
            {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date",
             "description": "CreationTimestamp is a timestamp representing the server time when this object was created."}
        ]))
        .unwrap()
    }

    #[test]
    fn cert_manager_row() {
        let (columns, error) = compile_columns(&certificate_columns());
        assert_eq!(error, None);
        assert_eq!(
            row_cells(&columns, &certificate(), now()),
            [
                json!("web-tls"),
                json!("True"),
                json!("web-tls"),
                json!("letsencrypt"),
                json!("Certificate is up to date and has not expired"),
                json!("2d1h")
            ]
        );
        // Before the controller has set any status.
        let mut fresh = certificate();
        fresh["status"] = json!({});
        let cells = row_cells(&columns, &fresh, now());
        assert_eq!(cells[1], Value::Null);
        assert_eq!(cells[4], Value::Null);
        assert_eq!(cells[3], json!("letsencrypt"));
    }

    #[test]
    fn column_definitions_like_the_api_server() {
        let defs = column_definitions(&certificate_columns());
        assert_eq!(defs.len(), 6);
        assert_eq!(
            defs[0],
            json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0})
        );
        assert_eq!(
            defs[3],
            json!({
                "name": "Issuer", "type": "string", "format": "", "priority": 1,
                "description": "Custom resource definition column (in JSONPath format): .spec.issuerRef.name"
            })
        );
        assert_eq!(
            defs[5]["description"],
            json!(
                "CreationTimestamp is a timestamp representing the server time when this object was created."
            )
        );
        let (compiled, _) = compile_columns(&certificate_columns());
        assert_eq!(column_definitions(&compiled), defs);
        assert!(NAME_DESCRIPTION.starts_with(
            "Name must be unique within a namespace. Is required when creating resources, although"
        ));
    }

    #[test]
    fn default_age_column() {
        let (columns, error) = compile_columns(&[]);
        assert_eq!(error, None);
        assert_eq!(columns.len(), 1);
        assert_eq!(columns[0].column.name, "Age");
        assert_eq!(columns[0].column_type, ColumnType::Date);
        assert_eq!(row_cells(&columns, &certificate(), now()), [json!("web-tls"), json!("2d1h")]);
        let defs = column_definitions(&columns);
        assert_eq!(defs[1]["description"], json!(CREATION_TIMESTAMP_DESCRIPTION));
        assert_eq!(defs[1]["type"], json!("date"));
        assert_eq!(row_cells(&columns, &json!({"metadata": {}}), now()), [json!(""), Value::Null]);
    }

    #[test]
    fn a_bad_column_truncates_the_list() {
        let columns: Vec<PrinterColumn> = serde_json::from_value(json!([
            {"jsonPath": ".spec.a", "name": "A", "type": "string"},
            {"jsonPath": "{.spec.b}", "name": "B", "type": "string"},
            {"jsonPath": ".spec.c", "name": "C", "type": "string"}
        ]))
        .unwrap();
        let (compiled, error) = compile_columns(&columns);
        assert_eq!(compiled.len(), 1);
        let error = error.expect("an error");
        assert!(matches!(&error, ColumnError::Unparsable { json_path, .. } if json_path == "{.spec.b}"));
        assert!(error.to_string().starts_with("unrecognized column definition \"{.spec.b}\""), "{error}");
    }

    #[test]
    fn at_most_max_columns_are_shown_and_a_table_shares_one_budget() {
        let many: Vec<PrinterColumn> = (0..MAX_COLUMNS + 5)
            .map(|i| {
                serde_json::from_value(
                    json!({"jsonPath": ".spec", "name": format!("C{i}"), "type": "string"}),
                )
                .unwrap()
            })
            .collect();
        let (compiled, error) = compile_columns(&many);
        assert_eq!(compiled.len(), MAX_COLUMNS);
        assert_eq!(error, Some(ColumnError::TooMany { count: MAX_COLUMNS + 5 }));
        assert_eq!(
            error.unwrap().to_string(),
            format!("{} printer columns: only the first 32 are shown", MAX_COLUMNS + 5)
        );

        // One budget for every cell: once spent, the cells left are empty.
        let (columns, _) = compile_columns(&[serde_json::from_value(
            json!({"jsonPath": ".spec.x[*]", "name": "X", "type": "integer"}),
        )
        .unwrap()]);
        let object = json!({"metadata": {"name": "o"}, "spec": {"x": vec![7; 400]}});
        let mut budget = Budget::new(1_000);
        let first = row_cells_within(&columns, &object, now(), &mut budget);
        assert_eq!(first, [json!("o"), json!(7)]);
        let second = row_cells_within(&columns, &object, now(), &mut budget);
        assert_eq!(second, [json!("o"), json!(7)]);
        let third = row_cells_within(&columns, &object, now(), &mut budget);
        assert_eq!(third, [json!("o"), Value::Null], "the budget is spent");
        assert!(budget.is_spent(), "a failed evaluation spends what it used");
    }

    /// A text budget cuts each string cell as it is printed and, once spent, leaves the string
    /// cells empty (the others are still computed). Without one, cells are the API server's,
    /// whole.
    #[test]
    fn string_cells_within_a_text_budget() {
        let (columns, _) = compile_columns(
            &serde_json::from_value::<Vec<PrinterColumn>>(json!([
                {"jsonPath": ".spec", "name": "Spec", "type": "string"},
                {"jsonPath": ".spec.n", "name": "N", "type": "integer"}
            ]))
            .unwrap(),
        );
        let object = json!({"metadata": {"name": "o"}, "spec": {"n": 1, "s": "<".repeat(100_000)}});
        // Each cut cell is 255 ASCII characters and the ellipsis: 258 bytes.
        let mut budget = Budget::new(usize::MAX).with_text(1_000, 256);
        for row in 0..4 {
            assert!(!budget.is_spent(), "row {row}");
            let cells = row_cells_within(&columns, &object, now(), &mut budget);
            let text = cells[1].as_str().unwrap();
            assert_eq!(text.chars().count(), 256);
            assert!(text.starts_with(r#"{"n":1,"s":"\u003c"#) && text.ends_with('…'), "{text}");
            assert_eq!(cells[2], json!(1));
        }
        assert!(budget.is_spent());
        assert_eq!(
            row_cells_within(&columns, &object, now(), &mut budget),
            [json!("o"), Value::Null, json!(1)]
        );

        let whole = row_cells(&columns, &object, now());
        assert_eq!(whole[1].as_str().unwrap().len(), r#"{"n":1,"s":""}"#.len() + 6 * 100_000);
    }

    #[test]
    fn printer_column_serde() {
        let c: PrinterColumn =
            serde_json::from_value(json!({"name": "R", "type": "integer", "jsonPath": ".spec.replicas"}))
                .unwrap();
        assert_eq!(c.priority, 0);
        assert_eq!(c.format, "");
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"name": "R", "type": "integer", "jsonPath": ".spec.replicas"})
        );
    }

    #[test]
    fn integer_cells() {
        let o = json!({"i": 42, "f": 3.99, "neg": -3.99, "s": "7", "b": true, "n": null, "big": 1e300,
                       "u": 18446744073709551615u64});
        assert_eq!(cell_of(".i", "integer", &o), json!(42));
        assert_eq!(cell_of(".f", "integer", &o), json!(3));
        assert_eq!(cell_of(".neg", "integer", &o), json!(-3));
        assert_eq!(cell_of(".s", "integer", &o), Value::Null);
        assert_eq!(cell_of(".b", "integer", &o), Value::Null);
        assert_eq!(cell_of(".n", "integer", &o), Value::Null);
        assert_eq!(cell_of(".big", "integer", &o), json!(i64::MIN), "Go on amd64");
        assert_eq!(
            cell_of(".u", "integer", &o),
            json!(i64::MIN),
            "beyond int64 the API server has a float64"
        );
        assert_eq!(cell_of(".missing", "integer", &o), Value::Null);
    }

    #[test]
    fn number_boolean_and_unknown_cells() {
        let o = json!({"i": 42, "f": 3.5, "s": "1.5", "b": false, "n": null});
        assert_eq!(cell_of(".i", "number", &o), json!(42.0));
        assert_eq!(cell_of(".f", "number", &o), json!(3.5));
        assert_eq!(cell_of(".s", "number", &o), Value::Null);
        assert_eq!(cell_of(".b", "boolean", &o), json!(false));
        assert_eq!(cell_of(".i", "boolean", &o), Value::Null);
        assert_eq!(cell_of(".s", "boolean", &o), Value::Null);
        assert_eq!(cell_of(".n", "boolean", &o), Value::Null);
        assert_eq!(cell_of(".s", "quantity", &o), Value::Null);
        assert_eq!(cell_of(".s", "String", &o), Value::Null, "types are case-sensitive");
    }

    #[test]
    fn string_cells_print_any_value() {
        let o = json!({"s": "x", "i": 42, "f": 2.5, "e": 1e6, "b": true, "n": null,
                       "a": ["foo", 1], "m": {"z": 1, "a": "<b>"}});
        assert_eq!(cell_of(".s", "string", &o), json!("x"));
        assert_eq!(cell_of(".i", "string", &o), json!("42"));
        assert_eq!(cell_of(".f", "string", &o), json!("2.5"));
        assert_eq!(cell_of(".e", "string", &o), json!("1e+06"));
        assert_eq!(cell_of(".b", "string", &o), json!("true"));
        assert_eq!(cell_of(".n", "string", &o), json!("<no value>"));
        assert_eq!(cell_of(".a", "string", &o), json!(r#"["foo",1]"#));
        assert_eq!(cell_of(".m", "string", &o), json!(r#"{"a":"\u003cb\u003e","z":1}"#));
        assert_eq!(cell_of(".missing", "string", &o), Value::Null);
    }

    #[test]
    fn only_the_first_result_counts() {
        // As the API server's own tests document ("TODO: … should be changed").
        let o = json!({"spec": {"servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}],
                                "foo": [{"bar": [1]}, {"bar": [2, 3]}]}});
        assert_eq!(cell_of(".spec.servers[0].hosts[0]", "string", &o), json!("foo"));
        assert_eq!(cell_of(".spec.servers[1].hosts", "string", &o), json!(r#"["bar","baz"]"#));
        assert_eq!(cell_of(".spec.servers[*].hosts", "string", &o), json!(r#"["foo"]"#));
        assert_eq!(cell_of(".spec.servers[*].hosts[*]", "string", &o), json!("foo"));
        assert_eq!(cell_of(".spec.foo[0].bar[0]", "integer", &o), json!(1));
        assert_eq!(cell_of(".spec.foo[0].bar", "integer", &o), Value::Null);
        assert_eq!(cell_of(".spec.foo[*].bar[*]", "integer", &o), json!(1));
    }

    #[test]
    fn date_cells() {
        let o = json!({"t": "2024-05-10T11:55:00Z", "bad": "soon", "empty": "", "n": 5, "future": "2030-01-01T00:00:00Z"});
        assert_eq!(cell_of(".t", "date", &o), json!("5m"));
        assert_eq!(cell_of(".bad", "date", &o), json!("<invalid>"));
        assert_eq!(cell_of(".empty", "date", &o), json!("<unknown>"));
        assert_eq!(cell_of(".future", "date", &o), json!("<invalid>"));
        assert_eq!(cell_of(".n", "date", &o), Value::Null);
        assert_eq!(cell_of(".missing", "date", &o), Value::Null);
    }

    #[test]
    fn evaluation_errors_are_empty_cells() {
        let o = json!({"items": [], "name": "x", "c": [{"type": 1}]});
        assert_eq!(cell_of(".items[0]", "string", &o), Value::Null);
        assert_eq!(cell_of(".name[0]", "string", &o), Value::Null);
        assert_eq!(cell_of(".c[?(@.type == \"Ready\")].status", "string", &o), Value::Null);
    }

    #[test]
    fn literal_results() {
        let o = json!({});
        assert_eq!(cell_of("'x'", "string", &o), json!("x"));
        assert_eq!(cell_of("5", "string", &o), json!("5"));
        assert_eq!(cell_of("5", "integer", &o), Value::Null, "a Go int literal is not an int64");
        assert_eq!(cell_of("1.5", "integer", &o), json!(1));
        assert_eq!(cell_of("true", "boolean", &o), json!(true));
    }
}
