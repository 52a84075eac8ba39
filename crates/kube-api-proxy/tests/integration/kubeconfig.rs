//! Clusters reached from kubeconfigs, over real TLS on loopback: each credential kind of a
//! kubeconfig authenticates the gateway's own calls, and none of them ever rides on a
//! forwarded request. The server here records what each request brought (the client
//! certificate of its connection, its Authorization and impersonation headers), so the test
//! sees exactly what a cluster would see.
//!
//! The port of the upstream's `TestNewAnonymousFromBytes_DropsClientCert` is
//! [`a_forwarded_call_carries_no_client_certificate`].

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::extract::{Request, State};
use base64::Engine;
use fundament_kube_api_proxy::upstream::{ServerVerification, Upstream, UpstreamError, load_kubeconfig};
use http::{HeaderMap, Method};
use http_body_util::BodyExt;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// A test CA: signs the server's certificate and clients' certificates.
struct Ca {
    params: CertificateParams,
    key: KeyPair,
    pem: String,
}

impl Ca {
    fn new() -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, "test-ca");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        Ca { params, key, pem }
    }

    /// A leaf certificate (PEM, key PEM, DER) for `names` with `usage`.
    fn leaf(&self, cn: &str, names: &[&str], usage: ExtendedKeyUsagePurpose) -> (String, String, Vec<u8>) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let issuer = Issuer::new(self.params.clone(), &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem(), cert.der().to_vec())
    }

    fn der(&self) -> CertificateDer<'static> {
        rustls_pemfile::certs(&mut std::io::Cursor::new(self.pem.as_bytes())).next().unwrap().unwrap()
    }
}

/// What the server saw of one request.
#[derive(Debug, Deserialize, PartialEq, Eq)]
struct Seen {
    /// SHA-256 of the connection's client certificate, if one was presented.
    client_cert: Option<String>,
    authorization: Option<String>,
    impersonate_user: Option<String>,
}

fn sha256_hex(der: &[u8]) -> String {
    Sha256::digest(der).iter().map(|b| format!("{b:02x}")).collect()
}

/// An HTTPS server that answers every request with what it saw of it. Client certificates
/// signed by `ca` are asked for but optional, as kube-apiserver asks for them.
async fn recording_server(ca: &Ca, server_names: &[&str]) -> SocketAddr {
    let (cert_pem, key_pem, _) = ca.leaf("server", server_names, ExtendedKeyUsagePurpose::ServerAuth);
    let chain: Vec<CertificateDer<'static>> =
        rustls_pemfile::certs(&mut std::io::Cursor::new(cert_pem.as_bytes())).map(Result::unwrap).collect();
    let key = rustls_pemfile::pkcs8_private_keys(&mut std::io::Cursor::new(key_pem.as_bytes()))
        .next()
        .unwrap()
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der()).unwrap();
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .allow_unauthenticated()
            .build()
            .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            chain,
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.secret_pkcs8_der().to_vec())),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else { return };
                let client_cert =
                    tls.get_ref().1.peer_certificates().and_then(|c| c.first()).map(|c| sha256_hex(c));
                let app = axum::Router::new().fallback(answer).with_state(client_cert);
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    addr
}

async fn answer(State(client_cert): State<Option<String>>, req: Request) -> axum::Json<serde_json::Value> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let impersonation: Vec<String> = req
        .headers()
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("impersonate-"))
        .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("?")))
        .collect();
    axum::Json(serde_json::json!({
        "client_cert": client_cert,
        "authorization": header("authorization"),
        "impersonate_user": header("impersonate-user"),
        "impersonation": impersonation,
        "accept": header("accept"),
    }))
}

/// A kubeconfig for `server` whose user is `user` (YAML lines under `user:`).
fn kubeconfig(dir: &Path, server: &str, cluster_extra: &str, user: &str) -> std::path::PathBuf {
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: {server}\n{cluster_extra}contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n{user}"
    );
    let path = dir.join(format!("kubeconfig-{}", COUNTER.fetch_add(1, Ordering::SeqCst)));
    std::fs::write(&path, text).unwrap();
    path
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn ca_data(ca: &Ca) -> String {
    format!("    certificate-authority-data: {}\n", b64(&ca.pem))
}

async fn read_seen(response: axum::response::Response) -> Seen {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

/// What the server saw of a call the gateway made as itself, and of one it forwarded as `token`.
async fn own_and_forwarded(up: &Upstream) -> (Seen, Seen) {
    let headers = HeaderMap::new();
    let own =
        up.forward_as_gateway(Method::GET, "/api/v1/namespaces", &headers, Body::empty()).await.unwrap();
    let forwarded =
        up.forward(Method::GET, "/api/v1/namespaces", &headers, Body::empty(), "sa-token").await.unwrap();
    (read_seen(own).await, read_seen(forwarded).await)
}

async fn upstream(path: &Path) -> Result<Upstream, UpstreamError> {
    Upstream::from_kube_config(load_kubeconfig(path).await?, ServerVerification::Required)
}

#[tokio::test]
async fn a_forwarded_call_carries_no_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    let addr = recording_server(&ca, &["localhost"]).await;
    let (cert, key, der) = ca.leaf("kubernetes-admin", &[], ExtendedKeyUsagePurpose::ClientAuth);
    let user = format!("    client-certificate-data: {}\n    client-key-data: {}\n", b64(&cert), b64(&key));
    let path = kubeconfig(dir.path(), &format!("https://localhost:{}", addr.port()), &ca_data(&ca), &user);
    let up = upstream(&path).await.unwrap();
    let (own, forwarded) = own_and_forwarded(&up).await;
    assert_eq!(
        own.client_cert.as_deref(),
        Some(sha256_hex(&der).as_str()),
        "the gateway's own calls: the kubeconfig's certificate"
    );
    assert_eq!(own.authorization, None);
    assert_eq!(
        forwarded,
        Seen { client_cert: None, authorization: Some("Bearer sa-token".into()), impersonate_user: None },
        "a forwarded call: the ServiceAccount token and nothing of the kubeconfig"
    );
}

#[tokio::test]
async fn tokens_token_files_exec_plugins_and_impersonation_stay_with_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    let addr = recording_server(&ca, &["localhost"]).await;
    let server = format!("https://localhost:{}", addr.port());
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "file-token\n").unwrap();
    let err = upstream(&kubeconfig(
        dir.path(),
        &server,
        &ca_data(&ca),
        &format!("    tokenFile: {}\n", token_file.display()),
    ))
    .await
    .err()
    .expect("a newline after the token is refused up front, not at the first call");
    assert!(err.to_string().contains("trailing newline"), "{err}");
    std::fs::write(&token_file, "file-token").unwrap();
    let exec = dir.path().join("credential-plugin");
    std::fs::write(
        &exec,
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"exec-token\"}}'\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exec, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let users = [
        (
            "    token: static-token\n    as: system:admin\n".to_string(),
            "Bearer static-token",
            Some("system:admin"),
        ),
        (format!("    tokenFile: {}\n", token_file.display()), "Bearer file-token", None),
        (
            format!(
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
                exec.display()
            ),
            "Bearer exec-token",
            None,
        ),
    ];
    for (user, own_auth, own_impersonates) in users {
        let path = kubeconfig(dir.path(), &server, &ca_data(&ca), &user);
        let up = upstream(&path).await.unwrap();
        let (own, forwarded) = own_and_forwarded(&up).await;
        assert_eq!(own.authorization.as_deref(), Some(own_auth), "{user}");
        assert_eq!(own.impersonate_user.as_deref(), own_impersonates, "{user}");
        assert_eq!(
            forwarded,
            Seen { client_cert: None, authorization: Some("Bearer sa-token".into()), impersonate_user: None },
            "{user}"
        );
    }
}

/// A caller's impersonation headers, any of them, never reach the cluster: not on a forwarded
/// call, and not on one the gateway makes as itself for a caller (plugin-proxy's runtime route),
/// where an `Impersonate-Extra-*` would be added to the identity the kubeconfig impersonates.
#[tokio::test]
async fn a_callers_impersonation_headers_never_reach_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    let addr = recording_server(&ca, &["localhost"]).await;
    let server = format!("https://localhost:{}", addr.port());
    let user = "    token: static-token\n    as: system:admin\n";
    let up = upstream(&kubeconfig(dir.path(), &server, &ca_data(&ca), user)).await.unwrap();
    let mut headers = HeaderMap::new();
    for name in [
        "Impersonate-User",
        "impersonate-group",
        "Impersonate-Uid",
        "Impersonate-Extra-Scopes",
        "impersonate-extra-acme.com%2fteam",
    ] {
        headers.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_static("system:masters"),
        );
    }
    headers.insert(http::header::ACCEPT, http::HeaderValue::from_static("application/json"));
    let seen = |response: axum::response::Response| async move {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()
    };
    let own = seen(
        up.forward_as_gateway(Method::GET, "/api/v1/namespaces", &headers, Body::empty()).await.unwrap(),
    )
    .await;
    assert_eq!(own["impersonation"], serde_json::json!(["impersonate-user: system:admin"]), "{own}");
    assert_eq!(own["accept"], "application/json", "other headers still cross");
    let forwarded = seen(
        up.forward(Method::GET, "/api/v1/namespaces", &headers, Body::empty(), "sa-token").await.unwrap(),
    )
    .await;
    assert_eq!(forwarded["impersonation"], serde_json::json!([]), "{forwarded}");
    assert_eq!(forwarded["authorization"], "Bearer sa-token");
}

#[tokio::test]
async fn insecure_skip_tls_verify_needs_the_explicit_setting() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    let addr = recording_server(&ca, &["localhost"]).await;
    let path = kubeconfig(
        dir.path(),
        &format!("https://localhost:{}", addr.port()),
        "    insecure-skip-tls-verify: true\n",
        "    token: t\n",
    );
    let refused = upstream(&path).await.err().expect("refused without the setting");
    assert!(matches!(refused, UpstreamError::Insecure { .. }), "{refused}");
    assert!(refused.to_string().contains("--allow-insecure-kubeconfig"), "{refused}");
    let config = load_kubeconfig(&path).await.unwrap();
    let up = Upstream::from_kube_config(config, ServerVerification::SkipAllowed).unwrap();
    let (own, _) = own_and_forwarded(&up).await;
    assert_eq!(own.authorization.as_deref(), Some("Bearer t"));
}

#[tokio::test]
async fn tls_server_name_and_ca_files_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    // The certificate names kube.internal only; the server is dialled by address.
    let addr = recording_server(&ca, &["kube.internal"]).await;
    let server = format!("https://127.0.0.1:{}", addr.port());
    let ca_file = dir.path().join("ca.crt");
    std::fs::write(&ca_file, &ca.pem).unwrap();
    let with_file = format!("    certificate-authority: {}\n", ca_file.display());
    let named = format!("{with_file}    tls-server-name: kube.internal\n");
    let up = upstream(&kubeconfig(dir.path(), &server, &named, "    token: t\n")).await.unwrap();
    assert_eq!(own_and_forwarded(&up).await.1.authorization.as_deref(), Some("Bearer sa-token"));
    let unnamed = upstream(&kubeconfig(dir.path(), &server, &with_file, "    token: t\n")).await.unwrap();
    let failed =
        unnamed.forward(Method::GET, "/version", &HeaderMap::new(), Body::empty(), "x").await.err().unwrap();
    assert!(matches!(failed, UpstreamError::Unreachable { .. }), "the name does not match: {failed}");
    // The message names the server and the reason, not only kube-rs's "client error (Connect)".
    let message = failed.to_string();
    assert!(message.starts_with(&format!("cannot reach the cluster at {server}: ")), "{message}");
    assert!(message.contains("certificate not valid for name"), "{message}");
    // A CA that did not sign the server's certificate is not trusted either.
    let other = Ca::new();
    let wrong = upstream(&kubeconfig(
        dir.path(),
        &server,
        &format!("{}    tls-server-name: kube.internal\n", ca_data(&other)),
        "    token: t\n",
    ))
    .await
    .unwrap();
    let failed =
        wrong.forward(Method::GET, "/version", &HeaderMap::new(), Body::empty(), "x").await.err().unwrap();
    let message = failed.to_string();
    assert!(message.starts_with(&format!("cannot reach the cluster at {server}: ")), "{message}");
    assert!(message.contains("invalid peer certificate"), "{message}");
}

/// A server nobody listens on: both the gateway's own calls and forwarded ones say where they
/// went and why they did not get through (kube-rs alone says "client error (Connect)").
#[tokio::test]
async fn a_refused_connection_names_the_server_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let server = format!("https://127.0.0.1:{}", closed.port());
    let up =
        upstream(&kubeconfig(dir.path(), &server, &ca_data(&Ca::new()), "    token: t\n")).await.unwrap();
    let forwarded =
        up.forward(Method::GET, "/version", &HeaderMap::new(), Body::empty(), "x").await.err().unwrap();
    let own = up.installations().await.err().unwrap();
    for failed in [forwarded, own] {
        assert!(matches!(failed, UpstreamError::Unreachable { .. }), "{failed}");
        let message = failed.to_string();
        assert!(message.starts_with(&format!("cannot reach the cluster at {server}: ")), "{message}");
        assert!(message.to_lowercase().contains("connection refused"), "{message}");
        assert!(!message.contains("token"), "no credentials: {message}");
    }
}

/// An HTTP CONNECT proxy that counts the tunnels it opened.
async fn connect_proxy() -> (SocketAddr, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tunnels = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&tunnels);
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else { return };
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read_exact(&mut byte).await.is_err() {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head);
                let Some(target) = head.strip_prefix("CONNECT ").and_then(|r| r.split(' ').next()) else {
                    return;
                };
                let Ok(mut upstream) =
                    tokio::net::TcpStream::connect(target.replace("localhost", "127.0.0.1")).await
                else {
                    return;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (addr, tunnels)
}

#[tokio::test]
async fn proxy_url_tunnels_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    let addr = recording_server(&ca, &["localhost"]).await;
    let (proxy, tunnels) = connect_proxy().await;
    let cluster = format!("{}    proxy-url: http://{proxy}\n", ca_data(&ca));
    let path =
        kubeconfig(dir.path(), &format!("https://localhost:{}", addr.port()), &cluster, "    token: t\n");
    let up = upstream(&path).await.unwrap();
    let (own, forwarded) = own_and_forwarded(&up).await;
    assert_eq!(own.authorization.as_deref(), Some("Bearer t"));
    assert_eq!(forwarded.authorization.as_deref(), Some("Bearer sa-token"));
    assert!(tunnels.load(Ordering::SeqCst) >= 2, "each transport went through the proxy");
}

#[tokio::test]
async fn a_kubeconfig_that_cannot_be_read_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = load_kubeconfig(&missing).await.err().unwrap();
    assert!(err.to_string().contains(&missing.display().to_string()), "{err}");
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, "clusters: [").unwrap();
    let err = load_kubeconfig(&garbage).await.err().unwrap();
    assert!(matches!(err, UpstreamError::Kubeconfig { .. }), "{err}");
}
