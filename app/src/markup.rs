//! Text written into HTML by hand, where the renderer does not escape it for us.

/// `text` as HTML text or a double-quoted attribute value: `&`, `<`, `>`, `"` and `'` as
/// character references.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The document title of a page titled `title` (empty: the console's name alone).
///
/// On the server the result is markup: leptos_meta writes the title into `<title>` as it is,
/// without escaping, and titles carry names from plugin definitions (`displayName`, menu
/// labels), which a hostile plugin writes. In the browser it is text (`document.title`).
pub fn page_title(title: &str) -> String {
    let text = if title.is_empty() { "Fundament".to_owned() } else { format!("{title} · Fundament") };
    #[cfg(feature = "ssr")]
    let text = escape(&text);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attribute_breakouts() {
        assert_eq!(escape("/a\"b<c>&'d"), "/a&quot;b&lt;c&gt;&amp;&#39;d");
        assert_eq!(escape("Zürich · ok"), "Zürich · ok");
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn a_title_from_a_definition_cannot_close_the_title_element() {
        let hostile = r#"Hostile</title><meta http-equiv="refresh" content="0;url=https://evil">"#;
        let title = page_title(hostile);
        assert!(!title.contains('<') && !title.contains('"'), "{title}");
        assert!(
            title.starts_with("Hostile&lt;/title&gt;&lt;meta") && title.ends_with(" · Fundament"),
            "{title}"
        );
        assert_eq!(page_title(""), "Fundament");
    }
}
