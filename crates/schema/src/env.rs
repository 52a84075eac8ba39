//! The CEL environment rules compile and run in, built once per process.

use crate::extensions;
use cel::common::types::CelString;
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, Program};
use std::sync::Arc;

/// The CEL environment rules compile and run in: the standard library, the strings
/// and lists extensions, and the Kubernetes list and regex functions.
pub(crate) struct CelEnv {
    pub(crate) env: Arc<Env>,
    pub(crate) timestamp: Program,
    pub(crate) duration: Program,
}

impl std::fmt::Debug for CelEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CelEnv")
    }
}

impl CelEnv {
    pub(crate) fn new() -> CelEnv {
        let mut env = Env::stdlib();
        // Registration only fails on a name declared twice, which the fixed set of
        // extensions never does.
        let _ = env.add_extension(cel::extensions::strings);
        let _ = env.add_extension(cel::extensions::lists);
        let _ = env.add_extension(extensions::kubernetes);
        // Admission policies' `authorizer`; CRD rules have no value to call it on.
        let _ = env.add_extension(crate::authz::library);
        let timestamp = env.compile("timestamp(s)").expect("static CEL program");
        let duration = env.compile("duration(s)").expect("static CEL program");
        CelEnv { env: Arc::new(env), timestamp, duration }
    }

    /// Runs one of the conversion programs on `s`; `None` if `s` doesn't parse.
    pub(crate) fn convert(&self, program: &Program, s: &str) -> Option<Box<dyn Val + 'static>> {
        struct Input<'a>(&'a str);
        impl VariableResolver for Input<'_> {
            fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
                (variable == "s").then(|| CowVal::owned(CelString::from(self.0)))
            }
        }
        let input = Input(s);
        let mut ctx = Context::with_env(self.env.clone());
        ctx.set_variable_resolver(&input);
        let value = program.execute(&ctx).ok()?;
        Box::<dyn Val>::try_from(value).ok()
    }
}
