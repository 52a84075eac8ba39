//! Go's formatting of the values that end up in error messages.
//!
//! kube-apiserver prints bad values with `fmt` (`%q`, `%v`, `%#v`) on values decoded
//! from JSON into `interface{}`; `kubectl` users compare these messages with what a real
//! cluster prints, so they are reproduced byte for byte here.

use serde_json::{Number, Value};
use std::fmt::Write;

/// `strconv.Quote`: double-quoted, Go escapes, printable Unicode kept as is.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if !is_print(c) => {
                if (c as u32) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint` beyond ASCII: control characters, the
/// Unicode format characters people meet (soft hyphen, zero-width and direction marks,
/// BOM), separators other than space, and private use are escaped.
fn is_print(c: char) -> bool {
    if c.is_control() {
        return false;
    }
    !matches!(c as u32,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f | 0x2028..=0x202e
        | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff | 0x0f0000..=0x10ffff
        | 0xa0 | 0x1680 | 0x2000..=0x200a | 0x202f | 0x205f | 0x3000)
}

/// `%v` of a float64: the shortest representation that round-trips, in `%e` form when
/// the decimal exponent is below -4 or at least 6 (Go's threshold for shortest `%g`).
pub(crate) fn float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".to_owned() } else { "-Inf".to_owned() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".to_owned() } else { "0".to_owned() };
    }
    // Rust's `{:e}` is the shortest round-trip representation, as Go's precision -1.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..6).contains(&exp) {
        // %e with at least two exponent digits.
        let mut out = String::from(sign);
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
        return out;
    }
    let mut out = String::from(sign);
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// `%v` of a JSON number as Go decodes it: int64 when it fits, float64 otherwise.
pub(crate) fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() { i.to_string() } else { float(n.as_f64().unwrap_or(f64::NAN)) }
}

/// `%#v` of a value decoded from JSON into `interface{}`.
pub(crate) fn sharp_v(v: &Value) -> String {
    let mut out = String::new();
    write_sharp_v(&mut out, v, false);
    out
}

fn write_sharp_v(out: &mut String, v: &Value, nested: bool) {
    match v {
        Value::Null if nested => out.push_str("interface {}(nil)"),
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(&quote(s)),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_sharp_v(out, item, true);
            }
            out.push('}');
        }
        Value::Object(map) => {
            out.push_str("map[string]interface {}{");
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(k));
                out.push(':');
                write_sharp_v(out, &map[k], true);
            }
            out.push('}');
        }
    }
}

/// The name kube-openapi gives the JSON type of a decoded value in type errors.
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_go_prints_them() {
        for (f, s) in [
            (1.0, "1"),
            (1.5, "1.5"),
            (100000.0, "100000"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (0.1, "0.1"),
        ] {
            assert_eq!(float(f), s, "{f}");
        }
    }

    #[test]
    fn strings_quote_as_strconv_quote() {
        assert_eq!(quote("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
        assert_eq!(quote("\u{200b}"), r#""\u200b""#);
    }

    #[test]
    fn compound_values_print_as_sharp_v() {
        assert_eq!(
            sharp_v(&json!({"b": [1, "x", null], "a": 1.5})),
            r#"map[string]interface {}{"a":1.5, "b":[]interface {}{1, "x", interface {}(nil)}}"#
        );
    }
}
