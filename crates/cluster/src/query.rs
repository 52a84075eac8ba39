//! What a list or watch asks for: selectors, paging, timeouts.

use fundament_selectors::{FieldSelector, LabelSelector};
use serde_json::Value;

use crate::object;
use crate::resource::{Builtin, ResourceType};
use crate::status::ApiError;

#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub limit: usize,
    pub continue_token: String,
    pub resource_version: String,
    pub watch: bool,
    pub timeout_seconds: Option<u64>,
    pub dry_run: bool,
    pub include_object: String,
    pub send_initial_events: bool,
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query string as (key, value) pairs, percent-decoded.
pub fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

impl ListQuery {
    pub fn parse(query: &str) -> Result<Self, ApiError> {
        let mut q = Self::default();
        for (k, v) in pairs(query) {
            match k.as_str() {
                "labelSelector" => {
                    q.labels = LabelSelector::parse(&v).map_err(|e| ApiError::bad_request(e.to_string()))?
                }
                "fieldSelector" => {
                    q.fields = FieldSelector::parse(&v).map_err(|e| ApiError::bad_request(e.to_string()))?
                }
                "limit" => {
                    q.limit = v.parse().map_err(|_| ApiError::bad_request(format!("invalid limit: {v:?}")))?
                }
                "continue" => q.continue_token = v,
                "resourceVersion" => q.resource_version = v,
                "watch" => q.watch = matches!(v.as_str(), "true" | "1" | ""),
                "timeoutSeconds" => {
                    q.timeout_seconds = Some(
                        v.parse()
                            .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds: {v:?}")))?,
                    )
                }
                "dryRun" => q.dry_run = v == "All",
                "includeObject" => q.include_object = v,
                "sendInitialEvents" => q.send_initial_events = v == "true",
                _ => {}
            }
        }
        Ok(q)
    }

    /// Checks the field selector against the fields this kind can select on.
    pub fn check_fields(&self, rt: &ResourceType) -> Result<(), ApiError> {
        let supported = supported_fields(rt);
        match self.fields.requirements().iter().find(|r| !supported.contains(&r.field.as_str())) {
            None => Ok(()),
            Some(r) => Err(ApiError::bad_request(format!(
                "\"{}\" is not a known field selector: only {}",
                r.field,
                supported.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    pub fn matches(&self, obj: &Value) -> bool {
        (self.labels.is_empty() || self.labels.matches(&object::labels(obj)))
            && self.fields.matches(|field| field_value(obj, field))
    }
}

fn supported_fields(rt: &ResourceType) -> Vec<&'static str> {
    let mut fields = vec!["metadata.name", "metadata.namespace"];
    match rt.builtin {
        Some(Builtin::Event) => fields.extend([
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ]),
        Some(Builtin::Secret) => fields.push("type"),
        Some(Builtin::Namespace) => fields.push("status.phase"),
        _ => {}
    }
    fields
}

fn field_value(obj: &Value, field: &str) -> Option<String> {
    let v = match field {
        "source" => &obj["source"]["component"],
        _ => field.split('.').fold(obj, |v, part| &v[part]),
    };
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_selectors_and_paging() {
        let q = ListQuery::parse("labelSelector=plugins.camunda.io%2Fcluster%3Dorders&limit=5&watch=1&fieldSelector=metadata.name%3Dx").unwrap();
        assert_eq!(q.limit, 5);
        assert!(q.watch);
        assert!(q.matches(
            &json!({"metadata": {"name": "x", "labels": {"plugins.camunda.io/cluster": "orders"}}})
        ));
        assert!(!q.matches(
            &json!({"metadata": {"name": "y", "labels": {"plugins.camunda.io/cluster": "orders"}}})
        ));
        assert!(ListQuery::parse("limit=x").is_err());
        assert!(ListQuery::parse("labelSelector=a%20in%20(").is_err());
    }

    #[test]
    fn events_select_on_involved_object() {
        let q =
            ListQuery::parse("fieldSelector=involvedObject.name%3Dweb,involvedObject.namespace%3Ddefault")
                .unwrap();
        let ev =
            json!({"metadata": {"name": "e"}, "involvedObject": {"name": "web", "namespace": "default"}});
        assert!(q.matches(&ev));
        let types = crate::resource::builtins();
        let events = types.iter().find(|t| t.plural == "events").unwrap();
        let cms = types.iter().find(|t| t.plural == "configmaps").unwrap();
        assert!(q.check_fields(events).is_ok());
        assert!(q.check_fields(cms).is_err());
    }
}
