//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and the
//! strategic merge patch kubectl sends for built-in kinds.

use serde_json::Value;

use crate::resource::ResourceType;
use crate::status::ApiError;

pub const MERGE: &str = "application/merge-patch+json";
pub const JSON: &str = "application/json-patch+json";
pub const STRATEGIC: &str = "application/strategic-merge-patch+json";
pub const APPLY: &str = "application/apply-patch+yaml";
/// kube-apiserver's bound on the operations of one JSON patch.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;
/// How deep a JSON patch may make an object nest, by its upper bound (the stored object then
/// must nest at most 120 levels: `cluster::check_stored_size`).
const MAX_PATCHED_DEPTH: usize = 240;

/// How deeply `value` nests, counted without recursion.
pub(crate) fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[derive(Debug, Clone)]
pub enum Patch {
    Merge(Value),
    Json(json_patch::Patch),
    Strategic(Value),
}

impl Patch {
    /// Reads a patch body of the given content type, for `rt`.
    pub fn parse(content_type: &str, body: &[u8], rt: &ResourceType) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        let accepted: &[&str] = if rt.builtin.is_some() { &[JSON, MERGE, STRATEGIC] } else { &[JSON, MERGE] };
        let decode = || -> Result<Value, ApiError> {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
        };
        match media.as_str() {
            MERGE => Ok(Self::Merge(decode()?)),
            JSON => {
                let ops: json_patch::Patch = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
                Ok(Self::Json(ops))
            }
            STRATEGIC if rt.builtin.is_some() => Ok(Self::Strategic(decode()?)),
            _ => Err(ApiError::unsupported_media_type(&media, accepted)),
        }
    }

    pub fn apply(&self, current: &Value, _rt: &ResourceType) -> Result<Value, ApiError> {
        let mut doc = current.clone();
        match self {
            Self::Merge(p) => {
                if !p.is_object() {
                    return Err(ApiError::bad_request("a merge patch must be a JSON object"));
                }
                json_patch::merge(&mut doc, p);
            }
            Self::Json(ops) => {
                // kube-apiserver's bounds (CVE-2019-1002100): a `copy` doubles what it copies,
                // so thirty of them in a 1 KB body made 2³⁰ copies of the object.
                if ops.len() > MAX_JSON_PATCH_OPERATIONS {
                    return Err(ApiError::failure(
                        413,
                        "RequestEntityTooLarge",
                        format!(
                            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                            ops.len()
                        ),
                    ));
                }
                let mut copied = 0usize;
                // An upper bound of how deep the document nests, kept per operation without
                // walking it: a `move` or `copy` into a deeper path nests what it moves deeper
                // (ten thousand of them, a million levels, whose copy and drop recurse).
                let mut deepest = depth(&doc);
                for op in ops.iter() {
                    let segments = |pointer: &str| pointer.matches('/').count();
                    deepest = match op {
                        json_patch::PatchOperation::Add(op) => {
                            deepest.max(segments(op.path.as_str()) + depth(&op.value))
                        }
                        json_patch::PatchOperation::Replace(op) => {
                            deepest.max(segments(op.path.as_str()) + depth(&op.value))
                        }
                        json_patch::PatchOperation::Move(op) => {
                            deepest.max(segments(op.path.as_str()) + deepest)
                        }
                        json_patch::PatchOperation::Copy(op) => {
                            deepest.max(segments(op.path.as_str()) + deepest)
                        }
                        json_patch::PatchOperation::Remove(_) | json_patch::PatchOperation::Test(_) => {
                            deepest
                        }
                    };
                    if deepest > MAX_PATCHED_DEPTH {
                        return Err(ApiError::invalid_patch(&format!(
                            "the patch could nest the object deeper than {MAX_PATCHED_DEPTH} levels"
                        )));
                    }
                    if let json_patch::PatchOperation::Copy(copy) = op {
                        let size = doc
                            .pointer(copy.from.as_str())
                            .map_or(0, |v| serde_json::to_vec(v).map_or(usize::MAX, |json| json.len()));
                        copied = copied.saturating_add(size);
                        if copied > crate::api::MAX_BODY {
                            return Err(ApiError::failure(
                                413,
                                "RequestEntityTooLarge",
                                format!(
                                    "The JSON patch copies more than {} bytes in all",
                                    crate::api::MAX_BODY
                                ),
                            ));
                        }
                    }
                    json_patch::patch(&mut doc, std::slice::from_ref(op))
                        .map_err(|e| ApiError::invalid_patch(&format!("the patch cannot be applied: {e}")))?;
                }
            }
            Self::Strategic(p) => {
                if !p.is_object() {
                    return Err(ApiError::bad_request("a strategic merge patch must be a JSON object"));
                }
                strategic_merge(&mut doc, p);
            }
        }
        Ok(doc)
    }
}

/// Strategic merge, for the built-in kinds served here: maps merge as in a
/// merge patch, lists are replaced (none of these kinds has merge-keyed lists
/// that kubectl patches element-wise), and the directives are honoured:
/// `$patch: delete|replace`, `$retainKeys`; `$setElementOrder/…` and
/// `$deleteFromPrimitiveList/…` are read and dropped.
fn strategic_merge(doc: &mut Value, patch: &Value) {
    let Some(p) = patch.as_object() else {
        *doc = patch.clone();
        return;
    };
    match p.get("$patch").and_then(Value::as_str) {
        Some("delete") => {
            *doc = Value::Null;
            return;
        }
        Some("replace") => {
            let mut replaced = patch.clone();
            strip_directives(&mut replaced);
            *doc = replaced;
            return;
        }
        _ => {}
    }
    if !doc.is_object() {
        *doc = Value::Object(Default::default());
    }
    let Some(target) = doc.as_object_mut() else { return };
    if let Some(keep) = p.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        target.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        if let Some(list) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let _ = list;
            continue;
        }
        match v {
            Value::Null => {
                target.remove(k);
            }
            Value::Object(_) => {
                let entry = target.entry(k.clone()).or_insert(Value::Null);
                strategic_merge(entry, v);
                if entry.is_null() {
                    target.remove(k);
                }
            }
            _ => {
                let mut v = v.clone();
                strip_directives(&mut v);
                target.insert(k.clone(), v);
            }
        }
    }
}

fn strip_directives(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            m.values_mut().for_each(strip_directives);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

#[cfg(test)]
mod tests {

    fn configmap() -> ResourceType {
        crate::resource::builtins().into_iter().find(|t| t.kind == "ConfigMap").unwrap()
    }

    #[test]
    fn copies_that_double_the_object_stop_at_the_body_limit() {
        let doc = serde_json::json!({"metadata": {"name": "c"}, "data": {"k": "v".repeat(1000)}});
        let ops: Vec<serde_json::Value> = (0..30)
            .map(|i| serde_json::json!({"op": "copy", "from": "", "path": format!("/x{i}")}))
            .collect();
        let patch =
            Patch::parse(JSON, serde_json::to_string(&ops).unwrap().as_bytes(), &configmap()).unwrap();
        let started = std::time::Instant::now();
        let error = patch.apply(&doc, &configmap()).unwrap_err();
        assert_eq!(error.code, 413, "{error:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
        // A few copies are fine.
        let few = &ops[..2];
        let patch = Patch::parse(JSON, serde_json::to_string(few).unwrap().as_bytes(), &configmap()).unwrap();
        assert!(patch.apply(&doc, &configmap()).is_ok());
        // So are 10,000 operations, and not one more.
        let many: Vec<serde_json::Value> = (0..10_001)
            .map(|_| serde_json::json!({"op": "test", "path": "/metadata/name", "value": "c"}))
            .collect();
        let patch =
            Patch::parse(JSON, serde_json::to_string(&many).unwrap().as_bytes(), &configmap()).unwrap();
        assert_eq!(patch.apply(&doc, &configmap()).unwrap_err().code, 413);
    }

    #[test]
    fn moves_into_deeper_paths_stop_before_the_object_nests_too_deep() {
        let doc = serde_json::json!({"metadata": {"name": "c"}, "data": {}});
        let mut ops = vec![serde_json::json!({"op": "add", "path": "/a", "value": {}})];
        let mut at = String::from("/a");
        for _ in 0..48 {
            at.push_str("/a");
            ops.push(serde_json::json!({"op": "add", "path": at, "value": {}}));
        }
        // Each copy nests the whole chain under its own deepest point: 50 levels more each time.
        for i in 0..10 {
            ops.push(serde_json::json!({"op": "copy", "from": "/a", "path": format!("{at}/c{i}")}));
        }
        let patch =
            Patch::parse(JSON, serde_json::to_string(&ops).unwrap().as_bytes(), &configmap()).unwrap();
        let error = patch.apply(&doc, &configmap()).unwrap_err();
        assert!(error.message.contains("deeper than"), "{error:?}");
    }

    use super::*;
    use serde_json::json;

    fn rt(builtin: bool) -> ResourceType {
        let types = crate::resource::builtins();
        let mut t = types.into_iter().find(|t| t.plural == "configmaps").unwrap();
        if !builtin {
            t.builtin = None;
        }
        t
    }

    #[test]
    fn merge_json_and_strategic_patches_apply() {
        let cur = json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}});
        let merge =
            Patch::parse(MERGE, br#"{"metadata":{"labels":{"x":null,"z":"3"}}}"#, &rt(false)).unwrap();
        assert_eq!(merge.apply(&cur, &rt(false)).unwrap()["metadata"]["labels"], json!({"y": "2", "z": "3"}));
        let ops =
            Patch::parse(JSON, br#"[{"op":"replace","path":"/data/k","value":"w"}]"#, &rt(false)).unwrap();
        assert_eq!(ops.apply(&cur, &rt(false)).unwrap()["data"]["k"], "w");
        let bad = Patch::parse(JSON, br#"[{"op":"remove","path":"/nope"}]"#, &rt(false)).unwrap();
        assert_eq!(bad.apply(&cur, &rt(false)).unwrap_err().code, 422);
        let smp = Patch::parse(
            STRATEGIC,
            br#"{"$setElementOrder/x":[],"data":{"$patch":"replace","n":"1"},"metadata":{"annotations":{"a":"b"}}}"#,
            &rt(true),
        )
        .unwrap();
        let out = smp.apply(&cur, &rt(true)).unwrap();
        assert_eq!(out["data"], json!({"n": "1"}));
        assert_eq!(out["metadata"]["annotations"]["a"], "b");
        assert!(out.get("$setElementOrder/x").is_none());
    }

    #[test]
    fn custom_resources_refuse_strategic_merge_like_the_apiserver() {
        let e = Patch::parse(STRATEGIC, b"{}", &rt(false)).unwrap_err();
        assert_eq!(e.code, 415);
        assert!(e.message.contains("application/merge-patch+json"));
        assert_eq!(Patch::parse(MERGE, b"{not json", &rt(false)).unwrap_err().code, 400);
    }
}
