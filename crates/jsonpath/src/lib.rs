//! kubectl's JSONPath, and the Kubernetes API server's `Table` cells for
//! custom resources.
//!
//! An API server answers `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`
//! for a custom resource by evaluating its CRD's `additionalPrinterColumns`
//! on each object. For `kubectl get` to print the same against the embedded
//! cluster as against a real one, this crate reproduces client-go's JSONPath
//! (`k8s.io/client-go/util/jsonpath`) and the API server's table convertor
//! (`k8s.io/apiextensions-apiserver/.../tableconvertor`) behaviour for
//! behaviour, quirks included (see [`JsonPath`] and [`cell`]).
//!
//! Pure computation, no I/O and no clock (callers pass `now`), so the console
//! in the browser shares this implementation.
//!
//! ```
//! use fundament_jsonpath::{JsonPath, PrinterColumn, column_definitions, compile_columns, row_cells};
//! use serde_json::json;
//!
//! let path = JsonPath::parse(r#".status.conditions[?(@.type=="Ready")].status"#).unwrap();
//! let cert = json!({
//!     "metadata": {"name": "web-tls", "creationTimestamp": "2024-05-10T11:00:00Z"},
//!     "status": {"conditions": [{"type": "Ready", "status": "True"}]}
//! });
//! assert_eq!(path.find(&cert), [&json!("True")]);
//!
//! let columns: Vec<PrinterColumn> = serde_json::from_value(json!([
//!     {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
//!     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
//! ]))
//! .unwrap();
//! let (columns, error) = compile_columns(&columns);
//! assert!(error.is_none());
//! let now = time::OffsetDateTime::parse("2024-05-10T12:00:00Z", &time::format_description::well_known::Rfc3339)
//!     .unwrap();
//! assert_eq!(row_cells(&columns, &cert, now), [json!("web-tls"), json!("True"), json!("60m")]);
//! assert_eq!(column_definitions(&columns)[0]["name"], "Name");
//! ```
#![forbid(unsafe_code)]

mod duration;
mod eval;
mod parse;
mod path;
mod print;
mod quote;
mod table;

pub use duration::{age, human_duration};
pub use eval::{Budget, EvalError, MAX_RESULTS};
pub use parse::ParseError;
pub use path::JsonPath;
pub use table::{
    CREATION_TIMESTAMP_DESCRIPTION, ColumnError, ColumnType, CompiledColumn, MAX_COLUMNS, NAME_DESCRIPTION,
    PrinterColumn, cell, cell_within, column_definitions, compile_columns, default_columns, row_cells,
    row_cells_within,
};
