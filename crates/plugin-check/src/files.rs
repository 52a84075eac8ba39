//! Reading the files of a plugin folder that may be hostile: the check runs in CI on folders
//! from someone else, and what it reads either reaches a page (which can send it on) or the
//! report (which can end up in a public CI log). So a file is read only when
//!
//! - its canonical path (every symlink followed) lies inside the canonical plugin folder, and a
//!   page asset's inside the canonical `console/`, itself inside the plugin folder (a symlink
//!   `console/r -> /`, or `console -> /`, would otherwise serve the whole disk);
//! - a page asset's path has no hidden name but `.well-known`, as requested and as resolved
//!   (plugin-runtime serves none either: `.env`, `.git/` are never pages);
//! - it is a regular file (a FIFO never ends opening, `/dev/zero` never ends reading) of a
//!   bounded size, checked on the file that was opened, and read no further than that bound.

use std::io;
use std::path::{Path, PathBuf};

use fundament_kube_core::request::percent_decode;

/// The largest page asset served (pages, scripts, styles, images): as plugin-runtime's bound.
pub const MAX_PAGE_ASSET: u64 = 16 * 1024 * 1024;
/// The largest YAML file read (`definition.yaml`, `crds/`, `fixtures/`): the linter's and the
/// catalog's own bound, which read the same files after the check.
pub const MAX_YAML: u64 = fundament_organization_api::MAX_FOLDER_YAML;

/// Why a file of the plugin folder is not read.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("no such file")]
    NotFound,
    #[error("the path is malformed ({0})")]
    BadPath(&'static str),
    #[error("a hidden name (starting with '.'): a plugin's runtime never serves those")]
    Hidden,
    #[error("it resolves outside {0} (through a symlink)")]
    Outside(&'static str),
    #[error("it is not a regular file")]
    NotRegular,
    #[error("it is {len} bytes, over the limit of {max} bytes")]
    TooLarge { len: u64, max: u64 },
    #[error("{0}")]
    Io(io::Error),
}

impl From<io::Error> for Refused {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Refused::NotFound,
            _ => Refused::Io(e),
        }
    }
}

/// The `/`-separated file part of a page URL (still percent-encoded, as the request line has
/// it), decoded segment by segment and checked as plugin-runtime checks it: an encoded
/// separator never passes as a name and then acts as one.
pub fn url_path(raw: &str) -> Result<String, Refused> {
    let segments = raw
        .split('/')
        .map(|raw| {
            let decoded = percent_decode(raw).ok_or(Refused::BadPath("malformed percent-encoding"))?;
            String::from_utf8(decoded).map_err(|_| Refused::BadPath("not UTF-8"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for segment in &segments {
        if segment.contains('/') {
            return Err(Refused::BadPath("encoded path separator"));
        }
    }
    let path = segments.join("/");
    check_segments(&path)?;
    Ok(path)
}

/// Checks a decoded `/`-separated path of `console/`: plain names only, none hidden but
/// `.well-known`.
pub fn check_segments(path: &str) -> Result<(), Refused> {
    for segment in path.split('/') {
        if segment.is_empty() {
            return Err(Refused::BadPath("empty path segment"));
        }
        if segment == "." || segment == ".." {
            return Err(Refused::BadPath("dot segment"));
        }
        if segment.contains('\\') {
            return Err(Refused::BadPath("backslash"));
        }
        if segment.chars().any(char::is_control) {
            return Err(Refused::BadPath("control character"));
        }
        if is_hidden(segment) {
            return Err(Refused::Hidden);
        }
    }
    Ok(())
}

/// `.env`, `.git`: never served. `.well-known` (RFC 8615) is.
fn is_hidden(name: &str) -> bool {
    name.starts_with('.') && name != ".well-known"
}

/// The canonical path of the plugin folder's `console/`, which must lie inside the folder.
fn console_root(plugin_dir: &Path) -> Result<(PathBuf, PathBuf), Refused> {
    let root = std::fs::canonicalize(plugin_dir)?;
    let console = std::fs::canonicalize(root.join("console"))?;
    if !console.starts_with(&root) {
        return Err(Refused::Outside("the plugin folder"));
    }
    Ok((root, console))
}

/// Where `console/<path>` (decoded, `/`-separated) resolves, if it may be served: inside
/// `console/`, no hidden name on the way, a regular file of at most [`MAX_PAGE_ASSET`] bytes.
pub fn resolve_console(plugin_dir: &Path, path: &str) -> Result<PathBuf, Refused> {
    let file = console_file(plugin_dir, path)?;
    regular(&file, MAX_PAGE_ASSET)?;
    Ok(file)
}

/// Where `console/<path>` resolves, inside `console/` and with no hidden name on the way; not
/// yet judged as a file.
fn console_file(plugin_dir: &Path, path: &str) -> Result<PathBuf, Refused> {
    check_segments(path)?;
    let (_, console) = console_root(plugin_dir)?;
    let file = std::fs::canonicalize(console.join(path))?;
    let inside = file.strip_prefix(&console).map_err(|_| Refused::Outside("console/"))?;
    // The request was checked; a symlink can still point at a hidden file (`app.txt -> .env`).
    if inside.components().any(|c| is_hidden(&c.as_os_str().to_string_lossy())) {
        return Err(Refused::Hidden);
    }
    Ok(file)
}

/// The contents of `console/<path>` (decoded, `/`-separated), if it may be served (see
/// [`resolve_console`]).
pub fn read_console(plugin_dir: &Path, path: &str) -> Result<Vec<u8>, Refused> {
    // The bounded read judges the file it opens: no look before it.
    read_bounded(&console_file(plugin_dir, path)?, MAX_PAGE_ASSET)
}

/// Where `file` (a path inside `plugin_dir`, e.g. `plugin_dir/fixtures/a.yaml`) resolves, if it
/// lies inside the plugin folder and is a regular file of at most `max` bytes.
pub fn resolve_inside(plugin_dir: &Path, file: &Path, max: u64) -> Result<PathBuf, Refused> {
    let resolved = inside_file(plugin_dir, file)?;
    regular(&resolved, max)?;
    Ok(resolved)
}

/// Where `file` resolves, inside `plugin_dir`; not yet judged as a file.
fn inside_file(plugin_dir: &Path, file: &Path) -> Result<PathBuf, Refused> {
    let root = std::fs::canonicalize(plugin_dir)?;
    let resolved = std::fs::canonicalize(file)?;
    if !resolved.starts_with(&root) {
        return Err(Refused::Outside("the plugin folder"));
    }
    Ok(resolved)
}

/// The contents of `file`, inside `plugin_dir` (see [`resolve_inside`]).
pub fn read_inside(plugin_dir: &Path, file: &Path, max: u64) -> Result<Vec<u8>, Refused> {
    read_bounded(&inside_file(plugin_dir, file)?, max)
}

/// Whether a subfolder (`crds`, `fixtures`) lies inside the plugin folder: `None` when it does
/// not exist.
pub fn subfolder_inside(plugin_dir: &Path, name: &str) -> Result<Option<PathBuf>, Refused> {
    let root = std::fs::canonicalize(plugin_dir)?;
    match std::fs::canonicalize(root.join(name)) {
        Ok(dir) if dir.starts_with(&root) => Ok(Some(dir)),
        Ok(_) => Err(Refused::Outside("the plugin folder")),
        Err(e) => match Refused::from(e) {
            Refused::NotFound => Ok(None),
            refused => Err(refused),
        },
    }
}

/// Refuses what is not a regular file of at most `max` bytes, before it is opened: opening a
/// FIFO waits for a writer that never comes. `path` is canonical, so this is the file itself.
fn regular(path: &Path, max: u64) -> Result<(), Refused> {
    fundament_bounded_file::check(path, max).map_err(refused)
}

/// Reads a regular file of at most `max` bytes, judged on the file that was opened (it may
/// have been swapped since it was looked at), and never more than `max` bytes of it (it may
/// grow while read).
fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Refused> {
    fundament_bounded_file::read(path, max).map_err(refused)
}

fn refused(e: fundament_bounded_file::BoundedFileError) -> Refused {
    use fundament_bounded_file::BoundedFileError;
    match e {
        // NotText only comes from `read_to_string`, which the check does not use.
        BoundedFileError::NotRegular | BoundedFileError::NotText => Refused::NotRegular,
        BoundedFileError::TooLarge { len, max } => Refused::TooLarge { len, max },
        BoundedFileError::Io(e) => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;
    use std::time::{Duration, Instant};

    use super::*;

    /// A plugin folder with `console/page.html` and `secret` next to it (outside `console/`),
    /// and `outside.txt` beside the folder.
    fn folder() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plugin");
        std::fs::create_dir_all(dir.join("console/sub")).unwrap();
        std::fs::write(dir.join("console/page.html"), "<p>page</p>").unwrap();
        std::fs::write(dir.join("console/sub/a b.js"), "ok").unwrap();
        std::fs::write(dir.join("console/.env"), "TOKEN=1").unwrap();
        std::fs::create_dir_all(dir.join("console/.well-known")).unwrap();
        std::fs::write(dir.join("console/.well-known/security.txt"), "hi").unwrap();
        std::fs::write(dir.join("secret"), "not a page").unwrap();
        std::fs::write(tmp.path().join("outside.txt"), "outside").unwrap();
        (tmp, dir)
    }

    #[test]
    fn plain_files_are_served() {
        let (_tmp, dir) = folder();
        assert_eq!(read_console(&dir, "page.html").unwrap(), b"<p>page</p>");
        assert_eq!(read_console(&dir, &url_path("sub/a%20b.js").unwrap()).unwrap(), b"ok");
        assert_eq!(read_console(&dir, ".well-known/security.txt").unwrap(), b"hi");
        assert!(matches!(read_console(&dir, "nope.html"), Err(Refused::NotFound)));
        assert!(matches!(read_console(&dir, "sub"), Err(Refused::NotRegular)));
        // A symlink that stays inside console/ is fine.
        symlink("page.html", dir.join("console/alias.html")).unwrap();
        assert_eq!(read_console(&dir, "alias.html").unwrap(), b"<p>page</p>");
    }

    #[test]
    fn a_symlink_out_of_console_is_refused() {
        let (tmp, dir) = folder();
        symlink("/", dir.join("console/r")).unwrap();
        symlink("../secret", dir.join("console/up.txt")).unwrap();
        symlink(tmp.path().join("outside.txt"), dir.join("console/abs.txt")).unwrap();
        for path in ["r/etc/hostname", "r/etc/passwd", "up.txt", "abs.txt"] {
            let refused = read_console(&dir, path).unwrap_err();
            assert!(matches!(refused, Refused::Outside("console/")), "{path}: {refused}");
            assert!(resolve_console(&dir, path).is_err(), "{path}");
        }
    }

    #[test]
    fn a_console_symlink_out_of_the_folder_is_refused() {
        let (tmp, dir) = folder();
        std::fs::rename(dir.join("console"), tmp.path().join("elsewhere")).unwrap();
        symlink(tmp.path().join("elsewhere"), dir.join("console")).unwrap();
        let refused = read_console(&dir, "page.html").unwrap_err();
        assert!(matches!(refused, Refused::Outside("the plugin folder")), "{refused}");
        // console -> a folder inside the plugin is fine.
        std::fs::remove_file(dir.join("console")).unwrap();
        std::fs::rename(tmp.path().join("elsewhere"), dir.join("web")).unwrap();
        symlink("web", dir.join("console")).unwrap();
        assert_eq!(read_console(&dir, "page.html").unwrap(), b"<p>page</p>");
    }

    #[test]
    fn hidden_names_are_refused_as_asked_and_as_resolved() {
        let (_tmp, dir) = folder();
        for raw in [".env", "%2eenv", "sub/.npmrc", ".git/config"] {
            assert!(matches!(url_path(raw), Err(Refused::Hidden)), "{raw}");
        }
        assert!(matches!(read_console(&dir, ".env"), Err(Refused::Hidden)));
        symlink(".env", dir.join("console/app.txt")).unwrap();
        assert!(matches!(read_console(&dir, "app.txt"), Err(Refused::Hidden)));
    }

    #[test]
    fn traversal_is_refused_in_every_spelling() {
        for raw in
            ["..", "../secret", "a/../../secret", "%2e%2e/secret", "..%2fsecret", "a%5cb", "a//b", "a%00"]
        {
            assert!(matches!(url_path(raw), Err(Refused::BadPath(_))), "{raw}");
        }
        assert!(matches!(url_path("a%zz"), Err(Refused::BadPath(_))));
        assert!(matches!(url_path("a%ff"), Err(Refused::BadPath(_))));
    }

    #[test]
    fn devices_fifos_and_big_files_are_refused_quickly() {
        let (_tmp, dir) = folder();
        symlink("/dev/zero", dir.join("console/zero.js")).unwrap();
        let fifo = dir.join("console/fifo.js");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let big = std::fs::File::create(dir.join("console/big.js")).unwrap();
        big.set_len(MAX_PAGE_ASSET + 1).unwrap();
        let started = Instant::now();
        assert!(matches!(read_console(&dir, "zero.js"), Err(Refused::Outside(_))));
        assert!(matches!(read_console(&dir, "fifo.js"), Err(Refused::NotRegular)));
        let refused = read_console(&dir, "big.js").unwrap_err();
        assert!(matches!(refused, Refused::TooLarge { .. }), "{refused}");
        assert!(refused.to_string().contains("over the limit of 16777216 bytes"), "{refused}");
        assert!(started.elapsed() < Duration::from_secs(2));
        // Inside the folder, a device is still not a file.
        assert!(matches!(read_bounded(Path::new("/dev/zero"), 10), Err(Refused::NotRegular)));
    }

    #[test]
    fn files_inside_the_folder() {
        let (tmp, dir) = folder();
        assert_eq!(read_inside(&dir, &dir.join("secret"), MAX_YAML).unwrap(), b"not a page");
        symlink(tmp.path().join("outside.txt"), dir.join("linked")).unwrap();
        assert!(matches!(read_inside(&dir, &dir.join("linked"), MAX_YAML), Err(Refused::Outside(_))));
        assert!(matches!(
            read_inside(&dir, &dir.join("secret"), 3),
            Err(Refused::TooLarge { len: 10, max: 3 })
        ));
        assert_eq!(subfolder_inside(&dir, "nope").unwrap(), None);
        assert!(subfolder_inside(&dir, "console").unwrap().is_some());
        symlink(tmp.path(), dir.join("fixtures")).unwrap();
        assert!(matches!(subfolder_inside(&dir, "fixtures"), Err(Refused::Outside(_))));
    }
}
