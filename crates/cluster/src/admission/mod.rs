//! Admission as data, as on a real cluster: the stored
//! `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicies and their bindings
//! decide every API write of the resources they match. A policy without a binding does
//! nothing; a policy or binding takes effect as soon as it is stored: storing one
//! rebuilds [`Admission`], the policies parsed and compiled once with their bindings,
//! under the same lock as the write.
//!
//! Refusals are worded as kube-apiserver's policy dispatcher words them
//! (`ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request: …`),
//! so kubectl prints the same here and there. The Grant author policy of the Camunda
//! plugins (seed 003) is one such policy, shipped as YAML in the plugin's folder
//! (`plugins/camunda/admission/`).

pub mod matching;
pub mod policy;

use std::sync::Arc;

use fundament_schema::expression::{
    Activation, Authorizer, AuthzDecision, AuthzRequest, AuthzUser, Expression, Outcome, RequestResource,
};
use serde_json::{Value, json};

use crate::authn::User;
use crate::cluster::State;
use crate::resource::{ResourceType, StorageKey};
use crate::status::ApiError;
use policy::{BindingSpec, Compiled, PolicySpec};

pub const GROUP: &str = "admissionregistration.k8s.io";

/// The longest message a `messageExpression` may produce (celconfig's
/// `MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }

    fn options_kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Delete => "DeleteOptions",
        }
    }
}

/// What admission knows of a request (`admission.Attributes`).
pub struct Attributes<'a> {
    pub operation: Operation,
    pub rt: &'a ResourceType,
    /// `status` for writes of the status subresource, else empty.
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The object after the write; `None` on delete.
    pub object: Option<&'a Value>,
    /// The stored object; `None` on create.
    pub old_object: Option<&'a Value>,
    pub user: &'a User,
    pub dry_run: bool,
}

impl<'a> Attributes<'a> {
    /// A create (`old` is `None`) or update of `obj`.
    pub fn write(
        rt: &'a ResourceType,
        obj: &'a Value,
        old: Option<&'a Value>,
        subresource: &'a str,
        user: &'a User,
        dry_run: bool,
    ) -> Self {
        Self {
            operation: if old.is_some() { Operation::Update } else { Operation::Create },
            rt,
            subresource,
            namespace: crate::object::namespace(obj),
            name: crate::object::name(obj),
            object: Some(obj),
            old_object: old,
            user,
            dry_run,
        }
    }

    /// A delete of the stored `old`.
    pub fn delete(rt: &'a ResourceType, old: &'a Value, user: &'a User, dry_run: bool) -> Self {
        Self {
            operation: Operation::Delete,
            rt,
            subresource: "",
            namespace: crate::object::namespace(old),
            name: crate::object::name(old),
            object: None,
            old_object: Some(old),
            user,
            dry_run,
        }
    }

    /// `request`, as an `admission.k8s.io/v1` AdmissionRequest.
    fn request(&self) -> Value {
        let kind = json!({"group": self.rt.group, "version": self.rt.version, "kind": self.rt.kind});
        let resource =
            json!({"group": self.rt.group, "version": self.rt.version, "resource": self.rt.plural});
        json!({
            "uid": uuid::Uuid::new_v4().to_string(),
            "kind": kind,
            "resource": resource,
            "subResource": self.subresource,
            "requestKind": kind,
            "requestResource": resource,
            "requestSubResource": self.subresource,
            "name": self.name,
            "namespace": self.namespace,
            "operation": self.operation.as_str(),
            "userInfo": {"username": self.user.name, "uid": self.user.uid, "groups": self.user.groups},
            "dryRun": self.dry_run,
            "options": {"kind": self.operation.options_kind(), "apiVersion": "meta.k8s.io/v1"},
        })
    }
}

fn key(resource: &str) -> StorageKey {
    StorageKey { group: GROUP.into(), resource: resource.into() }
}

/// The `authorizer` library's answers: the cluster's RBAC, for which members of
/// `system:masters` may do anything, as with the real authorizer chain.
#[derive(Debug)]
struct Rbac(Arc<fundament_rbac::Policy>);

impl Authorizer for Rbac {
    fn authorize(&self, user: &AuthzUser, request: &AuthzRequest) -> AuthzDecision {
        if user.groups.iter().any(|g| g == "system:masters") {
            return AuthzDecision { allowed: true, reason: String::new(), error: None };
        }
        let info = fundament_rbac::UserInfo::new(user.name.as_str(), user.groups.iter().map(String::as_str));
        let attributes = match request {
            AuthzRequest::Resource { verb, group, resource, subresource, namespace, name } => {
                fundament_rbac::Attributes::Resource {
                    verb,
                    api_group: group,
                    resource,
                    subresource,
                    name,
                    namespace,
                }
            }
            AuthzRequest::Path { verb, path } => fundament_rbac::Attributes::NonResource { verb, path },
        };
        let decision = self.0.authorize(&info, &attributes);
        AuthzDecision { allowed: decision.allowed, reason: decision.reason, error: None }
    }
}

/// One refusal: which policy and binding, why, and the Status reason it asks for.
struct Denial {
    policy: String,
    binding: String,
    message: String,
    reason: Option<String>,
}

/// What one validation decided.
enum Decision {
    Admit,
    Deny { message: String, reason: Option<String> },
}

/// The stored policies that have bindings, parsed and compiled, in name order
/// with their bindings in name order: what [`admit`] runs. Rebuilt whenever a
/// policy or binding changes, so a request compiles nothing.
#[derive(Default)]
pub struct Admission {
    policies: Vec<BoundPolicy>,
}

struct BoundPolicy {
    name: String,
    spec: PolicySpec,
    compiled: Compiled,
    bindings: Vec<(String, BindingSpec)>,
}

impl Admission {
    /// From every stored policy and binding; a stored object that does not
    /// parse (written before a rule was added) is logged and left out.
    pub fn rebuild(store: &crate::store::Store) -> Admission {
        let mut bindings: Vec<(String, BindingSpec)> = store
            .iter(&key("validatingadmissionpolicybindings"), "")
            .filter_map(|(_, b)| Some((crate::object::name(b).to_string(), policy::binding_spec(b)?)))
            .collect();
        bindings.sort_by(|x, y| x.0.cmp(&y.0));
        let mut policies: Vec<BoundPolicy> = store
            .iter(&key("validatingadmissionpolicies"), "")
            .filter_map(|(_, obj)| {
                let name = crate::object::name(obj).to_string();
                let bound: Vec<(String, BindingSpec)> =
                    bindings.iter().filter(|(_, b)| b.policy_name == name).cloned().collect();
                if bound.is_empty() {
                    return None;
                }
                let Some(spec) = policy::policy_spec(obj) else {
                    tracing::warn!(policy = name, "stored ValidatingAdmissionPolicy does not parse; ignored");
                    return None;
                };
                let compiled = Compiled::new(&spec);
                Some(BoundPolicy { name, spec, compiled, bindings: bound })
            })
            .collect();
        policies.sort_by(|x, y| x.name.cmp(&y.name));
        Admission { policies }
    }
}

/// Admits or refuses a write or delete by every bound policy that matches it.
pub fn admit(state: &State, a: &Attributes<'_>) -> Result<(), ApiError> {
    if state.admission.policies.is_empty() {
        return Ok(());
    }
    let namespace = namespace_object(state, a);
    let mut denials = Vec::new();
    for BoundPolicy { name, spec, compiled, bindings } in &state.admission.policies {
        let name = name.as_str();
        let Some(constraints) = &spec.match_constraints else { continue };
        if !matching::matches(constraints, a, namespace.as_deref(), &state.registry) {
            continue;
        }
        let fail = spec.failure_policy.as_deref() != Some("Ignore");
        for (binding_name, binding) in bindings {
            if let Some(m) = &binding.match_resources
                && !matching::matches(m, a, namespace.as_deref(), &state.registry)
            {
                continue;
            }
            let params = match collect_params(state, spec, binding, a) {
                Ok(p) => p,
                Err(e) => {
                    if fail {
                        denials.push(Denial {
                            policy: name.to_string(),
                            binding: binding_name.to_string(),
                            message: format!("failed to configure binding: {e}"),
                            reason: None,
                        });
                    }
                    continue;
                }
            };
            for param in &params {
                let decisions = evaluate(state, compiled, a, param, namespace.as_deref(), fail);
                for (message, reason) in decisions {
                    for action in &binding.validation_actions {
                        match action.as_str() {
                            "Deny" => denials.push(Denial {
                                policy: name.to_string(),
                                binding: binding_name.to_string(),
                                message: message.clone(),
                                reason: reason.clone(),
                            }),
                            "Warn" => crate::warning::add(format!(
                                "Validation failed for ValidatingAdmissionPolicy '{name}' with binding '{binding_name}': {message}"
                            )),
                            _ => tracing::info!(
                                policy = name,
                                binding = binding_name,
                                audit = %message,
                                "validation failure (Audit)"
                            ),
                        }
                    }
                }
            }
        }
    }
    match denials.into_iter().next() {
        None => Ok(()),
        Some(d) => Err(refusal(a, d)),
    }
}

/// The Status of a refusal: a Forbidden built as `admission.NewForbidden` builds it,
/// whose reason and code the validation's `reason` replaces (Invalid when unset).
fn refusal(a: &Attributes<'_>, d: Denial) -> ApiError {
    let message = format!(
        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
        d.policy, d.binding, d.message
    );
    let mut err = ApiError::forbidden_because(&a.rt.group, &a.rt.plural, a.name, &message);
    let (reason, code) = match d.reason.as_deref() {
        Some("Forbidden") => ("Forbidden", 403),
        Some("Unauthorized") => ("Unauthorized", 401),
        Some("RequestEntityTooLarge") => ("RequestEntityTooLarge", 413),
        _ => ("Invalid", 422),
    };
    err.reason = reason.to_string();
    err.code = code;
    if let Some(details) = err.details.as_mut() {
        details.causes = vec![crate::status::Cause::new("", "", message)];
    }
    err
}

/// The request's Namespace, for `namespaceSelector` and `namespaceObject`.
fn namespace_object(state: &State, a: &Attributes<'_>) -> Option<Arc<Value>> {
    if a.namespace.is_empty() || (a.rt.group.is_empty() && a.rt.plural == "namespaces") {
        return None;
    }
    state
        .store
        .get(&StorageKey { group: String::new(), resource: "namespaces".into() }, "", a.namespace)
        .cloned()
}

/// The params a binding evaluates its policy with: one `null` without `paramKind`,
/// else the objects its `paramRef` names or selects; an error is a configuration
/// error, under the failure policy.
fn collect_params(
    state: &State,
    spec: &PolicySpec,
    binding: &BindingSpec,
    a: &Attributes<'_>,
) -> Result<Vec<Value>, String> {
    let Some(kind) = &spec.param_kind else { return Ok(vec![Value::Null]) };
    let Some(r) = &binding.param_ref else {
        return Err(format!("paramKind kind `{}` is set but paramRef is nil", kind.kind));
    };
    let rt = state.registry.by_kind(&kind.api_version, &kind.kind).ok_or_else(|| {
        format!("failed to find resource referenced by paramKind: '{}, Kind={}'", kind.api_version, kind.kind)
    })?;
    let namespace = if rt.namespaced {
        let ns = if r.namespace.is_empty() { a.namespace } else { r.namespace.as_str() };
        if ns.is_empty() {
            return Err(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                    .into(),
            );
        }
        ns
    } else {
        ""
    };
    let found: Vec<Value> = if !r.name.is_empty() {
        state
            .store
            .get(&rt.storage_key(), namespace, &r.name)
            .map(|o| crate::cluster::at_version(o, rt))
            .into_iter()
            .collect()
    } else {
        let selector = r.selector.clone().unwrap_or_default();
        state
            .store
            .iter(&rt.storage_key(), namespace)
            .filter(|(_, o)| selector.matches(&crate::object::string_map(&o["metadata"]["labels"])))
            .map(|(_, o)| crate::cluster::at_version(o, rt))
            .collect()
    };
    if found.is_empty() && r.parameter_not_found_action.as_deref() == Some("Deny") {
        return Err("no params found for policy binding with `Deny` parameterNotFoundAction".into());
    }
    Ok(found)
}

/// Runs a policy's match conditions, variables and validations for one param; the
/// refusals it makes, each with its message and reason.
fn evaluate(
    state: &State,
    compiled: &Compiled,
    a: &Attributes<'_>,
    params: &Value,
    namespace: Option<&Value>,
    fail: bool,
) -> Vec<(String, Option<String>)> {
    let request = a.request();
    let null = Value::Null;
    let mut activation = Activation::new();
    activation.bind("object", a.object.unwrap_or(&null));
    activation.bind("oldObject", a.old_object.unwrap_or(&null));
    activation.bind("request", &request);
    activation.bind("params", params);
    activation.bind("namespaceObject", namespace.unwrap_or(&null));
    activation.bind_authorizer(
        Arc::new(Rbac(Arc::clone(&state.policy))),
        AuthzUser { name: a.user.name.clone(), groups: a.user.groups.clone() },
        Some(RequestResource {
            group: a.rt.group.clone(),
            resource: a.rt.plural.clone(),
            subresource: a.subresource.to_string(),
            namespace: a.namespace.to_string(),
            name: a.name.to_string(),
        }),
    );
    // Any false condition skips the policy; otherwise an error is a failure.
    let mut errors = Vec::new();
    for (_, condition) in &compiled.match_conditions {
        match run(condition, &activation) {
            Ok(Outcome::Bool(false)) => return Vec::new(),
            Ok(Outcome::Bool(true)) => {}
            Ok(other) => errors.push(format!(
                "expression '{}' must evaluate to bool, not {}",
                source(condition),
                type_name(&other)
            )),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        let message = if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) };
        return if fail { vec![(message, None)] } else { Vec::new() };
    }
    for (name, variable) in &compiled.variables {
        match variable {
            Ok(e) => activation.define(name, e),
            Err(e) => activation.define_failed(name, e),
        }
    }
    let mut refusals = Vec::new();
    for v in &compiled.validations {
        let decision = match run(&v.expression, &activation) {
            Ok(Outcome::Bool(true)) => Decision::Admit,
            Ok(_) => {
                let fallback = if v.message.is_empty() {
                    format!("failed expression: {}", v.source.trim())
                } else {
                    v.message.clone()
                };
                let message = match &v.message_expression {
                    Some(Ok(m)) => match m.evaluate(&activation) {
                        Ok(Outcome::String(s)) => {
                            let s = s.trim();
                            if s.is_empty() || s.len() > MAX_MESSAGE_BYTES || s.contains(['\n', '\r']) {
                                fallback
                            } else {
                                s.to_string()
                            }
                        }
                        _ => fallback,
                    },
                    _ => fallback,
                };
                Decision::Deny { message, reason: v.reason.clone() }
            }
            Err(e) if fail => Decision::Deny { message: e, reason: None },
            Err(_) => Decision::Admit,
        };
        if let Decision::Deny { message, reason } = decision {
            refusals.push((message, reason));
        }
    }
    refusals
}

fn source(e: &Result<Expression, String>) -> &str {
    e.as_ref().map(Expression::source).unwrap_or_default()
}

fn type_name(o: &Outcome) -> &str {
    match o {
        Outcome::Bool(_) => "bool",
        Outcome::String(_) => "string",
        Outcome::Other(t) => t,
    }
}

/// Evaluates a compiled expression; errors worded as the CEL filter words them.
fn run(e: &Result<Expression, String>, activation: &Activation<'_>) -> Result<Outcome, String> {
    match e {
        Ok(e) => e
            .evaluate(activation)
            .map_err(|err| format!("expression '{}' resulted in error: {err}", e.source())),
        Err(err) => Err(err.clone()),
    }
}

/// A `metav1.LabelSelector` as `kubectl` prints it (`a=b,c in (d,e)`).
pub fn selector_string(selector: &Value) -> String {
    let Ok(s) = serde_json::from_value::<fundament_rbac::LabelSelector>(selector.clone()) else {
        return "<invalid>".into();
    };
    let mut parts: Vec<(String, String)> =
        s.match_labels.iter().map(|(k, v)| (k.clone(), format!("{k}={v}"))).collect();
    for e in &s.match_expressions {
        let values = e.values.join(",");
        let text = match e.operator {
            fundament_rbac::LabelSelectorOperator::In => format!("{} in ({values})", e.key),
            fundament_rbac::LabelSelectorOperator::NotIn => format!("{} notin ({values})", e.key),
            fundament_rbac::LabelSelectorOperator::Exists => e.key.clone(),
            fundament_rbac::LabelSelectorOperator::DoesNotExist => format!("!{}", e.key),
        };
        parts.push((e.key.clone(), text));
    }
    parts.sort();
    if parts.is_empty() {
        return "<none>".into();
    }
    parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}
