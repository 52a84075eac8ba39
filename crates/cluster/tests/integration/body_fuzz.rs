//! Fuzz targets: request bodies as the cluster decodes them, in each media
//! type it reads (JSON, YAML, the protobuf kubectl sends): arbitrary bytes
//! and small mutations of valid bodies answer an object or a 400/415 Status,
//! never a panic; a YAML alias bomb is refused, not expanded.

use std::time::{Duration, Instant};

use fundament_cluster::api::decode_body;
use http::{HeaderMap, HeaderValue, header};
use proptest::prelude::*;

const MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "text/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json; charset=utf-8",
    "application/merge-patch+json",
    "",
];

fn headers(content_type: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if !content_type.is_empty() {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
    }
    headers
}

/// A length-delimited protobuf field (lengths under 128: one byte).
fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2, u8::try_from(bytes.len()).unwrap()];
    out.extend_from_slice(bytes);
    out
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
    [b"k8s\0".to_vec(), field(1, &type_meta), field(2, raw)].concat()
}

/// Bodies kubectl sends as protobuf: create configmap, create secret, can-i, create token, create namespace.
fn protobuf_bodies() -> Vec<Vec<u8>> {
    let attributes = [field(1, b"default"), field(2, b"create"), field(5, b"grants")].concat();
    let review = field(2, &field(1, &field(1, &attributes)));
    let token = field(2, &[field(1, &field(1, b"api")), vec![4 << 3, 0xd0, 0x0f]].concat());
    let namespace = field(2, &field(1, &field(1, b"team-a")));
    let entry = [field(1, b"key"), field(2, b"value")].concat();
    let config_map =
        [field(1, &field(1, b"web")), field(2, &entry), field(3, &entry), vec![4 << 3, 1]].concat();
    vec![
        envelope("v1", "ConfigMap", &config_map),
        envelope(
            "v1",
            "Secret",
            &[field(1, &field(1, b"s")), field(2, &entry), field(3, b"Opaque")].concat(),
        ),
        envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", &review),
        envelope("authentication.k8s.io/v1", "TokenRequest", &token),
        envelope("v1", "Namespace", &namespace),
    ]
}

const YAML: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  labels: {app: web}\ndata:\n  key: |\n    text\n  list: [1, 2.5, -3e9, ~, true]\n  anchor: &a {x: 1}\n  alias: *a\n";

fn check(content_type: &str, body: &[u8]) -> Result<(), TestCaseError> {
    match decode_body(&headers(content_type), body) {
        Ok(value) => prop_assert!(value.is_object(), "{content_type}: decoded to a non-object"),
        Err(status) => prop_assert!(
            matches!(status.code, 400 | 415),
            "{content_type}: answered {} ({})",
            status.code,
            status.message
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fundament_fuzzing::config(512))]

    #[test]
    fn arbitrary_bytes_in_any_media_type(which in 0..MEDIA_TYPES.len(), body in prop::collection::vec(any::<u8>(), 0..256)) {
        check(MEDIA_TYPES[which], &body)?;
    }

    #[test]
    fn mutated_protobuf_bodies(
        body in prop::sample::select(protobuf_bodies()).prop_flat_map(fundament_fuzzing::mutated),
    ) {
        check("application/vnd.kubernetes.protobuf", &body)?;
    }

    #[test]
    fn mutated_yaml_and_json_bodies(
        yaml in fundament_fuzzing::mutated(YAML.as_bytes().to_vec()),
        json in fundament_fuzzing::json().prop_map(|v| v.to_string().into_bytes()).prop_flat_map(fundament_fuzzing::mutated),
    ) {
        check("application/yaml", &yaml)?;
        check("application/json", &json)?;
    }
}

#[test]
fn the_valid_protobuf_bodies_decode() {
    for body in protobuf_bodies() {
        let value = decode_body(&headers("application/vnd.kubernetes.protobuf"), &body).unwrap();
        assert!(value["kind"].is_string(), "{value}");
    }
}

/// Nine levels of ten aliases each would expand to 10⁹ strings.
#[test]
fn a_yaml_alias_bomb_is_refused_quickly() {
    let mut yaml = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, next) in
        ["a", "b", "c", "d", "e", "f", "g", "h"].iter().zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let aliases = vec![format!("*{prev}"); 10].join(",");
        yaml.push_str(&format!("{next}: &{next} [{aliases}]\n"));
    }
    let started = Instant::now();
    let answer = decode_body(&headers("application/yaml"), yaml.as_bytes());
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    let status = answer.expect_err("an alias bomb must not decode");
    assert_eq!(status.code, 400, "{}", status.message);
}

/// One anchor of 25,000 values named 16,000 times: 4×10⁸ values from 100 KB, a shape serde_yaml's
/// own guard (which counts alias jumps, not what each replays) lets through.
#[test]
fn a_wide_yaml_alias_bomb_is_refused_quickly() {
    let yaml = format!("a: &a [{}]\nb: [{}]\n", "0,".repeat(25_000), "*a,".repeat(16_000));
    let started = Instant::now();
    let status = decode_body(&headers("application/yaml"), yaml.as_bytes()).expect_err("must not decode");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert_eq!(status.code, 400, "{}", status.message);
    assert!(status.message.contains("aliases"), "{}", status.message);
}

/// Nesting deeper than the decoders' recursion limit is a 400 at once: no stack overflow,
/// and no scan of the YAML first (libyaml's is quadratic in the depth of flow collections:
/// these bodies took 48 s before the depth check). Each takes a few milliseconds alone; the
/// bound is 5 s because CI runs several test binaries at once on 2 cores (one took 533 ms
/// there), and still fails the quadratic scan by a factor of ten.
#[test]
fn deep_nesting_is_refused_quickly() {
    let depth = 100_000;
    let bodies = [
        ("application/json", format!("{{\"a\":{}{}}}", "[".repeat(depth), "]".repeat(depth))),
        ("application/yaml", format!("a: {}{}", "[".repeat(depth), "]".repeat(depth))),
        ("application/yaml", format!("{}x{}", "{a: ".repeat(depth), "}".repeat(depth))),
        ("application/yaml", "- ".repeat(depth)),
    ];
    for (content_type, body) in bodies {
        let started = Instant::now();
        let status = decode_body(&headers(content_type), body.as_bytes()).expect_err(content_type);
        assert_eq!(status.code, 400, "{content_type}: {}", status.message);
        assert!(started.elapsed() < Duration::from_secs(5), "{content_type}: took {:?}", started.elapsed());
    }
    // At the limit, a document still decodes.
    let nested = format!("a: {}1{}", "[".repeat(100), "]".repeat(100));
    assert!(decode_body(&headers("application/yaml"), nested.as_bytes()).is_ok());
}
