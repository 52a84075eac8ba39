//! `/openapi/v2` as protobuf (gnostic's `openapi.v2.Document`), the only form kubectl reads it
//! in. kubectl 1.32 validates a `kind: List` (what `kubectl get -o yaml` of several objects
//! prints) on the client, with this document, asking for
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`; a JSON answer failed with
//! "proto: cannot parse invalid wire-format data", so such a file could not go back in.
//!
//! The Swagger 2.0 JSON of [`crate::openapi::v2`] is written field by field in gnostic's
//! numbering. What Swagger 2.0 has no field for (`anyOf`, `oneOf`, `not`, `nullable`, from a
//! CRD's structural schema) is left out, as kube-apiserver leaves it out of its v2 document;
//! `x-` extensions are kept (kubectl finds a kind by `x-kubernetes-group-version-kind`), their
//! values as YAML text (JSON is YAML), as gnostic keeps them.

use serde_json::{Map, Value};

/// The media type kubectl asks `/openapi/v2` for.
pub const MEDIA_TYPE: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The answer's `Content-Type`, as kube-apiserver's: the type asked for is no valid media type
/// (`@`), and client-go's check of the answer's type refuses it.
pub const ANSWER_TYPE: &str = "application/octet-stream";

/// Whether a request's `Accept` header asks for the protobuf document.
pub fn wanted(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|t| t.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case(MEDIA_TYPE)))
    })
}

/// The protobuf of a Swagger 2.0 document.
pub fn document(doc: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, doc.get("swagger"));
    if let Some(info) = doc.get("info") {
        let mut m = Vec::new();
        string(&mut m, 1, info.get("title"));
        string(&mut m, 2, info.get("version"));
        message(&mut out, 2, &m);
    }
    if let Some(Value::Object(definitions)) = doc.get("definitions") {
        let mut m = Vec::new();
        for (name, schema) in definitions {
            named_schema(&mut m, 1, name, schema);
        }
        message(&mut out, 9, &m);
    }
    out
}

fn schema(s: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let Value::Object(s) = s else { return out };
    // Any field goes here (a built-in kind's schema, a CRD's open part): Swagger 2.0 cannot say
    // so, and kubectl refuses a field that `properties` does not name. Without a type or
    // fields, it takes anything, as the server does.
    let open = s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    string(&mut out, 1, s.get("$ref"));
    string(&mut out, 2, s.get("format"));
    string(&mut out, 3, s.get("title"));
    string(&mut out, 4, s.get("description"));
    if let Some(v) = s.get("default") {
        message(&mut out, 5, &any(v));
    }
    double(&mut out, 6, s.get("multipleOf"));
    double(&mut out, 7, s.get("maximum"));
    boolean(&mut out, 8, s.get("exclusiveMaximum"));
    double(&mut out, 9, s.get("minimum"));
    boolean(&mut out, 10, s.get("exclusiveMinimum"));
    integer(&mut out, 11, s.get("maxLength"));
    integer(&mut out, 12, s.get("minLength"));
    string(&mut out, 13, s.get("pattern"));
    integer(&mut out, 14, s.get("maxItems"));
    integer(&mut out, 15, s.get("minItems"));
    boolean(&mut out, 16, s.get("uniqueItems"));
    integer(&mut out, 17, s.get("maxProperties"));
    integer(&mut out, 18, s.get("minProperties"));
    for required in s.get("required").filter(|_| !open).and_then(Value::as_array).into_iter().flatten() {
        string(&mut out, 19, Some(required));
    }
    for value in s.get("enum").and_then(Value::as_array).into_iter().flatten() {
        message(&mut out, 20, &any(value));
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            let mut m = Vec::new();
            boolean_always(&mut m, 2, *b);
            message(&mut out, 21, &m);
        }
        Some(v @ Value::Object(_)) => {
            let mut m = Vec::new();
            message(&mut m, 1, &schema(v));
            message(&mut out, 21, &m);
        }
        _ => {}
    }
    let types: Vec<&Value> = match s.get("type").filter(|_| !open) {
        Some(t @ Value::String(_)) => vec![t],
        Some(Value::Array(ts)) => ts.iter().collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let mut m = Vec::new();
        for t in types {
            string(&mut m, 1, Some(t));
        }
        message(&mut out, 22, &m);
    }
    let items: Vec<&Value> = match s.get("items") {
        Some(i @ Value::Object(_)) => vec![i],
        Some(Value::Array(is)) => is.iter().collect(),
        _ => Vec::new(),
    };
    if !items.is_empty() {
        let mut m = Vec::new();
        for item in items {
            message(&mut m, 1, &schema(item));
        }
        message(&mut out, 23, &m);
    }
    for part in s.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        message(&mut out, 24, &schema(part));
    }
    if let Some(Value::Object(properties)) = s.get("properties").filter(|_| !open) {
        let mut m = Vec::new();
        for (name, property) in properties {
            named_schema(&mut m, 1, name, property);
        }
        message(&mut out, 25, &m);
    }
    string(&mut out, 26, s.get("discriminator"));
    boolean(&mut out, 27, s.get("readOnly"));
    if let Some(v) = s.get("example") {
        message(&mut out, 30, &any(v));
    }
    vendor_extensions(&mut out, 31, s);
    out
}

fn named_schema(out: &mut Vec<u8>, field: u64, name: &str, value: &Value) {
    let mut m = Vec::new();
    string_always(&mut m, 1, name);
    message(&mut m, 2, &schema(value));
    message(out, field, &m);
}

/// gnostic's `Any`: the value as YAML text (field 2).
fn any(value: &Value) -> Vec<u8> {
    let mut m = Vec::new();
    string_always(&mut m, 2, &value.to_string());
    m
}

fn vendor_extensions(out: &mut Vec<u8>, field: u64, s: &Map<String, Value>) {
    for (name, value) in s.iter().filter(|(name, _)| name.starts_with("x-")) {
        let mut m = Vec::new();
        string_always(&mut m, 1, name);
        message(&mut m, 2, &any(value));
        message(out, field, &m);
    }
}

fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, (field << 3) | wire);
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn message(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    key(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A string field; proto3 leaves an empty one out.
fn string(out: &mut Vec<u8>, field: u64, value: Option<&Value>) {
    if let Some(s) = value.and_then(Value::as_str).filter(|s| !s.is_empty()) {
        string_always(out, field, s);
    }
}

fn string_always(out: &mut Vec<u8>, field: u64, s: &str) {
    message(out, field, s.as_bytes());
}

fn boolean(out: &mut Vec<u8>, field: u64, value: Option<&Value>) {
    if value.and_then(Value::as_bool) == Some(true) {
        boolean_always(out, field, true);
    }
}

fn boolean_always(out: &mut Vec<u8>, field: u64, b: bool) {
    key(out, field, 0);
    varint(out, u64::from(b));
}

fn integer(out: &mut Vec<u8>, field: u64, value: Option<&Value>) {
    if let Some(n) = value.and_then(Value::as_i64).filter(|n| *n != 0) {
        key(out, field, 0);
        // int64: a negative number as its two's complement, ten bytes.
        varint(out, n as u64);
    }
}

fn double(out: &mut Vec<u8>, field: u64, value: Option<&Value>) {
    if let Some(x) = value.and_then(Value::as_f64).filter(|x| *x != 0.0) {
        key(out, field, 1);
        out.extend_from_slice(&x.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_open_schema_names_no_type_nor_fields() {
        let open = schema(&json!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "required": ["a"],
            "properties": {"apiVersion": {"type": "string"}},
        }));
        let text = String::from_utf8_lossy(&open);
        assert!(!text.contains("apiVersion") && !text.contains("object"), "{text}");
        assert!(text.contains("x-kubernetes-preserve-unknown-fields"), "{text}");
    }

    #[test]
    fn only_the_protobuf_type_asks_for_protobuf() {
        assert!(wanted(Some(MEDIA_TYPE)));
        assert!(wanted(Some(&format!("application/json;q=0.5, {MEDIA_TYPE}"))));
        assert!(!wanted(Some("application/json")));
        assert!(!wanted(Some("*/*")));
        assert!(!wanted(None));
    }

    #[test]
    fn fields_are_written_in_gnostics_numbering() {
        let doc = json!({
            "swagger": "2.0",
            "info": {"title": "K", "version": "v"},
            "definitions": {"a.B": {
                "type": "object",
                "required": ["spec"],
                "properties": {"n": {"type": "integer", "minimum": 1, "maxLength": 300}},
                "x-kubernetes-group-version-kind": [{"group": "g", "version": "v1", "kind": "B"}],
            }},
        });
        let bytes = document(&doc);
        // swagger = 1: "2.0"
        assert_eq!(&bytes[..5], &[0x0a, 3, b'2', b'.', b'0']);
        // info = 2: {title = 1: "K", version = 2: "v"}
        assert_eq!(&bytes[5..13], &[0x12, 6, 0x0a, 1, b'K', 0x12, 1, b'v']);
        // definitions = 9, one NamedSchema
        assert_eq!(bytes[13], 0x4a);
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("a.B") && text.contains("x-kubernetes-group-version-kind"), "{text}");
        assert!(text.contains(r#""kind":"B""#) && text.contains(r#""group":"g""#), "{text}");
        // A whole schema, field by field in number order.
        let s = schema(
            &json!({"type": "string", "maxLength": 300, "minimum": 1.5, "additionalProperties": false}),
        );
        assert_eq!(
            s,
            [
                vec![0x49],
                1.5f64.to_le_bytes().to_vec(),
                vec![0x58, 0xac, 0x02],
                vec![0xaa, 0x01, 2, 0x10, 0],
                vec![0xb2, 0x01, 8, 0x0a, 6],
                b"string".to_vec(),
            ]
            .concat()
        );
    }
}
