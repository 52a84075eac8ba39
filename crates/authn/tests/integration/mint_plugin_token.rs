//! `authn.v1.TokenService/MintPluginToken`: every gate, in order, and what each failure answers.

use crate::harness;

use fundament_tokens::{PLUGIN_AUDIENCE, Signer, TokenError};
use harness::*;
use http::StatusCode;
use serde_json::json;

#[tokio::test]
async fn mints_a_plugin_token_with_every_claim() {
    let h = Harness::new();
    let reply = h.mint(Some(&h.user_token("alice")), CLUSTER, INSTALLATION).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["tokenType"], "Bearer");
    assert_eq!(reply.body["expiresIn"], "900", "int64 is a string in Connect JSON");
    assert_eq!(reply.headers["cache-control"], "no-store");
    let token = reply.body["accessToken"].as_str().unwrap();
    assert_eq!(token.split('.').count(), 3);
    let claims = h.verifier().verify_plugin(token, Harness::now()).unwrap();
    assert_eq!(claims.sub, "alice");
    assert_eq!(claims.aud, vec![PLUGIN_AUDIENCE]);
    assert_eq!(claims.iss, "fundament-authn-api");
    assert_eq!(claims.exp - claims.iat, 900);
    assert_eq!(claims.cluster_id, CLUSTER);
    assert_eq!(claims.installation_id, INSTALLATION);
    assert_eq!(claims.installation_name, "acme-corp--test-plugin");
    assert_eq!(claims.plugin_name, "test-plugin");
    assert_eq!(claims.plugin_version, "v1.0.0");
    assert_eq!(claims.definition_hash, "sha256:0123");
    assert_eq!(claims.jti.len(), 32);
    assert_eq!(*h.fga.last.lock().unwrap(), Some(("alice".to_string(), CLUSTER.to_string())));
}

#[tokio::test]
async fn upper_case_ids_are_canonicalised_before_every_call() {
    let h = Harness::new();
    let reply =
        h.mint(Some(&h.user_token("bob")), &CLUSTER.to_uppercase(), &INSTALLATION.to_uppercase()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(*h.lookup.last.lock().unwrap(), Some((CLUSTER.to_string(), INSTALLATION.to_string())));
    let claims =
        h.verifier().verify_plugin(reply.body["accessToken"].as_str().unwrap(), Harness::now()).unwrap();
    assert_eq!((claims.cluster_id.as_str(), claims.sub.as_str()), (CLUSTER, "bob"));
}

#[tokio::test]
async fn accepts_proto_field_names_but_never_a_cookie() {
    let h = Harness::new();
    let body = json!({"cluster_id": CLUSTER, "installation_id": INSTALLATION}).to_string();
    let request = http::Request::post("/authn.v1.TokenService/MintPluginToken")
        .header("content-type", "application/json; charset=utf-8")
        .header("authorization", format!("Bearer {}", h.user_token("alice")))
        .body(axum::body::Body::from(body.clone()))
        .unwrap();
    let reply = h.send(request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    // The session cookie is nothing here: a page that makes the browser send it mints nothing.
    let token = h.user_token("alice");
    let request = http::Request::post("/authn.v1.TokenService/MintPluginToken")
        .header("content-type", "application/json")
        .header("cookie", format!("__Host-fundament_auth={token}; fundament_auth={token}"))
        .body(axum::body::Body::from(body))
        .unwrap();
    h.send(request).await.assert_error(401, "unauthenticated", "invalid user token");
}

#[tokio::test]
async fn plugin_tokens_carry_the_session() {
    let h = Harness::new();
    let user = h.user_token("alice");
    let session = h.verifier().verify_user(&user, Harness::now()).unwrap().jti;
    let reply = h.mint(Some(&user), CLUSTER, INSTALLATION).await;
    let claims =
        h.verifier().verify_plugin(reply.body["accessToken"].as_str().unwrap(), Harness::now()).unwrap();
    assert_eq!(claims.sid, session);
}

#[tokio::test]
async fn a_plugin_token_never_outlives_its_session() {
    let h = Harness::new();
    // A session with 60 s left: the sign-out's revocation is kept that long, no longer.
    let user = h.state.signer.read().unwrap().sign_user("alice", "a@b.c", "A", Harness::now() - 3540, 3600);
    let session = h.verifier().verify_user(&user, Harness::now()).unwrap();
    let reply = h.mint(Some(&user), CLUSTER, INSTALLATION).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let claims =
        h.verifier().verify_plugin(reply.body["accessToken"].as_str().unwrap(), Harness::now()).unwrap();
    assert_eq!(claims.exp, session.exp, "capped at the session's expiry, not now + 900");
    let expires_in: i64 = reply.body["expiresIn"].as_str().unwrap().parse().unwrap();
    assert!((58..=60).contains(&expires_in), "expiresIn {expires_in}");
}

#[tokio::test]
async fn frame_tickets_have_the_gates_of_plugin_tokens() {
    let h = Harness::new();
    let user = h.user_token("alice");
    let reply = h.mint_ticket(Some(&user), CLUSTER, INSTALLATION).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.headers["cache-control"], "no-store");
    assert_eq!(reply.body["expiresIn"], fundament_tokens::FRAME_TICKET_TTL_SECS.to_string());
    let claims =
        h.verifier().verify_frame_ticket(reply.body["ticket"].as_str().unwrap(), Harness::now()).unwrap();
    assert_eq!(
        (claims.sub.as_str(), claims.cluster_id.as_str(), claims.installation_id.as_str()),
        ("alice", CLUSTER, INSTALLATION)
    );
    assert_eq!(claims.installation_name, "acme-corp--test-plugin");
    assert_eq!(claims.sid, h.verifier().verify_user(&user, Harness::now()).unwrap().jti);
    // The same refusals as a mint.
    h.mint_ticket(None, CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    let plugin = h.plugin_token().await;
    h.mint_ticket(Some(&plugin), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    h.mint_ticket(Some(&h.user_token("mallory")), CLUSTER, INSTALLATION).await.assert_error(
        404,
        "not_found",
        "plugin installation not found",
    );
    // The mint fault switch is about PluginTokens only: frames still load.
    h.state.fail_mint_plugin_token.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(h.mint_ticket(Some(&user), CLUSTER, INSTALLATION).await.status, StatusCode::OK);
}

#[tokio::test]
async fn without_authorization_is_unauthenticated() {
    let h = Harness::new();
    h.mint(None, CLUSTER, INSTALLATION).await.assert_error(401, "unauthenticated", "invalid user token");
    assert_eq!((h.fga_calls(), h.lookup_calls()), (0, 0));
}

#[tokio::test]
async fn a_plugin_token_cannot_mint() {
    let h = Harness::new();
    let plugin = h.plugin_token().await;
    let calls = (h.fga_calls(), h.lookup_calls());
    h.mint(Some(&plugin), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    assert_eq!((h.fga_calls(), h.lookup_calls()), calls, "no authz or lookup for a plugin caller");
}

#[tokio::test]
async fn a_token_of_another_key_is_unauthenticated() {
    let h = Harness::new();
    let foreign = Signer::generate().sign_user("alice", "alice@acme-corp.com", "Alice", Harness::now(), 3600);
    h.mint(Some(&foreign), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
}

#[tokio::test]
async fn an_expired_token_is_unauthenticated() {
    let h = Harness::new();
    let expired =
        h.state.signer.read().unwrap().sign_user("alice", "a@b.c", "A", Harness::now() - 7200, 3600);
    h.mint(Some(&expired), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
}

#[tokio::test]
async fn a_garbage_token_is_unauthenticated() {
    let h = Harness::new();
    h.mint(Some("not.a.jwt"), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
}

#[tokio::test]
async fn malformed_uuids_are_invalid_arguments_before_any_call() {
    let h = Harness::new();
    let alice = h.user_token("alice");
    let reply = h.mint(Some(&alice), "not-a-uuid", INSTALLATION).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (400, Some("invalid_argument")));
    assert!(reply.body["message"].as_str().unwrap().contains("cluster_id"), "{}", reply.text);
    let reply = h.mint(Some(&alice), CLUSTER, "not-a-uuid").await;
    assert_eq!(reply.body["code"], "invalid_argument");
    assert!(reply.body["message"].as_str().unwrap().contains("installation_id"), "{}", reply.text);
    // Before authentication too: a malformed request is refused whoever sends it.
    assert_eq!(h.mint(None, "", "").await.body["code"], "invalid_argument");
    assert_eq!((h.fga_calls(), h.lookup_calls()), (0, 0));
}

#[tokio::test]
async fn a_cluster_the_user_cannot_view_is_not_found_without_a_lookup() {
    let h = Harness::new();
    let reply = h.mint(Some(&h.user_token("alice")), OTHER_CLUSTER, INSTALLATION).await;
    reply.assert_error(404, "not_found", "plugin installation not found");
    assert_eq!((h.fga_calls(), h.lookup_calls()), (1, 0));
    let reply = h.mint(Some(&h.user_token("mallory")), CLUSTER, INSTALLATION).await;
    reply.assert_error(404, "not_found", "plugin installation not found");
    assert_eq!(h.lookup_calls(), 0);
}

/// The last two gates (`can_view`, the installation lookup) when they fail: an installation the
/// cluster does not have and a cluster the lookup does not know are both `not_found`; a failing
/// lookup is `internal` and a failing authorization check `unavailable` naming the
/// authorization service, neither says why (their errors name an address), and a failing
/// authorization check stops before the lookup.
#[tokio::test]
async fn failing_gates_after_authentication() {
    const MISSING: &str = "00000000-0000-0000-0000-000000000099";
    const NOT_FOUND: (u16, &str, &str) = (404, "not_found", "plugin installation not found");
    const INTERNAL: (u16, &str, &str) = (500, "internal", "internal error");
    const UNAVAILABLE: (u16, &str, &str) = (503, "unavailable", fundament_fga::UNAVAILABLE);
    // (authorization double, lookup double, installation asked for, answer, lookups made)
    let cases = [
        (Fga::Seeded, Lookup::Seeded, MISSING, NOT_FOUND, 1),
        (Fga::Seeded, Lookup::UnknownCluster, INSTALLATION, NOT_FOUND, 1),
        (Fga::Seeded, Lookup::Fails, INSTALLATION, INTERNAL, 1),
        (Fga::Fails, Lookup::Seeded, INSTALLATION, UNAVAILABLE, 0),
    ];
    for (fga, lookup, installation, (status, code, message), lookups) in cases {
        let h = Harness::with(mock_config(), fga, lookup);
        let reply = h.mint(Some(&h.user_token("alice")), CLUSTER, installation).await;
        reply.assert_error(status, code, message);
        assert!(!reply.text.contains("10.0.0."), "{}", reply.text);
        assert_eq!(h.lookup_calls(), lookups, "{code}");
    }
}

#[tokio::test]
async fn the_minted_token_is_rejected_as_a_user_token() {
    let h = Harness::new();
    let plugin = h.plugin_token().await;
    let err = h.verifier().verify_user(&plugin, Harness::now()).unwrap_err();
    assert_eq!(err, TokenError::WrongAudience);
    assert!(err.to_string().contains("audience"));
    let reply = h.call("authn.v1.AuthnService/GetUserInfo", Some(&plugin), json!({})).await;
    reply.assert_error(401, "unauthenticated", "invalid user token");
}

#[tokio::test]
async fn works_with_the_embedded_tuple_store() {
    let h = Harness::new();
    let store = fundament_fga::TupleStore::from_tuples(vec![fundament_fga::Tuple {
        user: "user:alice".into(),
        relation: "viewer".into(),
        object: format!("cluster:{CLUSTER}"),
    }]);
    let state = std::sync::Arc::new(fundament_authn::AuthnState {
        signer: h.state.signer.clone(),
        fga: std::sync::Arc::new(store),
        fga_health: Default::default(),
        installations: h.lookup.clone(),
        revocations: std::sync::Arc::new(fundament_authn::Revocations::in_memory()),
        config: mock_config(),
        fail_mint_plugin_token: Default::default(),
        oidc: None,
        mint_budget: Default::default(),
    });
    let h = Harness { state, fga: h.fga, lookup: h.lookup };
    assert_eq!(h.mint(Some(&h.user_token("alice")), CLUSTER, INSTALLATION).await.status, StatusCode::OK);
    let reply = h.mint(Some(&h.user_token("bob")), CLUSTER, INSTALLATION).await;
    reply.assert_error(404, "not_found", "plugin installation not found");
}

#[tokio::test]
async fn logs_the_mint_once_without_the_token() {
    let h = Harness::new();
    let user = h.user_token("alice");
    let (captured, _guard) = log::Captured::start();
    let token = h.plugin_token().await;
    let lines = captured.lines();
    let minted: Vec<&String> = lines.iter().filter(|l| l.contains("plugin token minted")).collect();
    assert_eq!(minted.len(), 1, "{lines:?}");
    let line = minted[0];
    assert!(line.starts_with("INFO"), "{line}");
    for part in ["user=alice", CLUSTER, INSTALLATION, "acme-corp--test-plugin", "test-plugin", "v1.0.0"] {
        assert!(line.contains(part), "{part} in {line}");
    }
    for line in &lines {
        assert!(!line.contains(&token) && !line.contains(&user), "a token was logged: {line}");
    }
}

#[tokio::test]
async fn logs_internal_detail_once_and_only_in_the_log() {
    let h = Harness::with(mock_config(), Fga::Fails, Lookup::Seeded);
    let (captured, _guard) = log::Captured::start();
    let reply = h.mint(Some(&h.user_token("alice")), CLUSTER, INSTALLATION).await;
    assert!(!reply.text.contains("10.0.0.7"));
    let errors: Vec<String> = captured.lines().into_iter().filter(|l| l.starts_with("ERROR")).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("10.0.0.7"), "{}", errors[0]);
}

/// Tokens and tickets together are bounded per user, before any call to OpenFGA: a session
/// minting tickets as fast as it can (each one plugin-proxy keeps for a minute) is refused
/// past the burst, and another user is not.
#[tokio::test]
async fn a_users_mints_are_bounded_and_another_user_is_not_held_up() {
    let h = Harness::new();
    let flooder = h.user_token("alice");
    let (burst, per_second) = (fundament_authn::mint_budget::BURST, fundament_authn::mint_budget::PER_SECOND);
    // Mints until one is refused: the burst at least, and no more than the budget gave back
    // meanwhile (a loaded machine takes a while over hundreds of calls).
    let started = std::time::Instant::now();
    let mut granted = 0usize;
    let refused = loop {
        *h.fga.last.lock().unwrap() = None;
        let reply = if granted.is_multiple_of(2) {
            h.mint_ticket(Some(&flooder), CLUSTER, INSTALLATION).await
        } else {
            h.mint(Some(&flooder), CLUSTER, INSTALLATION).await
        };
        if reply.status == StatusCode::TOO_MANY_REQUESTS {
            break reply;
        }
        assert_eq!(reply.status, StatusCode::OK, "mint {granted}: {}", reply.text);
        granted += 1;
        assert!(granted < 100_000, "never refused");
    };
    let most = burst + per_second * started.elapsed().as_secs_f64() + 1.0;
    assert!(granted as f64 >= burst && (granted as f64) <= most, "{granted} granted, at most {most}");
    refused.assert_error(
        429,
        "resource_exhausted",
        "too many plugin tokens and frame tickets for this user at once; try again in a moment",
    );
    assert_eq!(*h.fga.last.lock().unwrap(), None, "refused before OpenFGA was asked");
    let reply = h.mint(Some(&h.user_token("bob")), CLUSTER, INSTALLATION).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}
