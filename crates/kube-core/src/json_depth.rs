//! JSON nested deeper than a reader takes, made readable: kube-apiserver stores objects
//! nested far deeper than serde_json's 128 levels, so one such object in a list made the whole
//! list unreadable. [`prune_deeper_than`] replaces what lies deeper than a bound with a
//! marker string, reading the text iteratively (no recursion, so no stack to exhaust), for
//! views that show objects and never write them back.

/// What stands for a value past the bound.
pub const PRUNED: &str = "(nested too deep to show)";

/// `json` with every object or array that starts deeper than `max_depth` replaced by
/// [`PRUNED`] as a JSON string; `None` when nothing is that deep (use `json` as it is) or the
/// text is not well-formed enough to find where a pruned value ends.
pub fn prune_deeper_than(json: &[u8], max_depth: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(json.len());
    let mut depth = 0usize;
    let mut pruned = false;
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'"' => {
                let end = string_end(json, i)?;
                out.extend_from_slice(&json[i..end]);
                i = end;
                continue;
            }
            b'{' | b'[' if depth == max_depth => {
                i = container_end(json, i)?;
                out.push(b'"');
                out.extend_from_slice(PRUNED.as_bytes());
                out.push(b'"');
                pruned = true;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        out.push(json[i]);
        i += 1;
    }
    pruned.then_some(out)
}

/// The index just past the string that starts at `start` (a `"`).
fn string_end(json: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < json.len() {
        match json[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the object or array that starts at `start`.
fn container_end(json: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < json.len() {
        match json[i] {
            b'"' => {
                i = string_end(json, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}1{}", r#"{"a":["#.repeat(depth), "]}".repeat(depth))
    }

    #[test]
    fn a_list_with_one_object_too_deep_reads_with_that_part_marked() {
        let deep = nested(200);
        let list = format!(
            r#"{{"kind":"List","items":[{{"metadata":{{"name":"deep"}},"spec":{deep}}},{{"metadata":{{"name":"fine","note":"[{{\"x\"]"}}}}]}}"#
        );
        assert!(serde_json::from_str::<Value>(&list).is_err(), "too deep for serde_json");
        let pruned = prune_deeper_than(list.as_bytes(), 32).expect("something was pruned");
        let value: Value = serde_json::from_slice(&pruned).unwrap();
        assert_eq!(value["items"][0]["metadata"]["name"], "deep");
        assert_eq!(
            value["items"][1]["metadata"],
            json!({"name": "fine", "note": "[{\"x\"]"}),
            "strings are kept as they are"
        );
        let mut at = &value["items"][0]["spec"];
        let mut levels = 0;
        while let Some(inner) = at.get("a").and_then(|a| a.get(0)) {
            at = inner;
            levels += 1;
        }
        assert_eq!(at["a"], PRUNED, "the rest is marked, {levels} levels down");
    }

    #[test]
    fn shallow_or_broken_text_is_left_to_the_parser() {
        assert_eq!(prune_deeper_than(br#"{"a":[1,2,{"b":"]"}]}"#, 32), None);
        assert_eq!(prune_deeper_than(nested(40).as_bytes(), 80), None, "80 levels, all within");
        assert_eq!(prune_deeper_than(br#"{"a":[[[[[["#, 2), None, "no end to find");
        assert_eq!(prune_deeper_than(br#"]]]"#, 2), None);
        // A million levels: read without recursion.
        let huge = nested(1_000_000);
        let pruned = prune_deeper_than(huge.as_bytes(), 8).unwrap();
        assert!(pruned.len() < 200, "{}", String::from_utf8_lossy(&pruned));
        assert!(serde_json::from_slice::<Value>(&pruned).is_ok());
    }
}
