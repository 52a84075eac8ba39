//! Quoted literals: client-go's `UnquoteExtend`, which is Go's
//! `strconv.Unquote` extended to single-quoted strings of any length.

/// Unquotes `"…"` or `'…'` (quotes included) with Go's escapes. Returns bytes,
/// because `\xff` and octal escapes may produce invalid UTF-8, exactly as in Go.
pub(crate) fn unquote(quoted: &str) -> Option<Vec<u8>> {
    let bytes = quoted.as_bytes();
    let (&quote, &last) = (bytes.first()?, bytes.last()?);
    if bytes.len() < 2 || quote != last || !matches!(quote, b'"' | b'\'') {
        return None;
    }
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.bytes().any(|b| b == b'\\' || b == quote) {
        return Some(inner.as_bytes().to_vec());
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut rest = inner;
    while !rest.is_empty() {
        let (value, multibyte, tail) = unquote_char(rest, quote)?;
        rest = tail;
        if value < 0x80 || !multibyte {
            // Single bytes: ASCII, `\xNN` and octal escapes (any value up to 255).
            out.push(u8::try_from(value).ok()?);
        } else {
            let c = char::from_u32(value)?;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }
    Some(out)
}

/// Go's `strconv.UnquoteChar`: the first character or escape of `s`, whether
/// it is a multi-byte character, and the rest.
fn unquote_char(s: &str, quote: u8) -> Option<(u32, bool, &str)> {
    let bytes = s.as_bytes();
    let c = *bytes.first()?;
    if c == quote {
        return None;
    }
    if c >= 0x80 {
        let ch = s.chars().next()?;
        return Some((u32::from(ch), true, &s[ch.len_utf8()..]));
    }
    if c != b'\\' {
        return Some((u32::from(c), false, &s[1..]));
    }
    let escape = *bytes.get(1).filter(|b| b.is_ascii())?;
    let rest = &s[2..];
    let simple = |v: u8| Some((u32::from(v), false, rest));
    match escape {
        b'a' => simple(0x07),
        b'b' => simple(0x08),
        b'f' => simple(0x0c),
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'v' => simple(0x0b),
        b'\\' => simple(b'\\'),
        b'\'' | b'"' if escape == quote => simple(escape),
        b'x' | b'u' | b'U' => {
            let n = match escape {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let digits = rest.get(..n)?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let value = u32::from_str_radix(digits, 16).ok()?;
            if escape == b'x' {
                return Some((value, false, &rest[n..]));
            }
            char::from_u32(value)?;
            Some((value, true, &rest[n..]))
        }
        b'0'..=b'7' => {
            let digits = rest.as_bytes().get(..2)?;
            let mut value = u32::from(escape - b'0');
            for d in digits {
                if !(b'0'..=b'7').contains(d) {
                    return None;
                }
                value = (value << 3) | u32::from(d - b'0');
            }
            if value > 255 {
                return None;
            }
            Some((value, false, &rest[2..]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::unquote;

    fn text(quoted: &str) -> Option<String> {
        unquote(quoted).map(|b| String::from_utf8(b).expect("utf-8"))
    }

    #[test]
    fn plain_and_escaped() {
        assert_eq!(text(r#""Ready""#).as_deref(), Some("Ready"));
        assert_eq!(text("'Ready'").as_deref(), Some("Ready"));
        assert_eq!(text("''").as_deref(), Some(""));
        assert_eq!(text(r#""a\"b""#).as_deref(), Some("a\"b"));
        assert_eq!(text(r"'a\'b'").as_deref(), Some("a'b"));
        assert_eq!(text(r#""\t\n\\""#).as_deref(), Some("\t\n\\"));
        assert_eq!(text(r#""\u00e9\U0001F600""#).as_deref(), Some("é😀"));
        assert_eq!(text(r#""\101""#).as_deref(), Some("A"));
        assert_eq!(text("'é'").as_deref(), Some("é"));
        assert_eq!(unquote(r#""\xff""#), Some(vec![0xff]));
    }

    #[test]
    fn invalid() {
        assert_eq!(unquote(r#""\q""#), None);
        assert_eq!(unquote(r#""\é""#), None);
        assert_eq!(unquote(r#""\'""#), None, "\\' only in single quotes");
        assert_eq!(unquote(r#""\ud800""#), None, "surrogate");
        assert_eq!(unquote(r#""\400""#), None, "octal above 255");
        assert_eq!(unquote(r#""\x4""#), None);
        assert_eq!(unquote(r#""a\""#), None);
        assert_eq!(unquote("\""), None);
        assert_eq!(unquote("'a\""), None);
        assert_eq!(unquote(""), None);
    }
}
