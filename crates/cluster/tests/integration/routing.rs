//! The cluster routes every request as kube-core's RequestInfo reads it (the
//! reading the gateway judges requests by), and reads `watch` as it does.

use fundament_cluster::path::{self, Route, RouteError};
use fundament_cluster::query::ListQuery;
use fundament_kube_core::request::decode_segment;
use fundament_kube_core::{Query, RequestInfo, RequestInfoError};
use http::Method;
use proptest::prelude::*;

const SEGMENTS: &[&str] = &[
    "api",
    "apis",
    "v1",
    "apps",
    "rbac.authorization.k8s.io",
    "namespaces",
    "n",
    "default",
    "status",
    "finalize",
    "proxy",
    "watch",
    "configmaps",
    "services",
    "serviceaccounts",
    "token",
    "s:8080",
    "x",
    "%2F",
    "%2f",
    "%63onfigmaps",
    "%6eamespaces",
    "..",
    ".",
    "%2e%2e",
    "",
    "a%20b",
    "%zz",
    "%ff",
    "%00",
    "version",
    "openapi",
    "v3",
];

const PAIRS: &[&str] = &[
    "watch",
    "watch=",
    "watch=1",
    "watch=0",
    "watch=false",
    "watch=FALSE",
    "watch=true",
    "wat%63h=1",
    "wat%63h=0",
    "%77atch=yes",
    "watch=1;x",
    "fieldSelector=metadata.name%3Dx",
    "fieldSelector=a%3Db",
    "limit=1",
    "%zz=1",
    "a+b=c",
];

const METHODS: &[Method] =
    &[Method::GET, Method::HEAD, Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::OPTIONS];

fn request() -> impl Strategy<Value = (Method, String, String)> {
    let method = proptest::sample::select(METHODS);
    let path = proptest::collection::vec(proptest::sample::select(SEGMENTS), 0..9)
        .prop_flat_map(|segments| (Just(segments), any::<bool>()))
        .prop_map(|(segments, slash)| {
            let mut p: String = segments.iter().map(|s| format!("/{s}")).collect();
            if slash || p.is_empty() {
                p.push('/');
            }
            p
        });
    let query = proptest::collection::vec(proptest::sample::select(PAIRS), 0..4).prop_map(|p| p.join("&"));
    (method, path, query)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn the_cluster_routes_as_request_info_reads((method, raw_path, raw_query) in request()) {
        let query = Query::parse(&raw_query);
        let info = RequestInfo::parse(&method, &raw_path, &query);
        let route = path::route(&method, &raw_path, &query);
        match info {
            Err(RequestInfoError::BadSegment) => prop_assert_eq!(route, Err(RouteError::BadSegment)),
            Err(RequestInfoError::NoResource) => prop_assert_eq!(route, Err(RouteError::NotFound)),
            Ok(info) if !info.is_resource_request => {
                prop_assert!(matches!(route, Ok(Route::NonResource(_))), "{:?}", route);
            }
            Ok(info) => {
                let legacy = info.segments[if info.api_prefix == "api" { 2 } else { 3 }].as_str();
                let proxy = info.subresource == "proxy";
                if matches!(legacy, "watch" | "proxy") || (info.parts.len() > 3 && !proxy) {
                    prop_assert_eq!(route, Err(RouteError::NotFound));
                    return Ok(());
                }
                // `/api/<v>/namespaces/<a>/namespaces[/<b>]` names no object: kube-apiserver
                // answers 404, and so does the cluster (`path.rs`; RBAC would read it in <a>).
                if info.group.is_empty()
                    && info.resource == "namespaces"
                    && info.segments.get(4).is_some_and(|s| s == "namespaces")
                {
                    prop_assert_eq!(route, Err(RouteError::NotFound));
                    return Ok(());
                }
                let Ok(Route::Resource(r)) = route else {
                    return Err(TestCaseError::fail(format!("{route:?} for {info:?}")));
                };
                prop_assert_eq!(&r.info, &info);
                let p = &r.path;
                prop_assert_eq!(
                    [&p.group, &p.version, &p.resource, &p.subresource],
                    [&info.group, &info.version, &info.resource, &info.subresource]
                );
                prop_assert_eq!(p.name.as_str(), info.parts.get(1).map_or("", String::as_str));
                if info.group.is_empty() && info.resource == "namespaces" {
                    prop_assert_eq!(p.namespace.as_str(), "");
                } else {
                    prop_assert_eq!(&p.namespace, &info.namespace);
                }
                if proxy {
                    let tail: Vec<String> = p.rest.split('/').filter(|s| !s.is_empty())
                        .map(|s| decode_segment(s).unwrap()).collect();
                    prop_assert_eq!(&tail[..], &info.parts[3..]);
                    prop_assert!(p.rest.starts_with('/'));
                } else {
                    prop_assert_eq!(p.rest.as_str(), "");
                }
                // The verb is the API server's: a collection GET watches exactly when the
                // first `watch` (keys decoded) is not 0 or false, and the ListQuery the
                // cluster serves the request with reads the same.
                let collection_get = matches!(method, Method::GET | Method::HEAD) && p.name.is_empty();
                if collection_get {
                    let first = query.pairs().iter().find(|(k, _)| k == "watch").map(|(_, v)| v.as_str());
                    let watch = first.is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
                    prop_assert_eq!(r.verb(), if watch { "watch" } else { "list" });
                    if let Ok(q) = ListQuery::parse(&query) {
                        prop_assert_eq!(q.watch, watch);
                    }
                }
                if method == Method::DELETE {
                    prop_assert_eq!(r.verb(), if p.name.is_empty() { "deletecollection" } else { "delete" });
                }
            }
        }
    }
}

fn route_verb(path: &str, query: &str) -> String {
    match path::route(&Method::GET, path, &Query::parse(query)) {
        Ok(Route::Resource(r)) => r.info.verb,
        other => panic!("{other:?}"),
    }
}

/// kube-core's RequestInfo and ListQuery and the cluster's router all read `query`
/// on a list of config maps as a watch (`watch`) or not.
fn assert_all_read_as_watch(query: &str, watch: bool) {
    let verb = if watch { "watch" } else { "list" };
    let parsed = Query::parse(query);
    let info = RequestInfo::parse(&Method::GET, "/api/v1/configmaps", &parsed).unwrap();
    assert_eq!(info.verb, verb);
    assert_eq!(route_verb("/api/v1/configmaps", query), verb);
    assert_eq!(ListQuery::parse(&parsed).unwrap().watch, watch);
}

#[test]
fn an_encoded_watch_key_is_a_watch_for_the_cluster_and_kube_core() {
    assert_all_read_as_watch("wat%63h=1", true);
}

#[test]
fn the_first_watch_counts_for_the_cluster_and_kube_core() {
    assert_all_read_as_watch("watch=false&watch=true", false);
}

use crate::common;

/// Over HTTPS: the served answer is a watch stream or a list exactly as kube-core reads the query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_answer_follows_the_same_reading_of_watch() {
    let (_tc, c) = common::admin_client().await;
    for (query, watch) in [
        ("wat%63h=1&timeoutSeconds=1", true),
        ("watch=false&watch=true&timeoutSeconds=1", false),
        ("watch=0&timeoutSeconds=1", false),
        ("watch&timeoutSeconds=1", true),
    ] {
        let info = RequestInfo::parse(&Method::GET, "/api/v1/namespaces", &Query::parse(query)).unwrap();
        assert_eq!(info.verb == "watch", watch, "{query}");
        let req = http::Request::get(format!("/api/v1/namespaces?{query}"))
            .body(kube::client::Body::empty())
            .unwrap();
        let res = c.send(req).await.unwrap();
        assert_eq!(res.status(), 200, "{query}");
        let bytes = res.into_body().collect_bytes().await.unwrap();
        let first_line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(first_line).unwrap();
        if watch {
            assert_eq!(v["type"], "ADDED", "{query}: {v}");
        } else {
            assert_eq!(v["kind"], "NamespaceList", "{query}: {v}");
        }
    }
}
