//! Posts of the generated form and delete confirmation without JavaScript, against the fake
//! kube-api-proxy of the server functions' tests (`api_scope_tests.rs`).

use http::{HeaderMap, HeaderValue, StatusCode};

use super::*;
use crate::resource_views::api::scope_tests::{CRD, as_user, run};
use crate::resource_views::api::{FormInput, FormSetup, Submitted};
use crate::resource_views::schema_form::{FieldError, FormSpec, FormValues};

const DEMO: &str = "/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io";

fn body(pairs: &[(&str, &str)]) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish().into_bytes()
}

fn page(project: Option<&str>, id: Option<&str>) -> PagePath {
    PagePath {
        project: project.map(str::to_owned),
        plugin: "acme-corp--demo".into(),
        kind: CRD.into(),
        id: id.map(str::to_owned),
    }
}

#[test]
fn a_post_reads_as_the_forms_values_besides_its_button_labels_and_version() {
    let posted = parse(&body(&[
        ("metadata.name", "web"),
        ("metadata.namespace", "staging"),
        ("spec.message", "a & b = c"),
        ("spec.items[1]", "second"),
        (LABELS, "app=web\ntier=front"),
        (RESOURCE_VERSION, "42"),
        (ACTION, CHECK),
    ]))
    .unwrap();
    assert_eq!(posted.action, CHECK);
    assert_eq!(posted.input.labels, "app=web\ntier=front");
    assert_eq!(posted.input.resource_version, "42");
    let values = &posted.input.values;
    assert_eq!(values.get("spec.message"), "a & b = c");
    assert_eq!(values.len("spec.items"), 2);
    assert_eq!(values.get(LABELS), "", "the labels are not a value of the form");
    assert_eq!(values.get(ACTION), "");
    // No button (Enter in a field): a save.
    assert_eq!(parse(&body(&[("metadata.name", "web")])).unwrap().action, SAVE);
}

#[test]
fn a_post_of_another_action_or_too_many_fields_is_refused() {
    let Err((status, message)) = parse(&body(&[(ACTION, "drop-everything")])) else {
        panic!("an unknown action was taken");
    };
    assert_eq!(
        (status, message.as_str()),
        (StatusCode::BAD_REQUEST, "\"drop-everything\" is not something this form does.")
    );
    let many: Vec<(String, String)> =
        (0..=MAX_FIELDS).map(|i| (format!("spec.a[{i}]"), "x".to_owned())).collect();
    let many = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&many).finish();
    let Err((status, _)) = parse(many.as_bytes()) else { panic!("{MAX_FIELDS} fields taken") };
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let Ok(fits) = parse(&body(&vec![("spec.a[0]", "x"); MAX_FIELDS])) else { panic!("a full form refused") };
    assert_eq!(fits.input.values.len("spec.a"), 1);
}

#[test]
fn only_a_post_from_a_console_page_is_taken() {
    let console = "http://localhost:3000";
    let headers = |pairs: &[(&'static str, &'static str)]| {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    };
    assert!(from_console_page(&headers(&[("origin", console), ("sec-fetch-site", "same-origin")]), console));
    assert!(from_console_page(&headers(&[("origin", console)]), console));
    assert!(from_console_page(&headers(&[("sec-fetch-site", "same-origin")]), console));
    for refused in [
        headers(&[]),
        headers(&[("origin", "http://localhost:8082")]),
        headers(&[("origin", "null"), ("sec-fetch-site", "cross-site")]),
        headers(&[("origin", "http://localhost:3000.evil.example")]),
        headers(&[("sec-fetch-site", "same-site")]),
        headers(&[("sec-fetch-site", "none")]),
        headers(&[("origin", "http://localhost:8082"), ("sec-fetch-site", "same-origin")]),
    ] {
        assert!(!from_console_page(&refused, console), "{refused:?}");
    }
}

fn saved(requests: &[String]) -> Vec<&String> {
    requests.iter().filter(|r| r.starts_with("POST /apis/demo") || r.starts_with("PUT ")).collect()
}

#[tokio::test]
async fn a_create_saves_and_goes_to_the_objects_page() {
    let (owner, gateway) = as_user("bob").await;
    let post = body(&[("metadata.name", "web"), ("metadata.namespace", "staging"), ("spec.message", "hi")]);
    let answer = run(&owner, respond(&page(None, None), None, &post)).await;
    assert_eq!(answer, Answer::SeeOther(format!("{DEMO}/web?ns=staging")));
    let requests = gateway.requests.lock().unwrap();
    assert_eq!(
        saved(&requests),
        [
            "POST /apis/demo.fundament.io/v1/namespaces/staging/demoitems (dry run)",
            "POST /apis/demo.fundament.io/v1/namespaces/staging/demoitems"
        ]
    );
}

#[tokio::test]
async fn a_refused_create_comes_back_with_what_was_typed_and_the_error_at_its_field() {
    let (owner, gateway) = as_user("bob").await;
    let post = body(&[
        ("metadata.name", "web"),
        ("metadata.namespace", "staging"),
        ("spec.message", "refuse"),
        (LABELS, "app=web"),
    ]);
    let Answer::Form(status, posted) =
        run(&owner, respond(&page(None, None), Some("namespace=staging"), &post)).await
    else {
        panic!("not shown again");
    };
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(posted.input.values.get("metadata.name"), "web");
    assert_eq!(posted.input.values.get("spec.message"), "refuse");
    assert_eq!(posted.input.labels, "app=web");
    assert_eq!(
        posted.submitted.errors,
        [FieldError { path: "spec.message".into(), message: "not this one".into() }]
    );
    assert!(!posted.submitted.checked && !posted.submitted.conflict);
    assert_eq!(
        saved(&gateway.requests.lock().unwrap()),
        ["POST /apis/demo.fundament.io/v1/namespaces/staging/demoitems (dry run)"],
        "nothing saved"
    );
}

#[tokio::test]
async fn check_is_the_dry_run_only() {
    let (owner, gateway) = as_user("bob").await;
    let post = body(&[("metadata.name", "web"), ("metadata.namespace", "staging"), (ACTION, CHECK)]);
    let answer = run(&owner, respond(&page(None, None), None, &post)).await;
    let Answer::Form(StatusCode::OK, posted) = answer else { panic!("{answer:?}") };
    assert_eq!(posted.submitted, Submitted { checked: true, ..Submitted::default() });
    assert_eq!(saved(&gateway.requests.lock().unwrap()).len(), 1, "the dry run only");
}

#[tokio::test]
async fn an_edit_saves_at_the_version_it_was_loaded_at_and_never_over_a_change_since() {
    let (owner, gateway) = as_user("alice").await;
    let edit = |version: &'static str| {
        body(&[
            ("metadata.name", "web"),
            ("metadata.namespace", "default"),
            ("spec.message", "changed"),
            (RESOURCE_VERSION, version),
        ])
    };
    let object = page(None, Some("web"));
    let answer = run(&owner, respond(&object, Some("ns=default&edit=1"), &edit("5"))).await;
    assert_eq!(answer, Answer::SeeOther(format!("{DEMO}/web?ns=default")));
    // Someone else changed it since version 4: nothing is saved, the edit stays on the form.
    let Answer::Form(status, posted) =
        run(&owner, respond(&object, Some("ns=default&edit=1"), &edit("4"))).await
    else {
        panic!("not shown again");
    };
    assert_eq!((status, posted.submitted.conflict), (StatusCode::CONFLICT, true));
    assert_eq!(
        (posted.input.values.get("spec.message"), posted.input.resource_version.as_str()),
        ("changed", "4")
    );
    // An edit that names no version would overwrite whatever is there: not sent.
    let before = gateway.requests.lock().unwrap().len();
    let Answer::Form(status, _) = run(&owner, respond(&object, Some("ns=default&edit=1"), &edit(""))).await
    else {
        panic!("an edit without a version was not refused");
    };
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(gateway.requests.lock().unwrap().len(), before);
    // Not an edit page: no save.
    let Answer::Refused(status, _) = run(&owner, respond(&object, Some("ns=default"), &edit("5"))).await
    else {
        panic!("saved from an object's page");
    };
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_delete_goes_to_the_list_and_is_refused_outside_the_project() {
    let (owner, gateway) = as_user("alice").await;
    let delete = body(&[(ACTION, DELETE)]);
    let answer = run(&owner, respond(&page(None, Some("web")), Some("ns=default&delete=1"), &delete)).await;
    assert_eq!(answer, Answer::SeeOther(DEMO.to_owned()));
    assert!(
        gateway
            .requests
            .lock()
            .unwrap()
            .contains(&"DELETE /apis/demo.fundament.io/v1/namespaces/default/demoitems/web".to_owned())
    );

    // `default` is not project analytics's: refused as the server function refuses it.
    let in_analytics = page(Some("analytics"), Some("web"));
    let answer = run(&owner, respond(&in_analytics, Some("ns=default&delete=1"), &delete)).await;
    let refused = DeleteRefused("The namespace \"default\" is not one this page shows.".into());
    assert_eq!(answer, Answer::Delete(StatusCode::BAD_REQUEST, refused));
    let deletes = gateway.requests.lock().unwrap().iter().filter(|r| r.starts_with("DELETE")).count();
    assert_eq!(deletes, 1);
    // A delete is posted from an object's page only.
    let Answer::Refused(status, _) = run(&owner, respond(&page(None, None), None, &delete)).await else {
        panic!("a delete from the create page");
    };
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_post_to_a_project_or_namespace_the_user_may_not_touch_is_refused_and_keeps_the_input() {
    let (owner, gateway) = as_user("bob").await;
    let post =
        body(&[("metadata.name", "web"), ("metadata.namespace", "default"), ("spec.message", "typed")]);
    // Not bob's project: not found, as its pages are.
    let Answer::Form(status, posted) = run(&owner, respond(&page(Some("nobodys"), None), None, &post)).await
    else {
        panic!("not refused");
    };
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(posted.submitted.general, ["Project nobodys does not exist, or you cannot see it."]);
    assert_eq!(posted.input.values.get("spec.message"), "typed");
    // Under analytics, default is not the project's namespace.
    let Answer::Form(_, posted) = run(&owner, respond(&page(Some("analytics"), None), None, &post)).await
    else {
        panic!("not refused");
    };
    assert_eq!(
        posted.submitted.errors,
        [FieldError {
            path: "metadata.namespace".into(),
            message: "must be one of this project's namespaces".into()
        }]
    );
    assert_eq!(saved(&gateway.requests.lock().unwrap()), Vec::<&String>::new());
    // Signed out: nothing is done either.
    let signed_out = leptos::prelude::Owner::new();
    signed_out.with(|| {
        leptos::prelude::provide_context(
            owner.with(|| leptos::prelude::expect_context::<crate::state::ConsoleState>()),
        );
        leptos::prelude::provide_context(http::Request::new(()).into_parts().0);
    });
    let Answer::Form(status, _) = run(&signed_out, respond(&page(None, None), None, &post)).await else {
        panic!("not refused");
    };
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[test]
fn a_posted_form_is_shown_with_its_values_over_what_the_loaded_form_had() {
    let spec = FormSpec { fields: Vec::new() };
    let mut setup = FormSetup {
        spec,
        values: FormValues::from_pairs([("spec.message", "loaded")]),
        labels: "app=loaded".into(),
        namespaces: vec!["default".into()],
        refusal: None,
        yaml: String::new(),
        resource_version: "7".into(),
        form_unavailable: None,
        submitted: None,
    };
    let submitted = Submitted { general: vec!["refused".into()], ..Submitted::default() };
    let input = FormInput {
        values: FormValues::from_pairs([("spec.message", "typed")]),
        labels: "app=typed".into(),
        resource_version: "6".into(),
        yaml: String::new(),
    };
    PostedForm { input, submitted: submitted.clone() }.apply(&mut setup);
    assert_eq!(setup.values.get("spec.message"), "typed");
    assert_eq!((setup.labels.as_str(), setup.resource_version.as_str()), ("app=typed", "6"));
    assert_eq!(setup.submitted, Some(submitted));
}
