//! Reading a file someone else controls: a plugin folder's `definition.yaml`, CRDs and
//! fixtures (the linter, the catalog, the installer, the embedded cluster, `plugin check`), or a
//! page's asset (the dev runtime). Such a file may be a FIFO (opening it for reading waits for a
//! writer, forever), a device (`/dev/zero` never ends), huge, growing while read, or swapped for
//! one of those between a look and the open. [`read`] takes only a regular file of at most `max`
//! bytes, judged on the file it opened, reads at most `max` bytes of it, and never waits on a
//! FIFO.

#![forbid(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum BoundedFileError {
    /// A FIFO, a device, a socket or a directory.
    #[error("not a regular file")]
    NotRegular,
    #[error("{len} bytes, more than the {max} it may have")]
    TooLarge { len: u64, max: u64 },
    #[error("not UTF-8 text")]
    NotText,
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl BoundedFileError {
    /// For callers whose errors carry an [`io::Error`]: the refusals as `InvalidInput` (or
    /// `InvalidData` for text that is not UTF-8), with this error's message.
    pub fn into_io(self) -> io::Error {
        match self {
            Self::Io(e) => e,
            Self::NotText => io::Error::new(io::ErrorKind::InvalidData, self.to_string()),
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// Whether `path` (symlinks followed) is a regular file of at most `max` bytes, by a look that
/// does not open it; for callers that hand the path on. [`read`] judges again what it opens.
pub fn check(path: &Path, max: u64) -> Result<(), BoundedFileError> {
    judge(&std::fs::metadata(path)?, max)
}

/// The bytes of the regular file `path` (symlinks followed), of at most `max` bytes.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, BoundedFileError> {
    // A look first: a FIFO, a device or a file past the bound is refused without opening it.
    check(path, max)?;
    // Without blocking: a FIFO swapped in since the look opens at once (and is refused below);
    // on a regular file the flag changes nothing.
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    read_opened(file, max)
}

/// [`read`] as UTF-8 text.
pub fn read_to_string(path: &Path, max: u64) -> Result<String, BoundedFileError> {
    String::from_utf8(read(path, max)?).map_err(|_| BoundedFileError::NotText)
}

/// Judged again on the file that was opened, and read to at most `max` bytes (it may grow).
fn read_opened(file: File, max: u64) -> Result<Vec<u8>, BoundedFileError> {
    let meta = file.metadata()?;
    judge(&meta, max)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    let len = bytes.len() as u64;
    if len > max {
        return Err(BoundedFileError::TooLarge { len, max });
    }
    Ok(bytes)
}

fn judge(meta: &std::fs::Metadata, max: u64) -> Result<(), BoundedFileError> {
    if !meta.is_file() {
        return Err(BoundedFileError::NotRegular);
    }
    if meta.len() > max {
        return Err(BoundedFileError::TooLarge { len: meta.len(), max });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_regular_file_within_its_bound_is_read_through_a_symlink_too() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, "kind: X\n").unwrap();
        symlink(&file, dir.path().join("link.yaml")).unwrap();
        assert_eq!(read(&file, 8).unwrap(), b"kind: X\n");
        assert_eq!(read_to_string(&dir.path().join("link.yaml"), 8).unwrap(), "kind: X\n");
        assert!(matches!(read(&file, 7), Err(BoundedFileError::TooLarge { len: 8, max: 7 })));
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_to_string(&file, 8), Err(BoundedFileError::NotText)));
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.yaml");
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let started = Instant::now();
        for path in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
            assert!(matches!(read(path, 1 << 20), Err(BoundedFileError::NotRegular)), "{path:?}");
        }
        // A FIFO opened without the look (as if swapped in after it) does not block either.
        let opened = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        assert!(matches!(read_opened(opened, 1 << 20), Err(BoundedFileError::NotRegular)));
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(
            read(&fifo, 1).unwrap_err().into_io().kind(),
            io::ErrorKind::InvalidInput,
            "callers that keep io::Error see a refusal"
        );
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let err = read(Path::new("/nonexistent/definition.yaml"), 1).unwrap_err();
        assert_eq!(err.into_io().kind(), io::ErrorKind::NotFound);
    }
}
