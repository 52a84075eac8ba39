//! `pattern` regexes with Go's (RE2) semantics on the `regex` crate.
//!
//! The two dialects agree on almost everything; the differences that change what a CRD
//! accepts are rewritten: Go's `\d`, `\w`, `\s` and `\b` are ASCII-only where Rust's are
//! Unicode-aware, Go reads `[` and `&&` inside a class literally where Rust nests and
//! intersects, and Go takes an invalid `{` repetition and `\Q…\E` literally.

use regex::Regex;

/// Compiles a Go regular expression; the error reads as Go's `error parsing regexp: …`.
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate(pattern);
    Regex::new(&translated).map_err(|e| {
        let text = e.to_string();
        let reason = text.lines().rev().find_map(|l| l.strip_prefix("error: ")).unwrap_or(text.as_str());
        format!("error parsing regexp: {reason}: `{pattern}`")
    })
}

fn translate(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    // Position in the class, to let `]` and `^` at its start stay literal/negating.
    let mut class_start = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let e = chars[i + 1];
                if e == 'Q' {
                    // Literal text up to `\E` (or the end).
                    let mut j = i + 2;
                    let mut lit = String::new();
                    while j < chars.len() && !(chars[j] == '\\' && chars.get(j + 1) == Some(&'E')) {
                        lit.push(chars[j]);
                        j += 1;
                    }
                    out.push_str(&escape_literal(&lit, in_class));
                    i = if j < chars.len() { j + 2 } else { j };
                    continue;
                }
                out.push_str(&translate_escape(e, in_class));
                i += 2;
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                class_start = i;
                continue;
            }
            '[' if in_class => {
                if chars.get(i + 1) == Some(&':') {
                    // A POSIX class `[:alpha:]`: copied up to its `:]`.
                    if let Some(end) = find_posix_end(&chars, i + 2) {
                        out.extend(&chars[i..end]);
                        i = end;
                        continue;
                    }
                }
                out.push_str("\\[");
            }
            ']' if in_class && i != class_start => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '{' if !in_class && !is_repetition(&chars[i..]) => out.push_str("\\{"),
            '}' if !in_class => out.push_str("\\}"),
            _ => out.push(c),
        }
        if c == '{' && !in_class && is_repetition(&chars[i..]) {
            // Copy the whole repetition so its `}` isn't escaped.
            let end = chars[i..].iter().position(|c| *c == '}').map_or(chars.len(), |p| i + p);
            out.extend(&chars[i + 1..=end.min(chars.len() - 1)]);
            i = end + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// Where a POSIX class starting after `[:` ends (index after `:]`).
fn find_posix_end(chars: &[char], from: usize) -> Option<usize> {
    let mut j = from;
    while j + 1 < chars.len() {
        if chars[j] == ':' && chars[j + 1] == ']' {
            return Some(j + 2);
        }
        if !chars[j].is_ascii_alphabetic() && chars[j] != '^' {
            return None;
        }
        j += 1;
    }
    None
}

/// Whether `s` (starting at `{`) is a valid counted repetition `{n}`, `{n,}`, `{n,m}`.
fn is_repetition(s: &[char]) -> bool {
    let mut j = 1;
    let digits = |j: &mut usize| {
        let start = *j;
        while *j < s.len() && s[*j].is_ascii_digit() {
            *j += 1;
        }
        *j > start
    };
    if !digits(&mut j) {
        return false;
    }
    if j < s.len() && s[j] == ',' {
        j += 1;
        digits(&mut j);
    }
    j < s.len() && s[j] == '}'
}

fn translate_escape(e: char, in_class: bool) -> String {
    const DIGIT: &str = "0-9";
    const WORD: &str = "0-9A-Za-z_";
    const SPACE: &str = "\\t\\n\\f\\r ";
    let class = |set: &str, negated: bool| {
        if in_class && !negated {
            set.to_owned()
        } else if negated {
            format!("[^{set}]")
        } else {
            format!("[{set}]")
        }
    };
    match e {
        'd' => class(DIGIT, false),
        'D' => class(DIGIT, true),
        'w' => class(WORD, false),
        'W' => class(WORD, true),
        's' => class(SPACE, false),
        'S' => class(SPACE, true),
        'b' if !in_class => "(?-u:\\b)".to_owned(),
        'B' if !in_class => "(?-u:\\B)".to_owned(),
        _ => format!("\\{e}"),
    }
}

fn escape_literal(lit: &str, in_class: bool) -> String {
    if !in_class {
        return regex::escape(lit);
    }
    let mut out = String::new();
    for c in lit.chars() {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::compile;

    #[test]
    fn go_semantics() {
        let r = compile(r"^\d+$").unwrap();
        assert!(r.is_match("123"));
        assert!(!r.is_match("١٢٣"), "Go's \\d is ASCII only");
        assert!(compile(r"^[\w-]+$").unwrap().is_match("a-b_c"));
        assert!(compile(r"^[[]+$").unwrap().is_match("[["));
        assert!(compile(r"^[a&&b]+$").unwrap().is_match("&&"));
        assert!(compile(r"^a{$").unwrap().is_match("a{"));
        assert!(compile(r"^a{2}$").unwrap().is_match("aa"));
        assert!(compile(r"^a{1,3}b$").unwrap().is_match("aab"));
        assert!(compile(r"^[[:alpha:]]+$").unwrap().is_match("abc"));
        assert!(compile(r"^\Q.*\E$").unwrap().is_match(".*"));
        assert!(compile(r"^[^\s]+$").unwrap().is_match("abc"));
        assert!(compile(r"^[\S]+$").unwrap().is_match("abc"));
        assert!(compile(r"[]a]").unwrap().is_match("]"));
    }

    #[test]
    fn errors_read_as_go() {
        let e = compile("[").unwrap_err();
        assert!(e.starts_with("error parsing regexp: "), "{e}");
    }
}
