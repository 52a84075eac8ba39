//! The gateway over real HTTP in front of the embedded cluster (over HTTPS):
//! both paths, every check, CORS and the audit line.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use fundament_authn_client::{Credentials, RevokedSessions};
use fundament_kube_api_proxy::audit::MemoryAudit;
use fundament_kube_api_proxy::cors::Origins;
use fundament_kube_api_proxy::in_flight::CallLimits;
use fundament_kube_api_proxy::installations::{Lookup, StoredInstallation};
use fundament_kube_api_proxy::upstream::Upstream;
use fundament_kube_api_proxy::{DefinitionSource, Gateway, PublishedDefinition};
use fundament_kube_api_proxy_testing::{self as testing, PluginFolders, SeededCluster};
use fundament_plugin_origin::PluginOrigins;
use fundament_tokens::{Signer, Verifier};
use http::{Method, Request, header};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

const PROD: &str = testing::CLUSTER_ID;
const RESTRICTED: &str = "019b4000-2000-7000-8000-000000000002";
const CONSOLE: &str = "http://localhost:3000";
const PLUGINS: &str = "http://localhost:8082";
const CERT_MANAGER_ORIGIN: &str = "http://acme-corp--cert-manager.localhost:8082";
const DEMO_ORIGIN: &str = "http://acme-corp--demo.localhost:8082";

fn origins() -> Origins {
    Origins { plugins: PluginOrigins::from_base(PLUGINS).unwrap() }
}

struct Stack {
    url: String,
    signer: Signer,
    revoked: Arc<RevokedSessions>,
    audit: Arc<MemoryAudit>,
    cluster: SeededCluster,
    /// The cluster as the gateway reaches it.
    upstream: Arc<Upstream>,
}

async fn start() -> Stack {
    start_with(SeededCluster::start().await).await
}

async fn start_with(cluster: SeededCluster) -> Stack {
    start_checked_by(cluster, testing::fga()).await
}

/// [`start_with`], with `can_view` asked of `fga`.
async fn start_checked_by(cluster: SeededCluster, fga: Arc<dyn fundament_fga::CanView>) -> Stack {
    start_defined_by(cluster, fga, Arc::new(PluginFolders::load())).await
}

/// [`start_checked_by`], with the published definitions of `definitions`.
async fn start_defined_by(
    cluster: SeededCluster,
    fga: Arc<dyn fundament_fga::CanView>,
    definitions: Arc<dyn DefinitionSource>,
) -> Stack {
    let clusters = cluster.clusters();
    start_gateway(cluster, fga, definitions, clusters, CallLimits::default()).await
}

/// [`start`], with the calls in flight bounded by `calls` and request bodies read within
/// `body_time`.
async fn start_bounded(calls: CallLimits, body_time: std::time::Duration) -> Stack {
    let cluster = SeededCluster::start().await;
    let upstream = Upstream::new(&cluster.upstream_config()).unwrap().with_request_body_time(body_time);
    let clusters = fundament_kube_api_proxy::clusters::Clusters::one(PROD, upstream);
    start_gateway(cluster, testing::fga(), Arc::new(PluginFolders::load()), clusters, calls).await
}

async fn start_gateway(
    cluster: SeededCluster,
    fga: Arc<dyn fundament_fga::CanView>,
    definitions: Arc<dyn DefinitionSource>,
    clusters: fundament_kube_api_proxy::clusters::Clusters,
    calls: CallLimits,
) -> Stack {
    let signer = Signer::generate();
    let audit = Arc::new(MemoryAudit::default());
    let revoked = RevokedSessions::none();
    let gateway = Gateway {
        origins: origins(),
        credentials: testing::credentials(&signer, &revoked),
        fga,
        fga_health: Default::default(),
        clusters,
        definitions,
        audit: audit.clone(),
        watches: Default::default(),
        calls,
    };
    let upstream = gateway.clusters.get(PROD).await.unwrap();
    let url = serve(gateway).await;
    Stack { url, signer, revoked, audit, cluster, upstream }
}

/// Serves `gateway` on a loopback port: its base URL.
async fn serve(gateway: Gateway) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, fundament_kube_api_proxy::router(Arc::new(gateway))).await.unwrap()
    });
    url
}

impl Stack {
    fn plugin_token(&self, user: &str, cluster: &str, installation: &str, ttl: i64) -> String {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        self.signer.sign_plugin(&self.cluster.plugin_claims(
            user,
            cluster,
            installation,
            "session-1",
            now,
            ttl,
        ))
    }

    fn user_token(&self, user: &str) -> String {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        self.signer.sign_user(user, &format!("{user}@acme-corp.com"), user, now, 3600)
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, http::HeaderMap, Value) {
        common::request(&self.url, method, path, headers, body).await
    }

    /// A call whose only header is `authorization` (a `Bearer …` value).
    async fn call_as(
        &self,
        authorization: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, http::HeaderMap, Value) {
        self.call(method, path, &[("authorization", authorization)], body).await
    }

    /// Waits until the gateway's installation store shows `name` as `uid` (`None`: gone), and
    /// an installation that exists as reconciled: the plugin controller creates its namespace,
    /// ServiceAccount and RBAC before it reports Running, so a call made earlier could meet a
    /// cluster that does not know the plugin's ServiceAccount yet.
    async fn store_shows(&self, name: &str, uid: Option<&str>) {
        self.store_holds(name, |found| {
            found.and_then(|v| v["metadata"]["uid"].as_str()) == uid
                && found.is_none_or(|v| v["status"]["phase"] == "Running")
        })
        .await;
    }

    /// Waits until the gateway's installation store holds for `name` what `shows` accepts (the
    /// watch delivered the change). Bounded, so a store that never hears of it fails.
    async fn store_holds(&self, name: &str, shows: impl Fn(Option<&Value>) -> bool) {
        let store = self.upstream.installation_store();
        let mut changes = store.changes();
        let holds = |_: &u64| match store.lookup(name) {
            Lookup::Known(found) => shows(found.as_deref().map(StoredInstallation::object)),
            Lookup::Unknown => false,
        };
        let heard = tokio::time::timeout(std::time::Duration::from_secs(10), changes.wait_for(holds)).await;
        assert!(heard.is_ok(), "the installation store never showed {name} as expected");
    }

    fn last_decision(&self) -> String {
        self.audit.lines().last().map(|l| l.decision.clone()).unwrap_or_default()
    }

    /// A POST of `path` as `authorization` whose body has begun and not ended: the call stays in
    /// flight at the gateway, which reads the body whole before it forwards anything, until the
    /// returned sender is dropped (the body then ends, and the call is answered).
    async fn call_held_open(&self, authorization: &str, path: &str) -> BodySender {
        self.post_begun(authorization, path, bytes::Bytes::from_static(b"{")).await.0
    }

    /// A POST of `path` as `authorization` whose body so far is `first`, and its answer (the
    /// status and the Status or object) when there is one: the body ends when the returned
    /// sender is dropped.
    async fn post_begun(
        &self,
        authorization: &str,
        path: &str,
        first: bytes::Bytes,
    ) -> (BodySender, tokio::task::JoinHandle<(u16, Value)>) {
        let (sender, body) = body_sent_in_pieces();
        sender.send(Ok(first)).await.unwrap();
        let req = Request::post(format!("{}{path}", self.url))
            .header("authorization", authorization)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap();
        let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
        let answer = tokio::spawn(async move {
            let Ok(answer) = client.request(req).await else { return (0, Value::Null) };
            let code = answer.status().as_u16();
            let body = answer.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            (code, serde_json::from_slice(&body).unwrap_or(Value::Null))
        });
        (sender, answer)
    }
}

/// The sending side of a request body sent piece by piece ([`body_sent_in_pieces`]).
type BodySender = tokio::sync::mpsc::Sender<Result<bytes::Bytes, std::io::Error>>;

/// A request body of the pieces sent on its sender, ended when the sender is dropped.
fn body_sent_in_pieces() -> (BodySender, Body) {
    let (sender, pieces) = tokio::sync::mpsc::channel(1);
    let body = Body::from_stream(futures::stream::unfold(pieces, |mut pieces| async move {
        pieces.recv().await.map(|piece| (piece, pieces))
    }));
    (sender, body)
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plugin_path_enforces_user_plugin_and_allowed_resources() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let alice_cm = s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900);
    let auth = bearer(&alice_cm);

    // alice's cert-manager token lists certificates, as the plugin's ServiceAccount.
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &auth)], None).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["items"].as_array().unwrap().len(), 3);
    let line = s.audit.lines().last().cloned().unwrap();
    assert_eq!(line.decision, "allowed");
    assert_eq!(
        (line.user.as_str(), line.cluster_id.as_str(), line.installation_name.as_str()),
        ("alice", PROD, "acme-corp--cert-manager")
    );
    assert_eq!((line.resource.as_str(), line.verb.as_str(), line.status), ("certificates", "list", 200));
    assert!(
        line.pinned_definition_hash.starts_with("sha256:")
            && line.pinned_definition_hash == line.definition_hash
    );

    // The same token on the other cluster.
    let (code, _, v) =
        s.call(Method::GET, &certs.replace(PROD, RESTRICTED), &[("authorization", &auth)], None).await;
    assert_eq!((code, v["reason"].as_str()), (403, Some("Forbidden")));
    assert!(v["message"].as_str().unwrap().contains("cluster_id mismatch"), "{v}");
    assert_eq!(s.last_decision(), "denied:cluster-mismatch");

    // Secrets, CloudNativePG databases, core events: outside allowedResources.
    for path in
        ["/api/v1/namespaces/default/secrets", "/apis/postgresql.cnpg.io/v1/databases", "/api/v1/events"]
    {
        let (code, _, v) =
            s.call(Method::GET, &format!("/clusters/{PROD}{path}"), &[("authorization", &auth)], None).await;
        assert_eq!(code, 403, "{path}: {v}");
        assert_eq!(v["kind"], "Status");
        assert!(v["message"].as_str().unwrap().starts_with("allowedResources:"), "{v}");
        assert_eq!(s.last_decision(), "denied:allowed-resources");
    }

    // demo: allowedResources admits create, the plugin's RBAC does not: the cluster says no, as the plugin.
    let demo = bearer(&s.plugin_token("alice", PROD, "acme-corp--demo", 900));
    let item = json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem", "metadata": {"name": "x"}, "spec": {"message": "m"}});
    let demoitems = format!("/clusters/{PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems");
    let (code, _, v) = s.call_as(&demo, Method::POST, &demoitems, Some(item)).await;
    assert_eq!(code, 403, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("system:serviceaccount:plugin-acme-corp--demo:plugin"),
        "the cluster's own Status: {v}"
    );
    assert_eq!(s.last_decision(), "allowed");

    // bob may read but not create: his review refuses a Certificate.
    let bob = bearer(&s.plugin_token("bob", PROD, "acme-corp--cert-manager", 900));
    let cert = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"},
        "spec": {"secretName": "c", "issuerRef": {"name": "ca-issuer"}}});
    let in_default = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates");
    let (code, _, v) = s.call_as(&bob, Method::POST, &in_default, Some(cert.clone())).await;
    assert_eq!(code, 403, "{v}");
    assert!(v["message"].as_str().unwrap().contains("SubjectAccessReview"), "{v}");
    assert_eq!(s.last_decision(), "denied:user-sar");
    let (code, _, _) = s.call(Method::GET, &certs, &[("authorization", &bob)], None).await;
    assert_eq!(code, 200);

    // alice may create one through the plugin.
    let (code, _, v) = s.call_as(&auth, Method::POST, &in_default, Some(cert)).await;
    assert_eq!(code, 201, "{v}");

    // Unparseable for plugins: discovery.
    let (code, _, _) =
        s.call(Method::GET, &format!("/clusters/{PROD}/version"), &[("authorization", &auth)], None).await;
    assert_eq!(code, 400);
    assert_eq!(s.last_decision(), "error:unparseable-request");
}

/// The plugin folders' definitions with `create` taken out of every entry: patch, not create.
struct WithoutCreate(PluginFolders);

impl DefinitionSource for WithoutCreate {
    fn definition(&self, name: &str, version: &str) -> Option<PublishedDefinition> {
        let mut definition = self.0.definition(name, version)?;
        for allowed in &mut definition.allowed {
            allowed.verbs.retain(|v| v != "create");
        }
        Some(definition)
    }
}

/// A server-side apply creates the object when there is none, and the cluster checks `create`
/// only of the plugin's ServiceAccount: the gateway checks it of allowedResources (and of the
/// user) too, so a definition that may patch but not create cannot create by applying.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_side_apply_needs_create_as_well_as_patch() {
    let s = start_defined_by(
        SeededCluster::start().await,
        testing::fga(),
        Arc::new(WithoutCreate(PluginFolders::load())),
    )
    .await;
    let auth = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let applied = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates/applied");
    let cert = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "applied"},
        "spec": {"secretName": "applied", "issuerRef": {"name": "ca-issuer"}}});
    for content_type in [
        "application/apply-patch+yaml",
        "Application/Apply-Patch+YAML; charset=utf-8",
        "application/apply-patch+cbor",
    ] {
        let headers = [("authorization", auth.as_str()), ("content-type", content_type)];
        let (code, _, v) = s.call(Method::PATCH, &applied, &headers, Some(cert.clone())).await;
        assert_eq!(code, 403, "{content_type}: {v}");
        let message = v["message"].as_str().unwrap();
        assert!(message.contains("may not create") && message.contains("server-side apply"), "{message}");
        assert_eq!(s.last_decision(), "denied:allowed-resources");
    }
    // A merge patch may only change what exists: `patch` admits it, and the cluster answers.
    let headers = [("authorization", auth.as_str()), ("content-type", "application/merge-patch+json")];
    let (code, _, v) = s.call(Method::PATCH, &applied, &headers, Some(json!({"spec": {}}))).await;
    assert_eq!(code, 404, "the cluster's answer for an object it does not have: {v}");
    assert_eq!(s.last_decision(), "allowed");
    // A PUT of an object that does not exist is checked as a create (some kinds create on
    // update); of one that exists, as the update it is.
    let (code, _, v) = s.call_as(&auth, Method::PUT, &applied, Some(cert.clone())).await;
    assert_eq!(code, 403, "{v}");
    let message = v["message"].as_str().unwrap();
    assert!(
        message.contains("may not create") && message.contains("a PUT of an object that does not exist"),
        "{message}"
    );
    assert_eq!(s.last_decision(), "denied:allowed-resources");
    let existing = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates");
    let (_, _, list) = s.call_as(&auth, Method::GET, &existing, None).await;
    let mut object = list["items"][0].clone();
    let name = object["metadata"]["name"].as_str().unwrap().to_string();
    object["spec"]["secretName"] = json!("renamed");
    let (code, _, v) = s.call_as(&auth, Method::PUT, &format!("{existing}/{name}"), Some(object)).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(s.last_decision(), "allowed");
}

/// A PluginToken's request refused before its token is looked at is audited all the same:
/// a path no API server serves, and a browser origin that is no plugin's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_before_the_token_is_checked_are_audited_too() {
    let s = start().await;
    let auth = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let before = s.audit.lines().len();
    let bad = format!("/clusters/{PROD}/api/v1/namespaces/%2E%2E/secrets");
    let (code, _, v) = s.call_as(&auth, Method::GET, &bad, None).await;
    assert_eq!(code, 400, "{v}");
    let line = s.audit.lines().last().cloned().unwrap();
    assert_eq!((line.decision.as_str(), line.status), ("denied:path", 400));
    assert_eq!(
        (line.user.as_str(), line.cluster_id.as_str(), line.installation_name.as_str()),
        ("alice", PROD, "acme-corp--cert-manager")
    );
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let headers = [("authorization", auth.as_str()), ("origin", "https://evil.example")];
    let (code, _, v) = s.call(Method::GET, &certs, &headers, None).await;
    assert_eq!(code, 403, "{v}");
    let line = s.audit.lines().last().cloned().unwrap();
    assert_eq!((line.decision.as_str(), line.user.as_str()), ("denied:origin", "alice"));
    assert_eq!(s.audit.lines().len(), before + 2);
    // A forged PluginToken is audited without a user; a user token's refusal is no plugin request.
    let forged = format!(
        "Bearer {}.{}.AAAA",
        b64(r#"{"alg":"EdDSA"}"#),
        b64(&json!({"aud": [fundament_tokens::PLUGIN_AUDIENCE], "sub": "mallory"}).to_string())
    );
    assert_eq!(s.call_as(&forged, Method::GET, &bad, None).await.0, 400);
    let line = s.audit.lines().last().cloned().unwrap();
    assert_eq!((line.decision.as_str(), line.user.as_str()), ("denied:path", ""));
    let user = bearer(&s.user_token("alice"));
    assert_eq!(s.call_as(&user, Method::GET, &bad, None).await.0, 400);
    assert_eq!(s.audit.lines().len(), before + 3, "no line for a user token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_are_401_and_audited() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let expired = s.plugin_token("alice", PROD, "acme-corp--cert-manager", -60);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&expired))], None).await;
    assert_eq!(code, 401, "{v}");
    assert_eq!(s.last_decision(), "denied:invalid-token");

    let other = Signer::generate();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = s.cluster.plugin_claims("alice", PROD, "acme-corp--cert-manager", "s", now, 900);
    let forged = other.sign_plugin(&claims);
    let (code, _, _) = s.call(Method::GET, &certs, &[("authorization", &bearer(&forged))], None).await;
    assert_eq!(code, 401);

    // alg: none, with the claims of a valid token.
    let valid = s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900);
    let payload = valid.split('.').nth(1).unwrap();
    let none = format!("{}.{payload}.", b64(r#"{"alg":"none","typ":"JWT"}"#));
    let (code, _, _) = s.call(Method::GET, &certs, &[("authorization", &bearer(&none))], None).await;
    assert_eq!(code, 401);

    // A plugin token for another audience.
    let mut claims = s.cluster.plugin_claims("alice", PROD, "acme-corp--cert-manager", "s", now, 900);
    claims.aud = vec!["somebody-else".into()];
    let (code, _, _) = s
        .call(Method::GET, &certs, &[("authorization", &bearer(&s.signer.sign_plugin(&claims)))], None)
        .await;
    assert_eq!(code, 401);

    // HS256 "signed" with the public key as the HMAC secret: the classic algorithm confusion.
    use hmac::Mac;
    let jwks = s.signer.jwks();
    let (kid, x) = (jwks["keys"][0]["kid"].as_str().unwrap(), jwks["keys"][0]["x"].as_str().unwrap());
    use base64::Engine;
    let public = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(x).unwrap();
    for secret in [public.as_slice(), x.as_bytes()] {
        let header = b64(&format!(r#"{{"alg":"HS256","typ":"JWT","kid":"{kid}"}}"#));
        let input = format!("{header}.{payload}");
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
        mac.update(input.as_bytes());
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        let (code, _, _) =
            s.call(Method::GET, &certs, &[("authorization", &bearer(&format!("{input}.{sig}")))], None).await;
        assert_eq!(code, 401);
        assert_eq!(s.last_decision(), "denied:invalid-token");
    }

    // No cookie is a credential here, whoever sends it and from wherever: bearer tokens only.
    let alice = s.user_token("alice");
    for cookie in [
        format!("fundament_auth={valid}"),
        format!("__Host-fundament_auth={alice}"),
        format!("fundament_auth={alice}"),
    ] {
        for origin in [None, Some(CONSOLE), Some(CERT_MANAGER_ORIGIN)] {
            let mut headers = vec![("cookie", cookie.as_str())];
            if let Some(o) = origin {
                headers.push(("origin", o));
            }
            let (code, _, v) = s.call(Method::GET, &certs, &headers, None).await;
            assert!(code == 401 || code == 403, "{origin:?} {cookie}: {code} {v}");
        }
    }
    let (code, _, v) =
        s.call(Method::GET, &certs, &[("cookie", &format!("__Host-fundament_auth={alice}"))], None).await;
    assert_eq!(code, 401);
    assert!(v["message"].as_str().unwrap().contains("never a cookie"), "{v}");
    let (code, _, _) = s.call(Method::GET, &certs, &[], None).await;
    assert_eq!(code, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_token_works_from_its_own_installations_origin_only() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let token = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let (code, h, v) = s
        .call(Method::GET, &certs, &[("authorization", &token), ("origin", CERT_MANAGER_ORIGIN)], None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(h[header::ACCESS_CONTROL_ALLOW_ORIGIN], CERT_MANAGER_ORIGIN);
    assert!(h.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
    // The same token sent by another installation's page.
    let (code, _, v) =
        s.call(Method::GET, &certs, &[("authorization", &token), ("origin", DEMO_ORIGIN)], None).await;
    assert_eq!(code, 403, "{v}");
    assert!(v["message"].as_str().unwrap().contains("origin mismatch"), "{v}");
    assert_eq!(s.last_decision(), "denied:origin");
    // From plugin-proxy's own host, the console or anywhere else: no browser origin but a plugin's.
    for origin in [PLUGINS, CONSOLE, "https://evil.example", "null"] {
        let (code, h, _) =
            s.call(Method::GET, &certs, &[("authorization", &token), ("origin", origin)], None).await;
        assert_eq!(code, 403, "{origin}");
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    }
    // A user token from a plugin page is refused: plugin pages act through their PluginToken.
    let user = bearer(&s.user_token("alice"));
    let (code, _, v) =
        s.call(Method::GET, &certs, &[("authorization", &user), ("origin", CERT_MANAGER_ORIGIN)], None).await;
    assert_eq!(code, 403, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_out_session_stops_working_at_once() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let user = s.user_token("alice");
    let session = Verifier::from_jwks(&s.signer.jwks()).unwrap().verify_user(&user, now).unwrap().jti;
    let plugin = s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900);
    assert_eq!(s.call(Method::GET, &certs, &[("authorization", &bearer(&user))], None).await.0, 200);
    s.revoked.record(&session, now + 3600);
    s.revoked.record("session-1", now + 3600);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&user))], None).await;
    assert_eq!(code, 401, "{v}");
    assert!(v["message"].as_str().unwrap().contains("signed out"), "{v}");
    let (code, _, _) = s.call(Method::GET, &certs, &[("authorization", &bearer(&plugin))], None).await;
    assert_eq!(code, 401);
    assert_eq!(s.last_decision(), "denied:invalid-token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_is_a_document_a_cookie_or_someone_elses_cors() {
    let s = start().await;
    let alice = bearer(&s.user_token("alice"));
    // A plugin's own page through the service proxy: served, but never as a runnable document.
    let backend = axum::Router::new().route(
        "/console/x.html",
        axum::routing::get(|| async {
            (
                [
                    (header::CONTENT_TYPE, "text/html"),
                    (header::SET_COOKIE, "__Host-fundament_auth=planted; Path=/; Secure"),
                    (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                    (header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true"),
                    (header::CONTENT_SECURITY_POLICY, "default-src *"),
                ],
                "<script>fetch('/clusters/x/api/v1/secrets')</script>",
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, backend).await.unwrap() });
    let ns = "plugin-acme-corp--demo";
    s.cluster.running.backends.register(ns, ns, 8080, addr);
    let page =
        format!("/clusters/{PROD}/api/v1/namespaces/{ns}/services/http:{ns}:8080/proxy/console/x.html");
    let (code, h, _) = s.call(Method::GET, &page, &[("authorization", &alice)], None).await;
    assert_eq!(code, 200);
    assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(h.get(header::SET_COOKIE).is_none());
    assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    assert!(h.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
    // Refusals too.
    let (code, h, _) = s.call(Method::GET, &page, &[], None).await;
    assert_eq!(code, 401);
    assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
}

/// A backend behind a `proxy` subresource answers through the gateway, whose origin is
/// same-site with the console: of its headers only those an API answer needs come back, so it
/// cannot clear the site's cookies (the console's session), collect the browser's reports, pin
/// or move how the browser reaches the gateway, redirect or preload; and its answer is never
/// stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backends_answer_passes_back_only_the_headers_an_api_answer_needs() {
    let s = start().await;
    let alice = bearer(&s.user_token("alice"));
    let planted = [
        ("clear-site-data", "\"cookies\", \"storage\""),
        ("nel", r#"{"report_to":"backend","max_age":31536000,"include_subdomains":true}"#),
        (
            "report-to",
            r#"{"group":"backend","max_age":31536000,"endpoints":[{"url":"https://evil.example/r"}]}"#,
        ),
        ("reporting-endpoints", "backend=\"https://evil.example/r\""),
        ("alt-svc", "h3=\"evil.example:443\"; ma=31536000"),
        ("strict-transport-security", "max-age=0; includeSubDomains"),
        ("refresh", "0; url=https://evil.example/"),
        ("link", "<https://evil.example/x.js>; rel=preload; as=script"),
        ("location", "https://evil.example/"),
        ("service-worker-allowed", "/"),
        ("origin-agent-cluster", "?0"),
        ("x-backend-secret", "1"),
    ];
    let kept = [
        ("content-type", "application/json"),
        ("warning", "299 - \"this backend is deprecated\""),
        ("audit-id", "backend-audit-1"),
    ];
    let backend = axum::Router::new().route(
        "/api/thing",
        axum::routing::get(move || async move {
            let mut answer = http::Response::builder().status(200);
            for (name, value) in planted.iter().chain(&kept) {
                answer = answer.header(*name, *value);
            }
            answer.header("cache-control", "public, max-age=31536000").body(Body::from("{}")).unwrap()
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, backend).await.unwrap() });
    let ns = "plugin-acme-corp--demo";
    s.cluster.running.backends.register(ns, ns, 8080, addr);
    let thing = format!("/clusters/{PROD}/api/v1/namespaces/{ns}/services/http:{ns}:8080/proxy/api/thing");
    let (code, h, v) = s.call(Method::GET, &thing, &[("authorization", &alice)], None).await;
    assert_eq!((code, v), (200, json!({})));
    for (name, _) in planted {
        assert!(h.get(name).is_none(), "{name} reached the caller: {:?}", h.get(name));
    }
    for (name, value) in kept {
        assert_eq!(h.get(name).map(|v| v.to_str().unwrap()), Some(value), "{name}");
    }
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox; default-src 'none'");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_judges_exactly_what_the_cluster_serves() {
    let s = start().await;
    let cert_manager = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    // An encoded `watch` key is a watch for the gateway as for the cluster: both agree.
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let req = Request::get(format!("{}{certs}?wat%63h=1&timeoutSeconds=1", s.url))
        .header("authorization", &cert_manager)
        .body(Body::empty())
        .unwrap();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let text = String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "ADDED", "a watch, as audited: {text:.60}");
    assert_eq!(s.audit.lines().last().unwrap().verb, "watch");
    // Repeated watch: the first value counts for both (a list).
    let (code, _, v) = s
        .call(Method::GET, &format!("{certs}?watch=0&watch=1"), &[("authorization", &cert_manager)], None)
        .await;
    assert_eq!((code, v["kind"].as_str()), (200, Some("CertificateList")));
    assert_eq!(s.audit.lines().last().unwrap().verb, "list");
    // A POST to a named object: 405, nothing created under any name.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}});
    let alice = bearer(&s.user_token("alice"));
    let named = format!("/clusters/{PROD}/api/v1/namespaces/default/configmaps/chosen");
    let (code, _, v) = s.call(Method::POST, &named, &[("authorization", &alice)], Some(cm)).await;
    assert_eq!((code, v["reason"].as_str()), (405, Some("MethodNotAllowed")), "{v}");
    let other = format!("/clusters/{PROD}/api/v1/namespaces/default/configmaps/other");
    assert_eq!(s.call(Method::GET, &other, &[("authorization", &alice)], None).await.0, 404);
    // Encoded segments are decoded once; an encoded slash or dot segment is refused.
    let (code, _, _) = s
        .call(
            Method::GET,
            &format!("/clusters/{PROD}/api/v1/namespaces/d%65fault/configmaps"),
            &[("authorization", &alice)],
            None,
        )
        .await;
    assert_eq!(code, 200);
    for bad in ["/api/v1/namespaces/a%2Fb/configmaps", "/api/v1/namespaces/%2e%2e/secrets"] {
        let (code, _, _) =
            s.call(Method::GET, &format!("/clusters/{PROD}{bad}"), &[("authorization", &alice)], None).await;
        assert_eq!(code, 400, "{bad}");
    }
}

/// `count` watches of `url` as `authorization`, each answered 200 and held open; and the client.
async fn open_watches(
    url: &str,
    authorization: &str,
    count: usize,
) -> (Client<hyper_util::client::legacy::connect::HttpConnector, Body>, Vec<impl Sized>) {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let mut open = Vec::new();
    for _ in 0..count {
        let req = Request::get(url).header("authorization", authorization).body(Body::empty()).unwrap();
        let res = client.request(req).await.unwrap();
        assert_eq!(res.status(), 200);
        open.push(res);
    }
    (client, open)
}

/// `call` again every 100 ms while it is answered 429, for at most 5 s; its last answer. A slot
/// comes back once the gateway has seen the stream that held it close, which on a loaded
/// machine can take longer than any fixed pause; a slot that never comes back still fails.
async fn until_not_429<T, F: std::future::Future<Output = (u16, T)>>(
    mut call: impl FnMut() -> F,
) -> (u16, T) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (code, answer) = call().await;
        if code != 429 || std::time::Instant::now() >= deadline {
            return (code, answer);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_are_capped_per_plugin_token_with_a_429() {
    let s = start().await;
    let token = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let url = format!("{}/clusters/{PROD}/apis/cert-manager.io/v1/certificates?watch=1", s.url);
    let (client, mut open) =
        open_watches(&url, &token, fundament_kube_api_proxy::limits::WATCHES_PER_PLUGIN_TOKEN).await;
    let (code, _, v) =
        s.call(Method::GET, &url.replace(&s.url, ""), &[("authorization", &token)], None).await;
    assert_eq!((code, v["reason"].as_str()), (429, Some("TooManyRequests")), "{v}");
    assert_eq!(s.last_decision(), "denied:watch-limit");
    // Closing one gives its slot back.
    drop(open.pop());
    let (code, _watch) = until_not_429(|| async {
        let req = Request::get(&url).header("authorization", &token).body(Body::empty()).unwrap();
        let res = client.request(req).await.unwrap();
        (res.status().as_u16(), res)
    })
    .await;
    assert_eq!(code, 200);
}

/// A followed log streams as long as the pod writes, and a proxied call as long as its backend
/// does: each takes a slot as a watch does, so a user cannot hold more of them together than the
/// limit (the cluster is never asked for the one past it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followed_logs_and_proxied_calls_count_against_the_users_watches() {
    let s = start().await;
    let token = bearer(&s.user_token("alice"));
    let watch = format!("{}/clusters/{PROD}/apis/cert-manager.io/v1/certificates?watch=1", s.url);
    let (_, mut open) =
        open_watches(&watch, &token, fundament_kube_api_proxy::limits::WATCHES_PER_USER).await;
    let log = format!("/clusters/{PROD}/api/v1/namespaces/default/pods/web/log?follow=true");
    let proxied = format!("/clusters/{PROD}/api/v1/namespaces/default/services/http:web:8080/proxy/events");
    for path in [&log, &proxied] {
        let (code, _, v) = s.call_as(&token, Method::GET, path, None).await;
        assert_eq!((code, v["reason"].as_str()), (429, Some("TooManyRequests")), "{path}: {v}");
        assert!(v["message"].as_str().unwrap().contains("followed logs and proxied calls"), "{v}");
    }
    // An unfollowed log holds no slot; closing a watch frees one for the followed log.
    let (code, _, v) = s.call_as(&token, Method::GET, &log.replace("?follow=true", ""), None).await;
    assert_ne!(code, 429, "{v}");
    drop(open.pop());
    let (code, v) = until_not_429(|| async {
        let (code, _, v) = s.call_as(&token, Method::GET, &log, None).await;
        (code, v)
    })
    .await;
    assert_ne!(code, 429, "the cluster answers it: {v}");
    // A proxied call that has been answered gives its slot back: one after another, each is
    // forwarded (the embedded cluster answers a Service it has no backend for itself). Each is
    // allowed until_not_429's time for a slot to come back; one that never does still fails.
    drop(open.pop());
    for _ in 0..3 {
        let (code, v) = until_not_429(|| async {
            let (code, _, v) = s.call_as(&token, Method::GET, &proxied, None).await;
            (code, v)
        })
        .await;
        assert_ne!(code, 429, "the cluster answers it: {v}");
    }
}

/// Waits until `user` has `count` calls in flight at the gateway counting with `calls`, for at
/// most 5 s. A call held open counts once the gateway has verified its token, and an answered
/// one gives its slot back once the gateway has passed its answer on, which on a loaded machine
/// may both come after the client has moved on.
async fn until_in_flight(calls: &CallLimits, user: &str, count: usize) {
    until_counted(|| calls.in_flight(user), count, &format!("{user}'s calls in flight")).await;
}

/// Waits until the bytes of `user`'s request bodies the gateway has counted are `bytes`: a body
/// is counted once the gateway has read it (after its checks), so which body passes a bound is
/// never a race.
async fn until_body_bytes(calls: &CallLimits, user: &str, bytes: usize) {
    until_counted(|| calls.body_bytes(user), bytes, &format!("{user}'s body bytes held")).await;
}

/// Waits until `count` reads `expected` (bounded, so a count that never gets there fails).
async fn until_counted(count: impl Fn() -> usize, expected: usize, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while count() != expected && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(count(), expected, "{what}");
}

/// Calls in flight are bounded per PluginToken, per user's plugin pages and per user (here 1, 2
/// and 3 of them), each with a 429 Status that says which bound and how long to wait (the
/// plugin path's audited); another user has bounds of their own, and a slot comes back when
/// its call ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_are_bounded_per_plugin_token_plugin_pages_and_user_with_a_429() {
    let calls = CallLimits::new(3, 2, 1);
    let s = start_bounded(calls.clone(), fundament_kube_api_proxy::upstream::REQUEST_BODY_TIME).await;
    let certificates = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates");
    let configmaps = format!("/clusters/{PROD}/api/v1/namespaces/default/configmaps");
    let token = |_| bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let [t1, t2, t3]: [String; 3] = std::array::from_fn(token);
    let alice = bearer(&s.user_token("alice"));
    let get = |authorization: &str, path: &str| {
        let (authorization, path) = (authorization.to_owned(), path.to_owned());
        let s = &s;
        async move { s.call_as(&authorization, Method::GET, &path, None).await }
    };
    let refused = |(code, headers, v): (u16, http::HeaderMap, Value), bound: &str| {
        assert_eq!((code, v["reason"].as_str()), (429, Some("TooManyRequests")), "{v}");
        assert_eq!(v["details"]["retryAfterSeconds"], 1, "{v}");
        assert_eq!(headers.get(header::RETRY_AFTER).map(|h| h.as_bytes()), Some(&b"1"[..]));
        let message = common::message(&v);
        assert!(message.starts_with("too many calls in flight:") && message.contains(bound), "{message}");
    };

    let _t1_held = s.call_held_open(&t1, &certificates).await;
    until_in_flight(&calls, "alice", 1).await;
    refused(get(&t1, &certificates).await, "(the limit per PluginToken)");
    assert_eq!(s.last_decision(), "denied:call-limit");
    assert_eq!(get(&t2, &certificates).await.0, 200, "another token of the same page");
    until_in_flight(&calls, "alice", 1).await;
    let _t2_held = s.call_held_open(&t2, &certificates).await;
    until_in_flight(&calls, "alice", 2).await;
    refused(get(&t3, &certificates).await, "(the limit for all plugins together");
    // The console's share is left.
    assert_eq!(get(&alice, &configmaps).await.0, 200);
    until_in_flight(&calls, "alice", 2).await;
    let alice_held = s.call_held_open(&alice, &configmaps).await;
    until_in_flight(&calls, "alice", 3).await;
    refused(get(&alice, &configmaps).await, "user alice has 3 calls in flight");
    assert_ne!(get(&bearer(&s.user_token("bob")), &configmaps).await.0, 429, "bob's calls are his own");
    // The call ends (its body ends, the cluster answers it): its slot comes back.
    drop(alice_held);
    until_in_flight(&calls, "alice", 2).await;
    let (code, _, v) = get(&alice, &configmaps).await;
    assert_eq!(code, 200, "{v}");
}

/// A request body that trickles, each piece well within the idle time, is refused at its
/// deadline with kube-apiserver's 504 `Timeout`, and nothing of it reaches the cluster: the
/// ConfigMap it would have created is never there. A body that arrives in time is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_not_received_whole_in_time_is_refused_and_nothing_is_forwarded() {
    let deadline = std::time::Duration::from_millis(600);
    let s = start_bounded(CallLimits::default(), deadline).await;
    let alice = bearer(&s.user_token("alice"));
    let configmaps = format!("/clusters/{PROD}/api/v1/namespaces/default/configmaps");
    let configmap = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    let (code, _, v) = s.call_as(&alice, Method::POST, &configmaps, Some(configmap("in-time"))).await;
    assert_eq!(code, 201, "{v}");

    let whole = configmap("trickled").to_string().into_bytes();
    let (sender, body) = body_sent_in_pieces();
    let trickle = tokio::spawn(async move {
        // Nine pieces 150 ms apart: the last would come after the deadline.
        for piece in whole.chunks(whole.len() / 9 + 1) {
            if sender.send(Ok(bytes::Bytes::copy_from_slice(piece))).await.is_err() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        }
    });
    let req = Request::post(format!("{}{configmaps}", s.url))
        .header("authorization", &alice)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .unwrap();
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let started = std::time::Instant::now();
    let res = client.request(req).await.unwrap();
    let took = started.elapsed();
    assert_eq!(res.status(), 504);
    let v: Value = serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(v["reason"], "Timeout", "{v}");
    assert_eq!(
        common::message(&v),
        "Timeout: the request body was not received whole within 0.6 s; nothing was sent to the cluster"
    );
    assert!(took >= deadline && took < std::time::Duration::from_secs(5), "{took:?}");
    // Whatever the sender still sends goes nowhere.
    let _ = trickle.await;
    let (code, _, v) = s.call_as(&alice, Method::GET, &format!("{configmaps}/trickled"), None).await;
    assert_eq!(code, 404, "{v}");
}

/// The bytes of request bodies held at once are bounded per user and in all, and within those
/// for plugin pages: a body that would pass a bound is refused with a 429 before it is kept,
/// whoever's bodies hold the bytes, and the bytes come back when the calls holding them end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_body_bytes_held_at_once_are_bounded_per_user_and_in_all() {
    let calls = CallLimits::default().with_body_bytes(1_000, 1_500);
    let s = start_bounded(calls.clone(), fundament_kube_api_proxy::upstream::REQUEST_BODY_TIME).await;
    let configmaps = format!("/clusters/{PROD}/api/v1/namespaces/default/configmaps");
    let [alice, bob] = ["alice", "bob"].map(|user| bearer(&s.user_token(user)));
    let piece = |n: usize| bytes::Bytes::from(vec![b' '; n]);
    let answered = |answer: tokio::task::JoinHandle<(u16, Value)>| async move {
        tokio::time::timeout(std::time::Duration::from_secs(10), answer)
            .await
            .expect("answered in time")
            .unwrap()
    };
    let refused = |(code, v): (u16, Value), bound: &str| {
        assert_eq!((code, v["reason"].as_str()), (429, Some("TooManyRequests")), "{v}");
        assert_eq!(v["details"]["retryAfterSeconds"], 1, "{v}");
        let message = common::message(&v);
        assert!(
            message.starts_with("too many request bytes in flight:") && message.contains(bound),
            "{message}"
        );
    };

    let (alice_held, _) = s.post_begun(&alice, &configmaps, piece(600)).await;
    until_body_bytes(&calls, "alice", 600).await;
    // Alice's second body would make 1,200 bytes of hers: refused at once, her first still open.
    let (_second, answer) = s.post_begun(&alice, &configmaps, piece(600)).await;
    refused(answered(answer).await, "(1000 bytes)");
    let (_, answer) = s.post_begun(&alice, &configmaps, piece(600)).await;
    refused(answered(answer).await, "the limit per user");
    // Bob's bytes are his own; then the two hold 1,200 of all 1,500, and 350 more of alice's,
    // within her own bound, would pass the bound of all.
    let (bob_held, _) = s.post_begun(&bob, &configmaps, piece(600)).await;
    until_body_bytes(&calls, "bob", 600).await;
    let (_third, answer) = s.post_begun(&alice, &configmaps, piece(350)).await;
    refused(answered(answer).await, "the limit of this kube-api-proxy (1500 bytes)");
    // A GET holds no body bytes.
    let (code, _, v) = s.call_as(&alice, Method::GET, &configmaps, None).await;
    assert_eq!(code, 200, "{v}");
    // Alice's first call ends (its body ends; the cluster refuses what it says): its bytes come
    // back, and a body of 600 bytes and more of hers is served.
    drop(alice_held);
    until_in_flight(&calls, "alice", 0).await;
    until_body_bytes(&calls, "alice", 0).await;
    let data = json!({"a": "x".repeat(560)});
    let configmap =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}, "data": data});
    let (code, _, v) = s.call_as(&alice, Method::POST, &configmaps, Some(configmap)).await;
    assert_eq!(code, 201, "{v}");

    // Her plugin pages hold at most their share (750 of her 1,000 bytes), whichever tokens they
    // send with: a page past it is refused, and the console's saves for her still pass.
    drop(bob_held);
    until_body_bytes(&calls, "bob", 0).await;
    let certificates = format!("/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates");
    let page = |_| bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let [first_token, second_token]: [String; 2] = std::array::from_fn(page);
    let (_page_held, _) = s.post_begun(&first_token, &certificates, piece(700)).await;
    until_body_bytes(&calls, "alice", 700).await;
    let (_, answer) = s.post_begun(&second_token, &certificates, piece(100)).await;
    refused(answered(answer).await, "user alice's plugin pages hold 700 bytes");
    let saved = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "saved"}, "data": {"a": "x".repeat(200)}});
    let (code, _, v) = s.call_as(&alice, Method::POST, &configmaps, Some(saved)).await;
    assert_eq!(code, 201, "{v}");
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_path_runs_as_the_users_service_account() {
    let s = start().await;
    let alice = bearer(&s.user_token("alice"));
    let bob = bearer(&s.user_token("bob"));
    let ns = format!("/clusters/{PROD}/api/v1/namespaces");
    let (code, _, v) = s.call(Method::GET, &ns, &[("authorization", &alice)], None).await;
    assert_eq!(code, 200, "{v}");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-bob"}});
    let (code, _, v) = s
        .call(Method::POST, &format!("{ns}/default/configmaps"), &[("authorization", &bob)], Some(cm.clone()))
        .await;
    assert_eq!(code, 403, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("system:serviceaccount:fundament-system:fundament-bob"),
        "{v}"
    );
    let (code, _, _) = s
        .call(Method::POST, &format!("{ns}/default/configmaps"), &[("authorization", &alice)], Some(cm))
        .await;
    assert_eq!(code, 201);
    // A body past kube-apiserver's own 3 MiB limit is refused whole, as that server would.
    let huge = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"},
                      "data": {"x": "y".repeat(fundament_kube_api_proxy::upstream::MAX_REQUEST_BODY)}});
    let (code, _, v) = s
        .call(Method::POST, &format!("{ns}/default/configmaps"), &[("authorization", &alice)], Some(huge))
        .await;
    assert_eq!((code, v["reason"].as_str()), (413, Some("RequestEntityTooLarge")), "{v}");
    // Nobody views the restricted cluster.
    let (code, _, v) =
        s.call(Method::GET, &ns.replace(PROD, RESTRICTED), &[("authorization", &alice)], None).await;
    assert_eq!(code, 403, "{v}");
    // Path gates come first.
    let (code, _, _) = s.call(Method::GET, "/clusters/not-a-uuid/api/v1/namespaces", &[], None).await;
    assert_eq!(code, 400);
    let (code, _, _) = s.call(Method::GET, &format!("/clusters/{PROD}/metrics"), &[], None).await;
    assert_eq!(code, 404);
    // An origin that is not a plugin page's is refused outright.
    let (code, h, _) = s
        .call(Method::GET, &ns, &[("authorization", &alice), ("origin", "https://evil.example")], None)
        .await;
    assert_eq!(code, 403);
    assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_is_for_plugin_origins_without_credentials_only() {
    let s = start().await;
    let path = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let pre = |origin: &'static str| {
        vec![
            ("origin", origin),
            ("access-control-request-method", "GET"),
            ("access-control-request-headers", "authorization"),
        ]
    };
    let (code, h, _) = s.call(Method::OPTIONS, &path, &pre(CERT_MANAGER_ORIGIN), None).await;
    assert_eq!(code, 204);
    assert_eq!(h[header::ACCESS_CONTROL_ALLOW_ORIGIN], CERT_MANAGER_ORIGIN);
    assert!(h[header::ACCESS_CONTROL_ALLOW_HEADERS].to_str().unwrap().contains("Authorization"));
    assert!(h[header::ACCESS_CONTROL_ALLOW_METHODS].to_str().unwrap().contains("PATCH"));
    assert!(h.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
    // The console's browser code goes through the console; plugin-proxy's own host serves no page.
    for origin in [CONSOLE, PLUGINS, "https://evil.example", "null"] {
        let (code, h, _) = s.call(Method::OPTIONS, &path, &pre(origin), None).await;
        assert_eq!(code, 403, "{origin}");
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_id_case_can_view_and_replaced_installations() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    // A claim in upper case names the same cluster.
    let upper = s.plugin_token("alice", &PROD.to_uppercase(), "acme-corp--cert-manager", 900);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&upper))], None).await;
    assert_eq!(code, 200, "{v}");
    // Nobody may view the restricted cluster, whatever the token says.
    let restricted = s.plugin_token("bob", RESTRICTED, "acme-corp--cert-manager", 900);
    let (code, _, v) = s
        .call(Method::GET, &certs.replace(PROD, RESTRICTED), &[("authorization", &bearer(&restricted))], None)
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(s.last_decision(), "denied:can-view");
    // An installation deleted and created again is a different installation: refused as soon
    // as the cluster announces the change, although the token was just used (no cache lifetime
    // to wait out: the next call after the watch event is refused).
    let name = "acme-corp--cert-manager";
    let old = s.plugin_token("alice", PROD, name, 900);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&old))], None).await;
    assert_eq!(code, 200, "{v}");
    let obj = s.cluster.installation_object(name);
    let cluster = &s.cluster.running.cluster;
    let registry = cluster.registry();
    let rt = registry.get("plugins.fundament.io", "v1", "plugininstallations").unwrap();
    let system = fundament_cluster::authn::User::system();
    let opts = fundament_cluster::cluster::WriteOptions::SYSTEM;
    cluster.delete(&system, rt, "", name, &Value::Null, opts).unwrap();
    s.store_shows(name, None).await;
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&old))], None).await;
    assert_eq!(code, 403, "{v}");
    assert!(v["message"].as_str().unwrap().contains("not found"), "{v}");
    assert_eq!(s.last_decision(), "denied:installation");
    let mut again = obj.clone();
    for owned in ["uid", "resourceVersion", "creationTimestamp"] {
        again["metadata"].as_object_mut().unwrap().remove(owned);
    }
    again.as_object_mut().unwrap().remove("status");
    let created = cluster.create(&system, rt, "", again, opts).unwrap();
    s.store_shows(name, created["metadata"]["uid"].as_str()).await;
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&old))], None).await;
    assert_eq!(code, 403, "{v}");
    assert!(v["message"].as_str().unwrap().contains("was replaced"), "{v}");
    assert_eq!(s.last_decision(), "denied:installation");
    let fresh = s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&fresh))], None).await;
    assert_eq!(code, 200, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installation_being_deleted_admits_no_call() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let name = "acme-corp--cert-manager";
    let token = s.plugin_token("alice", PROD, name, 900);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&token))], None).await;
    assert_eq!(code, 200, "{v}");
    // A real plugin controller holds the installation with a finalizer while it takes the
    // plugin down: deleted, it stays, marked with a deletionTimestamp, Running until then.
    let cluster = &s.cluster.running.cluster;
    let registry = cluster.registry();
    let rt = registry.get("plugins.fundament.io", "v1", "plugininstallations").unwrap();
    let system = fundament_cluster::authn::User::system();
    let opts = fundament_cluster::cluster::WriteOptions::SYSTEM;
    let hold = fundament_cluster::patch::Patch::Merge(
        json!({"metadata": {"finalizers": ["plugins.fundament.io/teardown"]}}),
    );
    cluster.patch(&system, rt, "", name, &hold, false, opts).unwrap();
    cluster.delete(&system, rt, "", name, &Value::Null, opts).unwrap();
    s.store_holds(name, |found| found.is_some_and(|v| v["metadata"]["deletionTimestamp"].is_string())).await;
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&token))], None).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(v["message"], format!("plugin installation {name} is being deleted"), "{v}");
    assert_eq!(s.last_decision(), "denied:installation");
    // Nor does a token minted now: it names the same installation.
    let fresh = s.plugin_token("alice", PROD, name, 900);
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &bearer(&fresh))], None).await;
    assert_eq!(code, 403, "{v}");
}

/// can_view that cannot answer (OpenFGA down).
struct Broken;

impl fundament_fga::CanView for Broken {
    fn can_view<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<bool, fundament_fga::FgaError>> {
        Box::pin(async { Err(fundament_fga::FgaError::Transport("connection refused".into())) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswerable_can_view_is_a_503_naming_openfga_without_details_and_audited() {
    let s = start().await;
    let token = s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900);
    let audit = Arc::new(MemoryAudit::default());
    let gateway = Gateway {
        origins: origins(),
        credentials: Credentials::fixed(Verifier::from_jwks(&s.signer.jwks()).unwrap()),
        fga: Arc::new(Broken),
        fga_health: Default::default(),
        clusters: fundament_kube_api_proxy::clusters::Clusters::Fixed(HashMap::new()),
        definitions: Arc::new(PluginFolders::load()),
        audit: audit.clone(),
        watches: Default::default(),
        calls: Default::default(),
    };
    let url = serve(gateway).await;
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let req = Request::get(format!("{url}/clusters/{PROD}/apis/cert-manager.io/v1/certificates"))
        .header("authorization", bearer(&token))
        .body(Body::empty())
        .unwrap();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.status(), 503);
    let body = String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(!body.contains("connection refused"), "internal detail leaked: {body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["reason"].as_str(), common::message(&v)),
        (Some("ServiceUnavailable"), fundament_fga::UNAVAILABLE)
    );
    let line = audit.lines().last().cloned().unwrap();
    assert_eq!((line.decision.as_str(), line.status), ("error:can-view", 503));
}

/// The cluster going away while the gateway holds its connections and cached tokens: a 503
/// Status that names the cluster, at once, not a hang or a 502.
#[tokio::test]
async fn a_cluster_that_stopped_answers_503_naming_it_without_a_hang() {
    let s = start().await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let auth = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let (code, _, v) = s.call(Method::GET, &certs, &[("authorization", &auth)], None).await;
    assert_eq!(code, 200, "{v}");
    let user = bearer(&s.user_token("alice"));
    let namespaces = format!("/clusters/{PROD}/api/v1/namespaces");
    let (code, _, v) = s.call(Method::GET, &namespaces, &[("authorization", &user)], None).await;
    assert_eq!(code, 200, "{v}");
    let Stack { url, cluster, .. } = s;
    cluster.running.shutdown(std::time::Duration::from_secs(1)).await;
    let started = std::time::Instant::now();
    let (code, _, v) = common::request(&url, Method::GET, &certs, &[("authorization", &auth)], None).await;
    assert_eq!((code, v["reason"].as_str()), (503, Some("ServiceUnavailable")), "{v}");
    assert_eq!(common::message(&v), "the cluster cannot be reached; try again");
    // The user path too.
    let (code, _, v) =
        common::request(&url, Method::GET, &namespaces, &[("authorization", &user)], None).await;
    assert_eq!((code, common::message(&v)), (503, "the cluster cannot be reached; try again"), "{v}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "took {:?}", started.elapsed());
}

/// Waits until `switch`'s restart has ended by itself, for at most `within`. Polled rather than
/// one look after a fixed pause: on a loaded machine the switch's own timer may run late.
async fn until_restarted(switch: &fundament_dev_faults::Switch, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    while switch.fault() != fundament_dev_faults::Fault::None && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(switch.fault(), fundament_dev_faults::Fault::None, "the restart ended by itself");
}

/// Each of the cluster's development faults (down, restarting, slow, 500, 429) on the user and
/// the plugin path: a Status that names the cluster and what to do, within a bound, never a
/// hang; and serving again, through the same gateway, once the fault ends.
#[tokio::test]
async fn each_cluster_fault_answers_a_status_naming_the_cluster_and_ends_without_a_restart() {
    use fundament_dev_faults::{Fault, Service, Switch};
    let switch = Switch::new(Service::Cluster);
    let faults = switch.clone();
    let s = start_with(SeededCluster::start_configured(move |c| c.faults = Some(faults)).await).await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let plugin = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let user = bearer(&s.user_token("alice"));
    let namespaces = format!("/clusters/{PROD}/api/v1/namespaces");
    let both = [(certs.as_str(), plugin.as_str()), (namespaces.as_str(), user.as_str())];
    for (path, auth) in both {
        let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!(code, 200, "{path}: {v}");
    }

    switch.set(Fault::Status { status: 429 });
    for (path, auth) in both {
        let (code, headers, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!((code, v["reason"].as_str()), (429, Some("TooManyRequests")), "{path}: {v}");
        assert_eq!(headers.get("retry-after").map(|h| h.as_bytes()), Some(&b"1"[..]), "{path}");
        assert_eq!(v["details"]["retryAfterSeconds"], 1, "{path}: {v}");
    }
    // A server error keeps its code and reason; the cluster's own words (here the switch's
    // `curl` to undo it, in a real cluster a webhook's address or etcd's error) stay in the log.
    switch.set(Fault::Status { status: 500 });
    for (path, auth) in both {
        let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!((code, v["reason"].as_str()), (500, Some("InternalError")), "{path}: {v}");
        assert!(
            common::message(&v).starts_with("the cluster failed to handle the request (HTTP 500);"),
            "{path}: {v}"
        );
        assert!(!v.to_string().contains("curl"), "{path}: {v}");
    }

    switch.set(Fault::Down);
    for (path, auth) in both {
        let started = std::time::Instant::now();
        let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!(
            (code, common::message(&v)),
            (503, "the cluster cannot be reached; try again"),
            "{path}: {v}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{path} took {:?}", started.elapsed());
    }

    switch.set(Fault::Slow { delay_ms: 300 });
    for (path, auth) in both {
        let started = std::time::Instant::now();
        let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!(code, 200, "{path}: {v}");
        assert!(
            started.elapsed() >= std::time::Duration::from_millis(300),
            "{path}: {:?}",
            started.elapsed()
        );
    }

    // A restart: refused while it lasts, then served again by the same gateway. It lasts 4 s,
    // so that both calls fall inside it however slowly a loaded machine makes them.
    switch.set(Fault::Restarting { seconds: 4 });
    for (path, auth) in both {
        let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!(code, 503, "{path}: {v}");
    }
    until_restarted(&switch, std::time::Duration::from_secs(9)).await;
    for (path, auth) in both {
        let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
        assert_eq!(code, 200, "{path} after the restart: {v}");
    }
}

/// OpenFGA failing behind the gateway (the development switch in front of the seeded checker,
/// with a short timeout): on the user path, the plugin path and the cluster's info, each fault
/// answers a Status naming the authorization service, `503 ServiceUnavailable` when it is down,
/// restarting or failing and `504 Timeout` when it does not answer in time, the plugin path's
/// audited as `error:can-view`, never with the cause; a slow answer within the timeout is
/// served; and once the fault ends the same gateway serves again.
#[tokio::test]
async fn each_openfga_fault_answers_a_status_naming_it_and_ends_without_a_restart() {
    use fundament_dev_faults::{Fault, FaultyCanView, Service, Switch};
    use std::time::{Duration, Instant};
    let switch = Switch::new(Service::OpenFga);
    let timeout = Duration::from_millis(800);
    let fga = FaultyCanView::new(testing::fga(), switch.clone()).with_timeout(timeout);
    let s = start_checked_by(SeededCluster::start().await, Arc::new(fga)).await;
    let certs = format!("/clusters/{PROD}/apis/cert-manager.io/v1/certificates");
    let plugin = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    let user = bearer(&s.user_token("alice"));
    let namespaces = format!("/clusters/{PROD}/api/v1/namespaces");
    let info = format!("/clusters/{PROD}");
    let all = [
        (certs.as_str(), plugin.as_str()),
        (namespaces.as_str(), user.as_str()),
        (info.as_str(), user.as_str()),
    ];
    let serves = || async {
        for (path, auth) in all {
            let (code, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
            assert_eq!(code, 200, "{path}: {v}");
        }
    };
    // The answer to every path, and the plugin path's audit line (the only one audited).
    let answers = |code: u16, reason: &'static str, message: &'static str| {
        let s = &s;
        async move {
            for (path, auth) in all {
                let (got, _, v) = s.call(Method::GET, path, &[("authorization", auth)], None).await;
                assert_eq!(
                    (got, v["reason"].as_str(), common::message(&v)),
                    (code, Some(reason), message),
                    "{path}: {v}"
                );
                assert!(!v.to_string().contains("development fault switch"), "the cause was told: {v}");
            }
            let line = s.audit.lines().last().cloned().unwrap();
            assert_eq!((line.decision.as_str(), line.status), ("error:can-view", code));
        }
    };
    serves().await;

    for fault in [Fault::Down, Fault::Status { status: 500 }, Fault::Status { status: 429 }] {
        switch.set(fault);
        answers(503, "ServiceUnavailable", fundament_fga::UNAVAILABLE).await;
    }

    switch.set(Fault::Slow { delay_ms: 30_000 });
    let started = Instant::now();
    answers(504, "Timeout", fundament_fga::UNANSWERED).await;
    // Three paths, each bounded by the checker's timeout: no hang.
    assert!(started.elapsed() < timeout * 3 + Duration::from_secs(2), "{:?}", started.elapsed());
    switch.set(Fault::Slow { delay_ms: 200 });
    serves().await;

    // A restart: refused while it lasts, then served again by itself, by the same gateway. It
    // lasts 4 s, so that all three calls fall inside it however slowly a loaded machine makes
    // them.
    switch.set(Fault::Restarting { seconds: 4 });
    answers(503, "ServiceUnavailable", fundament_fga::UNAVAILABLE).await;
    until_restarted(&switch, Duration::from_secs(9)).await;
    serves().await;
}

/// Writes the cluster allows by the caller's own rights (RBAC's escalation check, a
/// certificate's signer) never go out as the plugin, and a PATCH whose type the gateway cannot
/// read as kube-apiserver does is refused before anything is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_judged_by_the_callers_own_rights_and_unreadable_patch_types_are_refused() {
    let s = start().await;
    let plugin = bearer(&s.plugin_token("bob", PROD, "acme-corp--cert-manager", 900));
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "mine", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "plugin-acme-corp--cert-manager-scope"},
        "subjects": [{"kind": "ServiceAccount", "name": "fundament-bob", "namespace": "fundament-system"}],
    });
    let bindings =
        format!("/clusters/{PROD}/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings");
    let (code, _, v) = s.call_as(&plugin, Method::POST, &bindings, Some(binding)).await;
    assert_eq!(code, 403, "{v}");
    assert!(v["message"].as_str().unwrap().contains("escalation"), "{v}");
    assert_eq!(s.last_decision(), "denied:escalation");
    let approval =
        format!("/clusters/{PROD}/apis/certificates.k8s.io/v1/certificatesigningrequests/c/approval");
    let (code, _, v) = s.call_as(&plugin, Method::PUT, &approval, Some(json!({}))).await;
    assert_eq!((code, s.last_decision().as_str()), (403, "denied:escalation"), "{v}");

    // An apply with a byte past ASCII in a parameter: kube-apiserver would read it as an apply.
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let certificate =
        format!("{}/clusters/{PROD}/apis/cert-manager.io/v1/namespaces/default/certificates/new", s.url);
    let alice = bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900));
    for (authorization, plugin_path) in [(alice, true), (bearer(&s.user_token("alice")), false)] {
        let lines = s.audit.lines().len();
        let req = Request::patch(&certificate)
            .header("authorization", &authorization)
            .header(
                header::CONTENT_TYPE,
                http::HeaderValue::from_bytes(b"application/apply-patch+yaml; x=\xff").unwrap(),
            )
            .body(Body::from("apiVersion: cert-manager.io/v1\nkind: Certificate\n"))
            .unwrap();
        let res = client.request(req).await.unwrap();
        assert_eq!(res.status(), 415);
        let body: Value =
            serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(body["reason"], "UnsupportedMediaType", "{body}");
        if plugin_path {
            // Refused by the gateway, not by the cluster behind it.
            assert_eq!(s.audit.lines().len(), lines + 1);
            assert_eq!(s.last_decision(), "denied:content-type");
        }
    }
}

/// Whether the stream ends (cleanly, as a watch whose timeout passed) within `wait`.
async fn ends_within<B: BodyExt + Unpin>(body: &mut B, wait: std::time::Duration) -> bool {
    let drained = async {
        while let Some(frame) = body.frame().await {
            if frame.is_err() {
                break;
            }
        }
    };
    tokio::time::timeout(wait, drained).await.is_ok()
}

/// A plugin page's open watch ends when the installation it was admitted for changes: its spec
/// (another version, other rights) or its existence. Its next watch is checked against what is
/// there now. Other changes of the cluster end nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_pages_open_watch_ends_when_its_installation_changes_or_goes() {
    let s = start().await;
    let name = "acme-corp--cert-manager";
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let watch = format!("{}/clusters/{PROD}/apis/cert-manager.io/v1/certificates?watch=1", s.url);
    let token = bearer(&s.plugin_token("alice", PROD, name, 900));
    let open = || {
        let (client, watch, token) = (client.clone(), watch.clone(), token.clone());
        async move {
            let req = Request::get(&watch).header("authorization", token).body(Body::empty()).unwrap();
            let res = client.request(req).await.unwrap();
            assert_eq!(res.status(), 200);
            res.into_body()
        }
    };
    let cluster = &s.cluster.running.cluster;
    let registry = cluster.registry();
    let rt = registry.get("plugins.fundament.io", "v1", "plugininstallations").unwrap();
    let system = fundament_cluster::authn::User::system();
    let opts = fundament_cluster::cluster::WriteOptions::SYSTEM;
    let second = std::time::Duration::from_secs(1);

    let mut watching = open().await;
    // Another installation's change ends nothing.
    let mut other = s.cluster.installation_object("acme-corp--demo");
    other["metadata"]["labels"]["e2e"] = Value::from("changed");
    let store = s.upstream.installation_store();
    let mut applied = store.changes();
    applied.mark_unchanged();
    cluster.update(&system, rt, "", "acme-corp--demo", other, false, opts).unwrap();
    let labelled = |_: &u64| match store.lookup("acme-corp--demo") {
        Lookup::Known(Some(found)) => found.object()["metadata"]["labels"]["e2e"] == "changed",
        _ => false,
    };
    assert!(
        tokio::time::timeout(10 * second, applied.wait_for(labelled)).await.is_ok(),
        "the store applied it"
    );
    assert!(!ends_within(&mut watching, 2 * second).await, "another installation's change ends nothing");
    // Its own spec changes (its configuration): the watch ends, and the next one is admitted.
    let mut changed = s.cluster.installation_object(name);
    changed["spec"]["config"] = serde_json::json!({"E2E": "changed"});
    cluster.update(&system, rt, "", name, changed, false, opts).unwrap();
    assert!(
        ends_within(&mut watching, 10 * second).await,
        "the watch ended when its installation's spec changed"
    );
    let mut watching = open().await;
    // Deleted: the watch ends, and a new one is refused.
    cluster.delete(&system, rt, "", name, &Value::Null, opts).unwrap();
    assert!(ends_within(&mut watching, 10 * second).await, "the watch ended when its installation went");
    s.store_shows(name, None).await;
    let req = Request::get(&watch).header("authorization", token.clone()).body(Body::empty()).unwrap();
    assert_eq!(client.request(req).await.unwrap().status(), 403);
}

/// A watch, once admitted, ends when its session is signed out: at once, not at its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_watch_ends_when_its_session_is_signed_out() {
    let s = start().await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let user = s.user_token("alice");
    let session = Verifier::from_jwks(&s.signer.jwks()).unwrap().verify_user(&user, now).unwrap().jti;
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let watch = format!("{}/clusters/{PROD}/apis/cert-manager.io/v1/certificates?watch=1", s.url);
    let open = |authorization: String| {
        let (client, watch) = (client.clone(), watch.clone());
        async move {
            let req =
                Request::get(&watch).header("authorization", authorization).body(Body::empty()).unwrap();
            let res = client.request(req).await.unwrap();
            assert_eq!(res.status(), 200);
            res.into_body()
        }
    };
    let mut plugin_watch = open(bearer(&s.plugin_token("alice", PROD, "acme-corp--cert-manager", 900))).await;
    let mut user_watch = open(bearer(&user)).await;
    let second = std::time::Duration::from_secs(1);
    // Another session's sign-out ends nothing.
    s.revoked.record("someone-else", now + 3600);
    assert!(!ends_within(&mut plugin_watch, second).await, "another session's sign-out ends nothing");
    s.revoked.record("session-1", now + 3600);
    assert!(ends_within(&mut plugin_watch, 5 * second).await, "the plugin page's watch ended");
    assert!(!ends_within(&mut user_watch, second).await, "the user's own session is still on");
    s.revoked.record(&session, now + 3600);
    assert!(ends_within(&mut user_watch, 5 * second).await, "the user's watch ended");
}
