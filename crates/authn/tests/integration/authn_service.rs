//! `authn.v1.AuthnService`, the JWKS, liveness and the Connect protocol edges.

use crate::harness;

use axum::body::Body;
use fundament_authn::{AuthnConfig, User};
use fundament_tokens::USER_TOKEN_TTL_SECS;
use harness::*;
use http::{Request, StatusCode};
use serde_json::json;

const SIGN_IN: &str = "authn.v1.AuthnService/DevSignIn";
const USER_INFO: &str = "authn.v1.AuthnService/GetUserInfo";

#[tokio::test]
async fn dev_sign_in_answers_a_user_token_and_sets_no_cookie() {
    let h = Harness::new();
    let reply = h.call(SIGN_IN, None, json!({"email": "alice@acme-corp.com"})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["tokenType"], "Bearer");
    assert_eq!(reply.body["expiresIn"], USER_TOKEN_TTL_SECS.to_string());
    let token = reply.body["accessToken"].as_str().unwrap();
    let claims = h.verifier().verify_user(token, Harness::now()).unwrap();
    assert_eq!(
        (claims.sub.as_str(), claims.email.as_str(), claims.name.as_str()),
        ("alice", "alice@acme-corp.com", "Alice")
    );
    // The console keeps the session in a cookie of its own origin; authn sets none.
    assert!(!reply.headers.contains_key("set-cookie"));
    let reply = h.call(SIGN_IN, None, json!({"email": "BOB@acme-corp.com"})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}

/// A development endpoint request with these headers.
fn dev_request(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut request = Request::builder().method(method).uri(path).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn development_endpoints_refuse_browser_pages_and_rebound_host_names() {
    let h = Harness::new();
    let sign_in = json!({"email": "alice@acme-corp.com"}).to_string();
    let path = format!("/{SIGN_IN}");
    for host in ["localhost:8083", "127.0.0.1:8083", "[::1]:8083", "authn.internal", "LOCALHOST"] {
        let reply = h.send(dev_request("POST", &path, &[("host", host)], &sign_in)).await;
        assert_eq!(reply.status, StatusCode::OK, "{host}: {}", reply.text);
    }
    let refused = [
        vec![("host", "localhost:8083"), ("origin", "http://acme-corp--hostile.localhost:8082")],
        vec![("host", "localhost:8083"), ("origin", "http://localhost:3000")],
        vec![("host", "localhost:8083"), ("origin", "null")],
        vec![("host", "localhost:8083"), ("sec-fetch-site", "cross-site")],
        vec![("host", "localhost:8083"), ("sec-fetch-site", "same-origin")],
        // DNS rebinding: a page on evil.example, now resolving to 127.0.0.1, sends its own name.
        vec![("host", "evil.example:8083")],
        vec![("host", "localhost.evil.example")],
    ];
    for headers in &refused {
        let reply = h.send(dev_request("POST", &path, headers, &sign_in)).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{headers:?}: {}", reply.text);
        assert_eq!(reply.body["code"], "permission_denied");
        assert!(reply.body.get("accessToken").is_none());
        let get = h.send(dev_request("GET", "/dev/faults/mint-plugin-token", headers, "")).await;
        assert_eq!(get.status, StatusCode::FORBIDDEN, "{headers:?}");
        let put =
            h.send(dev_request("PUT", "/dev/faults/mint-plugin-token", headers, r#"{"fail":true}"#)).await;
        assert_eq!(put.status, StatusCode::FORBIDDEN, "{headers:?}");
    }
    assert!(!h.state.fail_mint_plugin_token.load(std::sync::atomic::Ordering::SeqCst));
    let ok = h
        .send(dev_request(
            "GET",
            "/dev/faults/mint-plugin-token",
            &[("host", "localhost"), ("sec-fetch-site", "none")],
            "",
        ))
        .await;
    assert_eq!(ok.status, StatusCode::OK, "a typed-in address (sec-fetch-site: none) is the developer");
}

#[tokio::test]
async fn sign_out_revokes_the_session_everywhere_authn_looks() {
    let h = Harness::new();
    let token = h.user_token("alice");
    let plugin = h.mint(Some(&token), CLUSTER, INSTALLATION).await;
    assert_eq!(plugin.status, StatusCode::OK);
    let mut events = h.state.revocations.subscribe();
    let reply = h.call("authn.v1.AuthnService/SignOut", Some(&token), json!({})).await;
    assert_eq!((reply.status, &reply.body), (StatusCode::OK, &json!({})), "{}", reply.text);
    let session = h.verifier().verify_user(&token, Harness::now()).unwrap();
    assert_eq!(events.recv().await.unwrap().sid, session.jti);
    // The copied token is dead at once, for every procedure.
    h.call(USER_INFO, Some(&token), json!({})).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    h.mint(Some(&token), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    h.mint_ticket(Some(&token), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    // Signing out twice is fine; signing out without a token is not.
    assert_eq!(h.call("authn.v1.AuthnService/SignOut", Some(&token), json!({})).await.status, StatusCode::OK);
    h.call("authn.v1.AuthnService/SignOut", None, json!({})).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    // Another session of the same user lives on.
    let other = h.user_token("alice");
    assert_eq!(h.call(USER_INFO, Some(&other), json!({})).await.status, StatusCode::OK);
}

#[tokio::test]
async fn revocations_stream_a_snapshot_then_each_sign_out() {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let h = Harness::new();
    let first = h.user_token("alice");
    h.call("authn.v1.AuthnService/SignOut", Some(&first), json!({})).await;
    let response = fundament_authn::router(h.state.clone())
        .oneshot(Request::get("/sessions/revocations").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let mut body = response.into_body();
    let next_line = async |body: &mut Body| {
        let frame = body.frame().await.unwrap().unwrap();
        serde_json::from_slice::<serde_json::Value>(frame.data_ref().unwrap()).unwrap()
    };
    let snapshot = next_line(&mut body).await;
    let sid = |t: &str| h.verifier().verify_user(t, Harness::now()).unwrap().jti;
    assert_eq!(snapshot["type"], "SNAPSHOT");
    assert_eq!(snapshot["revoked"][0]["sid"], sid(&first));
    let second = h.user_token("bob");
    h.call("authn.v1.AuthnService/SignOut", Some(&second), json!({})).await;
    let event = next_line(&mut body).await;
    assert_eq!(
        (event["type"].as_str(), event["sid"].as_str()),
        (Some("REVOKED"), Some(sid(&second).as_str()))
    );
}

#[tokio::test]
async fn dev_sign_in_refuses_unknown_and_missing_emails() {
    let h = Harness::new();
    h.call(SIGN_IN, None, json!({"email": "mallory@evil.example"})).await.assert_error(
        404,
        "not_found",
        "unknown user",
    );
    let reply = h.call(SIGN_IN, None, json!({})).await;
    assert_eq!(reply.body["code"], "invalid_argument");
}

#[tokio::test]
async fn dev_sign_in_does_not_exist_outside_mock_mode() {
    let h = Harness::with(
        AuthnConfig { dev_sign_in: false, fault_switches: false, ..mock_config() },
        Fga::Seeded,
        Lookup::Seeded,
    );
    let reply = h.call(SIGN_IN, None, json!({"email": "alice@acme-corp.com"})).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (404, Some("unimplemented")));
    assert!(!reply.headers.contains_key("set-cookie"));
}

/// A user id becomes part of a ServiceAccount name, so it must be a DNS-1123 label: a configured
/// user whose id is not one (capitals, a space, an email, a dash at an end, too long) is refused
/// at sign-in rather than given a token that every verifier would refuse.
#[tokio::test]
async fn dev_sign_in_refuses_a_user_id_that_is_not_a_dns_label() {
    let too_long = "a".repeat(64);
    let ids = [
        ("alice", true),
        ("user-2", true),
        ("", false),
        ("Alice", false),
        ("Alice Smith", false),
        ("alice@acme-corp.com", false),
        ("-a", false),
        ("a-", false),
        (too_long.as_str(), false),
    ];
    let email = |i: usize| format!("user{i}@acme-corp.com");
    let users = ids.iter().enumerate().map(|(i, (id, _))| User {
        id: id.to_string(),
        email: email(i),
        name: format!("User {i}"),
    });
    let h =
        Harness::with(AuthnConfig { users: users.collect(), ..mock_config() }, Fga::Seeded, Lookup::Seeded);
    for (i, (id, is_label)) in ids.into_iter().enumerate() {
        let reply = h.call(SIGN_IN, None, json!({"email": email(i)})).await;
        let expected = if is_label { StatusCode::OK } else { StatusCode::INTERNAL_SERVER_ERROR };
        assert_eq!(reply.status, expected, "{id}: {}", reply.text);
        if !is_label {
            reply.assert_error(500, "internal", "internal error");
        }
    }
}

#[tokio::test]
async fn get_user_info_reads_the_bearer_token_never_the_cookie() {
    let h = Harness::new();
    let token = h.user_token("alice");
    let reply = h.call(USER_INFO, Some(&token), json!({})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body, json!({"id": "alice", "email": "alice@acme-corp.com", "name": "Someone"}));
    let request = Request::post(format!("/{USER_INFO}"))
        .header("content-type", "application/json")
        .header("cookie", format!("fundament_auth={token}; __Host-fundament_auth={token}"))
        .body(Body::from("{}"))
        .unwrap();
    h.send(request).await.assert_error(401, "unauthenticated", "invalid user token");
}

#[tokio::test]
async fn get_user_info_refuses_missing_invalid_and_plugin_tokens() {
    let h = Harness::new();
    h.call(USER_INFO, None, json!({})).await.assert_error(401, "unauthenticated", "invalid user token");
    h.call(USER_INFO, Some("x.y.z"), json!({})).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    let plugin = h.plugin_token().await;
    h.call(USER_INFO, Some(&plugin), json!({})).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
}

#[tokio::test]
async fn sign_in_token_works_for_user_info_and_mint() {
    let h = Harness::new();
    let reply = h.call(SIGN_IN, None, json!({"email": "alice@acme-corp.com"})).await;
    let token = reply.body["accessToken"].as_str().unwrap().to_string();
    assert_eq!(h.call(USER_INFO, Some(&token), json!({})).await.body["name"], "Alice");
    assert_eq!(h.mint(Some(&token), CLUSTER, INSTALLATION).await.status, StatusCode::OK);
}

#[tokio::test]
async fn jwks_is_public_and_cacheable_and_follows_rotation() {
    let h = Harness::new();
    let get = || Request::get("/.well-known/jwks.json").body(Body::empty()).unwrap();
    let reply = h.send(get()).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.headers["cache-control"], "public, max-age=300");
    let key = &reply.body["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["crv"].as_str(), key["alg"].as_str()),
        (Some("OKP"), Some("Ed25519"), Some("EdDSA"))
    );
    assert!(key.get("d").is_none(), "never the private key");
    let plugin = h.plugin_token().await;
    h.state.signer.write().unwrap().rotate();
    let reply = h.send(get()).await;
    assert_eq!(reply.body["keys"].as_array().unwrap().len(), 2);
    let verifier = fundament_tokens::Verifier::from_jwks(&reply.body).unwrap();
    assert!(
        verifier.verify_plugin(&plugin, Harness::now()).is_ok(),
        "tokens of the previous key still verify"
    );
}

#[tokio::test]
async fn a_user_token_of_the_previous_key_still_authenticates_after_a_rotation() {
    let h = Harness::new();
    let token = h.user_token("alice");
    h.state.signer.write().unwrap().rotate();
    assert_eq!(h.call(USER_INFO, Some(&token), json!({})).await.status, StatusCode::OK);
    h.state.signer.write().unwrap().rotate();
    h.call(USER_INFO, Some(&token), json!({})).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
}

#[tokio::test]
async fn livez_is_ok() {
    let reply = Harness::new().send(Request::get("/livez").body(Body::empty()).unwrap()).await;
    assert_eq!((reply.status, reply.text.as_str()), (StatusCode::OK, "ok"));
}

#[tokio::test]
async fn readyz_is_ok_with_a_signing_key_and_plain_text() {
    let reply = Harness::new().send(Request::get("/readyz").body(Body::empty()).unwrap()).await;
    assert_eq!((reply.status, reply.text.as_str()), (StatusCode::OK, "ok"));
}

/// `/readyz?verbose`: the signing key gates; OpenFGA, as the mint's checks found it, does not.
#[tokio::test]
async fn readyz_verbose_shows_openfga_as_the_mint_found_it_without_gating() {
    async fn readyz(h: &Harness) -> Reply {
        h.send(Request::get("/readyz?verbose").body(Body::empty()).unwrap()).await
    }
    let h = Harness::new();
    let reply = readyz(&h).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (StatusCode::OK, "[+]signing-key ok\n[+]openfga ok: no call yet\nreadyz check passed\n")
    );
    h.plugin_token().await;
    let reply = readyz(&h).await;
    assert_eq!(reply.text, "[+]signing-key ok\n[+]openfga ok\nreadyz check passed\n");

    let failing = Harness::with(mock_config(), Fga::Fails, Lookup::Seeded);
    let reply = failing.mint(Some(&failing.user_token("alice")), CLUSTER, INSTALLATION).await;
    reply.assert_error(503, "unavailable", fundament_fga::UNAVAILABLE);
    let reply = readyz(&failing).await;
    assert_eq!(reply.status, StatusCode::OK, "OpenFGA does not gate: {}", reply.text);
    let line = reply.text.lines().nth(1).unwrap_or_default();
    assert!(
        line.starts_with("[-]openfga failed: unavailable since ") && line.ends_with("s (not gating)"),
        "{}",
        reply.text
    );
    assert!(!reply.text.contains("10.0.0.7"), "the cause was told: {}", reply.text);
    let plain = failing.send(Request::get("/readyz").body(Body::empty()).unwrap()).await;
    assert_eq!((plain.status, plain.text.as_str()), (StatusCode::OK, "ok"));
}

#[tokio::test]
async fn connect_protocol_edges() {
    let h = Harness::new();
    let post = |path: &str, content_type: &str, body: String| {
        Request::post(path).header("content-type", content_type).body(Body::from(body)).unwrap()
    };
    // Wrong content type.
    let reply = h.send(post(&format!("/{USER_INFO}"), "text/plain", "{}".into())).await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(reply.headers["accept-post"], "application/json");
    // Not POST.
    let reply = h.send(Request::get(format!("/{USER_INFO}")).body(Body::empty()).unwrap()).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(reply.headers["allow"], "POST");
    // Too large.
    let big = json!({"clusterId": "a".repeat(70 * 1024)}).to_string();
    let reply = h.send(post("/authn.v1.TokenService/MintPluginToken", "application/json", big)).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (413, Some("resource_exhausted")));
    // Not JSON.
    let reply = h.send(post(&format!("/{USER_INFO}"), "application/json", "{".into())).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (400, Some("invalid_argument")));
    // Unknown procedure.
    let reply = h.call("authn.v1.AuthnService/Impersonate", None, json!({})).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (404, Some("unimplemented")));
    assert_eq!(
        h.send(Request::get("/nope").body(Body::empty()).unwrap()).await.status,
        StatusCode::NOT_FOUND
    );
    // JWKS only answers GET (and HEAD).
    let reply = h.send(post("/.well-known/jwks.json", "application/json", "{}".into())).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn serves_over_a_real_socket() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let h = Harness::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(axum::serve(listener, fundament_authn::router(h.state.clone())).into_future());
    let body = json!({"email": "alice@acme-corp.com"}).to_string();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST /{SIGN_IN} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"accessToken\""), "{response}");
    assert!(!response.to_ascii_lowercase().contains("set-cookie"), "{response}");
    server.abort();
}
