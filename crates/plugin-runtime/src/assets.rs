//! Where a plugin's `console/` files come from: compiled into the binary (production, so the
//! pages always match the code they talk to) or read from a directory (development, so an edit
//! shows on reload).

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

use crate::asset_path::is_hidden;

/// The console/ assets of a plugin: embedded at compile time (`include_dir!`) or a directory on
/// disk (development).
#[derive(Debug, Clone)]
pub enum Assets {
    /// Files compiled in with `include_dir!("$CARGO_MANIFEST_DIR/console")`.
    Embedded(&'static include_dir::Dir<'static>),
    /// A directory read at request time.
    Directory(PathBuf),
    /// A plugin without pages: every `/console/` request is a 404.
    None,
}

/// Why an asset was not served.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AssetError {
    /// No such file, or the path names a directory, or it leaves the root through a symlink.
    #[error("asset not found")]
    NotFound,
    /// The directory could not be read for another reason.
    #[error("asset not readable: {0}")]
    Io(#[from] io::Error),
}

impl Assets {
    /// The contents of the file at `path` (`/`-separated, already checked by `asset_path`).
    pub(crate) async fn load(&self, path: &str) -> Result<Cow<'static, [u8]>, AssetError> {
        match self {
            Assets::Embedded(dir) => embedded(dir, path).map(Cow::Borrowed),
            Assets::Directory(root) => from_directory(root, path).await.map(Cow::Owned),
            Assets::None => Err(AssetError::NotFound),
        }
    }
}

fn embedded(dir: &'static include_dir::Dir<'static>, path: &str) -> Result<&'static [u8], AssetError> {
    // Entry paths carry the prefix of the directory they were taken from (`dir.path()` is empty
    // for the root of an `include_dir!`, but not for a `get_dir` below it).
    dir.get_file(dir.path().join(path)).map(include_dir::File::contents).ok_or(AssetError::NotFound)
}

/// The largest file a directory serves: pages, scripts and styles, never a disk image.
pub const MAX_ASSET_FILE: u64 = 16 * 1024 * 1024;

async fn from_directory(root: &Path, path: &str) -> Result<Vec<u8>, AssetError> {
    use fundament_bounded_file::BoundedFileError;
    let root = tokio::fs::canonicalize(root).await.map_err(not_found_or_io)?;
    let file = tokio::fs::canonicalize(root.join(path)).await.map_err(not_found_or_io)?;
    // The path was checked segment by segment; a symlink can still point elsewhere, or at a
    // hidden file inside (`app.txt -> .env`).
    let inside = file
        .strip_prefix(&root)
        .ok()
        .filter(|rest| rest.components().all(|c| !is_hidden(&c.as_os_str().to_string_lossy())));
    if inside.is_none() {
        tracing::warn!(path, "console asset resolves outside the assets directory or to a hidden file");
        return Err(AssetError::NotFound);
    }
    // A regular file only, of bounded size: opening a FIFO blocks until someone writes to it
    // (a thread of the blocking pool held for good), and a device never ends.
    let read = tokio::task::spawn_blocking(move || fundament_bounded_file::read(&file, MAX_ASSET_FILE))
        .await
        .map_err(|e| AssetError::Io(io::Error::other(e)))?;
    match read {
        Ok(contents) => Ok(contents),
        Err(BoundedFileError::TooLarge { len, .. }) => {
            tracing::warn!(path, bytes = len, "console asset larger than the runtime serves");
            Err(AssetError::NotFound)
        }
        Err(BoundedFileError::NotRegular | BoundedFileError::NotText) => Err(AssetError::NotFound),
        Err(BoundedFileError::Io(e)) => Err(not_found_or_io(e)),
    }
}

fn not_found_or_io(err: io::Error) -> AssetError {
    match err.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => AssetError::NotFound,
        _ => AssetError::Io(err),
    }
}
