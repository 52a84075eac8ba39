//! The built site's file names and how long browsers may keep them.
//!
//! `scripts/site.mjs` names the JS, wasm, CSS and every wasm chunk `stem.<hash>.ext` by
//! their bytes and lists the entry files' hashes in the site root's `hash.txt` (which
//! `scripts/build` also copies beside the binary). The entry files import each other, so
//! `scripts/content-hashes.mjs` names those four by one digest over all of them. A hashed
//! name then never changes its bytes: browsers keep it for a year without asking. Anything
//! else (wasm-bindgen's snippets, `public/` files, a site built without hashes) keeps its
//! name across builds and is revalidated on each use.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `Cache-Control` of a file whose name carries its content hash.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of files that keep their names across builds.
pub const REVALIDATE: &str = "no-cache";
/// `Cache-Control` of the console's pages: rendered for one user, with their data in the
/// markup, so kept by no cache at all, the browser's back/forward cache included (after a
/// sign-out on a shared machine, Back must not show the last user's page), and asked for anew
/// each time (they name the build's hashed files).
pub const PAGE: &str = "private, no-store";

/// The file `scripts/site.mjs` writes the entry files' hashes to.
pub const HASH_FILE: &str = "hash.txt";

/// The site's hashes (scripts/site.mjs, scripts/content-hashes.mjs) are 16 bytes in unpadded base64url: 22
/// characters.
const HASH_LEN: usize = 22;

/// Whether a file name (or URL path) is `stem.<hash>.ext` as `scripts/site.mjs` writes it.
pub fn is_hashed(name: &str) -> bool {
    let name = name.rsplit('/').next().unwrap_or(name);
    let mut parts = name.rsplitn(3, '.');
    let (Some(ext), Some(hash), Some(stem)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !ext.is_empty()
        && !stem.is_empty()
        && hash.len() == HASH_LEN
        && hash.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        // wasm-split's loader is written as `__wasm_split.<22 underscores>.js` and renamed
        // only when hashing: unrenamed, it keeps its name across builds.
        && !hash.bytes().all(|b| b == b'_')
}

/// The `Cache-Control` a static file of the site is served with.
pub fn cache_control(path: &str) -> &'static str {
    if is_hashed(path) { IMMUTABLE } else { REVALIDATE }
}

/// The hashes of the entry files, from `hash.txt`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hashes {
    pub js: Option<String>,
    pub wasm: Option<String>,
    pub css: Option<String>,
}

impl Hashes {
    /// Reads `js: <hash>`, `wasm: <hash>`, `css: <hash>` lines; other lines (the wasm-split
    /// manifest's and loader's) are Leptos's to read.
    pub fn parse(text: &str) -> Self {
        let mut hashes = Self::default();
        for (key, value) in text.lines().filter_map(|l| l.split_once(':')) {
            let value = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
            match key.trim() {
                "js" => hashes.js = value,
                "wasm" => hashes.wasm = value,
                "css" => hashes.css = value,
                _ => {}
            }
        }
        hashes
    }

    /// The site's hashes, or `None` when it was built without them.
    pub fn of_site(site_root: &Path) -> Option<Self> {
        std::fs::read_to_string(hash_file(site_root)).ok().map(|text| Self::parse(&text))
    }

    /// `stem.<hash>.ext`, or `stem.ext` without a hash.
    fn name(stem: &str, hash: Option<&str>, ext: &str) -> String {
        match hash {
            Some(hash) => format!("{stem}.{hash}.{ext}"),
            None => format!("{stem}.{ext}"),
        }
    }

    /// The JS entry's file name.
    pub fn js_name(&self, output_name: &str) -> String {
        Self::name(output_name, self.js.as_deref(), "js")
    }

    /// The stylesheet's file name.
    pub fn css_name(&self, output_name: &str) -> String {
        Self::name(output_name, self.css.as_deref(), "css")
    }
}

/// Where the site keeps `hash.txt`, as an absolute path: Leptos joins it to the directory
/// of the running binary, which leaves an absolute path as it is.
pub fn hash_file(site_root: &Path) -> PathBuf {
    let path = site_root.join(HASH_FILE);
    if path.is_absolute() { path } else { std::env::current_dir().map(|dir| dir.join(&path)).unwrap_or(path) }
}

/// The stylesheet's URL, read once (the site does not change under a running console).
pub fn stylesheet_href(site_root: &str, pkg_dir: &str, output_name: &str) -> &'static str {
    static HREF: OnceLock<String> = OnceLock::new();
    HREF.get_or_init(|| {
        let hashes = Hashes::of_site(Path::new(site_root)).unwrap_or_default();
        format!("/{pkg_dir}/{}", hashes.css_name(output_name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_are_stem_hash_ext_with_a_22_character_hash() {
        assert!(is_hashed("console.Ab3_-xYz0123456789abcd.wasm"));
        assert!(is_hashed("/pkg/__wasm_split.Ab3_-xYz0123456789abcd.js"));
        assert!(is_hashed("view_b_123.Ab3_-xYz0123456789abcd.wasm"));
        assert!(!is_hashed("console.wasm"));
        assert!(!is_hashed("/pkg/console.js"));
        assert!(!is_hashed("__wasm_split.______________________.js"), "the placeholder is 22 underscores");
        assert!(!is_hashed("console.Ab3_-xYz0123456789abc.wasm"), "21 characters");
        assert!(!is_hashed("console.Ab3_-xYz0123456789ab+d.wasm"), "not base64url");
        assert!(!is_hashed(".Ab3_-xYz0123456789abcd.wasm"), "no stem");
        assert!(!is_hashed("snippets/x-1/inline0.js"));
    }

    #[test]
    fn hashed_files_are_immutable_and_the_rest_revalidated() {
        assert_eq!(cache_control("/pkg/console.Ab3_-xYz0123456789abcd.wasm"), IMMUTABLE);
        assert_eq!(cache_control("/pkg/console.css"), REVALIDATE);
        assert_eq!(cache_control("/pkg/snippets/app-0/inline0.js"), REVALIDATE);
    }

    #[test]
    fn a_hash_may_hold_underscores_but_is_not_only_underscores() {
        assert!(is_hashed("__wasm_split.a_____________________.js"));
    }

    #[test]
    fn hash_txt_names_the_entry_files() {
        let hashes = Hashes::parse("js: abc\nwasm: def\ncss: ghi\nmanifest: jkl\nsplit: mno\n");
        assert_eq!(
            hashes,
            Hashes { js: Some("abc".into()), wasm: Some("def".into()), css: Some("ghi".into()) }
        );
        assert_eq!(hashes.js_name("console"), "console.abc.js");
        assert_eq!(hashes.css_name("console"), "console.ghi.css");
        assert_eq!(Hashes::default().css_name("console"), "console.css");
    }

    #[test]
    fn hash_file_is_absolute() {
        assert!(hash_file(Path::new("target/site")).is_absolute());
        assert_eq!(hash_file(Path::new("/app/site")), Path::new("/app/site/hash.txt"));
    }
}
