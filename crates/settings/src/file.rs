use std::path::Path;

use crate::{
    error::SettingsError,
    layer::{Key, Layer, Source},
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
    let table: toml::Table =
        text.parse().map_err(|e: toml::de::Error| malformed(e.message().replace('\n', " ")))?;
    let source = Source::File(path.display().to_string());
    let mut layer = Layer::new(source.clone());
    for (section, body) in &table {
        let toml::Value::Table(body) = body else {
            return Err(malformed(format!("`{section}` must be a table ([{section}])")));
        };
        for (name, value) in body {
            let dotted = format!("{section}.{name}");
            let key = Key::all()
                .find(|k| k.file_key() == dotted)
                .ok_or_else(|| malformed(format!("unknown setting `{dotted}`")))?;
            let toml::Value::String(value) = value else {
                return Err(SettingsError::Invalid {
                    key,
                    origin: source.clone(),
                    value: value.to_string(),
                    reason: "expected a string".to_owned(),
                });
            };
            layer.set(key, value.clone());
        }
    }
    Ok(layer)
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
        assert!(err.contains("expected a string"), "{err}");
    }

    #[test]
    fn broken_toml_is_one_line() {
        let err = parse("[stack\n").unwrap_err().to_string();
        assert!(err.starts_with("settings file Leptos.toml: "), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn the_committed_file_parses() {
        let path = crate::checkout::repo().join("Leptos.toml");
        let layer = load_file(&path).unwrap();
        assert_eq!(layer.get(Key::Mode), Some("mock"));
    }
}
