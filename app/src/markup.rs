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

/// `text` with its bidirectional formatting characters made visible (`⟨U+202E⟩`), for text
/// from objects in the cluster (annotations, messages, spec values), which anyone who may write
/// the object chooses. Left in, an override reverses what follows it on screen ("exe.txt" shown
/// for "txt.exe") without a visible sign; a reader of a console expects to see what is stored.
pub fn visible_bidi_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_bidi_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_bidi_control(c) {
            out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The arabic letter mark, the left-to-right and right-to-left marks, embeddings, overrides,
/// isolates and their pops.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
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

    #[test]
    fn bidirectional_overrides_and_isolates_are_shown_not_obeyed() {
        assert_eq!(visible_bidi_controls("plain · Zürich · עברית"), "plain · Zürich · עברית");
        assert!(matches!(visible_bidi_controls("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(visible_bidi_controls("a\u{202E}txt.exe"), "a⟨U+202E⟩txt.exe");
        assert_eq!(
            visible_bidi_controls("\u{2066}x\u{2069}\u{200F}\u{061C}\u{202A}"),
            "⟨U+2066⟩x⟨U+2069⟩⟨U+200F⟩⟨U+061C⟩⟨U+202A⟩"
        );
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
