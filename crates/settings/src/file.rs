use std::path::Path;

use crate::{
    error::SettingsError,
    layer::{Key, Layer, Source, ValueKind},
};

/// Reads a settings file. Unknown tables and keys are errors, so a typo does
/// not silently fall back to a default.
pub fn load_file(path: &Path) -> Result<Layer, SettingsError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| SettingsError::Unreadable { path: path.to_owned(), reason: e.to_string() })?;
    parse_file(&text, path)
}

pub(crate) fn parse_file(text: &str, path: &Path) -> Result<Layer, SettingsError> {
    let malformed = |reason: String| SettingsError::Malformed { path: path.to_owned(), reason };
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| malformed(syntax_error(text, &e)))?;
    let source = Source::File(path.display().to_string());
    let mut layer = Layer::new(source.clone());
    for (section, body) in &table {
        let toml::Value::Table(body) = body else {
            return Err(malformed(misplaced(section)));
        };
        for (name, value) in body {
            let dotted = format!("{section}.{name}");
            let key = Key::all()
                .find(|k| k.file_key() == dotted)
                .ok_or_else(|| malformed(format!("unknown setting `{dotted}`")))?;
            layer.set(key, text_of(key, value, &source)?);
        }
    }
    Ok(layer)
}

/// The value as the flag and the environment variable would spell it, so that one parser
/// (in `resolve`) judges all three sources. A number or a flag may be written bare
/// (`audit-view-entries = 5`, `allow-insecure-kubeconfig = true`) as TOML writers expect;
/// everything else is text and must be a string.
fn text_of(key: Key, value: &toml::Value, source: &Source) -> Result<String, SettingsError> {
    // A credential is never echoed, as in `resolve`.
    let shown = if key.is_secret() { "<redacted>".to_owned() } else { value.to_string() };
    let invalid =
        |reason: String| SettingsError::Invalid { key, origin: source.clone(), value: shown.clone(), reason };
    match (key.kind(), value) {
        (_, toml::Value::String(text)) => Ok(text.clone()),
        (ValueKind::Number, toml::Value::Integer(n)) => Ok(n.to_string()),
        (ValueKind::Flag, toml::Value::Boolean(b)) => Ok(b.to_string()),
        (ValueKind::Number, _) => Err(invalid("expected a whole number".to_owned())),
        (ValueKind::Flag, _) => Err(invalid("expected true or false".to_owned())),
        (ValueKind::Text, toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_)) => {
            Err(invalid(format!("write it as a string: \"{shown}\"")))
        }
        (ValueKind::Text, _) => Err(invalid("expected a string".to_owned())),
    }
}

/// The parser's message on one line, with where in the file it is (the parser's own text
/// does not say: it only knows the byte offsets).
fn syntax_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', " ");
    let Some(span) = error.span() else {
        return message;
    };
    let (line, column) = line_and_column(text, span.start);
    // The parser's "duplicate key" does not say which: its span does.
    let key = text.get(span).map(str::trim).filter(|k| !k.is_empty() && !k.contains('\n'));
    match key {
        Some(key) if message.starts_with("duplicate key") && !message.contains('`') => {
            format!("line {line}, column {column}: {message} `{key}`")
        }
        _ => format!("line {line}, column {column}: {message}"),
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    // The parser's offsets fall on character boundaries; the whole text is a safe fallback.
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// A value outside any table. When its name is a setting of some table, says which one,
/// so `mode = "mock"` at the top leads to `[stack]`.
fn misplaced(name: &str) -> String {
    let tables: Vec<String> = Key::all()
        .filter_map(|k| k.file_key().split_once('.'))
        .filter(|(_, key)| *key == name)
        .map(|(table, _)| format!("[{table}]"))
        .collect();
    match tables.as_slice() {
        [] => format!("`{name}` must be a table ([{name}])"),
        [table] => format!("`{name}` belongs in the table {table}: write it under a {table} line"),
        many => format!("`{name}` belongs in a table: one of {}", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Layer, SettingsError> {
        parse_file(text, Path::new("Leptos.toml"))
    }

    #[test]
    fn reads_known_keys() {
        let layer = parse("[stack]\nmode = \"mock\"\n[console]\nlisten = \"127.0.0.1:4000\"\n").unwrap();
        assert_eq!(layer.get(Key::Mode), Some("mock"));
        assert_eq!(layer.get(Key::ConsoleListen), Some("127.0.0.1:4000"));
        assert_eq!(layer.get(Key::ConsoleUrl), None);
    }

    #[test]
    fn unknown_key_is_named() {
        let err = parse("[console]\nlistn = \"x\"\n").unwrap_err().to_string();
        assert_eq!(err, "settings file Leptos.toml: unknown setting `console.listn`");
    }

    #[test]
    fn non_string_value_is_named() {
        let err = parse("[stack]\nmode = 3\n").unwrap_err().to_string();
        assert!(err.contains("stack.mode in Leptos.toml"), "{err}");
        assert!(err.contains("write it as a string: \"3\""), "{err}");
        let err = parse("[stack]\nmode = [\"mock\"]\n").unwrap_err().to_string();
        assert!(err.contains("expected a string"), "{err}");
    }

    #[test]
    fn a_text_setting_written_bare_says_how_to_write_it() {
        let err = parse("[console]\nlisten = 3000\n").unwrap_err().to_string();
        assert!(err.contains("write it as a string: \"3000\""), "{err}");
    }

    #[test]
    fn a_credential_written_bare_is_not_echoed() {
        let err = parse("[cluster]\nadmin-token = 314159265\n").unwrap_err().to_string();
        assert!(!err.contains("31415") && err.contains("<redacted>"), "{err}");
    }

    #[test]
    fn numbers_and_flags_may_be_written_bare() {
        let layer = parse(
            "[kube-api-proxy]\naudit-view-entries = 5\naudit-view-hours = 24\n\
             [stack]\nallow-insecure-kubeconfig = true\n",
        )
        .unwrap();
        // The same text the flag and the variable give, so one parser judges all three.
        assert_eq!(layer.get(Key::AuditViewEntries), Some("5"));
        assert_eq!(layer.get(Key::AuditViewHours), Some("24"));
        assert_eq!(layer.get(Key::AllowInsecureKubeconfig), Some("true"));
        let quoted = parse("[kube-api-proxy]\naudit-view-entries = \"5\"\n").unwrap();
        assert_eq!(quoted.get(Key::AuditViewEntries), Some("5"));
    }

    #[test]
    fn a_number_or_flag_of_the_wrong_type_is_named() {
        let err = parse("[kube-api-proxy]\naudit-view-entries = 5.5\n").unwrap_err().to_string();
        assert!(err.contains("kube-api-proxy.audit-view-entries in Leptos.toml"), "{err}");
        assert!(err.contains("expected a whole number"), "{err}");
        let err = parse("[stack]\nallow-insecure-kubeconfig = 1\n").unwrap_err().to_string();
        assert!(err.contains("expected true or false"), "{err}");
    }

    #[test]
    fn bare_values_are_judged_as_the_flag_is() {
        // Range checks are the resolver's, whichever source the value came from.
        let file = parse("[kube-api-proxy]\naudit-view-entries = -5\n").unwrap();
        let err = crate::resolve(&[&file]).unwrap_err().to_string();
        assert!(err.contains("expected a number of calls from 1 to 1000000"), "{err}");
    }

    #[test]
    fn broken_toml_is_one_line() {
        let err = parse("[stack\n").unwrap_err().to_string();
        assert!(err.starts_with("settings file Leptos.toml: "), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn broken_toml_says_where() {
        let err = parse("[stack]\nmode = \"mock\"\nlisten = \n").unwrap_err().to_string();
        assert!(err.contains("line 3, column "), "{err}");
    }

    #[test]
    fn a_duplicate_key_is_named_with_its_line() {
        let err = parse("[stack]\nmode = \"mock\"\nmode = \"real\"\n").unwrap_err().to_string();
        assert!(err.contains("line 3, column 1"), "{err}");
        assert!(err.contains("`mode`"), "{err}");
    }

    #[test]
    fn a_setting_outside_its_table_names_the_table() {
        let err = parse("mode = \"mock\"\n").unwrap_err().to_string();
        assert!(err.contains("[stack]"), "{err}");
        assert!(!err.contains("[mode]"), "{err}");
        let err = parse("listen = \"127.0.0.1:1\"\n").unwrap_err().to_string();
        assert!(err.contains("[console]") && err.contains("[authn]"), "{err}");
        let err = parse("nonsense = 1\n").unwrap_err().to_string();
        assert!(err.contains("`nonsense` must be a table ([nonsense])"), "{err}");
    }

    #[test]
    fn the_committed_file_parses() {
        let path = crate::checkout::repo().join("Leptos.toml");
        let layer = load_file(&path).unwrap();
        assert_eq!(layer.get(Key::Mode), Some("mock"));
    }
}
