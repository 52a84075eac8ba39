//! Text output as client-go's JSONPath printer writes it (`PrintResults`):
//! objects and arrays as Go's `json.Marshal` writes them, everything else as
//! Go's `fmt.Fprint`. Cells of `string` columns are this text, so the bytes
//! must match Go's: sorted keys, HTML-escaped strings, Go's float formats.

use serde_json::Value;

use crate::eval::Item;

/// The text of one result. `null_text` is what a JSON null prints as: `null`
/// from kubectl's printer, `<no value>` in the API server's table cells (it
/// re-wraps the value, losing its type).
pub(crate) fn item_text(item: Item<'_, '_>, null_text: &str) -> String {
    item_text_within(item, null_text, usize::MAX)
}

/// [`item_text`], at most `limit` characters: a longer text is cut, its last character an
/// ellipsis (`…`), and its printing stops there, so an object of megabytes costs what its first
/// characters do.
pub(crate) fn item_text_within(item: Item<'_, '_>, null_text: &str, limit: usize) -> String {
    let mut out = Printed::new(limit);
    match item {
        Item::Doc(Value::Null) => out.push_str(null_text),
        Item::Doc(value @ (Value::Object(_) | Value::Array(_))) => go_json(value, &mut out),
        Item::Doc(Value::String(s)) => out.push_str(s),
        Item::Doc(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        Item::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Item::Doc(Value::Number(n)) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&go_float(n.as_f64().unwrap_or(f64::NAN))),
        },
        Item::Byte(b) => out.push_str(&b.to_string()),
        Item::Text(t) => out.push_str(&String::from_utf8_lossy(t)),
        Item::Int(i) => out.push_str(&i.to_string()),
        Item::Float(f) => out.push_str(&go_float(f)),
    }
    out.finish()
}

/// Text being printed, up to a number of characters. What goes past it is dropped, and the
/// printers stop as soon as anything was ([`Printed::is_cut`]).
pub(crate) struct Printed {
    text: String,
    /// Characters it still takes.
    left: usize,
    /// Whether anything was dropped.
    cut: bool,
}

impl Printed {
    pub(crate) fn new(limit: usize) -> Self {
        Printed { text: String::new(), left: limit, cut: false }
    }

    fn push(&mut self, c: char) {
        match self.left.checked_sub(1) {
            Some(left) => {
                self.left = left;
                self.text.push(c);
            }
            None => self.cut = true,
        }
    }

    fn push_str(&mut self, s: &str) {
        // A string has at most as many characters as bytes: one this short fits whole.
        if s.len() <= self.left {
            self.left -= s.chars().count();
            self.text.push_str(s);
            return;
        }
        for c in s.chars() {
            if self.cut {
                return;
            }
            self.push(c);
        }
    }

    /// Whether the text is cut: the printers stop.
    pub(crate) fn is_cut(&self) -> bool {
        self.cut
    }

    /// The text; when cut, its last character replaced by `…`, so it stays within the limit.
    pub(crate) fn finish(mut self) -> String {
        if self.cut {
            self.text.pop();
            self.text.push('…');
        }
        self.text
    }
}

/// Go's `fmt.Fprint` of a float64 (`%v`, i.e. `%g` with the shortest
/// precision): exponent form when the decimal exponent is below -4 or at
/// least 6, e.g. `1e+06` but `123456`.
pub(crate) fn go_float(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let d = Decimal::of(f);
    let exp = d.point - 1;
    if !d.digits.is_empty() && !(-4..6).contains(&exp) { d.exponential() } else { d.fixed() }
}

/// Go's `encoding/json` output for a value: compact, keys sorted, `<>&` and
/// U+2028/U+2029 escaped, floats in Go's JSON format. Stops when `out` is cut.
pub(crate) fn go_json(value: &Value, out: &mut Printed) {
    if out.is_cut() {
        return;
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&go_json_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => go_json_string(s, out),
        Value::Array(elements) => {
            out.push('[');
            for (i, element) in elements.iter().enumerate() {
                if out.is_cut() {
                    return;
                }
                if i > 0 {
                    out.push(',');
                }
                go_json(element, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, element)) in entries.into_iter().enumerate() {
                if out.is_cut() {
                    return;
                }
                if i > 0 {
                    out.push(',');
                }
                go_json_string(key, out);
                out.push(':');
                go_json(element, out);
            }
            out.push('}');
        }
    }
}

/// Go's JSON float format: fixed notation unless the magnitude is below 1e-6
/// or at least 1e21, and then `1e-7` rather than `1e-07`.
fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if !f.is_finite() {
        return "null".into();
    }
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = Decimal::of(f).exponential();
        match text.split_once("e-0") {
            Some((mantissa, digit)) => format!("{mantissa}e-{digit}"),
            None => text,
        }
    } else {
        Decimal::of(f).fixed()
    }
}

fn go_json_string(s: &str, out: &mut Printed) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        if out.is_cut() {
            return;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{0}'..='\u{1f}' => {
                let b = c as u32 as u8;
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float as Go's `strconv` sees it: sign, shortest round-trip digits, and
/// the position of the decimal point relative to them.
struct Decimal {
    negative: bool,
    /// ASCII digits without leading or trailing zeros; empty for zero.
    digits: Vec<u8>,
    /// The value is `0.digits × 10^point`.
    point: i32,
}

impl Decimal {
    fn of(f: f64) -> Self {
        let negative = f.is_sign_negative();
        if f == 0.0 {
            return Decimal { negative, digits: Vec::new(), point: 0 };
        }
        // Rust's `{:e}` prints the shortest round-trip digits, as Go's `-1` precision does.
        let text = format!("{:e}", f.abs());
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        Decimal { negative, digits, point: exponent.parse::<i32>().unwrap_or(0) + 1 }
    }

    /// `%e` with all digits: `1.5e+07`, `1e-05`.
    fn exponential(&self) -> String {
        let mut out = String::from(if self.negative { "-" } else { "" });
        out.push(char::from(*self.digits.first().unwrap_or(&b'0')));
        if self.digits.len() > 1 {
            out.push('.');
            out.extend(self.digits[1..].iter().map(|&d| char::from(d)));
        }
        let exp = if self.digits.is_empty() { 0 } else { self.point - 1 };
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let exp = exp.unsigned_abs();
        if exp < 10 {
            out.push('0');
        }
        out.push_str(&exp.to_string());
        out
    }

    /// `%f` with just enough decimals for all digits: `123456`, `0.0001`.
    fn fixed(&self) -> String {
        let mut out = String::from(if self.negative { "-" } else { "" });
        let digit =
            |i: i64| usize::try_from(i).ok().and_then(|i| self.digits.get(i)).map_or('0', |&d| char::from(d));
        let point = i64::from(self.point);
        if point > 0 {
            out.extend((0..point).map(digit));
        } else {
            out.push('0');
        }
        let decimals = i64::try_from(self.digits.len()).unwrap_or(0) - point;
        if decimals > 0 {
            out.push('.');
            out.extend((point..point + decimals).map(digit));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn json_text(v: Value) -> String {
        let mut out = Printed::new(usize::MAX);
        go_json(&v, &mut out);
        out.finish()
    }

    #[test]
    fn floats_as_fmt_print() {
        // Expected values are Go's fmt.Sprint output.
        let cases = [
            (2.75, "2.75"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (0.0, "0"),
            (-0.0, "-0"),
            (100000.0, "100000"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1234567.5, "1.2345675e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (9.223372036854776e18, "9.223372036854776e+18"),
        ];
        for (f, want) in cases {
            assert_eq!(go_float(f), want, "{f:e}");
        }
    }

    #[test]
    fn floats_as_json_marshal() {
        // Expected values are Go's json.Marshal output.
        let cases = [
            (1.0, "1"),
            (2.02, "2.02"),
            (1e6, "1000000"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-10, "1.5e-10"),
            (-0.0, "-0"),
            (9.223372036854776e18, "9223372036854776000"),
        ];
        for (f, want) in cases {
            assert_eq!(go_json_float(f), want, "{f:e}");
        }
    }

    #[test]
    fn json_like_go() {
        assert_eq!(
            json_text(json!({"b": 1, "a": [true, null, 2.5, "x"]})),
            r#"{"a":[true,null,2.5,"x"],"b":1}"#
        );
        assert_eq!(json_text(json!("<a&b>")), r#""\u003ca\u0026b\u003e""#);
        assert_eq!(
            json_text(json!("q\"\\\n\t\u{1}\u{8}\u{c}\u{7f}")),
            "\"q\\\"\\\\\\n\\t\\u0001\\b\\f\u{7f}\""
        );
        assert_eq!(json_text(json!("\u{2028}é")), r#""\u2028é""#);
        assert_eq!(json_text(json!(18446744073709551615u64)), "18446744073709552000");
    }

    /// A value of hundreds of megabytes as JSON text is printed up to its limit and no further:
    /// the text ends in an ellipsis, within the limit (printed whole, it takes seconds).
    #[test]
    fn printing_stops_at_the_limit() {
        let huge = json!({"a": vec!["<".repeat(1 << 20); 64]});
        let started = std::time::Instant::now();
        let text = item_text_within(Item::Doc(&huge), "null", 256);
        // Printing the whole 64 MiB would take seconds in a debug build: stopping early takes
        // microseconds; 2 s leaves room for a loaded machine.
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
        assert_eq!(text.chars().count(), 256);
        assert!(text.starts_with(r#"{"a":["\u003c\u003c"#) && text.ends_with('…'), "{text}");

        let at_limit = json!("é".repeat(256));
        assert_eq!(item_text_within(Item::Doc(&at_limit), "null", 256), "é".repeat(256), "whole");
        let past_limit = json!("é".repeat(257));
        assert_eq!(item_text_within(Item::Doc(&past_limit), "null", 256), format!("{}…", "é".repeat(255)));
        assert_eq!(
            item_text_within(Item::Doc(&json!({"b": [1, "<"]})), "null", 256),
            r#"{"b":[1,"\u003c"]}"#
        );
    }

    #[test]
    fn items_as_print_results() {
        assert_eq!(item_text(Item::Doc(&json!("raw")), "null"), "raw");
        assert_eq!(item_text(Item::Doc(&json!(42)), "null"), "42");
        assert_eq!(item_text(Item::Doc(&json!(1.5)), "null"), "1.5");
        assert_eq!(item_text(Item::Doc(&json!(false)), "null"), "false");
        assert_eq!(item_text(Item::Doc(&json!(["foo"])), "null"), r#"["foo"]"#);
        assert_eq!(item_text(Item::Doc(&Value::Null), "null"), "null");
        assert_eq!(item_text(Item::Doc(&Value::Null), "<no value>"), "<no value>");
        assert_eq!(item_text(Item::Byte(104), "null"), "104");
        assert_eq!(item_text(Item::Text(b"t"), "null"), "t");
    }
}
