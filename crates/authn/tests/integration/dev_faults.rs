//! Mock mode's development fault switch `/dev/faults/mint-plugin-token`: what it answers, what
//! `MintPluginToken` answers while it is on, and that it does not exist outside mock mode.

use crate::harness;

use axum::body::Body;
use fundament_authn::AuthnConfig;
use harness::*;
use http::{Request, StatusCode};
use serde_json::json;

const SWITCH: &str = "/dev/faults/mint-plugin-token";
const SWITCHED_OFF: &str = "plugin token minting is switched off by the development fault switch (PUT /dev/faults/mint-plugin-token)";
const SIGN_IN: &str = "authn.v1.AuthnService/DevSignIn";
const BAD_BODY: &str = "expected a JSON body {\"fail\": true} or {\"fail\": false}\n";

impl Harness {
    async fn put_switch(&self, body: &str) -> Reply {
        let request = Request::put(SWITCH)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        self.send(request).await
    }

    async fn get_switch(&self) -> Reply {
        self.send(Request::get(SWITCH).body(Body::empty()).unwrap()).await
    }

    async fn mint_as_alice(&self) -> Reply {
        self.mint(Some(&self.user_token("alice")), CLUSTER, INSTALLATION).await
    }
}

#[tokio::test]
async fn the_switch_is_off_by_default() {
    let h = Harness::new();
    let reply = h.get_switch().await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body, json!({"fail": false}));
    assert_eq!(h.mint_as_alice().await.status, StatusCode::OK);
}

#[tokio::test]
async fn switched_on_the_mint_is_unavailable_before_authz_and_lookup() {
    let h = Harness::new();
    let reply = h.put_switch(r#"{"fail": true}"#).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{}", reply.text);
    assert!(reply.text.is_empty());
    let reply = h.mint_as_alice().await;
    reply.assert_error(503, "unavailable", SWITCHED_OFF);
    assert_eq!(reply.headers["content-type"], "application/json");
    assert_eq!((h.fga_calls(), h.lookup_calls()), (0, 0));
}

#[tokio::test]
async fn switched_off_again_it_mints_again() {
    let h = Harness::new();
    assert_eq!(h.put_switch(r#"{"fail": true}"#).await.status, StatusCode::NO_CONTENT);
    assert_eq!(h.mint_as_alice().await.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(h.put_switch(r#"{"fail": false}"#).await.status, StatusCode::NO_CONTENT);
    let reply = h.mint_as_alice().await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    h.verifier().verify_plugin(reply.body["accessToken"].as_str().unwrap(), Harness::now()).unwrap();
}

#[tokio::test]
async fn get_reflects_the_switch() {
    let h = Harness::new();
    for fail in [true, true, false, true, false] {
        assert_eq!(h.put_switch(&json!({"fail": fail}).to_string()).await.status, StatusCode::NO_CONTENT);
        assert_eq!(h.get_switch().await.body, json!({"fail": fail}));
    }
}

#[tokio::test]
async fn a_bad_body_is_400_with_a_plain_message_and_changes_nothing() {
    let h = Harness::new();
    h.put_switch(r#"{"fail": true}"#).await;
    for body in [
        "",
        "{}",
        "true",
        "not json",
        r#"{"fail": "false"}"#,
        r#"{"fail": 0}"#,
        r#"{"fails": false}"#,
        r#"{"fail": false, "x": 1}"#,
    ] {
        let reply = h.put_switch(body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
        assert!(reply.headers["content-type"].to_str().unwrap().starts_with("text/plain"), "{body}");
        assert_eq!(reply.text, BAD_BODY, "{body}");
    }
    assert_eq!(h.get_switch().await.body, json!({"fail": true}));
}

#[tokio::test]
async fn an_unauthenticated_or_malformed_mint_answers_as_without_the_switch() {
    let h = Harness::new();
    h.put_switch(r#"{"fail": true}"#).await;
    h.mint(None, CLUSTER, INSTALLATION).await.assert_error(401, "unauthenticated", "invalid user token");
    h.mint(Some("not.a.jwt"), CLUSTER, INSTALLATION).await.assert_error(
        401,
        "unauthenticated",
        "invalid user token",
    );
    let reply = h.mint(Some(&h.user_token("alice")), "not-a-uuid", INSTALLATION).await;
    assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (400, Some("invalid_argument")));
}

#[tokio::test]
async fn the_switch_does_not_exist_outside_mock_mode() {
    // `fundament dev --mode sandbox|real` without an identity provider: the seed users sign in,
    // but the fault switches stay mock mode's.
    let h =
        Harness::with(AuthnConfig { fault_switches: false, ..mock_config() }, Fga::Seeded, Lookup::Seeded);
    for reply in [h.get_switch().await, h.put_switch(r#"{"fail": true}"#).await] {
        assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (404, Some("unimplemented")));
    }
    let signed_in = h.call(SIGN_IN, None, json!({"email": "alice@acme-corp.com"})).await;
    assert_eq!(signed_in.status, StatusCode::OK, "DevSignIn still works: {}", signed_in.text);
    // A second wall: even set directly on the state, the flag is ignored outside mock mode.
    h.state.fail_mint_plugin_token.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(h.mint_as_alice().await.status, StatusCode::OK);
}

#[tokio::test]
async fn logs_one_info_line_per_flip_and_none_for_a_repeat() {
    let h = Harness::new();
    let (captured, _guard) = log::Captured::start();
    h.put_switch(r#"{"fail": true}"#).await;
    h.put_switch(r#"{"fail": true}"#).await;
    h.put_switch(r#"{"fail": false}"#).await;
    let flips: Vec<String> =
        captured.lines().into_iter().filter(|l| l.contains("development fault switch flipped")).collect();
    assert_eq!(flips.len(), 2, "{flips:?}");
    assert!(flips.iter().all(|l| l.starts_with("INFO") && l.contains(SWITCH)), "{flips:?}");
    assert!(flips[0].contains("fail=true") && flips[1].contains("fail=false"), "{flips:?}");
}

const ROTATE: &str = "/dev/faults/rotate-signing-key";

impl Harness {
    async fn rotate(&self) -> Reply {
        self.send(Request::post(ROTATE).body(Body::empty()).unwrap()).await
    }

    async fn jwks_kids(&self) -> Vec<String> {
        let reply = self.send(Request::get("/.well-known/jwks.json").body(Body::empty()).unwrap()).await;
        reply.body["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
    }
}

#[tokio::test]
async fn a_rotation_signs_with_a_new_key_and_keeps_the_previous_one_published() {
    let h = Harness::new();
    let before = h.jwks_kids().await;
    let old_session = h.user_token("alice");
    let reply = h.rotate().await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let kid = reply.body["kid"].as_str().unwrap().to_owned();
    assert!(!before.contains(&kid), "a new key: {kid} in {before:?}");
    let published = h.jwks_kids().await;
    assert_eq!(reply.body["published"], json!(published));
    assert_eq!(published, vec![kid.clone(), before[0].clone()], "the new key first, the previous one kept");
    // A session signed before the rotation still mints; what it mints carries the new key.
    let minted = h.mint(Some(&old_session), CLUSTER, INSTALLATION).await;
    assert_eq!(minted.status, StatusCode::OK, "{}", minted.text);
    let token = minted.body["accessToken"].as_str().unwrap();
    assert_eq!(fundament_tokens::peek_kid(token).as_deref(), Some(kid.as_str()));
    h.verifier().verify_plugin(token, Harness::now()).unwrap();
    h.verifier().verify_user(&old_session, Harness::now()).unwrap();
    // A second rotation drops the first key, as every rotation drops the one before last.
    let again = h.rotate().await;
    assert_eq!(h.jwks_kids().await, vec![again.body["kid"].as_str().unwrap().to_owned(), kid]);
}

#[tokio::test]
async fn the_rotation_is_for_local_tools_in_mock_mode_only() {
    for config in [
        AuthnConfig { fault_switches: false, ..mock_config() },
        AuthnConfig { dev_sign_in: false, fault_switches: false, ..mock_config() },
    ] {
        let h = Harness::with(config, Fga::Seeded, Lookup::Seeded);
        let reply = h.rotate().await;
        assert_eq!((reply.status.as_u16(), reply.body["code"].as_str()), (404, Some("unimplemented")));
        assert_eq!(h.jwks_kids().await.len(), 1, "nothing rotated");
    }
    let h = Harness::new();
    let from_a_page =
        Request::post(ROTATE).header("origin", "http://localhost:3000").body(Body::empty()).unwrap();
    assert_eq!(h.send(from_a_page).await.status, StatusCode::FORBIDDEN);
    assert_eq!(h.jwks_kids().await.len(), 1, "nothing rotated");
}
