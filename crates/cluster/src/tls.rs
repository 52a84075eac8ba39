//! The cluster's own certificate authority, generated on first start and kept
//! in the state directory, and the serving certificate it signs at each start.
//! kubectl (client-go) only sends bearer tokens over TLS, so identities need it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read or write {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path} is not a usable {what}: {detail}")]
    Corrupt { path: PathBuf, what: &'static str, detail: String },
    #[error("cannot create a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("cannot configure TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

/// Reads a file of the state directory; `None` when it does not exist yet.
pub fn read_optional(path: &Path) -> Result<Option<String>, TlsError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(TlsError::Io { path: path.to_path_buf(), source }),
    }
}

/// Writes a file atomically (temp file + rename), readable by its owner only.
pub fn write_private(path: &Path, contents: &[u8]) -> Result<(), TlsError> {
    let io_err = |source| TlsError::Io { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, contents).map_err(io_err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(io_err)?;
    }
    std::fs::rename(&tmp, path).map_err(io_err)
}

fn ca_params() -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "fundament-cluster-ca");
    dn.push(DnType::OrganizationName, "Fundament embedded cluster");
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    // Ten years: a development CA should not expire under its users.
    params.not_before = rcgen::date_time_ymd(2025, 1, 1);
    params.not_after = rcgen::date_time_ymd(2035, 1, 1);
    Ok(params)
}

/// The CA: its certificate (PEM, for kubeconfigs) and what signs server certificates.
pub struct CertificateAuthority {
    pub cert_pem: String,
    key: KeyPair,
}

impl CertificateAuthority {
    /// Loads `ca.crt`/`ca.key` from `dir`, or creates them on first start. A
    /// half-present or unreadable pair stops start-up: silently replacing a CA
    /// would break every kubeconfig already handed out.
    pub fn load_or_create(dir: &Path) -> Result<Self, TlsError> {
        let cert_path = dir.join("ca.crt");
        let key_path = dir.join("ca.key");
        match (read_optional(&cert_path)?, read_optional(&key_path)?) {
            (Some(cert_pem), Some(key_pem)) => {
                let key = KeyPair::from_pem(&key_pem).map_err(|e| TlsError::Corrupt {
                    path: key_path.clone(),
                    what: "CA key",
                    detail: e.to_string(),
                })?;
                let mut reader = io::Cursor::new(cert_pem.as_bytes());
                if rustls_pemfile::certs(&mut reader).next().is_none() {
                    return Err(TlsError::Corrupt {
                        path: cert_path,
                        what: "CA certificate",
                        detail: "no PEM certificate found".into(),
                    });
                }
                Ok(Self { cert_pem, key })
            }
            (None, None) => {
                let key = KeyPair::generate()?;
                let cert = ca_params()?.self_signed(&key)?;
                write_private(&key_path, key.serialize_pem().as_bytes())?;
                write_private(&cert_path, cert.pem().as_bytes())?;
                Ok(Self { cert_pem: cert.pem(), key })
            }
            (Some(_), None) => Err(TlsError::Corrupt {
                path: key_path,
                what: "CA key",
                detail: "missing while ca.crt exists; remove ca.crt to start a new CA".into(),
            }),
            (None, Some(_)) => Err(TlsError::Corrupt {
                path: cert_path,
                what: "CA certificate",
                detail: "missing while ca.key exists; remove ca.key to start a new CA".into(),
            }),
        }
    }

    /// A serving certificate for `hosts` (DNS names or IP addresses).
    pub fn server_config(&self, hosts: &[String]) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, "fundament-cluster");
        for host in hosts {
            params.subject_alt_names.push(match host.parse::<std::net::IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName(host.clone().try_into()?),
            });
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        let key = KeyPair::generate()?;
        let issuer = Issuer::new(ca_params()?, &self.key);
        let cert = params.signed_by(&key, &issuer)?;
        let chain = vec![cert.der().clone()];
        let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// The CA certificate as DER, for clients that trust it (tests, the gateway).
    pub fn cert_der(&self) -> Vec<CertificateDer<'static>> {
        let mut reader = io::Cursor::new(self.cert_pem.as_bytes());
        rustls_pemfile::certs(&mut reader).filter_map(Result::ok).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_kept_across_starts_and_a_half_pair_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = CertificateAuthority::load_or_create(dir.path()).unwrap();
        let again = CertificateAuthority::load_or_create(dir.path()).unwrap();
        assert_eq!(first.cert_pem, again.cert_pem);
        again.server_config(&["localhost".into(), "127.0.0.1".into()]).unwrap();
        std::fs::remove_file(dir.path().join("ca.key")).unwrap();
        assert!(matches!(CertificateAuthority::load_or_create(dir.path()), Err(TlsError::Corrupt { .. })));
        std::fs::write(dir.path().join("ca.key"), "garbage").unwrap();
        assert!(matches!(CertificateAuthority::load_or_create(dir.path()), Err(TlsError::Corrupt { .. })));
    }
}
