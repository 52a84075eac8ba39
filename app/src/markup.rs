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

/// What a text to edit as it is stored (the YAML tab's) tells of its bidirectional controls:
/// the textarea obeys them, so a line may read otherwise than it is saved. Which lines hold one
/// (numbered from 1, at most [`NAMED_LINES`] named) and the first such character; `None` when
/// there is none.
pub fn bidi_controls_note(text: &str) -> Option<String> {
    if !text.chars().any(is_bidi_control) {
        return None;
    }
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().any(is_bidi_control))
        .map(|(i, _)| i + 1)
        .collect();
    let first = text.chars().find(|&c| is_bidi_control(c)).map(u32::from).unwrap_or_default();
    let mut named: Vec<String> = lines.iter().take(NAMED_LINES).map(usize::to_string).collect();
    if lines.len() > NAMED_LINES {
        named.push(format!("{} more", lines.len() - NAMED_LINES));
    }
    let list = match named.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    let (which, hold) = if lines.len() == 1 { ("Line", "holds") } else { ("Lines", "hold") };
    Some(format!(
        "{which} {list} {hold} bidirectional control characters (U+{first:04X}…), which can make text read \
         otherwise than it is saved. The review shows them as ⟨U+{first:04X}⟩."
    ))
}

/// How many lines [`bidi_controls_note`] names.
const NAMED_LINES: usize = 5;

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
    fn a_text_to_edit_names_its_lines_with_bidirectional_controls() {
        assert_eq!(bidi_controls_note("a: 1\nb: two\n"), None);
        assert_eq!(
            bidi_controls_note("a: 1\nfile: invoice\u{202e}txt.exe\n").as_deref(),
            Some(
                "Line 2 holds bidirectional control characters (U+202E…), which can make text read otherwise \
                 than it is saved. The review shows them as ⟨U+202E⟩."
            )
        );
        let two = bidi_controls_note("\u{2067}x\ny\nz\u{2069}").unwrap_or_default();
        assert!(two.starts_with("Lines 1 and 3 hold bidirectional control characters (U+2067…)"), "{two}");
        let many = "\u{200f}\n".repeat(8);
        let many = bidi_controls_note(&many).unwrap_or_default();
        assert!(many.starts_with("Lines 1, 2, 3, 4, 5 and 3 more hold"), "{many}");
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
