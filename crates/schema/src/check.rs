//! A light static check of CEL rules against the schema, standing in for cel-go's type
//! checker, which the `cel` crate lacks: kube-apiserver refuses a CRD whose rules name
//! fields the schema doesn't declare or variables that don't exist, and so does this.
//!
//! Only what is known for sure is checked: selections on `self`/`oldSelf` (and on the
//! items of their lists, through comprehensions) where the schema declares an object's
//! properties, and unknown identifiers. Anything dynamic (int-or-string, preserved
//! unknown fields, expressions the check can't type) is left to run time.

use crate::schema::{Node, SchemaType};
use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::{ParseErrors, Program};

/// What the check knows about an expression's value.
#[derive(Clone, Copy)]
enum Ty<'n> {
    /// Anything.
    Dyn,
    /// A value of this schema node; `resource` when it is the root of a resource.
    Node(&'n Node, bool),
    /// The `metadata` of a resource root: only `name` and `generateName`.
    Meta,
}

/// Identifiers that name types or constants rather than variables.
const GLOBALS: &[&str] =
    &["int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"];

struct Checker<'n, 's> {
    program: &'s Program,
    this: Ty<'n>,
    old_self: Ty<'n>,
    /// Variables of another environment (admission policies), all of unknown type.
    declared: &'s [&'s str],
    errors: Vec<(u32, String)>,
}

/// Checks `program` (compiled from `source`) as a rule on `node`; the errors, formatted
/// as cel-go prints them, joined by newlines (empty when the rule passes).
pub(crate) fn check(
    program: &Program,
    source: &str,
    node: &Node,
    resource_root: bool,
    optional_old_self: bool,
) -> String {
    let this = Ty::Node(node, resource_root || node.embedded);
    let checker = Checker {
        program,
        this,
        old_self: if optional_old_self { Ty::Dyn } else { this },
        declared: &[],
        errors: Vec::new(),
    };
    checker.run(source)
}

/// Checks `program` (compiled from `source`) in an environment whose variables are
/// `declared` and of unknown type: only unknown identifiers and constant regexes are
/// errors. The errors as [`check`] formats them.
pub(crate) fn check_declared(program: &Program, source: &str, declared: &[&str]) -> String {
    let checker = Checker { program, this: Ty::Dyn, old_self: Ty::Dyn, declared, errors: Vec::new() };
    checker.run(source)
}

impl<'n> Checker<'n, '_> {
    fn run(mut self, source: &str) -> String {
        let mut scope = Vec::new();
        self.expr(self.program.expression(), &mut scope);
        self.errors.sort_by_key(|(offset, _)| *offset);
        self.errors
            .iter()
            .map(|(offset, msg)| display_error(source, *offset as usize, msg))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn error(&mut self, e: &IdedExpr, msg: String) {
        let offset = self.program.source_info().offset_for(e.id).map_or(0, |(start, _)| start);
        self.errors.push((offset, msg));
    }

    fn expr(&mut self, e: &IdedExpr, scope: &mut Vec<(String, Ty<'n>)>) -> Ty<'n> {
        match &e.expr {
            Expr::Ident(name) => {
                if let Some((_, ty)) = scope.iter().rev().find(|(n, _)| n == name) {
                    return *ty;
                }
                match name.as_str() {
                    n if self.declared.contains(&n) => Ty::Dyn,
                    "self" if self.declared.is_empty() => self.this,
                    "oldSelf" if self.declared.is_empty() => self.old_self,
                    n if n.starts_with('@') || GLOBALS.contains(&n) => Ty::Dyn,
                    n => {
                        self.error(e, format!("undeclared reference to '{n}' (in container '')"));
                        Ty::Dyn
                    }
                }
            }
            Expr::Select(select) => {
                let operand = self.expr(&select.operand, scope);
                let ty = self.select(operand, &select.field, e);
                if select.test { Ty::Dyn } else { ty }
            }
            Expr::Call(call) => {
                let namespaced = matches!(
                    call.target.as_deref(),
                    Some(IdedExpr { expr: Expr::Ident(ns), .. })
                        if !scope.iter().any(|(n, _)| n == ns) && ns != "self" && ns != "oldSelf"
                            && !self.declared.contains(&ns.as_str())
                );
                let target = match &call.target {
                    Some(t) if !namespaced => Some(self.expr(t, scope)),
                    _ => None,
                };
                let args: Vec<Ty<'n>> = call.args.iter().map(|a| self.expr(a, scope)).collect();
                self.constant_regex(call);
                match (call.func_name.as_str(), target, args.first()) {
                    ("_[_]", None, Some(Ty::Node(n, _))) => {
                        if n.ty == Some(SchemaType::Array) {
                            n.items.as_deref().map_or(Ty::Dyn, |i| Ty::Node(i, i.embedded))
                        } else if let Some(a) = n.additional.as_deref() {
                            Ty::Node(a, a.embedded)
                        } else {
                            Ty::Dyn
                        }
                    }
                    _ => Ty::Dyn,
                }
            }
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range, scope);
                let element = match range {
                    Ty::Node(n, _) if n.ty == Some(SchemaType::Array) && !n.int_or_string => {
                        n.items.as_deref().map_or(Ty::Dyn, |i| Ty::Node(i, i.embedded))
                    }
                    _ => Ty::Dyn,
                };
                self.expr(&c.accu_init, scope);
                let depth = scope.len();
                scope.push((c.accu_var.clone(), Ty::Dyn));
                match &c.iter_var2 {
                    // Two-variable comprehensions: index/key, then value.
                    Some(second) => {
                        scope.push((c.iter_var.clone(), Ty::Dyn));
                        let value = match range {
                            Ty::Node(n, _) if n.ty == Some(SchemaType::Object) => {
                                n.additional.as_deref().map_or(Ty::Dyn, |a| Ty::Node(a, a.embedded))
                            }
                            _ => element,
                        };
                        scope.push((second.clone(), value));
                    }
                    None => scope.push((c.iter_var.clone(), element)),
                }
                self.expr(&c.loop_cond, scope);
                self.expr(&c.loop_step, scope);
                scope.truncate(depth + 1);
                self.expr(&c.result, scope);
                scope.truncate(depth);
                Ty::Dyn
            }
            Expr::List(list) => {
                for item in &list.elements {
                    self.expr(item, scope);
                }
                Ty::Dyn
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    self.entry(&entry.expr, scope);
                }
                Ty::Dyn
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    self.entry(&entry.expr, scope);
                }
                Ty::Dyn
            }
            Expr::Literal(_) | Expr::Unspecified => Ty::Dyn,
        }
    }

    fn entry(&mut self, entry: &EntryExpr, scope: &mut Vec<(String, Ty<'n>)>) {
        match entry {
            EntryExpr::MapEntry(m) => {
                self.expr(&m.key, scope);
                self.expr(&m.value, scope);
            }
            EntryExpr::StructField(f) => {
                self.expr(&f.value, scope);
            }
        }
    }

    /// Kubernetes compiles constant regexes of `matches`, `find` and `findAll` with the
    /// rule, so a bad one refuses the CRD rather than failing every request.
    fn constant_regex(&mut self, call: &CallExpr) {
        if !matches!(call.func_name.as_str(), "matches" | "find" | "findAll") {
            return;
        }
        let pattern = if call.target.is_some() { call.args.first() } else { call.args.get(1) };
        if let Some(arg @ IdedExpr { expr: Expr::Literal(LiteralValue::String(s)), .. }) = pattern
            && let Err(e) = regex::Regex::new(s.inner())
        {
            let reason = e.to_string();
            let reason =
                reason.lines().rev().find_map(|l| l.strip_prefix("error: ")).unwrap_or(&reason).to_owned();
            self.error(arg, format!("invalid regular expression: error parsing regexp: {reason}"));
        }
    }

    /// The type of `field` selected on a value of type `ty`.
    fn select(&mut self, ty: Ty<'n>, field: &str, at: &IdedExpr) -> Ty<'n> {
        match ty {
            Ty::Dyn => Ty::Dyn,
            Ty::Meta => {
                if field != "name" && field != "generateName" {
                    self.error(at, format!("undefined field '{field}'"));
                }
                Ty::Dyn
            }
            Ty::Node(n, resource) => {
                if n.int_or_string || !(n.ty == Some(SchemaType::Object) || n.ty.is_none()) {
                    return Ty::Dyn;
                }
                if resource && field == "metadata" {
                    return Ty::Meta;
                }
                if let Some(a) = n.additional.as_deref() {
                    return Ty::Node(a, a.embedded);
                }
                if let Some(p) = n.properties.get(field) {
                    return Ty::Node(p, p.embedded);
                }
                if (resource && (field == "apiVersion" || field == "kind")) || n.preserve_unknown {
                    return Ty::Dyn;
                }
                if n.ty.is_none() && n.properties.is_empty() {
                    return Ty::Dyn;
                }
                self.error(at, format!("undefined field '{field}'"));
                Ty::Dyn
            }
        }
    }
}

/// Parse errors of the `cel` crate, printed as cel-go prints them.
pub(crate) fn display_parse_errors(errors: &ParseErrors, source: &str) -> String {
    errors
        .errors
        .iter()
        .map(|e| {
            let (line, col) = (e.pos.0.max(1) as usize, e.pos.1.max(1) as usize);
            format_at(source, line, col - 1, &e.msg)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One error at a byte offset of the source (as the `cel` crate records them), as
/// cel-go's `ToDisplayString` prints it: line and column in characters.
fn display_error(source: &str, offset: usize, msg: &str) -> String {
    let mut line = 1;
    let mut col = 0;
    let end = (0..=offset.min(source.len())).rev().find(|i| source.is_char_boundary(*i)).unwrap_or(0);
    for c in source[..end].chars() {
        if c == '\n' {
            line += 1;
            col = 0;
        } else {
            col += 1;
        }
    }
    format_at(source, line, col, msg)
}

/// `ERROR: <input>:line:col: msg`, then the source line and a caret under the column
/// (`col` 0-based, in characters).
fn format_at(source: &str, line: usize, col: usize, msg: &str) -> String {
    let mut out = format!("ERROR: <input>:{line}:{}: {msg}", col + 1);
    if let Some(snippet) = source.split('\n').nth(line - 1) {
        let snippet = snippet.replace('\t', " ");
        out.push_str("\n | ");
        out.push_str(&snippet);
        out.push_str("\n | ");
        let mut chars = snippet.chars();
        for _ in 0..col {
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => out.push('\u{ff0e}'),
                Some(_) => out.push('.'),
                None => break,
            }
        }
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => out.push('\u{ff3e}'),
            _ => out.push('^'),
        }
    }
    out
}
