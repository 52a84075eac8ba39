//! The cluster's own certificate authority, generated on first start and kept
//! in the state directory: it signs the serving certificate at each start and
//! the client certificates it hands out, and the TLS server asks every client
//! for a certificate it signed (optional, as kube-apiserver's
//! `--client-ca-file`: bearer-token and anonymous clients connect without one).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use time::OffsetDateTime;

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
    #[error("cannot verify client certificates: {0}")]
    ClientVerifier(#[from] rustls::server::VerifierBuilderError),
    #[error("a client certificate needs a user name (its common name)")]
    NoUser,
    #[error("cannot write a certificate: {0}")]
    Encode(&'static str),
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

/// A client certificate the CA signed and its private key, both PEM (for the
/// `client-certificate-data` and `client-key-data` of a kubeconfig).
#[derive(Clone)]
pub struct ClientCertificate {
    pub cert_pem: String,
    pub key_pem: String,
    /// The certificate's `notAfter`, to the second (what X.509 keeps).
    pub not_after: OffsetDateTime,
}

impl std::fmt::Debug for ClientCertificate {
    // The key is a credential: it never reaches a log through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCertificate").field("not_after", &self.not_after).finish_non_exhaustive()
    }
}

/// How far back a client certificate's `notBefore` is set, so that a client
/// whose clock runs a little behind can use it at once (kube-apiserver's CSR
/// signer backdates by as much).
const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// The CA: its certificate (PEM, for kubeconfigs) and what signs server and
/// client certificates.
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
        let mut roots = rustls::RootCertStore::empty();
        for der in self.cert_der() {
            roots.add(der)?;
        }
        // A certificate is asked for, never required: bearer-token and anonymous
        // clients must still connect. One that is offered must chain to this CA
        // and be valid now, or the handshake fails.
        let client_verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                .allow_unauthenticated()
                .build()?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(client_verifier)
            .with_single_cert(chain, key_der)?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// A client certificate for `user` (its common name) in `groups` (one
    /// organization each), valid from now for `valid_for`: the identity
    /// kube-apiserver's x509 authenticator reads.
    pub fn client_certificate(
        &self,
        user: &str,
        groups: &[&str],
        valid_for: Duration,
    ) -> Result<ClientCertificate, TlsError> {
        let now =
            OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or_else(|_| OffsetDateTime::now_utc());
        self.client_certificate_between(user, groups, now - BACKDATE, now + valid_for)
    }

    /// A client certificate valid from `not_before` to `not_after` (tests of
    /// validity ask for windows in the past or the future).
    pub(crate) fn client_certificate_between(
        &self,
        user: &str,
        groups: &[&str],
        not_before: OffsetDateTime,
        not_after: OffsetDateTime,
    ) -> Result<ClientCertificate, TlsError> {
        if user.is_empty() {
            return Err(TlsError::NoUser);
        }
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        // X.509 keeps whole seconds: what the caller is told is what the certificate says.
        params.not_before = not_before.replace_nanosecond(0).unwrap_or(not_before);
        params.not_after = not_after.replace_nanosecond(0).unwrap_or(not_after);
        let key = KeyPair::generate()?;
        let issuer = Issuer::new(ca_params()?, &self.key);
        let signed = params.signed_by(&key, &issuer)?;
        // rcgen keeps one value per attribute type, and each group is an organization
        // of its own: the subject is written here and the certificate signed again.
        let der = subject::replace(signed.der(), &subject::encode(user, groups), &self.key)?;
        Ok(ClientCertificate {
            cert_pem: pem_block("CERTIFICATE", &der),
            key_pem: key.serialize_pem(),
            not_after: params.not_after,
        })
    }

    /// The CA certificate as DER, for clients that trust it (tests, the gateway).
    pub fn cert_der(&self) -> Vec<CertificateDer<'static>> {
        let mut reader = io::Cursor::new(self.cert_pem.as_bytes());
        rustls_pemfile::certs(&mut reader).filter_map(Result::ok).collect()
    }
}

fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

/// The subject of a client certificate, in DER, and putting it into a
/// certificate rcgen signed: just enough DER to walk a `TBSCertificate`.
mod subject {
    use rcgen::{KeyPair, SigningKey};

    use super::TlsError;

    const SEQUENCE: u8 = 0x30;
    const SET: u8 = 0x31;
    const OID: u8 = 0x06;
    const UTF8_STRING: u8 = 0x0c;
    const BIT_STRING: u8 = 0x03;
    /// `[0] EXPLICIT Version` of a `TBSCertificate`.
    const VERSION: u8 = 0xa0;
    /// 2.5.4.10 and 2.5.4.3.
    const ORGANIZATION: &[u8] = &[0x55, 0x04, 0x0a];
    const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];

    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        match u8::try_from(content.len()) {
            Ok(len) if len < 0x80 => out.push(len),
            _ => {
                let len = content.len().to_be_bytes();
                let significant: Vec<u8> = len.into_iter().skip_while(|b| *b == 0).collect();
                // At most eight length bytes: the count fits the low seven bits.
                out.push(0x80 | significant.len() as u8);
                out.extend(significant);
            }
        }
        out.extend_from_slice(content);
        out
    }

    fn attribute(oid: &[u8], value: &str) -> Vec<u8> {
        let pair = [tlv(OID, oid), tlv(UTF8_STRING, value.as_bytes())].concat();
        tlv(SET, &tlv(SEQUENCE, &pair))
    }

    /// `O=<group>` for each group, then `CN=<user>`, as kubeadm writes them.
    pub fn encode(user: &str, groups: &[&str]) -> Vec<u8> {
        let mut rdns: Vec<u8> = groups.iter().flat_map(|g| attribute(ORGANIZATION, g)).collect();
        rdns.extend(attribute(COMMON_NAME, user));
        tlv(SEQUENCE, &rdns)
    }

    /// One DER element off the front of `bytes`.
    struct Element<'a> {
        tag: u8,
        whole: &'a [u8],
        content: &'a [u8],
        rest: &'a [u8],
    }

    fn split(bytes: &[u8]) -> Result<Element<'_>, TlsError> {
        let bad = || TlsError::Encode("a truncated DER element");
        let (&tag, after_tag) = bytes.split_first().ok_or_else(bad)?;
        let (&first, after_len) = after_tag.split_first().ok_or_else(bad)?;
        let (len, header) = if first < 0x80 {
            (usize::from(first), 2)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > std::mem::size_of::<usize>() || after_len.len() < n {
                return Err(bad());
            }
            (after_len[..n].iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b)), 2 + n)
        };
        let end = header.checked_add(len).filter(|e| *e <= bytes.len()).ok_or_else(bad)?;
        Ok(Element { tag, whole: &bytes[..end], content: &bytes[header..end], rest: &bytes[end..] })
    }

    /// `cert` with its subject replaced by `subject`, signed again with `ca_key`
    /// (the key that signed it, so the signature algorithm it names stays true).
    pub fn replace(cert: &[u8], subject: &[u8], ca_key: &KeyPair) -> Result<Vec<u8>, TlsError> {
        let certificate = split(cert)?;
        let tbs = split(certificate.content)?;
        let algorithm = split(tbs.rest)?;
        // [version,] serialNumber, signature, issuer, validity; then the subject.
        let before_subject = if split(tbs.content)?.tag == VERSION { 5 } else { 4 };
        let mut head = Vec::new();
        let mut fields = tbs.content;
        for _ in 0..before_subject {
            let field = split(fields)?;
            head.extend_from_slice(field.whole);
            fields = field.rest;
        }
        let old_subject = split(fields)?;
        let tbs = tlv(SEQUENCE, &[head.as_slice(), subject, old_subject.rest].concat());
        let signature = ca_key.sign(&tbs)?;
        // A BIT STRING of whole bytes: no unused bits.
        let bits = [&[0u8][..], &signature].concat();
        Ok(tlv(SEQUENCE, &[tbs.as_slice(), algorithm.whole, &tlv(BIT_STRING, &bits)].concat()))
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
