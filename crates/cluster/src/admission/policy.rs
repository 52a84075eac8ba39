//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding objects: their
//! `admissionregistration.k8s.io/v1` shape, the defaults and validation the API server
//! applies when they are written (an expression that does not compile is refused
//! then, not at every request), and their compiled form.

use fundament_rbac::LabelSelector;
use fundament_schema::expression::Expression;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::status::Cause;

/// The variables admission expressions may name.
pub const DECLARED: &[&str] =
    &["object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer"];

// The specs as written: any field may be missing (`default`); validation says which are required.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicySpec {
    pub param_kind: Option<ParamKind>,
    pub match_constraints: Option<MatchResources>,
    pub validations: Vec<Validation>,
    pub failure_policy: Option<String>,
    pub audit_annotations: Vec<Value>,
    pub match_conditions: Vec<NamedExpression>,
    pub variables: Vec<NamedExpression>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ParamKind {
    pub api_version: String,
    pub kind: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MatchResources {
    pub namespace_selector: Option<LabelSelector>,
    pub object_selector: Option<LabelSelector>,
    pub resource_rules: Vec<Rule>,
    pub exclude_resource_rules: Vec<Rule>,
    pub match_policy: Option<String>,
}

/// A `NamedRuleWithOperations`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Rule {
    pub resource_names: Vec<String>,
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub scope: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Validation {
    pub expression: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NamedExpression {
    pub name: String,
    pub expression: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BindingSpec {
    pub policy_name: String,
    pub param_ref: Option<ParamRef>,
    pub match_resources: Option<MatchResources>,
    pub validation_actions: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ParamRef {
    pub name: String,
    pub namespace: String,
    pub selector: Option<LabelSelector>,
    pub parameter_not_found_action: Option<String>,
}

const REASONS: &[&str] = &["Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"];
const OPERATIONS: &[&str] = &["*", "CREATE", "UPDATE", "DELETE", "CONNECT"];

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

fn supported(values: &[&str]) -> String {
    values.iter().map(|v| quoted(v)).collect::<Vec<_>>().join(", ")
}

fn parse<T: for<'de> Deserialize<'de> + Default>(obj: &Value, causes: &mut Vec<Cause>) -> T {
    if obj["spec"].is_null() {
        // Then every required field of the spec is reported missing.
        return T::default();
    }
    match T::deserialize(&obj["spec"]) {
        Ok(spec) => spec,
        Err(e) => {
            causes.push(Cause::new("FieldValueInvalid", "spec", format!("Invalid value: {e}")));
            T::default()
        }
    }
}

/// A policy's spec, for the engine: `None` if it does not parse (validation refused it
/// on write, so only a hand-edited snapshot gets here).
pub fn policy_spec(obj: &Value) -> Option<PolicySpec> {
    PolicySpec::deserialize(&obj["spec"]).ok()
}

pub fn binding_spec(obj: &Value) -> Option<BindingSpec> {
    BindingSpec::deserialize(&obj["spec"]).ok()
}

/// The API server's defaults for match resources (`Equivalent`, empty selectors, scope `*`).
fn default_match_resources(m: &mut Value) {
    let Some(map) = m.as_object_mut() else { return };
    map.entry("matchPolicy").or_insert_with(|| json!("Equivalent"));
    map.entry("namespaceSelector").or_insert_with(|| json!({}));
    map.entry("objectSelector").or_insert_with(|| json!({}));
    for rules in ["resourceRules", "excludeResourceRules"] {
        if let Some(list) = map.get_mut(rules).and_then(Value::as_array_mut) {
            for rule in list.iter_mut().filter_map(Value::as_object_mut) {
                rule.entry("scope").or_insert_with(|| json!("*"));
            }
        }
    }
}

fn compile_into(causes: &mut Vec<Cause>, field: &str, source: &str, what: &str) {
    if let Err(e) = Expression::compile(source, DECLARED) {
        causes.push(Cause::new(
            "FieldValueInvalid",
            field,
            format!("Invalid value: {}: {what}compilation failed: {e}", quoted(source)),
        ));
    }
}

fn validate_match_resources(m: &MatchResources, field: &str, required: bool, causes: &mut Vec<Cause>) {
    if required && m.resource_rules.is_empty() {
        causes.push(Cause::new("FieldValueRequired", &format!("{field}.resourceRules"), "Required value"));
    }
    for (list, name) in
        [(&m.resource_rules, "resourceRules"), (&m.exclude_resource_rules, "excludeResourceRules")]
    {
        for (i, rule) in list.iter().enumerate() {
            let at = format!("{field}.{name}[{i}]");
            for (j, op) in rule.operations.iter().enumerate() {
                if !OPERATIONS.contains(&op.as_str()) {
                    causes.push(Cause::new(
                        "FieldValueNotSupported",
                        &format!("{at}.operations[{j}]"),
                        format!(
                            "Unsupported value: {}: supported values: {}",
                            quoted(op),
                            supported(OPERATIONS)
                        ),
                    ));
                }
            }
            for (key, values) in [
                ("operations", &rule.operations),
                ("apiGroups", &rule.api_groups),
                ("apiVersions", &rule.api_versions),
                ("resources", &rule.resources),
            ] {
                if values.is_empty() {
                    causes.push(Cause::new("FieldValueRequired", &format!("{at}.{key}"), "Required value"));
                }
            }
            if let Some(scope) = &rule.scope
                && !["*", "Cluster", "Namespaced"].contains(&scope.as_str())
            {
                causes.push(Cause::new(
                    "FieldValueNotSupported",
                    &format!("{at}.scope"),
                    format!(
                        "Unsupported value: {}: supported values: {}",
                        quoted(scope),
                        supported(&["*", "Cluster", "Namespaced"])
                    ),
                ));
            }
        }
    }
    for (selector, name) in
        [(&m.namespace_selector, "namespaceSelector"), (&m.object_selector, "objectSelector")]
    {
        if let Some(s) = selector
            && let Err(e) = s.validate()
        {
            causes.push(Cause::new(
                "FieldValueInvalid",
                &format!("{field}.{name}"),
                format!("Invalid value: {e}"),
            ));
        }
    }
}

/// Defaults and validates a ValidatingAdmissionPolicy being written.
pub fn validate_policy(obj: &mut Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if obj["spec"].is_object() {
        let spec = &mut obj["spec"];
        if spec["failurePolicy"].is_null() {
            spec["failurePolicy"] = json!("Fail");
        }
        if spec["matchConstraints"].is_object() {
            default_match_resources(&mut spec["matchConstraints"]);
        }
    }
    let spec: PolicySpec = parse(obj, &mut causes);
    if !causes.is_empty() {
        return causes;
    }
    match &spec.match_constraints {
        None => causes.push(Cause::new("FieldValueRequired", "spec.matchConstraints", "Required value")),
        Some(m) => validate_match_resources(m, "spec.matchConstraints", true, &mut causes),
    }
    if let Some(f) = &spec.failure_policy
        && f != "Fail"
        && f != "Ignore"
    {
        causes.push(Cause::new(
            "FieldValueNotSupported",
            "spec.failurePolicy",
            format!("Unsupported value: {}: supported values: \"Fail\", \"Ignore\"", quoted(f)),
        ));
    }
    if spec.validations.is_empty() && spec.audit_annotations.is_empty() {
        causes.push(Cause::new(
            "FieldValueRequired",
            "spec.validations",
            "Required value: validations or auditAnnotations must contain at least one item",
        ));
    }
    if let Some(p) = &spec.param_kind {
        if p.kind.is_empty() {
            causes.push(Cause::new("FieldValueRequired", "spec.paramKind.kind", "Required value"));
        }
        if p.api_version.is_empty() {
            causes.push(Cause::new("FieldValueRequired", "spec.paramKind.apiVersion", "Required value"));
        }
    }
    for (i, v) in spec.validations.iter().enumerate() {
        let at = format!("spec.validations[{i}]");
        if v.expression.trim().is_empty() {
            causes.push(Cause::new(
                "FieldValueRequired",
                &format!("{at}.expression"),
                "Required value: expression is not specified",
            ));
        } else {
            compile_into(&mut causes, &format!("{at}.expression"), &v.expression, "");
        }
        if !v.message_expression.trim().is_empty() {
            compile_into(
                &mut causes,
                &format!("{at}.messageExpression"),
                &v.message_expression,
                "messageExpression ",
            );
        }
        if let Some(r) = &v.reason
            && !REASONS.contains(&r.as_str())
        {
            causes.push(Cause::new(
                "FieldValueNotSupported",
                &format!("{at}.reason"),
                format!("Unsupported value: {}: supported values: {}", quoted(r), supported(REASONS)),
            ));
        }
    }
    for (list, name) in [(&spec.match_conditions, "matchConditions"), (&spec.variables, "variables")] {
        let mut seen = std::collections::BTreeSet::new();
        for (i, c) in list.iter().enumerate() {
            let at = format!("spec.{name}[{i}]");
            if c.name.is_empty() {
                causes.push(Cause::new("FieldValueRequired", &format!("{at}.name"), "Required value"));
            } else if !seen.insert(c.name.as_str()) {
                causes.push(Cause::new(
                    "FieldValueDuplicate",
                    &format!("{at}.name"),
                    format!("Duplicate value: {}", quoted(&c.name)),
                ));
            }
            if c.expression.trim().is_empty() {
                causes.push(Cause::new("FieldValueRequired", &format!("{at}.expression"), "Required value"));
            } else {
                compile_into(&mut causes, &format!("{at}.expression"), &c.expression, "");
            }
        }
    }
    causes
}

/// Defaults and validates a ValidatingAdmissionPolicyBinding being written.
pub fn validate_binding(obj: &mut Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if obj["spec"]["matchResources"].is_object() {
        default_match_resources(&mut obj["spec"]["matchResources"]);
    }
    let spec: BindingSpec = parse(obj, &mut causes);
    if !causes.is_empty() {
        return causes;
    }
    if spec.policy_name.is_empty() {
        causes.push(Cause::new("FieldValueRequired", "spec.policyName", "Required value"));
    }
    if spec.validation_actions.is_empty() {
        causes.push(Cause::new(
            "FieldValueRequired",
            "spec.validationActions",
            "Required value: at least one validation action is required",
        ));
    }
    for (i, a) in spec.validation_actions.iter().enumerate() {
        if !["Audit", "Deny", "Warn"].contains(&a.as_str()) {
            causes.push(Cause::new(
                "FieldValueNotSupported",
                &format!("spec.validationActions[{i}]"),
                format!("Unsupported value: {}: supported values: \"Audit\", \"Deny\", \"Warn\"", quoted(a)),
            ));
        }
    }
    if spec.validation_actions.iter().any(|a| a == "Deny")
        && spec.validation_actions.iter().any(|a| a == "Warn")
    {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "spec.validationActions",
            "Invalid value: \"Deny,Warn\": must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if let Some(r) = &spec.param_ref {
        match r.parameter_not_found_action.as_deref() {
            None => causes.push(Cause::new(
                "FieldValueRequired",
                "spec.paramRef.parameterNotFoundAction",
                "Required value",
            )),
            Some("Allow" | "Deny") => {}
            Some(other) => causes.push(Cause::new(
                "FieldValueNotSupported",
                "spec.paramRef.parameterNotFoundAction",
                format!("Unsupported value: {}: supported values: \"Allow\", \"Deny\"", quoted(other)),
            )),
        }
        if !r.name.is_empty() && r.selector.is_some() {
            causes.push(Cause::new(
                "FieldValueForbidden",
                "spec.paramRef.name",
                "Forbidden: name and selector are mutually exclusive",
            ));
        }
        if r.name.is_empty() && r.selector.is_none() {
            causes.push(Cause::new(
                "FieldValueRequired",
                "spec.paramRef",
                "Required value: one of name or selector must be set",
            ));
        }
    }
    if let Some(m) = &spec.match_resources {
        validate_match_resources(m, "spec.matchResources", false, &mut causes);
    }
    causes
}

/// A validation with its expressions compiled. Compile errors are kept: a policy
/// restored from a snapshot was not validated, and its broken expression then counts
/// as an evaluation error, under the failure policy.
pub struct CompiledValidation {
    pub source: String,
    pub expression: Result<Expression, String>,
    pub message: String,
    pub message_expression: Option<Result<Expression, String>>,
    pub reason: Option<String>,
}

pub struct Compiled {
    pub match_conditions: Vec<(String, Result<Expression, String>)>,
    pub variables: Vec<(String, Result<Expression, String>)>,
    pub validations: Vec<CompiledValidation>,
}

fn compile(source: &str) -> Result<Expression, String> {
    Expression::compile(source, DECLARED).map_err(|e| format!("compilation failed: {e}"))
}

impl Compiled {
    pub fn new(spec: &PolicySpec) -> Self {
        let named = |list: &[NamedExpression]| -> Vec<(String, Result<Expression, String>)> {
            list.iter().map(|c| (c.name.clone(), compile(&c.expression))).collect()
        };
        Compiled {
            match_conditions: named(&spec.match_conditions),
            variables: named(&spec.variables),
            validations: spec
                .validations
                .iter()
                .map(|v| CompiledValidation {
                    source: v.expression.clone(),
                    expression: compile(&v.expression),
                    message: v.message.clone(),
                    message_expression: (!v.message_expression.trim().is_empty())
                        .then(|| compile(&v.message_expression)),
                    reason: v.reason.clone(),
                })
                .collect(),
        }
    }
}
