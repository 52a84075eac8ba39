//! `Table` output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`):
//! printer columns of CRDs evaluated as the apiserver does, and the columns
//! kubectl shows for the built-in kinds.

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::resource::{Builtin, ResourceType};

/// What each row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    pub fn parse(s: &str) -> Self {
        match s {
            "None" => Self::None,
            "Object" => Self::Object,
            _ => Self::Metadata,
        }
    }
}

fn col(name: &str, kind: &str, format: &str, description: &str, priority: i64) -> Value {
    json!({"name": name, "type": kind, "format": format, "description": description, "priority": priority})
}

fn name_col() -> Value {
    col(
        "Name",
        "string",
        "name",
        "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
        0,
    )
}

fn age_col() -> Value {
    col(
        "Age",
        "string",
        "",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
        0,
    )
}

/// Column definitions for `rt`.
pub fn columns(rt: &ResourceType) -> Vec<Value> {
    if let Some(crd) = &rt.crd {
        return fundament_jsonpath::column_definitions(&crd.columns);
    }
    let created = || {
        col(
            "Created At",
            "date",
            "",
            "CreationTimestamp is a timestamp representing the server time when this object was created.",
            0,
        )
    };
    match rt.builtin {
        Some(Builtin::Namespace) => {
            vec![name_col(), col("Status", "string", "", "The status of the namespace", 0), age_col()]
        }
        Some(Builtin::ServiceAccount) => vec![
            name_col(),
            col(
                "Secrets",
                "string",
                "",
                "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
                0,
            ),
            age_col(),
        ],
        Some(Builtin::Secret) => vec![
            name_col(),
            col("Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0),
            col("Data", "string", "", "Data contains the secret data.", 0),
            age_col(),
        ],
        Some(Builtin::ConfigMap) => {
            vec![name_col(), col("Data", "string", "", "Data contains the configuration data.", 0), age_col()]
        }
        Some(Builtin::Service) => vec![
            name_col(),
            col("Type", "string", "", "type determines how the Service is exposed.", 0),
            col("Cluster-IP", "string", "", "clusterIP is the IP address of the service.", 0),
            col(
                "External-IP",
                "string",
                "",
                "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
                0,
            ),
            col("Port(s)", "string", "", "The list of ports that are exposed by this service.", 0),
            age_col(),
            col(
                "Selector",
                "string",
                "",
                "Route service traffic to pods with label keys and values matching this selector.",
                1,
            ),
        ],
        Some(Builtin::Event) => vec![
            col("Last Seen", "string", "", "Time when last event occurred", 0),
            col(
                "Type",
                "string",
                "",
                "Type of this event (Normal, Warning), new types could be added in the future.",
                0,
            ),
            col(
                "Reason",
                "string",
                "",
                "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
                0,
            ),
            col("Object", "string", "", "The object that this event is about.", 0),
            col("Subobject", "string", "", "The subobject of the involved object.", 1),
            col("Source", "string", "", "The component reporting this event.", 1),
            col("Message", "string", "", "A human-readable description of the status of this operation.", 0),
            col("First Seen", "string", "", "The time at which the event was first recorded.", 1),
            col("Count", "string", "", "The number of times this event has occurred.", 1),
            {
                let mut n = name_col();
                n["priority"] = json!(1);
                n
            },
        ],
        Some(Builtin::RoleBinding | Builtin::ClusterRoleBinding) => vec![
            name_col(),
            col("Role", "string", "", "Role references the role bound.", 0),
            age_col(),
            col("Users", "string", "", "Users in the binding", 1),
            col("Groups", "string", "", "Groups in the binding", 1),
            col("ServiceAccounts", "string", "", "ServiceAccounts in the binding", 1),
        ],
        Some(Builtin::ValidatingAdmissionPolicy) => vec![
            name_col(),
            col(
                "Validations",
                "integer",
                "",
                "Validations contain CEL expressions which is used to apply the validation.",
                0,
            ),
            col(
                "ParamKind",
                "string",
                "",
                "ParamKind specifies the kind of resources used to parameterize this policy",
                0,
            ),
            age_col(),
        ],
        Some(Builtin::ValidatingAdmissionPolicyBinding) => vec![
            name_col(),
            col(
                "PolicyName",
                "string",
                "",
                "PolicyName references a ValidatingAdmissionPolicy name which the ValidatingAdmissionPolicyBinding binds to.",
                0,
            ),
            col(
                "ParamRef",
                "string",
                "",
                "ParamRef specifies the parameter resource used to configure the admission control policy.",
                0,
            ),
            age_col(),
        ],
        _ => vec![name_col(), created()],
    }
}

/// How many values a Table's printer-column paths may produce in all (kube-apiserver has no
/// bound; a CRD may come from a hostile plugin): once spent, the remaining cells are empty.
const TABLE_CELL_BUDGET: usize = 2_000_000;

/// The cells of one row, a custom resource's from `budget`.
pub fn cells(
    rt: &ResourceType,
    obj: &Value,
    now: OffsetDateTime,
    budget: &mut fundament_jsonpath::Budget,
) -> Vec<Value> {
    if let Some(crd) = &rt.crd {
        return fundament_jsonpath::row_cells_within(&crd.columns, obj, now, budget);
    }
    let name = json!(crate::object::name(obj));
    let age = || json!(fundament_jsonpath::age(crate::object::creation_timestamp(obj), now));
    let count = |v: &Value| v.as_object().map_or(0, |m| m.len());
    match rt.builtin {
        Some(Builtin::Namespace) => {
            vec![name, json!(obj["status"]["phase"].as_str().unwrap_or("Active")), age()]
        }
        Some(Builtin::ServiceAccount) => {
            vec![name, json!(obj["secrets"].as_array().map_or(0, Vec::len)), age()]
        }
        Some(Builtin::Secret) => {
            vec![name, json!(obj["type"].as_str().unwrap_or("Opaque")), json!(count(&obj["data"])), age()]
        }
        Some(Builtin::ConfigMap) => vec![name, json!(count(&obj["data"]) + count(&obj["binaryData"])), age()],
        Some(Builtin::Service) => {
            let spec = &obj["spec"];
            let ports: Vec<String> = spec["ports"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
                        .collect()
                })
                .unwrap_or_default();
            let selector: Vec<String> = crate::object::string_map(&spec["selector"])
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            vec![
                name,
                json!(spec["type"].as_str().unwrap_or("ClusterIP")),
                json!(spec["clusterIP"].as_str().unwrap_or("None")),
                json!("<none>"),
                json!(if ports.is_empty() { "<none>".to_string() } else { ports.join(",") }),
                age(),
                json!(if selector.is_empty() { "<none>".to_string() } else { selector.join(",") }),
            ]
        }
        Some(Builtin::Event) => {
            let ts = |field: &str| obj[field].as_str().unwrap_or_default().to_string();
            let last = [
                ts("lastTimestamp"),
                ts("eventTime"),
                ts("firstTimestamp"),
                crate::object::creation_timestamp(obj).to_string(),
            ]
            .into_iter()
            .find(|s| !s.is_empty())
            .unwrap_or_default();
            let first = if ts("firstTimestamp").is_empty() { last.clone() } else { ts("firstTimestamp") };
            let involved = &obj["involvedObject"];
            let source = obj["source"]["component"]
                .as_str()
                .or(obj["reportingComponent"].as_str())
                .unwrap_or_default();
            vec![
                json!(fundament_jsonpath::age(&last, now)),
                json!(obj["type"].as_str().unwrap_or_default()),
                json!(obj["reason"].as_str().unwrap_or_default()),
                json!(format!(
                    "{}/{}",
                    involved["kind"].as_str().unwrap_or_default().to_lowercase(),
                    involved["name"].as_str().unwrap_or_default()
                )),
                json!(involved["fieldPath"].as_str().unwrap_or_default()),
                json!(source),
                json!(obj["message"].as_str().unwrap_or_default()),
                json!(fundament_jsonpath::age(&first, now)),
                json!(obj["count"].as_i64().unwrap_or(1)),
                name,
            ]
        }
        Some(Builtin::RoleBinding | Builtin::ClusterRoleBinding) => {
            let subjects = obj["subjects"].as_array().cloned().unwrap_or_default();
            let of = |kind: &str| -> String {
                let names: Vec<String> = subjects
                    .iter()
                    .filter(|s| s["kind"].as_str() == Some(kind))
                    .map(|s| match (kind, s["namespace"].as_str()) {
                        ("ServiceAccount", Some(ns)) => {
                            format!("{ns}/{}", s["name"].as_str().unwrap_or_default())
                        }
                        _ => s["name"].as_str().unwrap_or_default().to_string(),
                    })
                    .collect();
                names.join(", ")
            };
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    obj["roleRef"]["kind"].as_str().unwrap_or_default(),
                    obj["roleRef"]["name"].as_str().unwrap_or_default()
                )),
                age(),
                json!(of("User")),
                json!(of("Group")),
                json!(of("ServiceAccount")),
            ]
        }
        Some(Builtin::ValidatingAdmissionPolicy) => {
            let kind = &obj["spec"]["paramKind"];
            let param_kind = if kind.is_object() {
                format!(
                    "{}/{}",
                    kind["apiVersion"].as_str().unwrap_or_default(),
                    kind["kind"].as_str().unwrap_or_default()
                )
            } else {
                "<unset>".to_string()
            };
            vec![
                name,
                json!(obj["spec"]["validations"].as_array().map_or(0, Vec::len)),
                json!(param_kind),
                age(),
            ]
        }
        Some(Builtin::ValidatingAdmissionPolicyBinding) => {
            // As kubectl's printer: a name without a namespace may be cluster-scoped,
            // which the binding alone cannot tell, so it shows `*/`.
            let r = &obj["spec"]["paramRef"];
            let param_ref = match (r["name"].as_str(), r["namespace"].as_str()) {
                _ if !r.is_object() => "<unset>".to_string(),
                (Some(n), Some(ns)) if !n.is_empty() && !ns.is_empty() => format!("{ns}/{n}"),
                (Some(n), _) if !n.is_empty() => format!("*/{n}"),
                _ if r["selector"].is_object() => crate::admission::selector_string(&r["selector"]),
                _ => "<invalid>".to_string(),
            };
            vec![name, json!(obj["spec"]["policyName"].as_str().unwrap_or_default()), json!(param_ref), age()]
        }
        _ => vec![name, obj["metadata"]["creationTimestamp"].clone()],
    }
}

fn row(
    rt: &ResourceType,
    obj: &Value,
    now: OffsetDateTime,
    include: IncludeObject,
    budget: &mut fundament_jsonpath::Budget,
) -> Value {
    let mut row = json!({"cells": cells(rt, obj, now, budget)});
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            row["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]});
        }
        IncludeObject::Object => row["object"] = obj.clone(),
    }
    row
}

/// A Table of `items`.
pub fn table(
    rt: &ResourceType,
    items: &[Value],
    metadata: Value,
    include: IncludeObject,
    with_columns: bool,
) -> Value {
    let now = OffsetDateTime::now_utc();
    let mut budget = fundament_jsonpath::Budget::new(TABLE_CELL_BUDGET);
    let mut t = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "rows": items.iter().map(|o| row(rt, o, now, include, &mut budget)).collect::<Vec<_>>(),
    });
    // Watch events after the first carry rows only, as the apiserver sends them.
    t["columnDefinitions"] = if with_columns { Value::Array(columns(rt)) } else { json!([]) };
    t
}
