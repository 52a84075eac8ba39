//! Structural OpenAPI schemas of CustomResourceDefinitions, applied to custom resources
//! as kube-apiserver applies them: defaulting, pruning, and validation with
//! `x-kubernetes-validations` CEL rules, with errors worded as the apiserver words them.
//!
//! The embedded API server compiles a [`Validator`] once per CRD version (refusing the
//! CRD when the schema or a rule is broken) and, for each create or update, prunes,
//! defaults and validates the object, turning the [`FieldError`]s into a 422 `Status`.
//! Matching the apiserver's wording matters: `kubectl apply` prints these messages, and
//! users compare them with what a real cluster says.
#![forbid(unsafe_code)]

mod authz;
mod celpass;
mod celval;
mod check;
mod compile;
mod correlate;
mod defaults;
mod embedded;
mod env;
mod error;
mod eval;
pub mod expression;
mod extensions;
mod format;
mod gofmt;
mod listtype;
mod path;
mod pattern;
mod prune;
mod rules;
mod schema;
mod validate;

/// The JSON type of a decoded value as the API server's schema errors name it.
pub use gofmt::json_type_name;

pub use error::{BadValue, ErrorType, FieldError};

use serde_json::Value;
use std::sync::{Arc, LazyLock};

/// The CEL environment, built once per process: it only holds the function library.
static CEL: LazyLock<env::CelEnv> = LazyLock::new(env::CelEnv::new);

/// A compiled `openAPIV3Schema` of one CRD version.
///
/// Compiling parses the schema, its regexes and its CEL rules once; the validator is
/// `Send + Sync` and cheap to share behind an `Arc`.
#[derive(Debug, Clone)]
pub struct Validator {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    root: schema::Node,
}

impl Validator {
    /// Compiles `schema` (the version's `schema.openAPIV3Schema`).
    ///
    /// # Errors
    ///
    /// The problems kube-apiserver's CRD validation would report: an unknown `type`,
    /// a non-structural schema, a malformed keyword, a bad `pattern`, a CEL rule that
    /// doesn't compile or names fields the schema lacks, a default that doesn't
    /// validate. Fields are rooted at `openAPIV3Schema`; prefix them with
    /// [`FieldError::with_field_prefix`] (`spec.versions[0].schema`).
    pub fn compile(schema: &Value) -> Result<Validator, Vec<FieldError>> {
        let root = compile::Compiler::new(&CEL).compile(schema)?;
        Ok(Validator { inner: Arc::new(Inner { root }) })
    }

    /// Applies the schema's defaults to `obj`, recursively, and drops the `null`s of
    /// non-nullable fields that have no default (a default replaces them).
    pub fn apply_defaults(&self, obj: &mut Value) {
        defaults::apply(&self.inner.root, obj, true);
    }

    /// Drops the fields the schema doesn't declare (unless under
    /// `x-kubernetes-preserve-unknown-fields`), leaving `apiVersion`, `kind` and
    /// `metadata` of the resource, and of embedded resources, untouched.
    ///
    /// Returns the dropped paths, sorted (`spec.foo`, `spec.items[0].bar`), for the
    /// server's `unknown field "spec.foo"` warnings.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        prune::prune_root(&self.inner.root, obj)
    }

    /// Validates `new`, on update against `old`: every schema error (not just the
    /// first), then the CEL rules. Call it after [`prune`](Self::prune) and
    /// [`apply_defaults`](Self::apply_defaults), as the apiserver does.
    ///
    /// On update, unchanged values keep their errors (validation ratcheting) and
    /// transition rules (those reading `oldSelf`) run where an old value correlates.
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        validate::validate_value(&CEL, &self.inner.root, new, old, true)
    }

    /// Whether any CEL rule of the schema reads `oldSelf`.
    pub fn has_transition_rules(&self) -> bool {
        self.inner.root.has_old_self_rules
    }
}
