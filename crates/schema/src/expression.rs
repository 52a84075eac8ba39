//! CEL expressions outside CRD schemas: those of ValidatingAdmissionPolicies
//! (`validations`, `matchConditions`, `messageExpression`, `variables`). They compile in
//! the same environment as CRD rules, plus the `authorizer` library, and see the
//! variables the embedding server binds: JSON values (`object`, `request`, …), the
//! policy's `variables`, and an `authorizer` backed by the server's own authorizer.

use crate::authz::{self, AuthorizerVal};
use crate::celval;
use crate::check;
use cel::common::types::{CelMap, CelMapKey, CelString, Type};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, ExecutionError, Program, Value as CelValue};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::authz::{Authorizer, AuthzDecision, AuthzRequest, AuthzUser, RequestResource};

/// A compiled expression.
pub struct Expression {
    source: String,
    program: Program,
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

/// What an expression evaluated to, as far as admission cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Bool(bool),
    String(String),
    /// Any other value, by its CEL type name.
    Other(String),
}

impl Expression {
    /// Parses `source` and checks that it names no variable but `declared`.
    ///
    /// # Errors
    ///
    /// The parse or check errors as cel-go prints them (`ERROR: <input>:1:5: …` with
    /// the source line and a caret), one per line.
    pub fn compile(source: &str, declared: &[&str]) -> Result<Expression, String> {
        let program = crate::CEL.env.compile(source).map_err(|e| check::display_parse_errors(&e, source))?;
        let errors = check::check_declared(&program, source, declared);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Expression { source: source.to_owned(), program })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the expression names the variable `name`.
    pub fn references(&self, name: &str) -> bool {
        self.program.references().has_variable(name)
    }

    /// Evaluates the expression with `activation`'s variables.
    ///
    /// # Errors
    ///
    /// The runtime error, worded as cel-go words it (`no such key: x`).
    pub fn evaluate(&self, activation: &Activation<'_>) -> Result<Outcome, String> {
        let mut ctx = Context::with_env(crate::CEL.env.clone());
        ctx.set_variable_resolver(activation);
        let value = CelValue::resolve_val(self.program.expression(), &ctx).map_err(|e| runtime_error(&e))?;
        if let Some(b) = value.downcast_ref::<cel::common::types::CelBool>() {
            return Ok(Outcome::Bool(*b.inner()));
        }
        if let Some(s) = value.downcast_ref::<CelString>() {
            return Ok(Outcome::String(s.inner().to_owned()));
        }
        Ok(Outcome::Other(value.get_type().name().to_owned()))
    }

    /// Evaluates the expression to a value that outlives the activation, for
    /// [`Activation::define`].
    fn evaluate_static(&self, activation: &Activation<'_>) -> Result<Box<dyn Val + 'static>, String> {
        let mut ctx = Context::with_env(crate::CEL.env.clone());
        ctx.set_variable_resolver(activation);
        let value = CelValue::resolve_val(self.program.expression(), &ctx).map_err(|e| runtime_error(&e))?;
        if let Some(v) = authz::clone_static(value.as_ref()) {
            return Ok(v);
        }
        let owned = CelValue::try_from(value.as_ref()).map_err(|e| runtime_error(&e))?;
        Box::<dyn Val>::try_from(owned).map_err(|e| runtime_error(&e))
    }
}

fn runtime_error(e: &ExecutionError) -> String {
    crate::eval::runtime_error(e)
}

/// The variables an expression runs with.
#[derive(Default)]
pub struct Activation<'a> {
    values: HashMap<String, Box<dyn Val + 'a>>,
    variables: Variables,
    authorizer: Option<AuthorizerVal>,
}

impl std::fmt::Debug for Activation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Activation").field("values", &self.values.keys().collect::<Vec<_>>()).finish()
    }
}

impl<'a> Activation<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `name` to a JSON value (`null` stays `null`), converted by JSON type, with
    /// `metadata` whole: admission sees labels and annotations, CRD rules don't.
    pub fn bind(&mut self, name: &str, value: &'a Value) {
        self.values.insert(name.to_owned(), celval::to_val(&crate::CEL, value, None, false));
    }

    /// Binds `authorizer` to `authorizer`, checking as `user`; `request` is what
    /// `authorizer.requestResource` checks.
    pub fn bind_authorizer(
        &mut self,
        authorizer: Arc<dyn Authorizer>,
        user: AuthzUser,
        request: Option<RequestResource>,
    ) {
        self.authorizer =
            Some(AuthorizerVal { authorizer, user: Arc::new(user), request_resource: request.map(Arc::new) });
    }

    /// Evaluates `expression` with what is bound so far and binds its value, or its
    /// error, to `variables.<name>`: an expression that reads a failed variable fails
    /// with that variable's error, one that doesn't is unaffected, as in Kubernetes,
    /// where variables are evaluated lazily.
    pub fn define(&mut self, name: &str, expression: &Expression) {
        let value = expression.evaluate_static(self);
        self.variables.0.insert(name.to_owned(), value);
    }

    /// Binds `variables.<name>` to an error, for a variable whose expression does not
    /// compile: reading it fails with `error`.
    pub fn define_failed(&mut self, name: &str, error: &str) {
        self.variables.0.insert(name.to_owned(), Err(error.to_owned()));
    }
}

impl VariableResolver for Activation<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        match variable {
            "variables" => Some(CowVal::Borrowed(&self.variables)),
            "authorizer" => self.authorizer.as_ref().map(|a| CowVal::Borrowed(a as &dyn Val)),
            _ => self.values.get(variable).map(|v| CowVal::Borrowed(v.as_ref())),
        }
    }
}

static VARIABLES_TYPE: Type = Type::new_unspecified_type("kubernetes.variables");

/// `variables`: each name's value, or the error evaluating it, raised when read.
#[derive(Debug, Default)]
struct Variables(HashMap<String, Result<Box<dyn Val + 'static>, String>>);

impl Val for Variables {
    fn get_type(&self) -> &Type {
        <Self as Val>::cel_type()
    }

    fn cel_type() -> &'static Type {
        &VARIABLES_TYPE
    }

    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn cel::common::traits::Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        // Variables are only ever read through; a copy is a plain map of the values
        // that evaluated.
        let mut map: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::new();
        for (k, v) in &self.0 {
            if let Ok(v) = v {
                map.insert(CelMapKey::String(CelString::from(k.clone())), v.clone_as_boxed());
            }
        }
        Box::new(CelMap::from(map))
    }
}

impl cel::common::traits::Indexer for Variables {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let key = idx.downcast_ref::<CelString>().map(|s| s.inner().to_owned()).unwrap_or_default();
        match self.0.get(&key) {
            Some(Ok(v)) => Ok(CowVal::Borrowed(v.as_ref())),
            Some(Err(e)) => Err(ExecutionError::function_error(&format!("variables.{key}"), e)),
            None => Err(ExecutionError::NoSuchKey(Arc::new(key))),
        }
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DECLARED: &[&str] = &["object", "oldObject", "request", "variables", "authorizer"];

    #[derive(Debug)]
    struct OnlyAlice;

    impl Authorizer for OnlyAlice {
        fn authorize(&self, user: &AuthzUser, request: &AuthzRequest) -> AuthzDecision {
            let allowed = user.name == "alice"
                && matches!(request, AuthzRequest::Resource { verb, name, .. } if verb == "serve" && name == "a");
            AuthzDecision {
                allowed,
                reason: if allowed { "alice may".into() } else { String::new() },
                error: None,
            }
        }
    }

    fn run(src: &str, activation: &Activation<'_>) -> Result<Outcome, String> {
        Expression::compile(src, DECLARED)?.evaluate(activation)
    }

    #[test]
    fn objects_keep_their_labels() {
        let obj = json!({"metadata": {"name": "x", "labels": {"k": "v"}}});
        let mut a = Activation::new();
        a.bind("object", &obj);
        assert_eq!(run("object.metadata.labels['k'] == 'v'", &a), Ok(Outcome::Bool(true)));
        assert_eq!(run("object.metadata.name + '!'", &a), Ok(Outcome::String("x!".into())));
    }

    #[test]
    fn unknown_variables_and_syntax_errors_do_not_compile() {
        let e = Expression::compile("objekt.spec == 1", DECLARED).unwrap_err();
        assert!(e.contains("undeclared reference to 'objekt'"), "{e}");
        let e = Expression::compile("object.spec ==", DECLARED).unwrap_err();
        assert!(e.starts_with("ERROR: <input>:1:"), "{e}");
    }

    #[test]
    fn variables_see_earlier_ones_and_fail_only_when_read() {
        let obj = json!({"spec": {"n": 2}});
        let mut a = Activation::new();
        a.bind("object", &obj);
        a.define("n", &Expression::compile("object.spec.n", DECLARED).unwrap());
        a.define("double", &Expression::compile("variables.n * 2", DECLARED).unwrap());
        a.define("broken", &Expression::compile("object.spec.missing", DECLARED).unwrap());
        assert_eq!(run("variables.double == 4", &a), Ok(Outcome::Bool(true)));
        let e = run("variables.broken == 1", &a).unwrap_err();
        assert!(e.contains("no such key: missing"), "{e}");
    }

    #[test]
    fn the_authorizer_asks_the_server() {
        let mut a = Activation::new();
        let request = RequestResource {
            resource: "pluginregistrations".into(),
            name: "a".into(),
            ..Default::default()
        };
        a.bind_authorizer(
            Arc::new(OnlyAlice),
            AuthzUser { name: "alice".into(), groups: vec![] },
            Some(request),
        );
        let check = |name: &str| {
            format!(
                "authorizer.group('plugins.camunda.io').resource('pluginregistrations').name('{name}').check('serve')"
            )
        };
        assert_eq!(run(&format!("{}.allowed()", check("a")), &a), Ok(Outcome::Bool(true)));
        assert_eq!(run(&format!("{}.reason()", check("a")), &a), Ok(Outcome::String("alice may".into())));
        assert_eq!(run(&format!("{}.allowed()", check("b")), &a), Ok(Outcome::Bool(false)));
        let bob = "authorizer.serviceAccount('ns', 'bob').group('plugins.camunda.io').resource('pluginregistrations').name('a').check('serve').allowed()";
        assert_eq!(run(bob, &a), Ok(Outcome::Bool(false)));
        a.define("decision", &Expression::compile(&check("a"), DECLARED).unwrap());
        assert_eq!(
            run("variables.decision.allowed() && !variables.decision.errored()", &a),
            Ok(Outcome::Bool(true))
        );
        assert_eq!(run("authorizer.path('/healthz').check('get').allowed()", &a), Ok(Outcome::Bool(false)));
        assert_eq!(run("authorizer.requestResource.check('serve').allowed()", &a), Ok(Outcome::Bool(true)));
        assert_eq!(
            run("authorizer.requestResource.name('b').check('serve').allowed()", &a),
            Ok(Outcome::Bool(false))
        );
    }
}
