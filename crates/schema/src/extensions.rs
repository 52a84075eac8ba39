//! The Kubernetes CEL libraries CRD rules commonly use that the `cel` crate lacks: the
//! list functions (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), the regex
//! functions (`find`, `findAll`) and the sets library (`sets.contains`,
//! `sets.equivalent`, `sets.intersects`).

use cel::common::types::{CelBool, CelInt, CelList, CelString, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use std::cmp::Ordering;

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the Kubernetes functions on `env`.
pub(crate) fn kubernetes(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload("indexOf", "list_index_of", LIST_TYPE, vec![DYN_TYPE], index_of)?;
    env.add_member_overload("lastIndexOf", "list_last_index_of", LIST_TYPE, vec![DYN_TYPE], last_index_of)?;
    env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload("findAll", "string_find_all", STRING_TYPE, vec![STRING_TYPE], find_all)?;
    env.add_member_overload(
        "findAll",
        "string_find_all_n",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all_n,
    )?;
    env.add_overload("sets.contains", "sets_contains", vec![LIST_TYPE, LIST_TYPE], sets_contains)?;
    env.add_overload("sets.equivalent", "sets_equivalent", vec![LIST_TYPE, LIST_TYPE], sets_equivalent)?;
    env.add_overload("sets.intersects", "sets_intersects", vec![LIST_TYPE, LIST_TYPE], sets_intersects)?;
    Ok(())
}

fn function_error(function: &str, msg: &str) -> ExecutionError {
    ExecutionError::function_error(function, msg)
}

/// The elements of a list argument.
fn elements<'b, 'v>(list: &'b (dyn Val + 'v)) -> Result<Vec<&'b (dyn Val + 'v)>, ExecutionError> {
    let iterable = list.as_iterable().ok_or_else(|| ExecutionError::UnexpectedType {
        got: list.get_type().name().to_owned(),
        want: "list".to_owned(),
    })?;
    let mut iter = iterable.iter();
    let mut out = Vec::new();
    while let Some(v) = iter.next() {
        out.push(v);
    }
    Ok(out)
}

fn compare(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer().ok_or_else(|| function_error(function, "list elements are not comparable"))?.compare(b)
}

fn is_sorted<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    for pair in items.windows(2) {
        if compare("isSorted", pair[0], pair[1])? == Ordering::Greater {
            return Ok(CowVal::owned(CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(CelBool::from(true)))
}

fn sum<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let Some((first, rest)) = items.split_first() else {
        return Ok(CowVal::owned(CelInt::from(0)));
    };
    let mut acc: Box<dyn Val + 'v> = first.clone_as_boxed();
    for item in rest {
        let adder = acc.as_adder().ok_or_else(|| function_error("sum", "list elements can't be added"))?;
        let next = adder.add(*item)?.into_owned();
        acc = next;
    }
    Ok(CowVal::Owned(acc))
}

fn extreme<'b, 'v>(args: Args<'b, 'v>, function: &str, keep: Ordering) -> Out<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let Some((first, rest)) = items.split_first() else {
        return Err(function_error(function, &format!("{function} called on empty list")));
    };
    let mut best = *first;
    for item in rest {
        if compare(function, *item, best)? == keep {
            best = *item;
        }
    }
    Ok(CowVal::Owned(best.clone_as_boxed()))
}

fn min<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(args, "min", Ordering::Less)
}

fn max<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(args, "max", Ordering::Greater)
}

fn index_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let needle = args[1].as_ref();
    let i = items.iter().position(|v| v.equals(needle)).map_or(-1, |i| i as i64);
    Ok(CowVal::owned(CelInt::from(i)))
}

fn last_index_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let needle = args[1].as_ref();
    let i = items.iter().rposition(|v| v.equals(needle)).map_or(-1, |i| i as i64);
    Ok(CowVal::owned(CelInt::from(i)))
}

fn string_arg<'a>(v: &'a CowVal<'_, '_>, function: &str) -> Result<&'a str, ExecutionError> {
    v.as_ref()
        .downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(|| function_error(function, "expected a string"))
}

fn regex(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    crate::pattern::compile(pattern).map_err(|e| function_error(function, &e))
}

fn find<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let s = string_arg(&args[0], "find")?;
    let re = regex("find", string_arg(&args[1], "find")?)?;
    let found = re.find(s).map_or(String::new(), |m| m.as_str().to_owned());
    Ok(CowVal::owned(CelString::from(found)))
}

fn find_all_limited<'b, 'v>(args: &Args<'b, 'v>, limit: Option<usize>) -> Out<'b, 'v> {
    let s = string_arg(&args[0], "findAll")?;
    let re = regex("findAll", string_arg(&args[1], "findAll")?)?;
    let found: Vec<Box<dyn Val + 'v>> = re
        .find_iter(s)
        .take(limit.unwrap_or(usize::MAX))
        .map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(found)))
}

fn find_all<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    find_all_limited(&args, None)
}

fn find_all_n<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let n = args[2].as_ref().downcast_ref::<CelInt>().map_or(-1, |i| *i.inner());
    // Go's FindAllString: a negative limit means all matches.
    let limit = usize::try_from(n).ok();
    find_all_limited(&args, limit)
}

fn contains_all(a: &[&dyn Val], b: &[&dyn Val]) -> bool {
    b.iter().all(|x| a.iter().any(|y| y.equals(*x)))
}

fn sets_contains<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let (a, b) = (elements(args[0].as_ref())?, elements(args[1].as_ref())?);
    Ok(CowVal::owned(CelBool::from(contains_all(&a, &b))))
}

fn sets_equivalent<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let (a, b) = (elements(args[0].as_ref())?, elements(args[1].as_ref())?);
    Ok(CowVal::owned(CelBool::from(contains_all(&a, &b) && contains_all(&b, &a))))
}

fn sets_intersects<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let (a, b) = (elements(args[0].as_ref())?, elements(args[1].as_ref())?);
    Ok(CowVal::owned(CelBool::from(b.iter().any(|x| a.iter().any(|y| y.equals(*x))))))
}
