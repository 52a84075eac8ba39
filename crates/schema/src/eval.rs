//! Running the rules of a node with `self` (and `oldSelf`) bound, turning failures into
//! field errors worded as kube-apiserver words them.

use crate::env::CelEnv;
use crate::error::{BadValue, FieldError};
use crate::path::Path;
use crate::rules::RuleReason;
use crate::schema::Node;
use cel::common::types::CelOptional;
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, ExecutionError, Program, Value as CelValue};

/// The longest message a `messageExpression` may produce (celconfig's
/// `MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// `self` and `oldSelf` for one rule.
struct Activation<'a> {
    this: &'a (dyn Val + 'a),
    old: Option<&'a (dyn Val + 'a)>,
    /// `oldSelf` as an optional, for `optionalOldSelf` rules.
    optional_old: Option<Box<dyn Val + 'a>>,
}

impl VariableResolver for Activation<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        match variable {
            "self" => Some(CowVal::Borrowed(self.this)),
            "oldSelf" => match &self.optional_old {
                Some(opt) => Some(CowVal::Borrowed(opt.as_ref())),
                None => self.old.map(CowVal::Borrowed),
            },
            _ => None,
        }
    }
}

/// Everything the rules of one node are evaluated with.
pub(crate) struct NodeEval<'a> {
    pub(crate) node: &'a Node,
    pub(crate) path: &'a Path<'a>,
    pub(crate) this: &'a (dyn Val + 'a),
    pub(crate) old: Option<&'a (dyn Val + 'a)>,
    /// Ratcheting: the value equals its correlated old value, so rules that don't read
    /// `oldSelf` are skipped.
    pub(crate) unchanged: bool,
}

/// Evaluates the rules of one node, appending the errors of those that fail.
pub(crate) fn eval_rules(env: &CelEnv, at: &NodeEval<'_>, errors: &mut Vec<FieldError>) {
    let type_name = at.node.type_name();
    for rule in &at.node.rules {
        if rule.uses_old_self {
            if at.old.is_none() && !rule.optional_old_self {
                continue;
            }
        } else if at.unchanged {
            continue;
        }
        let optional_old = rule.optional_old_self.then(|| -> Box<dyn Val + '_> {
            match at.old {
                Some(old) => Box::new(CelOptional::of(old.clone_as_boxed())),
                None => Box::new(CelOptional::none()),
            }
        });
        let activation = Activation { this: at.this, old: at.old, optional_old };
        let mut ctx = Context::with_env(env.env.clone());
        ctx.set_variable_resolver(&activation);
        match rule.program.execute(&ctx) {
            Ok(CelValue::Bool(true)) => {}
            Ok(_) => {
                let field = match &rule.field_path {
                    Some(p) => match at.path {
                        Path::Root => p.clone(),
                        _ => format!("{}.{p}", at.path.render()),
                    },
                    None => at.path.field(),
                };
                let detail = match &rule.message_expression {
                    Some(p) => message_expression(p, &ctx).unwrap_or_else(|| rule.message_or_default()),
                    None => rule.message_or_default(),
                };
                let value = BadValue::string(type_name);
                errors.push(match rule.reason {
                    RuleReason::Invalid => FieldError::invalid(field, value, detail),
                    RuleReason::Forbidden => FieldError::forbidden(field, detail),
                    RuleReason::Required => FieldError::required(field, detail),
                    RuleReason::Duplicate => FieldError::duplicate(field, value),
                });
            }
            Err(e) => {
                let detail = match &e {
                    ExecutionError::NoSuchOverload(_) => format!(
                        "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule.error_string()
                    ),
                    _ => format!("{} evaluating rule: {}", runtime_error(&e), rule.error_string()),
                };
                errors.push(FieldError::invalid(at.path.field(), BadValue::string(type_name), detail));
            }
        }
    }
}

/// Runs a `messageExpression`; `None` when it fails, isn't a string, is empty or spans
/// lines, in which case the apiserver falls back to the rule's message.
fn message_expression(program: &Program, ctx: &Context<'_, '_>) -> Option<String> {
    match program.execute(ctx) {
        Ok(CelValue::String(s)) => {
            let s = s.trim();
            (!s.is_empty() && s.len() <= MAX_MESSAGE_EXPRESSION_BYTES && !s.contains(['\n', '\r']))
                .then(|| s.to_owned())
        }
        _ => None,
    }
}

/// A runtime error worded as cel-go words it.
pub(crate) fn runtime_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(v) => match v {
            cel::Value::Int(i) => format!("index out of bounds: {i}"),
            other => format!("index out of bounds: {other:?}"),
        },
        ExecutionError::UndeclaredReference(name) => {
            format!("undeclared reference to '{name}' (in container '')")
        }
        ExecutionError::FunctionError { function, message } => {
            // Some messages (regex errors) span lines; a field error is one line.
            let line = message.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
            let line = line.trim().trim_start_matches("error: ");
            format!("{function}: {line}")
        }
        other => {
            let s = other.to_string();
            let mut chars = s.chars();
            match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect(),
                None => s,
            }
        }
    }
}
