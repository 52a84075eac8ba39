//! Typed access to the fields of a body. Mutating `serde_json::Value` by
//! index (`obj["spec"]["type"] = …`) panics when a parent is not an object,
//! and request bodies are whatever clients send: every write goes through
//! these functions instead, which answer a field cause worded as the API
//! server words type errors, before anything is changed.

use serde_json::{Map, Value};

use crate::status::Cause;

pub type Object = Map<String, Value>;

/// The JSON type of a value, as the API server's schema errors name it.
pub use fundament_schema::json_type_name as type_name;

/// `spec: Invalid value: "string": spec in body must be of type object`.
pub fn wrong_type(path: &str, v: &Value, expected: &str) -> Cause {
    Cause::new(
        "FieldValueTypeInvalid",
        path,
        format!("Invalid value: \"{}\": {path} in body must be of type {expected}", type_name(v)),
    )
}

/// `data: Invalid value: must be a map of strings`, of a string map field
/// (`data`, `metadata.labels`) of another type.
pub fn not_a_string_map(path: &str) -> Cause {
    Cause::new("FieldValueTypeInvalid", path, "Invalid value: must be a map of strings")
}

/// `data[a]: Invalid value: must be a string`, of an entry of a string map.
pub fn not_a_string(path: &str) -> Cause {
    Cause::new("FieldValueTypeInvalid", path, "Invalid value: must be a string")
}

/// The object at `path` below `v` (`v` itself for an empty path), each
/// missing or null step made an empty object; a step of another type is a cause.
pub fn object_at<'a>(v: &'a mut Value, path: &[&str]) -> Result<&'a mut Object, Cause> {
    let mut current = v;
    let mut walked = String::new();
    for step in path {
        let map = match current {
            Value::Object(m) => m,
            other => {
                return Err(wrong_type(if walked.is_empty() { "<root>" } else { &walked }, other, "object"));
            }
        };
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(step);
        let child = map.entry(step.to_string()).or_insert(Value::Null);
        if child.is_null() {
            *child = Value::Object(Object::new());
        }
        current = child;
    }
    match current {
        Value::Object(m) => Ok(m),
        other => Err(wrong_type(if walked.is_empty() { "<root>" } else { &walked }, other, "object")),
    }
}

/// Sets `path` (at least one step) to `value`, creating the objects above it.
pub fn set(v: &mut Value, path: &[&str], value: Value) -> Result<(), Cause> {
    let Some((last, parents)) = path.split_last() else {
        *v = value;
        return Ok(());
    };
    object_at(v, parents)?.insert(last.to_string(), value);
    Ok(())
}

/// Removes `path` if its parents exist as objects.
pub fn remove(v: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut current = v;
    for step in parents {
        match current.get_mut(*step) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Some(m) = current.as_object_mut() {
        m.remove(*last);
    }
}

/// A cause unless `v[path]` is absent, null, or of the `expected` type.
pub fn expect(v: &Value, path: &[&str], expected: &str) -> Option<Cause> {
    let field = path.iter().try_fold(v, |v, step| v.get(*step))?;
    let ok = match expected {
        "object" => field.is_object(),
        "array" => field.is_array(),
        "string" => field.is_string(),
        "boolean" => field.is_boolean(),
        "integer" => field.is_i64() || field.is_u64(),
        _ => true,
    };
    (!ok && !field.is_null()).then(|| wrong_type(&path.join("."), field, expected))
}

/// The causes of every `(path, type)` in `expected` that `v` does not meet.
pub fn expect_all(v: &Value, expected: &[(&[&str], &str)]) -> Vec<Cause> {
    expected.iter().filter_map(|(path, ty)| expect(v, path, ty)).collect()
}

/// A cause for every element of the array at `path` that is not of `expected` type.
pub fn expect_elements(v: &Value, path: &[&str], expected: &str) -> Vec<Cause> {
    let Some(items) = path.iter().try_fold(v, |v, step| v.get(*step)).and_then(Value::as_array) else {
        return Vec::new();
    };
    let base = path.join(".");
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            expect(item, &[], expected).map(|_| wrong_type(&format!("{base}[{i}]"), item, expected))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_at_creates_missing_steps_and_refuses_other_types() {
        let mut v = json!({"metadata": null});
        object_at(&mut v, &["metadata", "labels"]).unwrap().insert("a".into(), json!("b"));
        assert_eq!(v, json!({"metadata": {"labels": {"a": "b"}}}));
        let mut v = json!({"spec": "x"});
        let cause = object_at(&mut v, &["spec", "type"]).unwrap_err();
        assert_eq!(
            (cause.field.as_str(), cause.message.as_str()),
            ("spec", "Invalid value: \"string\": spec in body must be of type object")
        );
        assert_eq!(v, json!({"spec": "x"}), "nothing changed");
        let mut v = json!({"data": [1]});
        assert_eq!(set(&mut v, &["data", "k"], json!("v")).unwrap_err().field, "data");
        assert!(object_at(&mut json!(3), &[]).is_err());
    }

    #[test]
    fn expectations_name_the_field_and_its_type() {
        let v = json!({"metadata": {"labels": [1], "name": 2}, "rules": [{}, "x"]});
        let causes =
            expect_all(&v, &[(&["metadata", "labels"], "object"), (&["metadata", "name"], "string")]);
        assert_eq!(causes.len(), 2);
        assert_eq!(
            causes[1].message,
            "Invalid value: \"integer\": metadata.name in body must be of type string"
        );
        assert!(expect(&v, &["spec"], "object").is_none(), "absent is fine");
        let elements = expect_elements(&v, &["rules"], "object");
        assert_eq!(elements.len(), 1);
        assert_eq!(elements[0].field, "rules[1]");
    }
}
