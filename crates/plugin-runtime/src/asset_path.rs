//! The file part of a `/console/<file>` URL, checked before it gets near a file system.
//!
//! The path is taken raw (still percent-encoded) so that an encoded separator (`%2f`, `%5c`) can
//! never pass as a name and then act as a separator; each segment is decoded on its own and must
//! then be a plain file or directory name.

use fundament_kube_core::request::percent_decode;

/// Why a path is refused. Every variant is a 400: such a path names no asset, and saying so
/// plainly beats guessing what a client meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathError {
    #[error("empty path segment")]
    EmptySegment,
    #[error("dot segment")]
    DotSegment,
    #[error("encoded path separator")]
    EncodedSeparator,
    #[error("backslash in path")]
    Backslash,
    #[error("hidden name (a segment starting with a dot)")]
    HiddenName,
    #[error("NUL or control character in path")]
    ControlCharacter,
    #[error("malformed percent-encoding")]
    BadEscape,
    #[error("path is not UTF-8")]
    NotUtf8,
}

/// What a console URL asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AssetRequest {
    /// `/console/`: the index page, if the plugin has one.
    Index,
    /// A path ending in `/` below the root: a directory, which is never listed.
    Directory,
    /// A file, as `/`-separated, decoded, checked segments.
    File(String),
}

/// Parses `raw`, the percent-encoded remainder of the URL path after `/console/`.
pub(crate) fn parse(raw: &str) -> Result<AssetRequest, PathError> {
    if raw.is_empty() {
        return Ok(AssetRequest::Index);
    }
    let (body, directory) = match raw.strip_suffix('/') {
        Some(body) => (body, true),
        None => (raw, false),
    };
    let segments = body.split('/').map(segment).collect::<Result<Vec<_>, _>>()?;
    Ok(if directory { AssetRequest::Directory } else { AssetRequest::File(segments.join("/")) })
}

/// Decodes one segment and checks it is a plain name.
fn segment(raw: &str) -> Result<String, PathError> {
    let decoded = String::from_utf8(percent_decode(raw).ok_or(PathError::BadEscape)?)
        .map_err(|_| PathError::NotUtf8)?;
    if decoded.is_empty() {
        return Err(PathError::EmptySegment);
    }
    if decoded == "." || decoded == ".." {
        return Err(PathError::DotSegment);
    }
    if decoded.contains('/') {
        return Err(PathError::EncodedSeparator);
    }
    if decoded.contains('\\') {
        return Err(PathError::Backslash);
    }
    if decoded.chars().any(char::is_control) {
        return Err(PathError::ControlCharacter);
    }
    if is_hidden(&decoded) {
        return Err(PathError::HiddenName);
    }
    Ok(decoded)
}

/// Whether a path segment is a hidden name: `.env`, `.git/`, `.npmrc` left in a plugin's
/// `console/` folder are never pages; only `.well-known` (RFC 8615) is served.
pub(crate) fn is_hidden(name: &str) -> bool {
    name.starts_with('.') && name != ".well-known"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> AssetRequest {
        AssetRequest::File(path.to_owned())
    }

    #[test]
    fn plain_paths_are_files() {
        assert_eq!(parse("index.html"), Ok(file("index.html")));
        assert_eq!(parse("sub/page.html"), Ok(file("sub/page.html")));
        assert_eq!(parse(".well-known"), Ok(file(".well-known")));
        assert_eq!(parse(".well-known/security.txt"), Ok(file(".well-known/security.txt")));
        assert_eq!(parse("a.b.js"), Ok(file("a.b.js")));
        assert_eq!(parse("a%20b.js"), Ok(file("a b.js")));
        assert_eq!(parse("caf%C3%A9.css"), Ok(file("café.css")));
    }

    #[test]
    fn hidden_files_are_never_served() {
        for path in [".env", ".git/config", "sub/.npmrc", "%2Eenv", ".well-knownx"] {
            assert_eq!(parse(path), Err(PathError::HiddenName), "{path}");
        }
    }

    #[test]
    fn the_root_and_directories() {
        assert_eq!(parse(""), Ok(AssetRequest::Index));
        assert_eq!(parse("sub/"), Ok(AssetRequest::Directory));
        assert_eq!(parse("../"), Err(PathError::DotSegment));
    }

    #[test]
    fn traversal_is_refused_in_every_spelling() {
        let cases = [
            ("..", PathError::DotSegment),
            ("../secret", PathError::DotSegment),
            ("a/../../secret", PathError::DotSegment),
            ("./index.html", PathError::DotSegment),
            ("%2e%2e/secret", PathError::DotSegment),
            ("%2E%2E", PathError::DotSegment),
            (".%2e/secret", PathError::DotSegment),
            ("..%2fsecret", PathError::EncodedSeparator),
            ("a%2Fb", PathError::EncodedSeparator),
            ("..\\secret", PathError::Backslash),
            ("a%5cb", PathError::Backslash),
            ("a//b", PathError::EmptySegment),
            ("/a", PathError::EmptySegment),
            ("a%00.html", PathError::ControlCharacter),
            ("a%0a.html", PathError::ControlCharacter),
            ("a%2", PathError::BadEscape),
            ("a%zz", PathError::BadEscape),
            ("a%ff", PathError::NotUtf8),
        ];
        for (raw, error) in cases {
            assert_eq!(parse(raw), Err(error), "{raw}");
        }
    }
}
