//! Fuzz target: authn's Connect procedures with arbitrary bodies, content
//! types, methods and bearer tokens. Every answer is a Connect answer (200,
//! or an error JSON with a code and a 4xx status): never a panic, never a 500.

use crate::harness;

use axum::body::Body;
use harness::*;
use http::Request;
use proptest::prelude::*;
use serde_json::{Value, json};

const PROCEDURES: &[&str] = &[
    "authn.v1.AuthnService/DevSignIn",
    "authn.v1.AuthnService/GetUserInfo",
    "authn.v1.AuthnService/SignOut",
    "authn.v1.TokenService/MintPluginToken",
    "authn.v1.TokenService/MintFrameTicket",
    "authn.v1.OidcService/StartSignIn",
    "authn.v1.Nope/Nothing",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "text/plain",
    "application/proto",
    "",
];

const CODES: &[&str] = &[
    "invalid_argument",
    "unauthenticated",
    "permission_denied",
    "not_found",
    "unimplemented",
    "unavailable",
    "resource_exhausted",
    "failed_precondition",
];

#[derive(Debug, Clone)]
enum Bearer {
    None,
    Alice,
    Arbitrary(String),
    /// Alice's token with a few bytes changed.
    Mutated,
}

#[derive(Debug, Clone)]
enum Payload {
    Json(Value),
    Bytes(Vec<u8>),
    /// A valid request body with a few bytes changed.
    Mutated(Vec<u8>),
}

fn valid_body() -> Vec<u8> {
    json!({"clusterId": CLUSTER, "installationId": INSTALLATION, "email": "alice@acme-corp.com"})
        .to_string()
        .into_bytes()
}

fn payload() -> impl Strategy<Value = Payload> {
    prop_oneof![
        fundament_fuzzing::json().prop_map(Payload::Json),
        prop::collection::vec(any::<u8>(), 0..128).prop_map(Payload::Bytes),
        fundament_fuzzing::mutated(valid_body()).prop_map(Payload::Mutated),
    ]
}

fn bearer() -> impl Strategy<Value = Bearer> {
    prop_oneof![
        Just(Bearer::None),
        Just(Bearer::Alice),
        "[ -~]{0,80}".prop_map(Bearer::Arbitrary),
        Just(Bearer::Mutated),
    ]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

proptest! {
    #![proptest_config(fundament_fuzzing::config(256))]

    #[test]
    fn every_answer_is_a_connect_answer(
        procedure in prop::sample::select(PROCEDURES),
        content_type in prop::sample::select(CONTENT_TYPES),
        post in prop::bool::weighted(0.9),
        body in payload(),
        bearer in bearer(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let harness = Harness::new();
        let token = match bearer {
            Bearer::None => None,
            Bearer::Alice => Some(harness.user_token("alice")),
            Bearer::Arbitrary(text) => Some(text),
            Bearer::Mutated => {
                // A near-valid token: a signed one with printable bytes changed.
                let mut bytes = harness.user_token("alice").into_bytes();
                for (at, b) in &flips {
                    let at = at.index(bytes.len());
                    bytes[at] = 0x21 + b % 0x5e;
                }
                Some(String::from_utf8(bytes).unwrap())
            }
        };
        let bytes = match body {
            Payload::Json(value) => value.to_string().into_bytes(),
            Payload::Bytes(bytes) | Payload::Mutated(bytes) => bytes,
        };
        let mut request = Request::builder().method(if post { "POST" } else { "GET" }).uri(format!("/{procedure}"));
        if !content_type.is_empty() {
            request = request.header("content-type", content_type);
        }
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let reply = runtime().block_on(harness.send(request.body(Body::from(bytes)).unwrap()));
        let status = reply.status.as_u16();
        prop_assert!(status == 200 || (400..500).contains(&status) || status == 503, "{status}: {}", reply.text);
        if status != 200 {
            let code = reply.body["code"].as_str().unwrap_or_default();
            prop_assert!(CODES.contains(&code), "{status} with code {code:?}: {}", reply.text);
            prop_assert!(reply.body["message"].is_string(), "no message: {}", reply.text);
        }
    }
}
