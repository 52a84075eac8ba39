//! The generated views' server functions (`api.rs`) against a fake kube-api-proxy: where a
//! user may create, and which namespaces a page under a project may open, whatever the request
//! names.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use leptos::prelude::{Owner, provide_context};
use serde_json::{Value, json};

use super::Existing;
use super::ssr::{delete_object, form_setup, get_object};
use crate::error::AppError;

pub(crate) const CLUSTER: &str = "019b4000-2000-7000-8000-000000000001";
pub(crate) const CRD: &str = "demoitems.demo.fundament.io";
/// The cluster's namespaces, and those of project `analytics` (labelled with it).
const NAMESPACES: [&str; 3] = ["analytics", "default", "staging"];
const ANALYTICS: [&str; 1] = ["analytics"];

struct EveryCluster;

impl fundament_fga::CanView for EveryCluster {
    fn can_view<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<bool, fundament_fga::FgaError>> {
        Box::pin(async { Ok(true) })
    }
}

/// A kube-api-proxy for bob, who may create DemoItems in `staging` only (and read
/// everything): it keeps every request it gets as `<METHOD> <path>` (and ` (dry run)`).
/// A DemoItem whose message is `refuse` is refused at that field; an update of another
/// resourceVersion than the object's (`5`) conflicts.
#[derive(Default)]
pub(crate) struct Gateway {
    pub(crate) requests: Mutex<Vec<String>>,
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {"group": "demo.fundament.io", "scope": "Namespaced",
            "names": {"kind": "DemoItem", "plural": "demoitems", "singular": "demoitem"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {"message": {"type": "string"}}}}
            }}}]}
    })
}

async fn answer(
    State(gateway): State<Arc<Gateway>>,
    method: http::Method,
    uri: http::Uri,
    body: axum::body::Bytes,
) -> (http::StatusCode, axum::Json<Value>) {
    let path = uri.path().strip_prefix(&format!("/clusters/{CLUSTER}")).unwrap_or_default().to_owned();
    let dry_run = if uri.query().is_some_and(|q| q.contains("dryRun")) { " (dry run)" } else { "" };
    gateway.requests.lock().unwrap().push(format!("{method} {path}{dry_run}"));
    let names = |names: &[&str]| json!({"items": names.iter().map(|n| json!({"metadata": {"name": n}})).collect::<Vec<_>>()});
    let ok = |v: Value| (http::StatusCode::OK, axum::Json(v));
    match (method.as_str(), path.as_str()) {
        ("GET", p) if p.ends_with(CRD) => ok(crd()),
        ("GET", "/api/v1/namespaces") => match uri.query() {
            Some(q) if q.contains("analytics") => ok(names(&ANALYTICS)),
            _ => ok(names(&NAMESPACES)),
        },
        ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") => {
            let review: Value = serde_json::from_slice(&body).unwrap();
            let attributes = &review["spec"]["resourceAttributes"];
            let allowed = ["get", "list", "watch"].contains(&attributes["verb"].as_str().unwrap())
                || (attributes["verb"] == "create" && attributes["namespace"] == "staging");
            (http::StatusCode::CREATED, axum::Json(json!({"status": {"allowed": allowed}})))
        }
        ("GET", p) if p.starts_with("/apis/demo.fundament.io/v1/namespaces/") => {
            let mut parts = p.split('/').skip(5);
            let (ns, name) = (parts.next().unwrap(), parts.nth(1).unwrap());
            ok(json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
                "metadata": {"name": name, "namespace": ns, "resourceVersion": "5"}, "spec": {"message": "hi"}}))
        }
        ("GET", p) if p.starts_with("/api/v1/namespaces/") => ok(json!({"items": []})),
        ("POST" | "PUT", p) if p.starts_with("/apis/demo.fundament.io/v1/namespaces/") => {
            let object: Value = serde_json::from_slice(&body).unwrap();
            if object["spec"]["message"] == "refuse" {
                let status = json!({"kind": "Status", "code": 422, "reason": "Invalid",
                    "message": "DemoItem is invalid: spec.message: Invalid value: \"refuse\": not this one",
                    "details": {"causes": [{"field": "spec.message", "message": "Invalid value: \"refuse\": not this one"}]}});
                return (http::StatusCode::UNPROCESSABLE_ENTITY, axum::Json(status));
            }
            if method == http::Method::PUT && object["metadata"]["resourceVersion"] != "5" {
                return (
                    http::StatusCode::CONFLICT,
                    axum::Json(json!({"kind": "Status", "code": 409, "reason": "Conflict"})),
                );
            }
            (http::StatusCode::CREATED, axum::Json(object))
        }
        ("DELETE", _) => ok(json!({"kind": "Status", "status": "Success"})),
        _ => (http::StatusCode::NOT_FOUND, axum::Json(json!({"kind": "Status", "code": 404}))),
    }
}

/// The console's state for `user`, with its kube-api-proxy the fake [`Gateway`], as the
/// owner of a request carrying the user's session cookie.
pub(crate) async fn as_user(user: &str) -> (Owner, Arc<Gateway>) {
    let gateway = Arc::new(Gateway::default());
    let app = axum::Router::new().fallback(answer).with_state(Arc::clone(&gateway));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let state = state_with_gateway(&url);
    let request = http::Request::builder()
        .header(http::header::COOKIE, format!("{}=token-of-{user}", fundament_session::COOKIE_NAME))
        .body(())
        .unwrap();
    let owner = Owner::new();
    owner.with(|| {
        provide_context(state);
        provide_context(request.into_parts().0);
    });
    (owner, gateway)
}

/// The console's state with its kube-api-proxy at `url`; sessions are `token-of-<user>`.
pub(crate) fn state_with_gateway(url: &str) -> crate::state::ConsoleState {
    let sessions: Arc<dyn crate::state::SessionAuthority> = Arc::new(crate::test_sessions::TokensOfUsers);
    crate::state::ConsoleState {
        sessions: Arc::clone(&sessions),
        mock: true,
        oidc_provider: None,
        console_origin: "http://localhost:3000".into(),
        frame_origins: Vec::new(),
        backend: Arc::new(crate::plugins::backend::Backend::new(
            url,
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            sessions,
        )),
        endpoints: crate::api::session::Endpoints {
            kube_api_proxy: url.to_owned(),
            plugin_proxy: "http://127.0.0.1:9".into(),
        },
        directory: Arc::new(fundament_directory::seed()),
        fga: Arc::new(EveryCluster),
        open_streams: Default::default(),
    }
}

/// Runs a server function's body as `owner`'s request.
pub(crate) async fn run<T>(owner: &Owner, call: impl Future<Output = T>) -> T {
    owner.with(|| leptos::reactive::computed::ScopedFuture::new(call)).await
}

fn namespace_refused<T: std::fmt::Debug>(answer: Result<T, AppError>) {
    match answer {
        Err(AppError::Invalid(message)) => {
            assert_eq!(message, "The namespace \"default\" is not one this page shows.")
        }
        other => panic!("not refused as outside the project: {other:?}"),
    }
}

/// bob may create DemoItems in `staging` only, the last of the page's three namespaces: the form
/// is offered, in `staging`, and offers only it.
#[tokio::test]
async fn the_create_form_offers_the_namespaces_where_the_user_may_create() {
    let (owner, _) = as_user("bob").await;
    let setup = run(&owner, form_setup(CLUSTER, CRD, None, None, None)).await.unwrap();
    assert_eq!(setup.refusal, None);
    assert_eq!(setup.namespaces, ["staging"]);
    assert_eq!(setup.values.get("metadata.namespace"), "staging");
    // The list's filter is where the form starts, when the user may create there.
    let setup = run(&owner, form_setup(CLUSTER, CRD, None, None, Some("default"))).await.unwrap();
    assert_eq!(setup.values.get("metadata.namespace"), "staging", "not default: bob may not create there");
}

/// Under project `analytics`, whose one namespace bob may not create in, the form is refused
/// and names it.
#[tokio::test]
async fn the_create_form_is_refused_where_no_namespace_allows_it() {
    let (owner, _) = as_user("bob").await;
    let setup = run(&owner, form_setup(CLUSTER, CRD, Some("analytics"), None, None)).await.unwrap();
    assert_eq!(
        setup.refusal.as_deref(),
        Some(
            "You may not create demoitems in namespace analytics: the cluster's RBAC for your account does not allow it."
        )
    );
}

/// `default` is not project analytics's: its object's page, edit form and delete are refused
/// there as the list refuses `?namespace=default`, before the object is read or deleted.
#[tokio::test]
async fn under_a_project_an_object_of_another_projects_namespace_is_refused() {
    let (owner, gateway) = as_user("alice").await;
    let ns = Some("default");
    namespace_refused(run(&owner, get_object(CLUSTER, CRD, Some("analytics"), "app-db", ns)).await);
    let existing: Existing = Some(("app-db".into(), Some("default".into())));
    namespace_refused(run(&owner, form_setup(CLUSTER, CRD, Some("analytics"), existing, None)).await);
    namespace_refused(run(&owner, delete_object(CLUSTER, CRD, Some("analytics"), "app-db", ns)).await);
    let touched: Vec<String> = gateway
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.contains("/namespaces/default/"))
        .cloned()
        .collect();
    assert_eq!(touched, Vec::<String>::new(), "nothing in default was read or deleted");

    // In the project's own namespace, and at organization level, the object opens.
    let mine = run(&owner, get_object(CLUSTER, CRD, Some("analytics"), "app-db", Some("analytics"))).await;
    assert_eq!(mine.unwrap().object["metadata"]["namespace"], "analytics");
    let anywhere = run(&owner, get_object(CLUSTER, CRD, None, "app-db", ns)).await;
    assert_eq!(anywhere.unwrap().object["metadata"]["namespace"], "default");
}
