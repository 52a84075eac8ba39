//! `authn.v1.AuthnService`, the JWKS, liveness and the Connect protocol edges.

mod harness;

use axum::body::Body;
use fundament_authn::AuthnConfig;
use fundament_tokens::USER_TOKEN_TTL_SECS;
use harness::*;
use http::{Request, StatusCode};
use serde_json::json;

const SIGN_IN: &str = "authn.v1.AuthnService/DevSignIn";
const USER_INFO: &str = "authn.v1.AuthnService/GetUserInfo";

#[tokio::test]
async fn dev_sign_in_answers_a_user_token_and_sets_the_cookie() {
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
    let cookie = reply.headers["set-cookie"].to_str().unwrap();
    assert_eq!(
        cookie,
        format!("fundament_auth={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={USER_TOKEN_TTL_SECS}")
    );
    assert!(!cookie.contains("Secure") && !cookie.contains("Domain"));
}

#[tokio::test]
async fn dev_sign_in_cookie_is_secure_with_a_domain_when_configured() {
    let config =
        AuthnConfig { secure_cookies: true, cookie_domain: Some("example.io".into()), ..mock_config() };
    let h = Harness::with(config, Fga::Seeded, Lookup::Seeded);
    let reply = h.call(SIGN_IN, None, json!({"email": "BOB@acme-corp.com"})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let cookie = reply.headers["set-cookie"].to_str().unwrap();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=28800", "Secure", "Domain=example.io"]
    {
        assert!(cookie.split("; ").any(|a| a == attribute), "{attribute} in {cookie}");
    }
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
    let h = Harness::with(AuthnConfig { mock: false, ..mock_config() }, Fga::Seeded, Lookup::Seeded);
    let reply = h.call(SIGN_IN, None, json!({"email": "alice@acme-corp.com"})).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (404, Some("unimplemented")));
    assert!(!reply.headers.contains_key("set-cookie"));
}

#[tokio::test]
async fn dev_sign_in_refuses_a_user_id_that_is_not_a_dns_label() {
    let mut config = mock_config();
    config.users[0].id = "Alice Smith".into();
    let h = Harness::with(config, Fga::Seeded, Lookup::Seeded);
    let reply = h.call(SIGN_IN, None, json!({"email": "alice@acme-corp.com"})).await;
    reply.assert_error(500, "internal", "internal error");
}

#[tokio::test]
async fn get_user_info_reads_the_bearer_token_or_the_cookie() {
    let h = Harness::new();
    let token = h.user_token("alice");
    let reply = h.call(USER_INFO, Some(&token), json!({})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body, json!({"id": "alice", "email": "alice@acme-corp.com", "name": "Someone"}));
    let request = Request::post(format!("/{USER_INFO}"))
        .header("content-type", "application/json")
        .header("cookie", format!("fundament_auth={token}"))
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(h.send(request).await.body["id"], "alice");
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
    let reply = h.call("authn.v1.AuthnService/SignOut", None, json!({})).await;
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
    assert!(response.to_ascii_lowercase().contains("set-cookie: fundament_auth="));
    server.abort();
}
