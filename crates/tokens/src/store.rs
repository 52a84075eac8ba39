//! The key file `authn-keys.json`: the private seeds of the current and previous signing keys.
//!
//! Written atomically (temporary file, fsync, rename) with mode 0600 so a crash never leaves a
//! half-written key file and other users of the machine cannot read it.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::KeyError;
use crate::b64;
use crate::keys::KeyPair;

pub(crate) const FILE_NAME: &str = "authn-keys.json";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    version: u32,
    /// Current key first, then the previous one if a rotation is under way.
    keys: Vec<StoredKey>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredKey {
    /// Redundant with the seed; stored so a reader can match the file to a JWKS, and checked on
    /// load so a damaged seed is noticed.
    kid: String,
    /// The 32-byte Ed25519 seed, base64url.
    seed: String,
}

/// The keys in `dir`, current first; `None` when there is no key file yet.
pub(crate) fn load(dir: &Path) -> Result<Option<Vec<KeyPair>>, KeyError> {
    let path = dir.join(FILE_NAME);
    let text = match fs::read(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(KeyError::io("reading", path, err)),
    };
    parse(&text).map(Some).map_err(|reason| KeyError::Corrupt { path, reason })
}

fn parse(text: &[u8]) -> Result<Vec<KeyPair>, String> {
    let file: KeyFile = serde_json::from_slice(text).map_err(|err| format!("not a key file: {err}"))?;
    if file.version != VERSION {
        return Err(format!("unsupported version {}", file.version));
    }
    if file.keys.is_empty() || file.keys.len() > 2 {
        return Err(format!("expected 1 or 2 keys, found {}", file.keys.len()));
    }
    file.keys
        .iter()
        .enumerate()
        .map(|(index, stored)| {
            let seed: [u8; 32] = b64::decode(&stored.seed)
                .and_then(|bytes| bytes.try_into().ok())
                .ok_or_else(|| format!("key {index}: seed is not 32 base64url bytes"))?;
            let key = KeyPair::from_seed(&seed);
            if key.kid() != stored.kid {
                return Err(format!("key {index}: kid does not match the seed"));
            }
            Ok(key)
        })
        .collect()
}

/// Writes the keys to `dir/authn-keys.json`, creating `dir` (mode 0700) if needed.
pub(crate) fn save<'a>(dir: &Path, keys: impl Iterator<Item = &'a KeyPair>) -> Result<(), KeyError> {
    let file = KeyFile {
        version: VERSION,
        keys: keys
            .map(|key| StoredKey { kid: key.kid().to_string(), seed: b64::encode(&key.seed()) })
            .collect(),
    };
    let mut text = serde_json::to_vec_pretty(&file).expect("a key file always serialises");
    text.push(b'\n');
    create_dir(dir)?;
    let path = dir.join(FILE_NAME);
    let tmp = dir.join(format!(".{FILE_NAME}.{:016x}.tmp", rand::random::<u64>()));
    let result = write_new(&tmp, &text).and_then(|()| {
        fs::rename(&tmp, &path).map_err(|err| KeyError::io("renaming into", path.clone(), err))
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // Make the rename itself durable; best effort, some file systems refuse to sync directories.
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
    Ok(())
}

fn create_dir(dir: &Path) -> Result<(), KeyError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|err| KeyError::io("creating", dir, err))
}

fn write_new(path: &PathBuf, text: &[u8]) -> Result<(), KeyError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|err| KeyError::io("creating", path, err))?;
    file.write_all(text).and_then(|()| file.sync_all()).map_err(|err| KeyError::io("writing", path, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_load_keeps_order_and_keys() {
        let dir = tempfile::tempdir().unwrap();
        let keys = [KeyPair::generate(), KeyPair::generate()];
        save(dir.path(), keys.iter()).unwrap();
        let loaded = load(dir.path()).unwrap().unwrap();
        let kids: Vec<&str> = loaded.iter().map(KeyPair::kid).collect();
        assert_eq!(kids, [keys[0].kid(), keys[1].kid()]);
        assert_eq!(loaded[0].seed(), keys[0].seed());
    }

    #[test]
    fn missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn file_is_private_and_no_temporary_file_remains() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        save(&nested, [KeyPair::generate()].iter()).unwrap();
        let mode = fs::metadata(nested.join(FILE_NAME)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let names: Vec<_> = fs::read_dir(&nested).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [FILE_NAME]);
    }

    #[test]
    fn rejects_damaged_files() {
        let good = {
            let key = KeyPair::generate();
            serde_json::json!({"version": 1, "keys": [{"kid": key.kid(), "seed": b64::encode(&key.seed())}]})
        };
        let cases = [
            serde_json::json!({}),
            serde_json::json!({"version": 2, "keys": good["keys"]}),
            serde_json::json!({"version": 1, "keys": []}),
            serde_json::json!({"version": 1, "keys": [good["keys"][0], good["keys"][0], good["keys"][0]]}),
            serde_json::json!({"version": 1, "keys": [{"kid": "x", "seed": good["keys"][0]["seed"]}]}),
            serde_json::json!({"version": 1, "keys": [{"kid": good["keys"][0]["kid"], "seed": "c2hvcnQ"}]}),
            serde_json::json!({"version": 1, "keys": good["keys"], "extra": true}),
        ];
        for case in cases {
            assert!(parse(case.to_string().as_bytes()).is_err(), "{case}");
        }
        assert!(parse(b"{not json").is_err());
        assert!(parse(good.to_string().as_bytes()).is_ok());
    }
}
