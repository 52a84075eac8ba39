//! The parser: client-go's `util/jsonpath` grammar, rule for rule, so that a
//! path the API server accepts is accepted here, a path it rejects is rejected
//! here, and both mean the same thing.
//!
//! Quirks kept on purpose because the API server has them:
//! - `['a.b']` is the *path* `.a.b`, not the key `"a.b"` (client-go re-parses
//!   the quoted text as a field path); escape dots to get a literal key:
//!   `['a\.b']` or `.a\.b`.
//! - Only single-quoted bracket keys exist; `["x"]` is an error.
//! - Unions split on every comma, even inside quotes.
//! - `[]` means `[0]`; `..*` is an error; `...a` is `..a`.
//! - An unknown filter operator such as `<>` parses, and fails when evaluated.

use crate::quote::unquote;

/// Deeper nesting than this (filters inside filters, unions inside unions) is
/// refused, so hostile input cannot exhaust the stack.
const MAX_DEPTH: usize = 32;

/// Why an expression is not a valid JSONPath.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at position {position}")]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// Byte offset in the expression where the problem was found.
    pub position: usize,
}

/// One bound of a slice (`ParamsEntry` in client-go).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Param {
    pub value: i64,
    /// Given in the expression (else a default applies at evaluation).
    pub known: bool,
    /// The end of a single index `[i]`, stored as `i + 1`.
    pub derived: bool,
}

/// A step of a path, as client-go's parser produces it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// `.name`: a key of an object.
    Field(String),
    /// `.*` or `[*]` on objects: every value.
    Wildcard,
    /// `..`: the value and every descendant container.
    Recursive,
    /// `[i]`, `[a:b]`, `[a:b:step]`: start, end, step.
    Array([Param; 3]),
    /// `[x,y]`: each alternative evaluated on the same input.
    Union(Vec<Vec<Node>>),
    /// `[?(...)]`.
    Filter(Box<Filter>),
    /// A quoted literal; bytes because `\xff` escapes need not be UTF-8.
    Text(Vec<u8>),
    /// An integer literal (Go `int`).
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// Any other bare word (client-go's `range`/`end` template keywords).
    Identifier(String),
}

/// `[?(left op right)]`, or `[?(left)]` (existence) when `op` is `None`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Filter {
    pub left: Vec<Node>,
    pub op: Option<String>,
    pub right: Vec<Node>,
}

/// Parses `text` the way the API server parses a printer column's `jsonPath`:
/// as if written `{text}`.
pub(crate) fn parse_wrapped(text: &str, origin: usize) -> Result<Vec<Node>, ParseError> {
    Parser { text, origin, depth: 0 }.wrapped(0)
}

/// Parses a complete `{...}` template holding one expression (kubectl's
/// `-o jsonpath` spelling). `text` starts with `{`.
pub(crate) fn parse_braced(text: &str, origin: usize) -> Result<Vec<Node>, ParseError> {
    let parser = Parser { text, origin, depth: 0 };
    match parser.action(1)? {
        (nodes, Some(end)) if end == text.len() => Ok(nodes),
        (_, Some(end)) => parser.fail(end, "only one {…} expression is supported; unexpected text after '}'"),
        (_, None) => parser.fail(text.len(), "unclosed expression: missing '}'"),
    }
}

struct Parser<'s> {
    text: &'s str,
    /// Offset of `text` in the expression the user wrote, for error positions.
    origin: usize,
    depth: usize,
}

impl<'s> Parser<'s> {
    fn fail<T>(&self, at: usize, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError { message: message.into(), position: self.origin + at })
    }

    fn char_at(&self, at: usize) -> Option<char> {
        self.text.get(at..).and_then(|rest| rest.chars().next())
    }

    /// A parser for a piece of (possibly synthesized) text, one level deeper.
    fn sub<'t>(&self, text: &'t str, origin: usize) -> Result<Parser<'t>, ParseError> {
        if self.depth >= MAX_DEPTH {
            return self.fail(0, "expression nested too deeply");
        }
        Ok(Parser { text, origin, depth: self.depth + 1 })
    }

    /// client-go's `parseAction`: the text as if wrapped in `{…}`. The end of
    /// the text closes the expression; an earlier `}` closes it too, and the
    /// rest must then parse as template text (only the first expression counts).
    fn wrapped(&self, at: usize) -> Result<Vec<Node>, ParseError> {
        let (nodes, mut closed) = self.action(at)?;
        while let Some(after) = closed {
            match self.text[after..].find('{') {
                None => break,
                Some(i) => closed = self.action(after + i + 1)?.1,
            }
        }
        Ok(nodes)
    }

    /// Parses the inside of one `{…}` from `at`. Returns the nodes and the
    /// position after the closing `}`, or `None` when the text ended first.
    fn action(&self, mut at: usize) -> Result<(Vec<Node>, Option<usize>), ParseError> {
        let mut nodes = Vec::new();
        loop {
            let rest = &self.text[at..];
            if rest.starts_with('}') {
                return Ok((nodes, Some(at + 1)));
            }
            if rest.starts_with("[?(") {
                at = self.filter(at, &mut nodes)?;
                continue;
            }
            if rest.starts_with("..") {
                if matches!(nodes.last(), Some(Node::Recursive)) {
                    return self.fail(at, "invalid multiple recursive descent");
                }
                at += 2;
                nodes.push(Node::Recursive);
                if self.char_at(at).is_some_and(is_alphanumeric) {
                    at = self.field(at, &mut nodes);
                }
                continue;
            }
            let Some(c) = rest.chars().next() else {
                return Ok((nodes, None));
            };
            match c {
                '\r' | '\n' => return self.fail(at, "line breaks are not allowed"),
                ' ' | '@' | '$' => at += 1,
                '[' => at = self.array(at, &mut nodes)?,
                '"' | '\'' => at = self.quote(at, c, &mut nodes)?,
                '.' => at = self.field(at + 1, &mut nodes),
                '+' | '-' => at = self.number(at, &mut nodes)?,
                c if is_digit(c) => at = self.number(at, &mut nodes)?,
                c if is_alphanumeric(c) => at = self.identifier(at, &mut nodes),
                '{' => {
                    return self.fail(
                        at,
                        "unexpected '{' (a printer column's jsonPath is wrapped in {} by the API server, \
                         so it must not carry its own)",
                    );
                }
                c => return self.fail(at, format!("unexpected character {c:?}")),
            }
        }
    }

    /// `.name` (from the first character of the name): up to the next
    /// unescaped terminator; backslashes are dropped (`a\.b` is key `a.b`).
    fn field(&self, start: usize, nodes: &mut Vec<Node>) -> usize {
        let mut at = start;
        while let Some(c) = self.char_at(at) {
            if c == '\\' {
                at += 1;
                if let Some(escaped) = self.char_at(at) {
                    at += escaped.len_utf8();
                }
            } else if is_terminator(c) {
                break;
            } else {
                at += c.len_utf8();
            }
        }
        let raw = &self.text[start..at];
        nodes.push(if raw == "*" { Node::Wildcard } else { Node::Field(raw.replace('\\', "")) });
        at
    }

    /// A bare word: `true`/`false`, or an identifier (which fails at evaluation).
    fn identifier(&self, start: usize, nodes: &mut Vec<Node>) -> usize {
        let mut at = start;
        while let Some(c) = self.char_at(at).filter(|c| !is_terminator(*c)) {
            at += c.len_utf8();
        }
        nodes.push(match &self.text[start..at] {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            word => Node::Identifier(word.to_owned()),
        });
        at
    }

    /// A number literal: optional sign, then digits and dots.
    fn number(&self, start: usize, nodes: &mut Vec<Node>) -> Result<usize, ParseError> {
        let mut at = start;
        if matches!(self.char_at(at), Some('+' | '-')) {
            at += 1;
        }
        while let Some(c) = self.char_at(at).filter(|c| *c == '.' || is_digit(*c)) {
            at += c.len_utf8();
        }
        let raw = &self.text[start..at];
        if let Ok(i) = raw.parse::<i64>() {
            nodes.push(Node::Int(i));
        } else if let Some(f) = raw.parse::<f64>().ok().filter(|f| f.is_finite()) {
            nodes.push(Node::Float(f));
        } else {
            return self.fail(start, format!("cannot parse number {raw:?}"));
        }
        Ok(at)
    }

    /// A quoted literal, `"…"` or `'…'`, with Go escapes.
    fn quote(&self, start: usize, quote: char, nodes: &mut Vec<Node>) -> Result<usize, ParseError> {
        let bytes = self.text.as_bytes();
        let mut at = start + 1;
        loop {
            match self.char_at(at) {
                None | Some('\n') => return self.fail(start, "unterminated quoted string"),
                Some(c) => {
                    at += c.len_utf8();
                    // As in client-go: a quote right after a backslash never closes.
                    if c == quote && bytes[at - 2] != b'\\' {
                        break;
                    }
                }
            }
        }
        let raw = &self.text[start..at];
        match unquote(raw) {
            Some(text) => nodes.push(Node::Text(text)),
            None => return self.fail(start, format!("invalid escape sequence in {raw}")),
        }
        Ok(at)
    }

    /// `[…]` (not a filter): up to the first `]`.
    fn array(&self, start: usize, nodes: &mut Vec<Node>) -> Result<usize, ParseError> {
        let inner = start + 1;
        let mut at = inner;
        loop {
            match self.char_at(at) {
                None | Some('\n') => return self.fail(start, "unterminated '[': missing ']'"),
                Some(']') => break,
                Some(c) => at += c.len_utf8(),
            }
        }
        self.bracket(&self.text[inner..at], inner, nodes)?;
        Ok(at + 1)
    }

    /// The text between brackets: union, quoted key, or index/slice.
    fn bracket(&self, text: &str, at: usize, nodes: &mut Vec<Node>) -> Result<(), ParseError> {
        let text = if text == "*" { ":" } else { text };
        if text.contains(',') {
            let mut union = Vec::new();
            let mut offset = at;
            for part in text.split(',') {
                let lead = part.len() - part.trim_start_matches(' ').len();
                let synthetic = format!("[{}]", part.trim_matches(' '));
                // Position 1 of the synthetic text is the part's first character.
                let origin = (self.origin + offset + lead).saturating_sub(1);
                union.push(self.sub(&synthetic, origin)?.wrapped(0)?);
                offset += part.len() + 1;
            }
            nodes.push(Node::Union(union));
            return Ok(());
        }
        if let Some(key) =
            text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')).filter(|k| !k.contains('\''))
        {
            // client-go parses the key as `.key`: dots in it separate fields.
            let synthetic = format!(".{key}");
            nodes.extend(self.sub(&synthetic, self.origin + at)?.wrapped(0)?);
            return Ok(());
        }
        match slice_params(text) {
            Some(Ok(params)) => {
                nodes.push(Node::Array(params));
                Ok(())
            }
            Some(Err(bad)) => self.fail(at, format!("array index {bad:?} is not a number")),
            None if text.starts_with('"') => self.fail(
                at,
                format!(
                    "invalid array index {text}: kubectl's JSONPath only accepts single-quoted keys ['key']"
                ),
            ),
            None => self.fail(at, format!("invalid array index {text:?}")),
        }
    }

    /// `[?(…)]`. Finds the `)` that closes it the way client-go does (a `)`
    /// inside the first quoted string does not count), then splits the text
    /// into `left op right` or a bare `left` (existence test).
    fn filter(&self, start: usize, nodes: &mut Vec<Node>) -> Result<usize, ParseError> {
        let bytes = self.text.as_bytes();
        let inner = start + 3;
        let mut at = inner;
        let (mut open, mut closed, mut pair) = (false, false, '\0');
        loop {
            let c = match self.char_at(at) {
                None | Some('\n') => return self.fail(start, "unterminated filter: missing ')]'"),
                Some(c) => c,
            };
            at += c.len_utf8();
            match c {
                '"' | '\'' if !open => {
                    open = true;
                    pair = c;
                }
                '"' | '\'' => {
                    if bytes[at - 2] != b'\\' && c == pair {
                        closed = true;
                    }
                }
                ')' if open == closed => break,
                _ => {}
            }
        }
        if self.char_at(at) != Some(']') {
            return self.fail(at, "unclosed filter: expected ']' after ')'");
        }
        let text = &self.text[inner..at - 1];
        let origin = self.origin + inner;
        let filter = match split_comparison(text) {
            None => Filter { left: self.sub(text, origin)?.wrapped(0)?, op: None, right: Vec::new() },
            Some((op_start, op_end)) => Filter {
                left: self.sub(&text[..op_start], origin)?.wrapped(0)?,
                op: Some(text[op_start..op_end].to_owned()),
                right: self.sub(&text[op_end..], origin + op_end)?.wrapped(0)?,
            },
        };
        nodes.push(Node::Filter(Box::new(filter)));
        Ok(at + 1)
    }
}

/// client-go's `^([^!<>=]+)([!<>=]+)(.+?)$`: the operator is the first run of
/// `!<>=` characters, after a non-empty left side, leaving at least one
/// character on the right. Returns the operator's byte range.
fn split_comparison(text: &str) -> Option<(usize, usize)> {
    let is_op = |b: &u8| matches!(b, b'!' | b'<' | b'>' | b'=');
    let bytes = text.as_bytes();
    let start = bytes.iter().position(is_op).filter(|i| *i > 0)?;
    let end = start + bytes[start..].iter().take_while(|b| is_op(b)).count();
    if end < bytes.len() {
        Some((start, end))
    } else if end - start >= 2 {
        // The regexp backtracks: the last operator character becomes the right side.
        Some((start, end - 1))
    } else {
        None
    }
}

/// client-go's `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$` and its defaults. `None`
/// when the text is not of that shape; `Some(Err(part))` when a part does
/// not fit an integer.
fn slice_params(text: &str) -> Option<Result<[Param; 3], String>> {
    let bytes = text.as_bytes();
    let mut groups: [Option<&str>; 3] = [None; 3];
    let mut at = 0;
    for (i, group) in groups.iter_mut().enumerate() {
        let start = at;
        if i > 0 {
            if bytes.get(at) != Some(&b':') {
                break;
            }
            at += 1;
        }
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        *group = Some(&text[start..at]);
    }
    if at != bytes.len() {
        return None;
    }
    let number = |s: &str| s.parse::<i64>().map_err(|_| s.to_owned());
    let mut params = [Param::default(); 3];
    let first = groups[0].unwrap_or("");
    if !first.is_empty() {
        params[0] = Param {
            value: match number(first) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            },
            known: true,
            derived: false,
        };
    }
    for i in 1..3 {
        params[i] = match groups[i].map(|g| &g[1..]) {
            Some("") => Param::default(),
            Some(v) => match number(v) {
                Ok(value) => Param { value, known: true, derived: false },
                Err(e) => return Some(Err(e)),
            },
            None if i == 1 => Param { value: params[0].value.wrapping_add(1), known: true, derived: true },
            None => Param::default(),
        };
    }
    Some(Ok(params))
}

/// Ends a field name or bare word.
fn is_terminator(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
}

/// Go's `unicode.IsDigit`, approximated by Rust's numeric class (they agree on ASCII).
fn is_digit(c: char) -> bool {
    c.is_numeric()
}

/// Go's `isAlphaNumeric`: letter, digit or underscore (approximated as above).
fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(text: &str) -> Vec<Node> {
        parse_wrapped(text, 0).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn error(text: &str) -> ParseError {
        match parse_wrapped(text, 0) {
            Ok(n) => panic!("{text} parsed as {n:?}"),
            Err(e) => e,
        }
    }

    fn field(name: &str) -> Node {
        Node::Field(name.to_owned())
    }

    fn index(i: i64) -> Node {
        Node::Array([
            Param { value: i, known: true, derived: false },
            Param { value: i.wrapping_add(1), known: true, derived: true },
            Param::default(),
        ])
    }

    fn slice(start: Option<i64>, end: Option<i64>, step: Option<i64>) -> Node {
        let p = |v: Option<i64>| Param { value: v.unwrap_or(0), known: v.is_some(), derived: false };
        Node::Array([p(start), p(end), p(step)])
    }

    #[test]
    fn fields() {
        assert_eq!(nodes(".status.phase"), [field("status"), field("phase")]);
        assert_eq!(nodes("$.a"), [field("a")]);
        assert_eq!(nodes(" .a .b "), [field("a"), field("b")]);
        assert_eq!(nodes(".metadata.labels.k8s-app"), [field("metadata"), field("labels"), field("k8s-app")]);
        assert_eq!(
            nodes(r".labels.kubernetes\.io/hostname"),
            [field("labels"), field("kubernetes.io/hostname")]
        );
        assert_eq!(nodes(".a.*"), [field("a"), Node::Wildcard]);
        assert_eq!(nodes(""), []);
        assert_eq!(nodes("."), [field("")]);
    }

    #[test]
    fn bracket_keys_are_paths_like_client_go() {
        assert_eq!(nodes("['a']"), [field("a")]);
        assert_eq!(
            nodes(".metadata.labels['plugins.camunda.io/cluster']"),
            [field("metadata"), field("labels"), field("plugins"), field("camunda"), field("io/cluster")]
        );
        assert_eq!(
            nodes(r".metadata.labels['plugins\.camunda\.io/cluster']"),
            [field("metadata"), field("labels"), field("plugins.camunda.io/cluster")]
        );
        let e = error(r#".a["x"]"#);
        assert!(e.message.contains("single-quoted"), "{e}");
        assert_eq!(e.position, 3);
    }

    #[test]
    fn indexes_and_slices() {
        assert_eq!(nodes("[0]"), [index(0)]);
        assert_eq!(nodes("[-1]"), [index(-1)]);
        assert_eq!(
            nodes("[]"),
            [Node::Array([
                Param::default(),
                Param { value: 1, known: true, derived: true },
                Param::default()
            ])]
        );
        assert_eq!(nodes("[1:3]"), [slice(Some(1), Some(3), None)]);
        assert_eq!(nodes("[:2]"), [slice(None, Some(2), None)]);
        assert_eq!(nodes("[-5:]"), [slice(Some(-5), None, None)]);
        assert_eq!(nodes("[::2]"), [slice(None, None, Some(2))]);
        assert_eq!(nodes("[*]"), [slice(None, None, None)]);
        assert!(error("[a]").message.contains("invalid array index"));
        assert!(error("[-]").message.contains("not a number"));
        assert!(error("[99999999999999999999]").message.contains("not a number"));
        assert_eq!(error("[1").message, "unterminated '[': missing ']'");
        assert_eq!(nodes("[9223372036854775807]"), [index(i64::MAX)]);
    }

    #[test]
    fn unions() {
        assert_eq!(nodes("[0,2]"), [Node::Union(vec![vec![index(0)], vec![index(2)]])]);
        assert_eq!(
            nodes("['a', 'b.c']"),
            [Node::Union(vec![vec![field("a")], vec![field("b"), field("c")]])]
        );
        assert_eq!(nodes("[*,0]"), [Node::Union(vec![vec![slice(None, None, None)], vec![index(0)]])]);
        // Commas split even inside quotes, as in client-go.
        assert!(parse_wrapped("['a,b']", 0).is_err());
    }

    #[test]
    fn recursive_descent() {
        assert_eq!(nodes("..name"), [Node::Recursive, field("name")]);
        assert_eq!(nodes("...name"), [Node::Recursive, field("name")]);
        assert_eq!(nodes("..[0]"), [Node::Recursive, index(0)]);
        assert_eq!(nodes(".."), [Node::Recursive]);
        assert_eq!(error("....a").message, "invalid multiple recursive descent");
        assert!(error("..*").message.contains("unexpected character '*'"));
    }

    #[test]
    fn filters() {
        let f = |left: Vec<Node>, op: Option<&str>, right: Vec<Node>| {
            Node::Filter(Box::new(Filter { left, op: op.map(str::to_owned), right }))
        };
        assert_eq!(
            nodes(r#".status.conditions[?(@.type == "Ready")].status"#),
            [
                field("status"),
                field("conditions"),
                f(vec![field("type")], Some("=="), vec![Node::Text(b"Ready".to_vec())]),
                field("status")
            ]
        );
        assert_eq!(nodes("[?(@.x)]"), [f(vec![field("x")], None, vec![])]);
        assert_eq!(nodes("[?(@.a.b<=3)]"), [f(vec![field("a"), field("b")], Some("<="), vec![Node::Int(3)])]);
        assert_eq!(nodes("[?(@.a>-1.5)]"), [f(vec![field("a")], Some(">"), vec![Node::Float(-1.5)])]);
        assert_eq!(nodes("[?(@.a!=true)]"), [f(vec![field("a")], Some("!="), vec![Node::Bool(true)])]);
        assert_eq!(
            nodes("[?(@.a=='x')]"),
            [f(vec![field("a")], Some("=="), vec![Node::Text(b"x".to_vec())])]
        );
        assert_eq!(nodes("[?(@<5)]"), [f(vec![], Some("<"), vec![Node::Int(5)])]);
        // Parentheses and brackets inside the quoted string do not end the filter.
        assert_eq!(
            nodes(r#"[?(@.os == "{[()]}")]"#),
            [f(vec![field("os")], Some("=="), vec![Node::Text(b"{[()]}".to_vec())])]
        );
        // Unknown operators parse (and fail at evaluation), as in client-go.
        assert_eq!(nodes("[?(@.p<>10)]"), [f(vec![field("p")], Some("<>"), vec![Node::Int(10)])]);
        assert_eq!(error("[?(@.a == 1").message, "unterminated filter: missing ')]'");
        assert_eq!(error("[?(@.a == 1)x").message, "unclosed filter: expected ']' after ')'");
    }

    #[test]
    fn comparison_split_matches_the_regexp() {
        assert_eq!(split_comparison("@.a==1"), Some((3, 5)));
        assert_eq!(split_comparison("@.a=="), Some((3, 4)));
        assert_eq!(split_comparison("@.a="), None);
        assert_eq!(split_comparison("==1"), None);
        assert_eq!(split_comparison("@.a"), None);
    }

    #[test]
    fn literals() {
        assert_eq!(nodes(r#""a\tb""#), [Node::Text(b"a\tb".to_vec())]);
        assert_eq!(nodes(r"'\xff'"), [Node::Text(vec![0xff])]);
        assert_eq!(nodes("true"), [Node::Bool(true)]);
        assert_eq!(nodes("range"), [Node::Identifier("range".into())]);
        assert_eq!(error("+12.3.0").message, "cannot parse number \"+12.3.0\"");
        assert_eq!(error(r#""abc"#).message, "unterminated quoted string");
        assert!(error(r#""\q""#).message.contains("invalid escape"));
    }

    #[test]
    fn braces_follow_the_api_server_wrapping() {
        // The API server parses `{<jsonPath>}`: a `}` closes the expression and
        // the rest is template text that must itself parse.
        assert_eq!(nodes(".a}{.b"), [field("a")]);
        assert_eq!(nodes(".a} text"), [field("a")]);
        assert!(parse_wrapped(".a}{[", 0).is_err());
        let e = error("{.a}");
        assert_eq!(e.position, 0);
        assert!(e.message.contains("wrapped"), "{e}");
        assert_eq!(parse_braced("{.a.b}", 0), Ok(vec![field("a"), field("b")]));
        assert!(parse_braced("{.a", 0).is_err());
        assert!(parse_braced("{.a}{.b}", 0).is_err());
    }

    #[test]
    fn errors_carry_positions() {
        assert_eq!(error(".a\t.b"), ParseError { message: "unexpected character '\\t'".into(), position: 2 });
        assert_eq!(error(".a\n").position, 2);
        // Positions inside filters and unions point into the original text.
        assert_eq!(error("[?(@.a == *)]").position, 10);
        assert_eq!(error("[0, x]").position, 4);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[?(@".repeat(200) + &")]".repeat(200);
        assert!(parse_wrapped(&deep, 0).is_err());
    }
}
