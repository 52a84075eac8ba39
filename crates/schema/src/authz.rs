//! The Kubernetes `authorizer` CEL library of admission policies:
//! `authorizer.group('g').resource('r').namespace('ns').name('n').check('verb').allowed()`,
//! `authorizer.path('/healthz').check('get')`, `authorizer.serviceAccount(ns, name)`, and
//! `authorizer.requestResource` (the request's own resource), and the decision's
//! `allowed()`, `reason()`, `errored()` and `error()`.
//!
//! The values carry the [`Authorizer`] the embedding server gives, so the functions (plain
//! `fn`s, as the `cel` crate requires) reach the cluster's RBAC through their receiver.

use cel::common::traits::Indexer;
use cel::common::types::{CelBool, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use std::any::Any;
use std::sync::Arc;

/// Who a check is made for: the requester, or a ServiceAccount named with
/// `authorizer.serviceAccount(namespace, name)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthzUser {
    pub name: String,
    pub groups: Vec<String>,
}

/// What `check(verb)` asks: a resource request or a non-resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthzRequest {
    Resource {
        verb: String,
        group: String,
        resource: String,
        subresource: String,
        namespace: String,
        name: String,
    },
    Path {
        verb: String,
        path: String,
    },
}

/// The authorizer's answer, as `Decision` exposes it to CEL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthzDecision {
    pub allowed: bool,
    pub reason: String,
    /// Set when the authorizer could not decide (`errored()`, `error()`).
    pub error: Option<String>,
}

/// The server's authorizer, asked by `check(verb)`.
pub trait Authorizer: Send + Sync + std::fmt::Debug {
    fn authorize(&self, user: &AuthzUser, request: &AuthzRequest) -> AuthzDecision;
}

static AUTHORIZER_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.Authorizer");
static PATH_CHECK_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.PathCheck");
static GROUP_CHECK_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.GroupCheck");
static RESOURCE_CHECK_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.ResourceCheck");
static DECISION_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.Decision");

/// `authorizer`: who checks, and with what; `requestResource` is the check of the
/// request's own resource, when the server says what it is.
#[derive(Debug, Clone)]
pub(crate) struct AuthorizerVal {
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) user: Arc<AuthzUser>,
    pub(crate) request_resource: Option<Arc<RequestResource>>,
}

/// The resource of the request under admission, for `authorizer.requestResource`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestResource {
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

#[derive(Debug, Clone)]
struct PathCheck {
    on: AuthorizerVal,
    path: String,
}

#[derive(Debug, Clone)]
struct GroupCheck {
    on: AuthorizerVal,
    group: String,
}

#[derive(Debug, Clone)]
struct ResourceCheck {
    on: AuthorizerVal,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
}

#[derive(Debug, Clone)]
struct Decision(AuthzDecision);

/// `Val` for a `'static` library type: identity equality is meaningless for these, so
/// values compare equal when their fields do.
macro_rules! library_val {
    ($ty:ty, $cel:expr, $eq:expr) => {
        impl Val for $ty {
            fn get_type(&self) -> &Type {
                <Self as Val>::cel_type()
            }
            fn cel_type() -> &'static Type {
                &$cel
            }
            fn equals(&self, other: &dyn Val) -> bool {
                other.downcast_ref::<Self>().is_some_and(|o| $eq(self, o))
            }
            fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
                Box::new(self.clone())
            }
            fn as_any(&self) -> Option<&dyn Any> {
                Some(self)
            }
        }
        impl StaticVal for $ty {}
    };
}

impl Val for AuthorizerVal {
    fn get_type(&self) -> &Type {
        <Self as Val>::cel_type()
    }
    fn cel_type() -> &'static Type {
        &AUTHORIZER_TYPE
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Self>().is_some_and(|o| o.user == self.user)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for AuthorizerVal {}

/// `authorizer.requestResource`, the one field of an authorizer.
impl Indexer for AuthorizerVal {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let field = idx.downcast_ref::<CelString>().map(|s| s.inner().to_owned()).unwrap_or_default();
        match (&self.request_resource, field.as_str()) {
            (Some(r), "requestResource") => Ok(CowVal::owned(ResourceCheck {
                on: self.clone(),
                group: r.group.clone(),
                resource: r.resource.clone(),
                subresource: r.subresource.clone(),
                namespace: r.namespace.clone(),
                name: r.name.clone(),
            })),
            _ => Err(ExecutionError::NoSuchKey(Arc::new(field))),
        }
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}
library_val!(PathCheck, PATH_CHECK_TYPE, |a: &PathCheck, b: &PathCheck| a.path == b.path);
library_val!(GroupCheck, GROUP_CHECK_TYPE, |a: &GroupCheck, b: &GroupCheck| a.group == b.group);
library_val!(ResourceCheck, RESOURCE_CHECK_TYPE, |a: &ResourceCheck, b: &ResourceCheck| {
    (&a.group, &a.resource, &a.subresource, &a.namespace, &a.name)
        == (&b.group, &b.resource, &b.subresource, &b.namespace, &b.name)
});
library_val!(Decision, DECISION_TYPE, |a: &Decision, b: &Decision| a.0 == b.0);

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn receiver<'a, T: StaticVal>(args: &'a Args<'_, '_>, function: &str) -> Result<&'a T, ExecutionError> {
    args[0]
        .as_ref()
        .downcast_ref::<T>()
        .ok_or_else(|| ExecutionError::function_error(function, "bad receiver"))
}

fn string(args: &Args<'_, '_>, i: usize, function: &str) -> Result<String, ExecutionError> {
    args[i]
        .as_ref()
        .downcast_ref::<CelString>()
        .map(|s| s.inner().to_owned())
        .ok_or_else(|| ExecutionError::function_error(function, "argument must be a string"))
}

/// Registers the library's member functions on `env`.
pub(crate) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("path", "authorizer_path", AUTHORIZER_TYPE.to_owned(), vec![STRING_TYPE], path)?;
    env.add_member_overload(
        "group",
        "authorizer_group",
        AUTHORIZER_TYPE.to_owned(),
        vec![STRING_TYPE],
        group,
    )?;
    env.add_member_overload(
        "serviceAccount",
        "authorizer_serviceaccount",
        AUTHORIZER_TYPE.to_owned(),
        vec![STRING_TYPE, STRING_TYPE],
        service_account,
    )?;
    env.add_member_overload(
        "resource",
        "groupcheck_resource",
        GROUP_CHECK_TYPE.to_owned(),
        vec![STRING_TYPE],
        resource,
    )?;
    env.add_member_overload(
        "subresource",
        "resourcecheck_subresource",
        RESOURCE_CHECK_TYPE.to_owned(),
        vec![STRING_TYPE],
        subresource,
    )?;
    env.add_member_overload(
        "namespace",
        "resourcecheck_namespace",
        RESOURCE_CHECK_TYPE.to_owned(),
        vec![STRING_TYPE],
        namespace,
    )?;
    env.add_member_overload(
        "name",
        "resourcecheck_name",
        RESOURCE_CHECK_TYPE.to_owned(),
        vec![STRING_TYPE],
        name,
    )?;
    env.add_member_overload(
        "check",
        "pathcheck_check",
        PATH_CHECK_TYPE.to_owned(),
        vec![STRING_TYPE],
        check_path,
    )?;
    env.add_member_overload(
        "check",
        "resourcecheck_check",
        RESOURCE_CHECK_TYPE.to_owned(),
        vec![STRING_TYPE],
        check_resource,
    )?;
    env.add_member_overload("allowed", "decision_allowed", DECISION_TYPE.to_owned(), vec![], allowed)?;
    env.add_member_overload("reason", "decision_reason", DECISION_TYPE.to_owned(), vec![], reason)?;
    env.add_member_overload("errored", "decision_errored", DECISION_TYPE.to_owned(), vec![], errored)?;
    env.add_member_overload("error", "decision_error", DECISION_TYPE.to_owned(), vec![], error)?;
    Ok(())
}

fn path<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let on = receiver::<AuthorizerVal>(&args, "path")?.clone();
    let path = string(&args, 1, "path")?;
    Ok(CowVal::owned(PathCheck { on, path }))
}

fn group<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let on = receiver::<AuthorizerVal>(&args, "group")?.clone();
    let group = string(&args, 1, "group")?;
    Ok(CowVal::owned(GroupCheck { on, group }))
}

fn service_account<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let on = receiver::<AuthorizerVal>(&args, "serviceAccount")?;
    let namespace = string(&args, 1, "serviceAccount")?;
    let name = string(&args, 2, "serviceAccount")?;
    // The groups Kubernetes gives a ServiceAccount's token (serviceaccount.UserInfo).
    let user = AuthzUser {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        groups: vec!["system:serviceaccounts".into(), format!("system:serviceaccounts:{namespace}")],
    };
    Ok(CowVal::owned(AuthorizerVal {
        authorizer: Arc::clone(&on.authorizer),
        user: Arc::new(user),
        request_resource: on.request_resource.clone(),
    }))
}

fn resource<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let g = receiver::<GroupCheck>(&args, "resource")?;
    let resource = string(&args, 1, "resource")?;
    Ok(CowVal::owned(ResourceCheck {
        on: g.on.clone(),
        group: g.group.clone(),
        resource,
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
    }))
}

fn refined<'b, 'v>(args: Args<'b, 'v>, function: &str, set: fn(&mut ResourceCheck, String)) -> Out<'b, 'v> {
    let mut check = receiver::<ResourceCheck>(&args, function)?.clone();
    set(&mut check, string(&args, 1, function)?);
    Ok(CowVal::owned(check))
}

fn subresource<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    refined(args, "subresource", |c, v| c.subresource = v)
}

fn namespace<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    refined(args, "namespace", |c, v| c.namespace = v)
}

fn name<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    refined(args, "name", |c, v| c.name = v)
}

fn decide(on: &AuthorizerVal, request: &AuthzRequest) -> Decision {
    Decision(on.authorizer.authorize(&on.user, request))
}

fn check_path<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let c = receiver::<PathCheck>(&args, "check")?;
    let verb = string(&args, 1, "check")?;
    Ok(CowVal::owned(decide(&c.on, &AuthzRequest::Path { verb, path: c.path.clone() })))
}

fn check_resource<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let c = receiver::<ResourceCheck>(&args, "check")?;
    let verb = string(&args, 1, "check")?;
    let request = AuthzRequest::Resource {
        verb,
        group: c.group.clone(),
        resource: c.resource.clone(),
        subresource: c.subresource.clone(),
        namespace: c.namespace.clone(),
        name: c.name.clone(),
    };
    Ok(CowVal::owned(decide(&c.on, &request)))
}

fn allowed<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let d = receiver::<Decision>(&args, "allowed")?;
    Ok(CowVal::owned(CelBool::from(d.0.allowed)))
}

fn reason<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let d = receiver::<Decision>(&args, "reason")?;
    Ok(CowVal::owned(CelString::from(d.0.reason.clone())))
}

fn errored<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let d = receiver::<Decision>(&args, "errored")?;
    Ok(CowVal::owned(CelBool::from(d.0.error.is_some())))
}

fn error<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let d = receiver::<Decision>(&args, "error")?;
    Ok(CowVal::owned(CelString::from(d.0.error.clone().unwrap_or_default())))
}

/// Copies a value of this library out of a borrowed `dyn Val` into a `'static` box, for
/// a variable that holds one (`variables.decision`).
pub(crate) fn clone_static(val: &dyn Val) -> Option<Box<dyn Val + 'static>> {
    let any = val.as_any()?;
    if let Some(v) = any.downcast_ref::<AuthorizerVal>() {
        return Some(Box::new(v.clone()));
    }
    if let Some(v) = any.downcast_ref::<PathCheck>() {
        return Some(Box::new(v.clone()));
    }
    if let Some(v) = any.downcast_ref::<GroupCheck>() {
        return Some(Box::new(v.clone()));
    }
    if let Some(v) = any.downcast_ref::<ResourceCheck>() {
        return Some(Box::new(v.clone()));
    }
    any.downcast_ref::<Decision>().map(|v| Box::new(v.clone()) as Box<dyn Val>)
}
