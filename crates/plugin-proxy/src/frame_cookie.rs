//! The cookie that lets one installation's frame load its pages after the
//! first navigation: `__Host-fundament_frame-<cluster-id>`, set on that installation's own
//! origin only (host-only, `Path=/`, `Secure`, `HttpOnly`, `SameSite=None`,
//! `Partitioned`, so it works in a cross-site frame and is keyed to the
//! console that framed it). Its value names the user, session, cluster and
//! installation (by name and uid) and when it ends, signed with plugin-proxy's
//! own HMAC key: no other installation's origin can read it, set it or shadow
//! it (the `__Host-` prefix forbids `Domain`), and no other service accepts it.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// What every frame cookie's name starts with; [`cookie_name`] adds the cluster.
pub const COOKIE: &str = "__Host-fundament_frame";

/// The frame cookie's name for frames of one cluster: `__Host-fundament_frame-<cluster-id>`.
/// One per cluster, because an installation's name (`<organization>--<plugin>`), and so its
/// origin, is the same on every cluster of the organization: with a single name, opening the
/// plugin of one cluster in a second tab replaced the cookie of the first tab's frame (another
/// cluster's), and that frame's next page or asset was refused.
pub fn cookie_name(cluster_id: &str) -> String {
    format!("{COOKIE}-{cluster_id}")
}

/// Who a frame belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameSession {
    /// The user id.
    pub sub: String,
    /// The console session it came from (signing out ends it).
    pub sid: String,
    pub cluster_id: String,
    pub installation_name: String,
    pub installation_id: String,
    /// Unix seconds.
    pub exp: i64,
}

/// plugin-proxy's key for frame cookies.
pub struct FrameKey(Hmac<Sha256>);

/// Why the key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FrameKeyError {
    #[error("cannot read plugin-proxy's frame cookie key {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("plugin-proxy's frame cookie key {path} is not 32 bytes: move it away to create a new one")]
    Corrupt { path: String },
    #[error("cannot write plugin-proxy's frame cookie key {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error(
        "plugin-proxy's frame cookie key file {path} holds {len} bytes; it needs at least 32 random bytes (e.g. `head -c 32 /dev/urandom`), set by --frame-key-file or FUNDAMENT_FRAME_KEY_FILE"
    )]
    Short { path: String, len: usize },
}

impl FrameKey {
    /// A fresh key in memory (tests; a process whose frames need not survive its restart).
    pub fn generate() -> FrameKey {
        FrameKey::from_bytes(&rand::random::<[u8; 32]>())
    }

    fn from_bytes(bytes: &[u8]) -> FrameKey {
        FrameKey(Hmac::new_from_slice(bytes).expect("HMAC takes keys of any length"))
    }

    /// The key an operator provides in `path` (a mounted Secret), the same for every replica,
    /// so a frame cookie set by one replica opens at every other. Never created or changed here.
    pub fn from_file(path: &Path) -> Result<FrameKey, FrameKeyError> {
        let shown = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|source| FrameKeyError::Read { path: shown.clone(), source })?;
        if bytes.len() < 32 {
            return Err(FrameKeyError::Short { path: shown, len: bytes.len() });
        }
        Ok(FrameKey::from_bytes(&bytes))
    }

    /// The key in `dir/frame-cookie.key`, created (mode 0600) when missing, so frames keep
    /// working across a restart. A key file that cannot be read is an error, never replaced.
    pub fn load_or_create(dir: &Path) -> Result<FrameKey, FrameKeyError> {
        let path = dir.join("frame-cookie.key");
        let shown = path.display().to_string();
        match std::fs::read(&path) {
            Ok(bytes) if bytes.len() == 32 => Ok(FrameKey::from_bytes(&bytes)),
            Ok(_) => Err(FrameKeyError::Corrupt { path: shown }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let bytes = rand::random::<[u8; 32]>();
                let write = || -> std::io::Result<()> {
                    std::fs::create_dir_all(dir)?;
                    let tmp = dir.join("frame-cookie.key.tmp");
                    {
                        use std::io::Write;
                        let mut options = std::fs::OpenOptions::new();
                        options.write(true).create(true).truncate(true);
                        #[cfg(unix)]
                        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                        let mut file = options.open(&tmp)?;
                        file.write_all(&bytes)?;
                        file.sync_all()?;
                    }
                    std::fs::rename(&tmp, &path)
                };
                write().map_err(|source| FrameKeyError::Write { path: shown, source })?;
                Ok(FrameKey::from_bytes(&bytes))
            }
            Err(source) => Err(FrameKeyError::Read { path: shown, source }),
        }
    }

    fn mac(&self, payload: &str) -> Vec<u8> {
        let mut mac = self.0.clone();
        mac.update(b"fundament-frame-v1\n");
        mac.update(payload.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    /// The cookie value for `session`.
    pub fn seal(&self, session: &FrameSession) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(session).unwrap_or_default());
        let mac = URL_SAFE_NO_PAD.encode(self.mac(&payload));
        format!("{payload}.{mac}")
    }

    /// The session a cookie value carries, if this key sealed it and it has not expired.
    pub fn open(&self, value: &str, now: i64) -> Option<FrameSession> {
        let (payload, mac) = value.split_once('.')?;
        let mac = URL_SAFE_NO_PAD.decode(mac).ok()?;
        let mut check = self.0.clone();
        check.update(b"fundament-frame-v1\n");
        check.update(payload.as_bytes());
        check.verify_slice(&mac).ok()?;
        let session: FrameSession = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (session.exp > now).then_some(session)
    }
}

/// The `Set-Cookie` value for a frame session of `cluster_id` that lasts `max_age` seconds.
pub fn set_cookie(cluster_id: &str, value: &str, max_age: i64) -> String {
    let name = cookie_name(cluster_id);
    format!("{name}={value}; Path=/; Secure; HttpOnly; SameSite=None; Partitioned; Max-Age={max_age}")
}

/// The frame cookie of `cluster_id` in a request, if it carries exactly one (a request with two
/// is refused, never resolved to one of them). The header is read as bytes: another cookie that
/// holds bytes past ASCII (which any installation may set for the plugins' parent domain, where
/// that is no public suffix) leaves this one readable.
pub fn from_headers<'h>(headers: &'h http::HeaderMap, cluster_id: &str) -> Option<&'h str> {
    let values = headers.get_all(http::header::COOKIE);
    match fundament_session::single_cookie(values, &cookie_name(cluster_id)) {
        fundament_session::SessionCookie::One(value) => Some(value),
        fundament_session::SessionCookie::Absent => None,
        fundament_session::SessionCookie::Conflict => {
            tracing::warn!("plugin-proxy: refused a request carrying two frame cookies");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(exp: i64) -> FrameSession {
        FrameSession {
            sub: "alice".into(),
            sid: "s".into(),
            cluster_id: "c".into(),
            installation_name: "acme-corp--demo".into(),
            installation_id: "u".into(),
            exp,
        }
    }

    #[test]
    fn sealed_sessions_open_with_the_same_key_only_and_until_they_expire() {
        let key = FrameKey::generate();
        let value = key.seal(&session(100));
        assert_eq!(key.open(&value, 99), Some(session(100)));
        assert_eq!(key.open(&value, 100), None, "expired");
        assert_eq!(FrameKey::generate().open(&value, 0), None, "another key");
        let (payload, mac) = value.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&session(i64::MAX)).unwrap());
        assert_eq!(key.open(&format!("{forged}.{mac}"), 0), None, "a changed payload");
        assert_eq!(key.open(payload, 0), None);
        assert_eq!(key.open("", 0), None);
    }

    #[test]
    fn replicas_reading_one_key_file_open_each_others_cookies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frame-key");
        std::fs::write(&path, rand::random::<[u8; 32]>()).unwrap();
        let value = FrameKey::from_file(&path).unwrap().seal(&session(100));
        assert!(FrameKey::from_file(&path).unwrap().open(&value, 0).is_some());
        assert!(FrameKey::generate().open(&value, 0).is_none());
        std::fs::write(&path, b"short").unwrap();
        let err = FrameKey::from_file(&path).err().unwrap().to_string();
        assert!(err.contains("at least 32") && err.contains("--frame-key-file"), "{err}");
    }

    #[test]
    fn the_key_survives_a_restart_and_a_corrupt_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let value = FrameKey::load_or_create(dir.path()).unwrap().seal(&session(100));
        assert!(FrameKey::load_or_create(dir.path()).unwrap().open(&value, 0).is_some());
        std::fs::write(dir.path().join("frame-cookie.key"), b"short").unwrap();
        assert!(matches!(FrameKey::load_or_create(dir.path()), Err(FrameKeyError::Corrupt { .. })));
    }

    #[test]
    fn two_frame_cookies_of_one_cluster_are_refused_those_of_two_clusters_live_side_by_side() {
        const A: &str = "019b4000-2000-7000-8000-000000000001";
        const B: &str = "019b4000-2000-7000-8000-000000000002";
        let mut h = http::HeaderMap::new();
        h.append(
            http::header::COOKIE,
            format!("a=1; __Host-fundament_frame-{A}=x; __Host-fundament_frame-{B}=z").parse().unwrap(),
        );
        assert_eq!(from_headers(&h, A), Some("x"));
        assert_eq!(from_headers(&h, B), Some("z"));
        h.append(http::header::COOKIE, format!("__Host-fundament_frame-{A}=y").parse().unwrap());
        assert_eq!(from_headers(&h, A), None);
        assert_eq!(from_headers(&h, B), Some("z"));
        assert_eq!(from_headers(&http::HeaderMap::new(), A), None);
        let cookie = set_cookie(A, "v", 60);
        assert!(cookie.starts_with(&format!("__Host-fundament_frame-{A}=v;")), "{cookie}");
        for attribute in ["Path=/", "Secure", "HttpOnly", "SameSite=None", "Partitioned", "Max-Age=60"] {
            assert!(cookie.split("; ").any(|a| a == attribute), "{attribute}");
        }
        assert!(!cookie.contains("Domain"));
    }

    #[test]
    fn a_cookie_of_other_bytes_beside_it_leaves_the_frame_cookie_readable() {
        // Any installation may set a cookie for the plugins' parent domain where that is no public
        // suffix; Chromium sends its UTF-8 as is. Read as text, the whole header was unreadable
        // and every installation's frame was refused.
        const A: &str = "019b4000-2000-7000-8000-000000000001";
        let mut h = http::HeaderMap::new();
        let header =
            format!("tossed=\u{fc}; \u{a0}__Host-fundament_frame-{A}=planted; __Host-fundament_frame-{A}=x");
        h.append(http::header::COOKIE, http::HeaderValue::from_bytes(header.as_bytes()).unwrap());
        assert_eq!(from_headers(&h, A), Some("x"));
    }
}
