//! Just enough of the Kubernetes protobuf encoding to read what kubectl
//! sends that way: typed clients (`kubectl auth can-i`, `kubectl create
//! token`, `kubectl create namespace`) post protobuf bodies, and kubectl
//! 1.32 does not fall back to JSON. Bodies are turned into the JSON the rest
//! of the server reads; answers are always JSON, which clients accept.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::status::ApiError;

pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\x00";

/// One field of a message: (number, value).
#[derive(Debug, Clone)]
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

fn bad() -> ApiError {
    ApiError::bad_request("the body of the request could not be decoded as protobuf")
}

fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, ApiError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos).ok_or_else(bad)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(bad())
}

fn fields(buf: &[u8]) -> Result<Vec<(u64, Field<'_>)>, ApiError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let key = varint(buf, &mut pos)?;
        let (number, wire) = (key >> 3, key & 7);
        let field = match wire {
            0 => Field::Varint(varint(buf, &mut pos)?),
            1 => {
                pos = pos.checked_add(8).filter(|p| *p <= buf.len()).ok_or_else(bad)?;
                Field::Fixed
            }
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).map_err(|_| bad())?;
                let end = pos.checked_add(len).filter(|e| *e <= buf.len()).ok_or_else(bad)?;
                let bytes = &buf[pos..end];
                pos = end;
                Field::Bytes(bytes)
            }
            5 => {
                pos = pos.checked_add(4).filter(|p| *p <= buf.len()).ok_or_else(bad)?;
                Field::Fixed
            }
            _ => return Err(bad()),
        };
        out.push((number, field));
    }
    Ok(out)
}

/// Reads a message as JSON with `names[i] = (number, json name, kind)`.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    Strings,
    Int,
    Bool,
    Msg(&'static [(u64, &'static str, Kind)]),
    StringMap,
    /// `map<string, bytes>`: the values as base64, as JSON carries them.
    BytesMap,
}

/// One entry of a protobuf map field, into the JSON object at `name`.
fn insert_entry(obj: &mut Map<String, Value>, name: &str, key: String, value: Value) -> Result<(), ApiError> {
    obj.entry(name).or_insert_with(|| json!({})).as_object_mut().ok_or_else(bad)?.insert(key, value);
    Ok(())
}

fn message(buf: &[u8], names: &[(u64, &'static str, Kind)]) -> Result<Value, ApiError> {
    let mut obj = Map::new();
    for (number, field) in fields(buf)? {
        let Some((_, name, kind)) = names.iter().find(|(n, _, _)| *n == number) else { continue };
        match (kind, field) {
            (Kind::Str, Field::Bytes(b)) => {
                obj.insert((*name).into(), Value::String(String::from_utf8(b.to_vec()).map_err(|_| bad())?));
            }
            (Kind::Strings, Field::Bytes(b)) => {
                let s = Value::String(String::from_utf8(b.to_vec()).map_err(|_| bad())?);
                obj.entry(*name).or_insert_with(|| json!([])).as_array_mut().ok_or_else(bad)?.push(s);
            }
            (Kind::Int, Field::Varint(v)) => {
                obj.insert((*name).into(), json!(v as i64));
            }
            (Kind::Bool, Field::Varint(v)) => {
                obj.insert((*name).into(), Value::Bool(v != 0));
            }
            (Kind::Msg(inner), Field::Bytes(b)) => {
                obj.insert((*name).into(), message(b, inner)?);
            }
            (Kind::StringMap, Field::Bytes(b)) => {
                let entry = message(b, &[(1, "k", Kind::Str), (2, "v", Kind::Str)])?;
                let k = entry["k"].as_str().unwrap_or_default().to_string();
                let v = entry["v"].clone();
                insert_entry(&mut obj, name, k, v)?;
            }
            (Kind::BytesMap, Field::Bytes(b)) => {
                let mut key = String::new();
                let mut value: &[u8] = &[];
                for (number, field) in fields(b)? {
                    match (number, field) {
                        (1, Field::Bytes(k)) => key = String::from_utf8(k.to_vec()).map_err(|_| bad())?,
                        (2, Field::Bytes(v)) => value = v,
                        _ => return Err(bad()),
                    }
                }
                let encoded = Value::String(base64::engine::general_purpose::STANDARD.encode(value));
                insert_entry(&mut obj, name, key, encoded)?;
            }
            _ => return Err(bad()),
        }
    }
    Ok(Value::Object(obj))
}

const OBJECT_META: &[(u64, &str, Kind)] = &[
    (1, "name", Kind::Str),
    (2, "generateName", Kind::Str),
    (3, "namespace", Kind::Str),
    (11, "labels", Kind::StringMap),
    (12, "annotations", Kind::StringMap),
];
const RESOURCE_ATTRIBUTES: &[(u64, &str, Kind)] = &[
    (1, "namespace", Kind::Str),
    (2, "verb", Kind::Str),
    (3, "group", Kind::Str),
    (4, "version", Kind::Str),
    (5, "resource", Kind::Str),
    (6, "subresource", Kind::Str),
    (7, "name", Kind::Str),
];
const NON_RESOURCE_ATTRIBUTES: &[(u64, &str, Kind)] = &[(1, "path", Kind::Str), (2, "verb", Kind::Str)];
const ACCESS_REVIEW_SPEC: &[(u64, &str, Kind)] = &[
    (1, "resourceAttributes", Kind::Msg(RESOURCE_ATTRIBUTES)),
    (2, "nonResourceAttributes", Kind::Msg(NON_RESOURCE_ATTRIBUTES)),
    (3, "user", Kind::Str),
    (4, "groups", Kind::Strings),
    (6, "uid", Kind::Str),
];
const RULES_REVIEW_SPEC: &[(u64, &str, Kind)] = &[(1, "namespace", Kind::Str)];
const TOKEN_REQUEST_SPEC: &[(u64, &str, Kind)] =
    &[(1, "audiences", Kind::Strings), (4, "expirationSeconds", Kind::Int)];
const EMPTY: &[(u64, &str, Kind)] = &[];
/// `kubectl create configmap` and `kubectl create secret` send these as protobuf too.
const CONFIG_MAP: &[(u64, &str, Kind)] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::StringMap),
    (3, "binaryData", Kind::BytesMap),
    (4, "immutable", Kind::Bool),
];
const SECRET: &[(u64, &str, Kind)] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::BytesMap),
    (3, "type", Kind::Str),
    (4, "stringData", Kind::StringMap),
    (5, "immutable", Kind::Bool),
];

/// Decodes a protobuf body of one of the kinds kubectl sends that way.
pub fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let rest = body.strip_prefix(MAGIC).ok_or_else(bad)?;
    let envelope = fields(rest)?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (number, field) in envelope {
        match (number, field) {
            (1, Field::Bytes(b)) => {
                let tm = message(b, &[(1, "apiVersion", Kind::Str), (2, "kind", Kind::Str)])?;
                api_version = tm["apiVersion"].as_str().unwrap_or_default().to_string();
                kind = tm["kind"].as_str().unwrap_or_default().to_string();
            }
            (2, Field::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let with_spec = |spec: &'static [(u64, &'static str, Kind)]| {
        [(1, "metadata", Kind::Msg(OBJECT_META)), (2, "spec", Kind::Msg(spec))]
    };
    let layout: Vec<(u64, &'static str, Kind)> = match kind.as_str() {
        "SubjectAccessReview" | "SelfSubjectAccessReview" | "LocalSubjectAccessReview" => {
            with_spec(ACCESS_REVIEW_SPEC).to_vec()
        }
        "SelfSubjectRulesReview" => with_spec(RULES_REVIEW_SPEC).to_vec(),
        "SelfSubjectReview" | "Namespace" | "ServiceAccount" => with_spec(EMPTY).to_vec(),
        "TokenRequest" => with_spec(TOKEN_REQUEST_SPEC).to_vec(),
        "ConfigMap" => CONFIG_MAP.to_vec(),
        "Secret" => SECRET.to_vec(),
        other => {
            return Err(ApiError::unsupported_media_type(
                MEDIA_TYPE,
                &["application/json", "application/yaml"],
            ))
            .inspect_err(|_| tracing::debug!(kind = other, "protobuf body of an unsupported kind"));
        }
    };
    let mut obj = message(raw, &layout)?;
    obj["apiVersion"] = Value::String(api_version);
    obj["kind"] = Value::String(kind);
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len_field(number: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![((number << 3) | 2) as u8, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn reads_a_self_subject_access_review_envelope() {
        let attrs = [len_field(1, b"default"), len_field(2, b"create"), len_field(5, b"grants")].concat();
        let spec = len_field(1, &attrs);
        let raw = len_field(2, &spec);
        let type_meta =
            [len_field(1, b"authorization.k8s.io/v1"), len_field(2, b"SelfSubjectAccessReview")].concat();
        let body = [MAGIC.to_vec(), len_field(1, &type_meta), len_field(2, &raw)].concat();
        let v = decode(&body).unwrap();
        assert_eq!(v["kind"], "SelfSubjectAccessReview");
        assert_eq!(v["spec"]["resourceAttributes"]["verb"], "create");
        assert_eq!(v["spec"]["resourceAttributes"]["resource"], "grants");
    }

    /// `kubectl create configmap web --from-literal=a=b --from-file=bin` and
    /// `kubectl create secret generic s --from-literal=k=v`: found by bench/soak.mjs,
    /// whose `kubectl create configmap` was refused as an unknown format.
    #[test]
    fn reads_config_maps_and_secrets() {
        let meta = len_field(1, &[len_field(1, b"web"), len_field(3, b"default")].concat());
        let entry = |k: &[u8], v: &[u8]| [len_field(1, k), len_field(2, v)].concat();
        let raw = [
            meta.clone(),
            len_field(2, &entry(b"a", b"b")),
            len_field(3, &entry(b"bin", b"\x00\xff")),
            vec![4 << 3, 1],
        ]
        .concat();
        let body = [
            MAGIC.to_vec(),
            len_field(1, &[len_field(1, b"v1"), len_field(2, b"ConfigMap")].concat()),
            len_field(2, &raw),
        ]
        .concat();
        let v = decode(&body).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "default"},
            "data": {"a": "b"}, "binaryData": {"bin": "AP8="}, "immutable": true})
        );
        let raw = [meta, len_field(2, &entry(b"k", b"v")), len_field(3, b"Opaque")].concat();
        let body = [
            MAGIC.to_vec(),
            len_field(1, &[len_field(1, b"v1"), len_field(2, b"Secret")].concat()),
            len_field(2, &raw),
        ]
        .concat();
        let v = decode(&body).unwrap();
        assert_eq!(v["data"], json!({"k": "dg=="}));
        assert_eq!(v["type"], "Opaque");
    }

    #[test]
    fn garbage_is_a_bad_request_never_a_panic() {
        for body in [&b"k8s\x00\xff\xff\xff"[..], b"nope", b"k8s\x00\x0a\x7f", b"k8s\x00\x0b"] {
            assert!(decode(body).is_err());
        }
    }
}
