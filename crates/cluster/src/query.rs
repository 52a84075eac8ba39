//! What a list or watch asks for: selectors, paging, timeouts.

use fundament_selectors::{FieldSelector, LabelSelector};
use serde_json::Value;

use fundament_kube_core::Query;

use crate::object;

/// The longest a watch stays open, whatever `timeoutSeconds` asks (kube-apiserver's default
/// range is 30 to 60 minutes).
pub const MAX_WATCH_SECONDS: u64 = 3600;
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
    /// `allowWatchBookmarks`: the watch may get BOOKMARK events (one ends it at shutdown).
    pub allow_bookmarks: bool,
}

impl ListQuery {
    /// Reads the parameters as kube-apiserver does ([`Query`]: decoded keys, the first value of
    /// a repeated parameter, `watch` false only for `0` and `false`), so that what the gateway
    /// judged is what is served.
    pub fn parse(query: &Query) -> Result<Self, ApiError> {
        let mut q = Self::default();
        if let Some(v) = query.get("labelSelector") {
            q.labels = LabelSelector::parse(v).map_err(|e| ApiError::bad_request(e.to_string()))?;
        }
        if let Some(v) = query.get("fieldSelector") {
            q.fields = FieldSelector::parse(v).map_err(|e| ApiError::bad_request(e.to_string()))?;
        }
        if let Some(v) = query.get("limit") {
            q.limit = v.parse().map_err(|_| ApiError::bad_request(format!("invalid limit: {v:?}")))?;
        }
        q.continue_token = query.get("continue").unwrap_or_default().to_string();
        q.resource_version = query.get("resourceVersion").unwrap_or_default().to_string();
        q.watch = query.flag("watch");
        if let Some(v) = query.get("timeoutSeconds") {
            let seconds: u64 =
                v.parse().map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds: {v:?}")))?;
            q.timeout_seconds = Some(seconds.min(MAX_WATCH_SECONDS));
        }
        q.dry_run = query.all("dryRun").any(|v| v == "All");
        q.include_object = query.get("includeObject").unwrap_or_default().to_string();
        q.send_initial_events = query.flag("sendInitialEvents");
        q.allow_bookmarks = query.flag("allowWatchBookmarks");
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

    fn parse(raw: &str) -> Result<ListQuery, ApiError> {
        ListQuery::parse(&Query::parse(raw))
    }

    #[test]
    fn reads_selectors_and_paging() {
        let q = parse("labelSelector=plugins.camunda.io%2Fcluster%3Dorders&limit=5&watch=1&fieldSelector=metadata.name%3Dx").unwrap();
        assert_eq!(q.limit, 5);
        assert!(q.watch);
        assert!(q.matches(
            &json!({"metadata": {"name": "x", "labels": {"plugins.camunda.io/cluster": "orders"}}})
        ));
        assert!(!q.matches(
            &json!({"metadata": {"name": "y", "labels": {"plugins.camunda.io/cluster": "orders"}}})
        ));
        assert!(parse("limit=x").is_err());
        assert!(parse("labelSelector=a%20in%20(").is_err());
    }

    #[test]
    fn reads_parameters_as_the_api_server_does() {
        assert!(parse("wat%63h=1").unwrap().watch);
        assert!(!parse("watch=0&watch=1").unwrap().watch, "the first value counts");
        assert!(parse("watch=yes").unwrap().watch);
        assert!(!parse("watch=False").unwrap().watch);
        assert_eq!(parse("limit=5&limit=x").unwrap().limit, 5);
        assert_eq!(parse("timeoutSeconds=999999").unwrap().timeout_seconds, Some(MAX_WATCH_SECONDS));
    }

    #[test]
    fn events_select_on_involved_object() {
        let q = parse("fieldSelector=involvedObject.name%3Dweb,involvedObject.namespace%3Ddefault").unwrap();
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
