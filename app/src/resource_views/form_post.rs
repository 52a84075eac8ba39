//! The generated create, edit and delete without JavaScript (before the page hydrates, with
//! JavaScript off, or when a wasm chunk did not load): the form posts its inputs to its own page,
//! and so does the delete confirmation (`?delete=1`). The checks are those of the server
//! functions the hydrated page calls ([`super::api::ssr::submit_form`],
//! [`super::api::ssr::delete_object`]), run as the signed-in user; a save or a delete answers
//! `303 See Other` to where the hydrated page navigates (the object's page, the list).
//!
//! A refused post answers the page itself, rendered with the posted values and the server's
//! messages at their fields, as the hydrated form shows them. Not a redirect to a page that finds
//! the values again: a stash of them on the server (keyed by an id in the URL) would be lost on
//! a restart or on another replica behind the load balancer, would need its own size and age
//! limits against a user filling it, and would keep what was typed beyond the request; the
//! values in the URL would put what was typed into logs and history. What a re-render costs is
//! that the browser asks before posting again on reload, which is what a refused form is.
//!
//! A post must come from one of the console's own pages: an `Origin` of the console, or, when a
//! browser sends none, `Sec-Fetch-Site: same-origin`. The console's layer for every write
//! (`same_origin_writes` in the server) lets a request with neither pass, as a tool's; a form
//! post of a browser always carries one of them.

/// The pages a generated form or delete confirmation posts to: a kind's create page and an
/// object's page, at organization level and in a project (`crate::App`'s routes of them, in
/// axum's syntax).
pub const PATHS: [&str; 4] = [
    "/plugin-resources/{plugin}/{kind}/create",
    "/plugin-resources/{plugin}/{kind}/{id}",
    "/projects/{project}/plugin-resources/{plugin}/{kind}/create",
    "/projects/{project}/plugin-resources/{plugin}/{kind}/{id}",
];

/// The name of the submit buttons' field that says what to do.
pub const ACTION: &str = "_action";
/// What [`ACTION`] says: save (also what Enter in a field does), check (the dry run), delete.
pub const SAVE: &str = "save";
pub const CHECK: &str = "check";
pub const DELETE: &str = "delete";
/// The hidden field with the resourceVersion an edit was loaded at.
pub const RESOURCE_VERSION: &str = "_resource_version";
/// The labels' textarea.
pub const LABELS: &str = "metadata.labels";

#[cfg(feature = "ssr")]
pub use server::*;

/// The server's side.
#[cfg(feature = "ssr")]
mod server {
    use axum::{
        body::{Body, Bytes},
        extract::{Path, Request, State},
        response::{IntoResponse, Response},
    };
    use http::{HeaderMap, StatusCode, header};
    use leptos::prelude::*;
    use serde::Deserialize;

    use crate::resource_views::api::{Existing, FormInput, FormSetup, SubmitOutcome, Submitted};
    use crate::resource_views::schema_form::{FormValues, MAX_INPUTS};
    use crate::{
        api::error_status::status_of,
        error::AppError,
        plugins::model::{is_dns1123_label, paths},
        state::ConsoleState,
    };

    use super::*;

    /// How large a posted form may be: axum's own default for a body, far more than a form of
    /// [`MAX_INPUTS`] inputs of names and values takes.
    pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
    /// How many fields a post may have: the inputs a form may draw, its labels, version and button.
    pub const MAX_FIELDS: usize = MAX_INPUTS + 8;

    /// What the handler needs besides the request: the console, and what renders its pages.
    #[derive(Clone)]
    pub struct FormPosts {
        pub console: ConsoleState,
        pub options: LeptosOptions,
    }

    /// The page's path parameters ([`PATHS`]).
    #[derive(Debug, Clone, Deserialize)]
    pub struct PagePath {
        pub project: Option<String>,
        pub plugin: String,
        pub kind: String,
        /// An object's page; `None` on the create page.
        pub id: Option<String>,
    }

    /// A form posted without JavaScript, shown again: its values and what the server said. The
    /// page's `load_form` finds it in the request's context ([`PostedForm::apply`]).
    #[derive(Debug, Clone, PartialEq)]
    pub struct PostedForm {
        pub input: FormInput,
        pub submitted: Submitted,
    }

    impl PostedForm {
        /// The form as posted over the form as loaded: the values, labels and the version the
        /// edit was loaded at are the post's (a change by someone else since is still refused),
        /// which empty parts exist is the loaded form's.
        pub fn apply(self, setup: &mut FormSetup) {
            let mut values = self.input.values;
            values.keep_presence_of(&setup.values);
            setup.values = values;
            setup.labels = self.input.labels;
            if !self.input.resource_version.is_empty() {
                setup.resource_version = self.input.resource_version;
            }
            setup.submitted = Some(self.submitted);
        }
    }

    /// Why a delete posted without JavaScript was refused: the object's page shows it in the
    /// confirmation (`get_object` finds it in the request's context).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct DeleteRefused(pub String);

    /// What a post is answered with.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Answer {
        /// Done: `303 See Other` to this path of the console.
        SeeOther(String),
        /// The form page again, with the post's values and the server's messages.
        Form(StatusCode, PostedForm),
        /// The delete confirmation again, with why it was refused.
        Delete(StatusCode, DeleteRefused),
        /// Refused before anything was done, with a message for the user.
        Refused(StatusCode, String),
    }

    /// A post's fields that are not the form's values.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Posted {
        pub action: String,
        pub input: FormInput,
    }

    /// Reads a posted form, or says why not (status and message): `(name, value)` pairs, the form's values by their inputs' names
    /// ([`FormValues::from_pairs`]), besides the button, labels and version.
    pub fn parse(body: &[u8]) -> Result<Posted, (StatusCode, String)> {
        let mut action = SAVE.to_owned();
        let mut labels = String::new();
        let mut resource_version = String::new();
        let mut values = Vec::new();
        for (count, (name, value)) in url::form_urlencoded::parse(body).enumerate() {
            if count >= MAX_FIELDS {
                return Err((
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "The form has more fields than the console takes ({MAX_FIELDS}): use the YAML tab or kubectl."
                    ),
                ));
            }
            match &*name {
                ACTION => action = value.into_owned(),
                LABELS => labels = value.into_owned(),
                RESOURCE_VERSION => resource_version = value.into_owned(),
                _ => values.push((name.into_owned(), value.into_owned())),
            }
        }
        if ![SAVE, CHECK, DELETE].contains(&action.as_str()) {
            return Err((StatusCode::BAD_REQUEST, format!("{action:?} is not something this form does.")));
        }
        let input = FormInput {
            values: FormValues::from_pairs(values),
            labels,
            resource_version,
            yaml: String::new(),
        };
        Ok(Posted { action, input })
    }

    /// Whether the request comes from one of the console's own pages: its `Origin` is the
    /// console's, or it has none and the browser says `Sec-Fetch-Site: same-origin`.
    pub fn from_console_page(headers: &HeaderMap, console_origin: &str) -> bool {
        match headers.get(header::ORIGIN) {
            Some(origin) => origin.as_bytes() == console_origin.as_bytes(),
            None => headers.get("sec-fetch-site").is_some_and(|site| site == "same-origin"),
        }
    }

    /// The value of a flag or parameter of the page's query.
    fn query_value(query: Option<&str>, key: &str) -> Option<String> {
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
            .filter(|v| !v.is_empty())
    }

    /// Does what the post asks, as the signed-in user of the request's context (its
    /// [`ConsoleState`] and request parts), with the checks of the server functions.
    pub async fn respond(page: &PagePath, query: Option<&str>, body: &[u8]) -> Answer {
        let posted = match parse(body) {
            Ok(posted) => posted,
            Err((status, message)) => return Answer::Refused(status, message),
        };
        let flag = |key: &str| query_value(query, key).as_deref() == Some("1");
        // `<list>/create?object=1` is the page of an object named `create` (`paths::detail`).
        let name = match &page.id {
            Some(id) => Some(id.clone()),
            None if flag(paths::OBJECT_FLAG) => Some(paths::CREATE_SEGMENT.to_owned()),
            None => None,
        };
        let namespace = query_value(query, "ns");
        let existing: Existing = match (name, posted.action.as_str()) {
            (None, SAVE | CHECK) => None,
            (Some(name), DELETE) => Some((name, namespace)),
            (Some(name), SAVE | CHECK) if flag("edit") => Some((name, namespace)),
            _ => return Answer::Refused(StatusCode::BAD_REQUEST, "This page takes no such form.".to_owned()),
        };
        // Read before any await, as everything from the request context.
        let session = crate::api::session::ssr::session_of_request();
        let scope = match where_to(session.as_ref(), page) {
            Ok(scope) => scope,
            Err(error) => return refused(&posted, error),
        };
        let Scope { cluster_id, project } = scope;
        let project = project.as_deref();
        if posted.action == DELETE {
            let (name, namespace) = existing.unwrap_or_default();
            return match crate::resource_views::api::ssr::delete_object(
                &cluster_id,
                &page.kind,
                project,
                &name,
                namespace.as_deref(),
            )
            .await
            {
                Ok(()) => Answer::SeeOther(paths::generated(
                    paths::list(project, &page.plugin, &page.kind),
                    flag(paths::GENERATED_FLAG),
                )),
                Err(error) => Answer::Delete(status_of(&error), DeleteRefused(error.to_string())),
            };
        }
        let Posted { action, mut input } = posted;
        let dry_run = action == CHECK;
        // An edit says which version it was loaded at: without one, the save would overwrite
        // whatever the object is now.
        if existing.is_some() && input.resource_version.is_empty() {
            let general =
                vec!["The form does not say which version of the object it edits: reload it.".to_owned()];
            let submitted = Submitted { general, ..Submitted::default() };
            return Answer::Form(StatusCode::BAD_REQUEST, PostedForm { input, submitted });
        }
        // Which empty parts exist is the form's as drawn (an edit keeps what it did not show);
        // when it cannot be read, the submit says why.
        if let Ok(drawn) =
            crate::resource_views::api::ssr::drawn_values(&cluster_id, &page.kind, project, &existing).await
        {
            input.values.keep_presence_of(&drawn);
        }
        let outcome = crate::resource_views::api::ssr::submit_form(
            &cluster_id,
            &page.kind,
            project,
            existing,
            &input,
            dry_run,
        )
        .await;
        let (status, submitted) = match outcome {
            Ok(SubmitOutcome::Saved { name, namespace }) if !dry_run => {
                let detail = paths::detail(project, &page.plugin, &page.kind, &name, namespace.as_deref());
                return Answer::SeeOther(paths::generated(detail, flag(paths::GENERATED_FLAG)));
            }
            Ok(SubmitOutcome::Saved { .. }) => {
                (StatusCode::OK, Submitted { checked: true, ..Submitted::default() })
            }
            Ok(SubmitOutcome::Refused { errors, general }) => {
                (StatusCode::UNPROCESSABLE_ENTITY, Submitted { errors, general, ..Submitted::default() })
            }
            Ok(SubmitOutcome::Conflict) => {
                (StatusCode::CONFLICT, Submitted { conflict: true, ..Submitted::default() })
            }
            Err(error) => {
                (status_of(&error), Submitted { general: vec![error.to_string()], ..Submitted::default() })
            }
        };
        Answer::Form(status, PostedForm { input, submitted })
    }

    /// The form or confirmation again, with `error`: the post was refused before it was tried.
    fn refused(posted: &Posted, error: AppError) -> Answer {
        let status = status_of(&error);
        if posted.action == DELETE {
            return Answer::Delete(status, DeleteRefused(error.to_string()));
        }
        let submitted = Submitted { general: vec![error.to_string()], ..Submitted::default() };
        Answer::Form(status, PostedForm { input: posted.input.clone(), submitted })
    }

    /// The cluster and project a page works in.
    struct Scope {
        cluster_id: String,
        project: Option<String>,
    }

    /// The page's cluster, as the page itself finds it: its project's, else the organization's
    /// selected one. A project the user is not in is not found, as its pages are not.
    fn where_to(session: Option<&crate::api::session::Session>, page: &PagePath) -> Result<Scope, AppError> {
        let session = session.ok_or(AppError::Unauthenticated)?;
        if !is_dns1123_label(&page.plugin) {
            return Err(AppError::NotFound(format!("The plugin {:?}", page.plugin)));
        }
        if let Some(project) = &page.project
            && !session.projects.iter().any(|p| &p.id == project)
        {
            return Err(AppError::NotFound(format!("Project {project}")));
        }
        Ok(Scope { cluster_id: session.cluster_of(page.project.as_deref()), project: page.project.clone() })
    }

    /// Reads the body of a form post: `application/x-www-form-urlencoded`, at most
    /// [`MAX_BODY_BYTES`].
    async fn read_form(headers: &HeaderMap, body: Body) -> Result<Bytes, (StatusCode, String)> {
        let form = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("application/x-www-form-urlencoded"));
        if !form {
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "This page takes a form (application/x-www-form-urlencoded).".to_owned(),
            ));
        }
        axum::body::to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "The form is larger than the console takes ({} MiB): use kubectl.",
                    MAX_BODY_BYTES >> 20
                ),
            )
        })
    }

    /// The handler of a post to one of [`PATHS`].
    pub async fn handle(
        State(posts): State<FormPosts>,
        Path(page): Path<PagePath>,
        request: Request,
    ) -> Response {
        let (parts, body) = request.into_parts();
        if !from_console_page(&parts.headers, &posts.console.console_origin) {
            tracing::warn!(origin = ?parts.headers.get(header::ORIGIN), "refused a form post not from a console page");
            return (StatusCode::FORBIDDEN, "cross-origin requests may not change anything here\n")
                .into_response();
        }
        let answer = match read_form(&parts.headers, body).await {
            Ok(body) => {
                let owner = Owner::new();
                owner.with(|| {
                    provide_context(posts.console.clone());
                    provide_context(parts.clone());
                });
                let query = parts.uri.query();
                owner
                    .with(|| leptos::reactive::computed::ScopedFuture::new(respond(&page, query, &body)))
                    .await
            }
            Err((status, message)) => Answer::Refused(status, message),
        };
        match answer {
            Answer::SeeOther(path) => see_other(&path),
            Answer::Refused(status, message) => {
                (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response()
            }
            Answer::Form(status, posted) => {
                render(posts, parts, status, move || provide_context(posted.clone())).await
            }
            Answer::Delete(status, refused) => {
                render(posts, parts, status, move || provide_context(refused.clone())).await
            }
        }
    }

    /// `303 See Other`: the browser gets `path` (after a post, never posting again).
    fn see_other(path: &str) -> Response {
        match http::HeaderValue::from_str(path) {
            Ok(location) => (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response(),
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        }
    }

    /// The page the post went to, rendered as its `GET` would be, with `context` (the post's
    /// values and messages); `status` unless the page has one of its own (not found).
    async fn render(
        posts: FormPosts,
        parts: http::request::Parts,
        status: StatusCode,
        context: impl Fn() + Clone + Send + Sync + 'static,
    ) -> Response {
        let FormPosts { console, options } = posts;
        let handler = leptos_axum::render_app_async_with_context(
            move || {
                provide_context(console.clone());
                context();
            },
            move || crate::shell(options.clone()),
        );
        let mut response = handler(Request::from_parts(parts, Body::empty())).await;
        if response.status() == StatusCode::OK {
            *response.status_mut() = status;
        }
        response
    }
}

#[cfg(all(test, feature = "ssr"))]
#[path = "form_post_tests.rs"]
mod tests;
