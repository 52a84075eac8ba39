//! Signing keys from a directory an operator manages, typically a Kubernetes Secret mounted as
//! files, so that every authn replica signs with the same key and a rotation is a change of the
//! Secret:
//!
//! - `<name>.pem`: an Ed25519 private key, PKCS#8 PEM (`openssl genpkey -algorithm ed25519`);
//!   the name is free (a Secret's key name), the key id is the JWK thumbprint of the key;
//! - `current`: one line, the `<name>` of the key that signs.
//!
//! Every key in the directory is published in the JWKS, so a rotation is: add the next key
//! (published, not signing), wait until verifiers have fetched it (their periodic refresh),
//! point `current` at it, and remove the old key once the tokens it signed have expired
//! (8 hours). Files whose names start with `.` (the `..data` links of a Secret volume) are
//! ignored.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;

use base64::Engine;
use ed25519_dalek::pkcs8::DecodePrivateKey;

use crate::KeyError;
use crate::keys::KeyPair;

/// The file naming the signing key.
pub const CURRENT_FILE: &str = "current";

/// The keys of `dir`: the current one, then the others by name.
pub(crate) fn load(dir: &Path) -> Result<(KeyPair, Vec<KeyPair>), KeyError> {
    let corrupt = |path: &Path, reason: String| KeyError::Corrupt { path: path.to_path_buf(), reason };
    let current_path = dir.join(CURRENT_FILE);
    let current_name = std::fs::read_to_string(&current_path)
        .map_err(|e| KeyError::io("reading", &current_path, e))?
        .trim()
        .to_string();
    let mut current = None;
    let mut others = Vec::new();
    for (name, path) in pem_files(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|e| KeyError::io("reading", &path, e))?;
        let key = parse_pem(&text).map_err(|reason| corrupt(&path, reason))?;
        if name == current_name {
            current = Some(key);
        } else {
            others.push(key);
        }
    }
    let current = current.ok_or_else(|| {
        corrupt(
            &current_path,
            format!("names {current_name:?}, but there is no {current_name}.pem beside it"),
        )
    })?;
    Ok((current, others))
}

/// `(name, path)` of each `<name>.pem`, sorted by name.
fn pem_files(dir: &Path) -> Result<Vec<(String, std::path::PathBuf)>, KeyError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| KeyError::io("listing", dir, e))? {
        let entry = entry.map_err(|e| KeyError::io("listing", dir, e))?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with('.') {
            continue;
        }
        if let Some(name) = file_name.strip_suffix(".pem") {
            files.push((name.to_string(), entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// A fingerprint of what the directory holds (names and contents): it changes when a key or
/// `current` does, however the change was made (a Secret volume swaps a symlink, keeping
/// mtimes of the files it points at).
pub fn fingerprint(dir: &Path) -> Result<u64, KeyError> {
    let mut hasher = DefaultHasher::new();
    let current = dir.join(CURRENT_FILE);
    std::fs::read(&current).map_err(|e| KeyError::io("reading", &current, e))?.hash(&mut hasher);
    for (name, path) in pem_files(dir)? {
        name.hash(&mut hasher);
        std::fs::read(&path).map_err(|e| KeyError::io("reading", &path, e))?.hash(&mut hasher);
    }
    Ok(hasher.finish())
}

fn parse_pem(text: &str) -> Result<KeyPair, String> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    if lines.next() != Some("-----BEGIN PRIVATE KEY-----") {
        return Err("not a PKCS#8 PEM private key (expected -----BEGIN PRIVATE KEY-----)".into());
    }
    let body: String = lines.by_ref().take_while(|l| *l != "-----END PRIVATE KEY-----").collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .map_err(|e| format!("the PEM body is not base64: {e}"))?;
    let signing = ed25519_dalek::SigningKey::from_pkcs8_der(&der)
        .map_err(|e| format!("not an Ed25519 PKCS#8 key: {e}"))?;
    Ok(KeyPair::from_seed(&signing.to_bytes()))
}

/// A fresh key as PKCS#8 PEM (for `fundament keys` and tests).
pub fn generate_pem() -> String {
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    let seed = rand::random::<[u8; 32]>();
    let der = ed25519_dalek::SigningKey::from_bytes(&seed)
        .to_pkcs8_der()
        .expect("PKCS#8 encoding of an Ed25519 key cannot fail");
    let body = base64::engine::general_purpose::STANDARD.encode(der.as_bytes());
    let lines: Vec<&str> =
        body.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).expect("base64 is ASCII")).collect();
    format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `openssl genpkey -algorithm ed25519` (a throw-away key of this test).
    const OPENSSL_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINRjMgMtaucK3LQr+gGMtX/KyCePimUQm3bTOCG5VMxE\n-----END PRIVATE KEY-----\n";

    #[test]
    fn reads_the_current_key_and_publishes_the_others() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.pem"), OPENSSL_KEY).unwrap();
        std::fs::write(dir.path().join("b.pem"), generate_pem()).unwrap();
        std::fs::write(dir.path().join("current"), "b\n").unwrap();
        std::fs::create_dir(dir.path().join("..data")).unwrap();
        let before = fingerprint(dir.path()).unwrap();
        let (current, others) = load(dir.path()).unwrap();
        assert_eq!(others.len(), 1);
        assert_eq!(others[0].kid(), parse_pem(OPENSSL_KEY).unwrap().kid());
        assert_ne!(current.kid(), others[0].kid());
        std::fs::write(dir.path().join("current"), "a").unwrap();
        assert_ne!(fingerprint(dir.path()).unwrap(), before, "a change of current is seen");
        let (current, _) = load(dir.path()).unwrap();
        assert_eq!(current.kid(), parse_pem(OPENSSL_KEY).unwrap().kid());
    }

    fn error(dir: &Path) -> String {
        load(dir).err().expect("refused").to_string()
    }

    #[test]
    fn refuses_what_it_cannot_use_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(error(dir.path()).contains("current"), "no current file");
        std::fs::write(dir.path().join("current"), "missing").unwrap();
        let err = error(dir.path());
        assert!(err.contains("no missing.pem"), "{err}");
        std::fs::write(
            dir.path().join("missing.pem"),
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let err = error(dir.path());
        assert!(err.contains("missing.pem") && err.contains("not an Ed25519"), "{err}");
        std::fs::write(dir.path().join("missing.pem"), "hello").unwrap();
        assert!(error(dir.path()).contains("expected -----BEGIN PRIVATE KEY-----"));
    }
}
