//! Server functions of the generated views. They act as the signed-in user
//! through kube-api-proxy's user path, so the cluster decides what they see.

use leptos::prelude::*;

use super::table::{ListQuery, TablePage};
use crate::error::AppError;

/// One page of a kind's objects as a table.
#[server(endpoint = "objects", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn list_table(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    query: ListQuery,
) -> Result<TablePage, AppError> {
    ssr::list_table(&cluster_id, &crd, project.as_deref(), &query).await
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use serde_json::Value;

    use crate::error::AppError;
    use crate::plugins::api::ssr::{check_cluster, user, user_error};
    use crate::plugins::model::{KindInfo, encode_segment, is_crd_name, is_dns1123_label, kind_info};
    use crate::resource_views::table::{Cell, CellType, Column, ListQuery, Row, TablePage, page_of};
    use crate::resource_views::yaml_edit::{edit_buffer, to_yaml};
    use crate::state::ConsoleState;

    /// A CRD as the generated views use it.
    pub struct Definition {
        pub info: KindInfo,
        /// Shared with the console's cache of the user's CRDs.
        pub crd: std::sync::Arc<Value>,
    }

    impl Definition {
        /// The schema version the console reads and writes.
        pub fn version(&self) -> Option<&Value> {
            self.crd
                .pointer("/spec/versions")
                .and_then(Value::as_array)?
                .iter()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(self.info.version.as_str()))
        }

        /// `/apis/<group>/<version>[/namespaces/<ns>]/<plural>`.
        pub fn collection_path(&self, namespace: Option<&str>) -> String {
            let ns = namespace.map(|n| format!("/namespaces/{}", encode_segment(n))).unwrap_or_default();
            format!("/apis/{}/{}{ns}/{}", self.info.group, self.info.version, self.info.plural)
        }
    }

    /// Reads the CRD named `<plural>.<group>`: the user's copy the console keeps for a few
    /// seconds (every generated-view call needs it), else a fresh one.
    /// What every call about one kind starts with: a cluster id that is one, the signed-in
    /// user's state and token, and the kind's definition as that user reads it.
    async fn signed_in_kind(
        cluster_id: &str,
        crd: &str,
    ) -> Result<(ConsoleState, String, Definition), AppError> {
        check_cluster(cluster_id)?;
        let (state, token) = user()?;
        let def = definition(&state, &token, cluster_id, crd).await?;
        Ok((state, token, def))
    }

    pub async fn definition(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        crd: &str,
    ) -> Result<Definition, AppError> {
        use crate::plugins::cache::CRD_TTL;
        if !is_crd_name(crd) {
            return Err(AppError::Invalid(format!(
                "{crd:?} is not a resource name of the form <plural>.<group>."
            )));
        }
        // The cache is per user: the key is the user the token verifies as.
        let user = state.sessions.verify(token).ok_or(AppError::Unauthenticated)?;
        let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}");
        let what = format!("the resource {crd}");
        let value = state
            .backend
            .kube_get_cached(&user.id, token, cluster_id, &path, CRD_TTL, None)
            .await
            .map_err(|e| user_error(e, &what))?;
        let info = kind_info(&value).ok_or_else(|| {
            AppError::Invalid(format!("The CustomResourceDefinition {crd} names no kind, plural or version."))
        })?;
        Ok(Definition { info, crd: value })
    }

    /// The namespaces a page may show: the project's, else all.
    pub async fn namespaces(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        project: Option<&str>,
    ) -> Result<Vec<String>, AppError> {
        let path = match project {
            Some(p) if is_dns1123_label(p) => {
                format!(
                    "/api/v1/namespaces?labelSelector={}",
                    encode_segment(&format!("fundament.io/project={p}"))
                )
            }
            Some(p) => return Err(AppError::Invalid(format!("{p:?} is not a project name."))),
            None => "/api/v1/namespaces".to_owned(),
        };
        let list = state
            .backend
            .kube_get(token, cluster_id, &path)
            .await
            .map_err(|e| user_error(e, "the namespaces"))?;
        let mut names: Vec<String> = items(&list).filter_map(|n| text(n, "/metadata/name")).collect();
        names.sort();
        Ok(names)
    }

    /// `ns` when the page shows it, else why not: inside a project, a namespace of another
    /// project (or none) is refused, by the list as by an object's page, its edit and its
    /// delete, whatever the request names.
    pub(super) fn shown<'a>(namespaces: &[String], ns: &'a str) -> Result<&'a str, AppError> {
        if namespaces.iter().any(|n| n == ns) {
            Ok(ns)
        } else {
            Err(AppError::Invalid(format!("The namespace {ns:?} is not one this page shows.")))
        }
    }

    /// Refuses an object outside `project`'s namespaces ([`shown`]); at organization level
    /// every namespace is the page's. A cluster-scoped kind has no namespace to check.
    async fn check_in_project(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        def: &Definition,
        project: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<(), AppError> {
        let (Some(project), Some(ns), true) = (project, namespace, def.info.namespaced) else {
            return Ok(());
        };
        let namespaces = namespaces(state, token, cluster_id, Some(project)).await?;
        shown(&namespaces, ns).map(|_| ())
    }

    fn items(list: &Value) -> impl Iterator<Item = &Value> {
        list.get("items").and_then(Value::as_array).into_iter().flatten()
    }

    fn text(v: &Value, pointer: &str) -> Option<String> {
        v.pointer(pointer).and_then(Value::as_str).map(str::to_owned)
    }

    pub async fn list_table(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        query: &ListQuery,
    ) -> Result<TablePage, AppError> {
        check_cluster(cluster_id)?;
        let (state, token) = user()?;
        let labels = query.labels.trim();
        if !labels.is_empty()
            && let Err(e) = fundament_selectors::LabelSelector::parse(labels)
        {
            return Err(AppError::Invalid(format!("The label selector {labels:?} is not valid: {e}.")));
        }
        let def = definition(&state, &token, cluster_id, crd).await?;
        let namespaces = if def.info.namespaced {
            namespaces(&state, &token, cluster_id, project).await?
        } else {
            Vec::new()
        };
        let namespace = match query.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(ns) if def.info.namespaced => Some(shown(&namespaces, ns)?),
            _ => None,
        };
        let mut path = def.collection_path(namespace);
        if !labels.is_empty() {
            path.push_str("?labelSelector=");
            path.push_str(&encode_segment(labels));
        }
        let what = format!("the {} of this cluster", def.info.plural);
        // An object nested deeper than the console reads does not hide the others: the list is
        // shown with its deepest parts marked (a list is only shown, never written back).
        let (list, too_deep) = match state.backend.kube_get(&token, cluster_id, &path).await {
            Ok(list) => (list, false),
            Err(crate::plugins::backend::BackendError::TooDeep { shown: Some(shown), .. }) => (*shown, true),
            Err(e) => return Err(user_error(e, &what)),
        };
        let (columns, compiled, warning) = columns(&def);
        let now = time::OffsetDateTime::now_utc();
        let in_scope = |ns: &Option<String>| {
            project.is_none() || !def.info.namespaced || ns.as_ref().is_some_and(|ns| namespaces.contains(ns))
        };
        // Cells for every listed object, not only the page's: the search matches every cell, and
        // the sort reads one column of all of them. The budget bounds that work.
        let (rows, spent) = table_rows(
            items(&list).filter(|object| in_scope(&text(object, "/metadata/namespace"))),
            &compiled,
            def.info.namespaced,
            now,
        );
        let warnings: Vec<String> = warning
            .into_iter()
            .chain(spent.then(|| SPENT_WARNING.to_owned()))
            .chain(too_deep.then(|| TOO_DEEP_WARNING.to_owned()))
            .collect();
        let warning = (!warnings.is_empty()).then(|| warnings.join(". "));
        let resource_version = text(&list, "/metadata/resourceVersion").unwrap_or_default();
        Ok(page_of(columns, rows, query, namespaces, resource_version, warning))
    }

    /// How many values the printer columns' paths may produce for a whole table: a few per
    /// cell, so about ten cells each for 50,000 objects, and tens of milliseconds at most.
    const TABLE_CELL_BUDGET: usize = 2_000_000;
    /// How many bytes of text the cells of a whole table may hold: as many as the list they
    /// come from may have (a value is counted once, but `@` or `.spec` prints a whole object in
    /// every column, each `<` as the six bytes of `\u003c`).
    const TABLE_TEXT_BUDGET: usize = crate::plugins::backend::MAX_ANSWER_BYTES;
    /// How many characters one cell shows, the last an ellipsis when cut: more than a status,
    /// a name or a condition's message takes, a few lines of the table at most.
    pub(super) const CELL_CHARS: usize = 256;
    const SPENT_WARNING: &str =
        "Some cells are empty: this kind's printer columns take too much work on this many objects";
    const TOO_DEEP_WARNING: &str = "Some objects nest deeper than the console reads: their deepest parts are left out here (kubectl shows them)";

    /// Name, Namespace, then the printer columns (or Age), as kubectl shows them.
    fn columns(def: &Definition) -> (Vec<Column>, Vec<fundament_jsonpath::CompiledColumn>, Option<String>) {
        let printer: Vec<fundament_jsonpath::PrinterColumn> = def
            .version()
            .and_then(|v| v.get("additionalPrinterColumns"))
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default();
        let (compiled, error) = fundament_jsonpath::compile_columns(&printer);
        let mut columns = vec![Column {
            name: "Name".into(),
            cell_type: CellType::Text,
            description: "The object's name.".into(),
            priority: 0,
        }];
        if def.info.namespaced {
            columns.push(Column {
                name: "Namespace".into(),
                cell_type: CellType::Text,
                description: "The object's namespace.".into(),
                priority: 0,
            });
        }
        columns.extend(compiled.iter().map(|c| Column {
            name: c.column.name.clone(),
            cell_type: match c.column_type {
                fundament_jsonpath::ColumnType::Integer | fundament_jsonpath::ColumnType::Number => {
                    CellType::Number
                }
                fundament_jsonpath::ColumnType::Boolean => CellType::Boolean,
                fundament_jsonpath::ColumnType::Date => CellType::Date,
                _ => CellType::Text,
            },
            description: c.column.description.clone(),
            priority: c.column.priority,
        }));
        (columns, compiled, error.map(|e| e.to_string()))
    }

    /// The rows of `objects`, every cell from one budget of values and text: a CRD's columns,
    /// cheap on one object, can be costly on thousands of them (the CRD comes with a plugin,
    /// which may be hostile). Also whether the budget was spent (some cells left empty).
    pub(super) fn table_rows<'a>(
        objects: impl Iterator<Item = &'a Value>,
        columns: &[fundament_jsonpath::CompiledColumn],
        namespaced: bool,
        now: time::OffsetDateTime,
    ) -> (Vec<Row>, bool) {
        let mut budget =
            fundament_jsonpath::Budget::new(TABLE_CELL_BUDGET).with_text(TABLE_TEXT_BUDGET, CELL_CHARS);
        let rows = objects.map(|object| row(object, columns, namespaced, now, &mut budget)).collect();
        (rows, budget.is_spent())
    }

    fn row(
        object: &Value,
        columns: &[fundament_jsonpath::CompiledColumn],
        namespaced: bool,
        now: time::OffsetDateTime,
        budget: &mut fundament_jsonpath::Budget,
    ) -> Row {
        use fundament_jsonpath::ColumnType;
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
            .unwrap_or_default();
        let cells = columns
            .iter()
            .map(|c| {
                let value = fundament_jsonpath::cell_within(&c.path, c.column_type, object, now, budget);
                let shown = match &value {
                    Value::Null => String::new(),
                    Value::String(s) => crate::markup::visible_bidi_controls(s).into_owned(),
                    other => other.to_string(),
                };
                let exact = match c.column_type {
                    ColumnType::Date => {
                        match fundament_jsonpath::cell_within(
                            &c.path,
                            ColumnType::String,
                            object,
                            now,
                            budget,
                        ) {
                            Value::String(s) if !s.is_empty() && s != "<no value>" => Some(s),
                            _ => None,
                        }
                    }
                    ColumnType::Integer | ColumnType::Number if value.is_number() => Some(value.to_string()),
                    _ => None,
                };
                Cell { text: shown, exact }
            })
            .collect();
        Row {
            name: text(object, "/metadata/name").unwrap_or_default(),
            namespace: if namespaced { text(object, "/metadata/namespace") } else { None },
            labels,
            cells,
        }
    }

    fn object_path(def: &Definition, name: &str, namespace: Option<&str>) -> Result<String, AppError> {
        use crate::plugins::model::is_dns1123_subdomain;
        if !is_dns1123_subdomain(name) {
            return Err(AppError::NotFound(format!("The object {name:?}")));
        }
        let namespace = match namespace {
            Some(ns) if def.info.namespaced && is_dns1123_label(ns) => Some(ns),
            Some(ns) if def.info.namespaced => {
                return Err(AppError::Invalid(format!("{ns:?} is not a namespace name.")));
            }
            None if def.info.namespaced => {
                return Err(AppError::Invalid(format!(
                    "{} is namespaced: the URL needs ?ns=<namespace>.",
                    def.info.kind
                )));
            }
            _ => None,
        };
        Ok(format!("{}/{}", def.collection_path(namespace), encode_segment(name)))
    }

    /// Reads one object: its API path and what the cluster has of it. Under a project, only
    /// an object in one of the project's namespaces ([`check_in_project`]).
    async fn read_object(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        def: &Definition,
        project: Option<&str>,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<(String, Value), AppError> {
        let path = object_path(def, name, namespace)?;
        check_in_project(state, token, cluster_id, def, project, namespace).await?;
        let what = format!("{} {name}", def.info.kind);
        let object =
            state.backend.kube_get(token, cluster_id, &path).await.map_err(|e| user_error(e, &what))?;
        Ok((path, object))
    }

    /// Asks the cluster whether the user may `verb` the object (a SelfSubjectAccessReview).
    async fn may(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        def: &Definition,
        verb: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> bool {
        let review = serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {
                "group": def.info.group, "resource": def.info.plural, "verb": verb,
                "name": name, "namespace": namespace.unwrap_or_default()
            }}
        });
        let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
        match state.backend.kube(http::Method::POST, token, cluster_id, path, Some(review)).await {
            Ok((201 | 200, answer)) => {
                answer.pointer("/status/allowed").and_then(Value::as_bool).unwrap_or(false)
            }
            Ok((status, body)) => {
                tracing::warn!(error = %crate::plugins::backend::Backend::kube_error(status, &body), "access review failed");
                false
            }
            Err(error) => {
                tracing::warn!(%error, "access review failed");
                false
            }
        }
    }

    pub async fn object_exists(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<(), AppError> {
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        read_object(&state, &token, cluster_id, &def, project, name, namespace).await.map(|_| ())
    }

    pub async fn get_object(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<crate::resource_views::api::ObjectDetail, AppError> {
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        let (_, mut object) = read_object(&state, &token, cluster_id, &def, project, name, namespace).await?;
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let yaml = serde_yaml::to_string(&object).unwrap_or_default();
        let schema = def.version().and_then(|v| v.pointer("/schema/openAPIV3Schema/properties"));
        let part = |k: &str| schema.and_then(|p| p.get(k)).cloned().unwrap_or(Value::Null);
        let ns = if def.info.namespaced { namespace } else { None };
        let events = events(&state, &token, cluster_id, &def.info.kind, name, ns).await;
        let (can_delete, can_update) = futures::future::join(
            may(&state, &token, cluster_id, &def, "delete", name, ns),
            may(&state, &token, cluster_id, &def, "update", name, ns),
        )
        .await;
        Ok(crate::resource_views::api::ObjectDetail {
            object,
            yaml,
            spec_schema: part("spec"),
            status_schema: part("status"),
            events,
            can_delete,
            can_update,
            delete_refused: None,
        })
    }

    /// The object's events; none when they cannot be read (the page still shows the object).
    async fn events(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> Vec<crate::resource_views::api::EventRow> {
        let mut selector = format!("involvedObject.name={name},involvedObject.kind={kind}");
        if let Some(ns) = namespace {
            selector.push_str(&format!(",involvedObject.namespace={ns}"));
        }
        let base = namespace
            .map_or_else(|| "/api/v1/events".to_owned(), |ns| format!("/api/v1/namespaces/{ns}/events"));
        let path = format!("{base}?fieldSelector={}", encode_segment(&selector));
        let list = match state.backend.kube_get(token, cluster_id, &path).await {
            Ok(list) => list,
            Err(error) => {
                tracing::info!(%error, "events not shown");
                return Vec::new();
            }
        };
        let mut rows: Vec<crate::resource_views::api::EventRow> = items(&list)
            .map(|e| crate::resource_views::api::EventRow {
                kind: text(e, "/type").unwrap_or_default(),
                reason: text(e, "/reason").unwrap_or_default(),
                message: text(e, "/message").unwrap_or_default(),
                count: e.get("count").and_then(Value::as_i64).unwrap_or(1),
                last_seen: text(e, "/lastTimestamp")
                    .or_else(|| text(e, "/eventTime"))
                    .or_else(|| text(e, "/metadata/creationTimestamp"))
                    .unwrap_or_default(),
                source: text(e, "/source/component")
                    .or_else(|| text(e, "/reportingComponent"))
                    .unwrap_or_default(),
            })
            .collect();
        rows.sort_by(|a, b| b.last_seen.cmp(&a.last_seen));
        rows
    }

    pub async fn delete_object(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<(), AppError> {
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        let path = object_path(&def, name, namespace)?;
        check_in_project(&state, &token, cluster_id, &def, project, namespace).await?;
        match state.backend.kube(http::Method::DELETE, &token, cluster_id, &path, None).await {
            Ok((200 | 202 | 404, _)) => {
                tracing::info!(kind = %def.info.kind, name, namespace = namespace.unwrap_or_default(), "object deleted");
                Ok(())
            }
            Ok((401, _)) => Err(AppError::Unauthenticated),
            Ok((403, body)) => Err(AppError::Forbidden(format!(
                "You may not delete {} {name}: {}",
                def.info.kind,
                body.get("message").and_then(Value::as_str).unwrap_or("forbidden")
            ))),
            Ok((status, body)) => {
                let error = crate::plugins::backend::Backend::kube_error(status, &body);
                tracing::error!(%error, "delete failed");
                Err(AppError::Invalid(format!(
                    "{} {name} was not deleted: {}",
                    def.info.kind,
                    body.get("message").and_then(Value::as_str).unwrap_or("the cluster refused")
                )))
            }
            Err(error) => {
                tracing::error!(%error, "delete failed");
                Err(not_done(&error, &format!("{} {name} was not deleted", def.info.kind)))
            }
        }
    }

    /// A write that did not reach the cluster: what was not done and why, when the reason may
    /// pass (never retried by itself: the user decides to try again).
    fn not_done(error: &crate::plugins::backend::BackendError, what: &str) -> AppError {
        match error.passing() {
            Some(passing) => {
                AppError::Unavailable { message: format!("{what}: {}", passing.message), retry_after: None }
            }
            None => AppError::Internal,
        }
    }

    fn schema_of(def: &Definition) -> Value {
        def.version().and_then(|v| v.pointer("/schema/openAPIV3Schema")).cloned().unwrap_or(Value::Null)
    }

    fn labels_text(object: &Value) -> String {
        object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// `key=value` per line or comma, checked as Kubernetes checks labels.
    fn parse_labels(text: &str) -> Result<serde_json::Map<String, Value>, String> {
        let mut pairs = Vec::new();
        for item in text.split(['\n', ',']).map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = item.split_once('=') else {
                return Err(format!("Labels: {item:?} is not key=value."));
            };
            pairs.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        crate::resource_views::label_selector::label_selector_for(&pairs)
            .map_err(|e| format!("Labels: {e}"))?;
        Ok(pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
    }

    /// Which of `offered` the user may create the kind in: all of them when the cluster allows
    /// it in every namespace (one review), else those whose own review allows it. A user may
    /// create in some namespaces only; the first of the page's is not the one to ask about.
    async fn creatable(
        state: &ConsoleState,
        token: &str,
        cluster_id: &str,
        def: &Definition,
        offered: &[String],
    ) -> Vec<String> {
        // A namespaced kind's review without a namespace asks about all namespaces.
        if may(state, token, cluster_id, def, "create", "", None).await {
            return offered.to_vec();
        }
        let mut creatable = Vec::new();
        for some in offered.chunks(CREATE_REVIEWS_AT_ONCE) {
            let reviews: Vec<_> =
                some.iter().map(|ns| may(state, token, cluster_id, def, "create", "", Some(ns))).collect();
            let allowed = futures::future::join_all(reviews).await;
            creatable
                .extend(some.iter().zip(allowed).filter(|(_, allowed)| *allowed).map(|(ns, _)| ns.clone()));
        }
        creatable
    }

    /// How many namespaces' create reviews run at once (an organization-level page offers every
    /// namespace of the cluster).
    const CREATE_REVIEWS_AT_ONCE: usize = 4;

    /// The namespace a create form starts in: `preferred` (the list's filter) when the user may
    /// create there, else the first they may.
    pub(super) fn create_namespace(creatable: &[String], preferred: Option<&str>) -> Option<String> {
        preferred
            .filter(|p| creatable.iter().any(|n| n == p))
            .map(str::to_owned)
            .or_else(|| creatable.first().cloned())
    }

    /// Why a create form of a namespaced kind is not offered: no namespace on the page, or
    /// none of them where the user may create.
    pub(super) fn create_refusal(plural: &str, offered: &[String], creatable: &[String]) -> Option<String> {
        let place = match offered {
            [] => return Some("This project has no namespaces to create it in.".to_owned()),
            _ if !creatable.is_empty() => return None,
            [only] => format!("in namespace {only}"),
            _ => "in any namespace of this page".to_owned(),
        };
        Some(format!(
            "You may not create {plural} {place}: the cluster's RBAC for your account does not allow it."
        ))
    }

    pub async fn form_setup(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        existing: crate::resource_views::api::Existing,
        preferred_namespace: Option<&str>,
    ) -> Result<crate::resource_views::api::FormSetup, AppError> {
        use crate::resource_views::schema_form::{FormValues, form_for};
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        let spec = form_for(&schema_of(&def), def.info.namespaced);
        let offered = if def.info.namespaced {
            namespaces(&state, &token, cluster_id, project).await?
        } else {
            Vec::new()
        };
        // A new object may go only where the user may create it.
        let namespaces = if def.info.namespaced && existing.is_none() {
            creatable(&state, &token, cluster_id, &def, &offered).await
        } else {
            offered.clone()
        };
        let mut form_unavailable = None;
        // A form past its input limit is not drawn: millions of inputs would exhaust the server
        // and the browser. The page opens in the YAML tab and says why; the empty values are
        // never offered as a form.
        let mut drawable = |values: Result<FormValues, _>| {
            values.unwrap_or_else(|too_many: crate::resource_views::schema_form::TooManyInputs| {
                tracing::info!(kind = %def.info.kind, at = %too_many.path, "form past its input limit: YAML tab only");
                form_unavailable = Some(too_many.to_string());
                FormValues::default()
            })
        };
        let (values, labels, verb, name, ns, loaded) = match &existing {
            Some((name, namespace)) => {
                let (_, object) =
                    read_object(&state, &token, cluster_id, &def, project, name, namespace.as_deref())
                        .await?;
                let values = drawable(FormValues::from_object(&spec, &object));
                (values, labels_text(&object), "update", name.clone(), namespace.clone(), Some(object))
            }
            None => {
                let mut values = drawable(FormValues::defaults(&spec));
                let ns = create_namespace(&namespaces, preferred_namespace);
                if let Some(ns) = &ns {
                    values.set("metadata.namespace", ns.clone());
                }
                (values, String::new(), "create", String::new(), ns, None)
            }
        };
        let resource_version =
            loaded.as_ref().and_then(|o| text(o, "/metadata/resourceVersion")).unwrap_or_default();
        let yaml = to_yaml(&match &loaded {
            Some(object) => edit_buffer(object),
            None => new_object(&def, &spec, &values),
        });
        let refusal = if def.info.namespaced && existing.is_none() {
            // The reviews were asked above, one per namespace where needed.
            create_refusal(&def.info.plural, &offered, &namespaces)
        } else if may(&state, &token, cluster_id, &def, verb, &name, ns.as_deref()).await {
            None
        } else {
            let place = ns.map_or_else(|| "on this cluster".to_owned(), |n| format!("in namespace {n}"));
            Some(format!(
                "You may not {verb} {} {place}: the cluster's RBAC for your account does not allow it.",
                def.info.plural
            ))
        };
        Ok(crate::resource_views::api::FormSetup {
            spec,
            values,
            labels,
            namespaces,
            refusal,
            yaml,
            resource_version,
            form_unavailable,
            submitted: None,
        })
    }

    /// A new object as the YAML tab starts it: the form's defaults, with an empty name.
    fn new_object(
        def: &Definition,
        spec: &crate::resource_views::schema_form::FormSpec,
        values: &crate::resource_views::schema_form::FormValues,
    ) -> Value {
        use crate::resource_views::schema_form::assemble;
        let api_version = format!("{}/{}", def.info.group, def.info.version);
        let mut named = values.clone();
        named.set("metadata.name", "x");
        let mut object = assemble(spec, &named, &api_version, &def.info.kind).unwrap_or_else(|_| {
            serde_json::json!({"apiVersion": api_version, "kind": def.info.kind, "metadata": {}, "spec": {}})
        });
        object["metadata"]["name"] = Value::String(String::new());
        let ns = values.get("metadata.namespace");
        if def.info.namespaced && !ns.is_empty() {
            object["metadata"]["namespace"] = Value::String(ns.to_owned());
        }
        object
    }

    /// The values a form is drawn with, before the user changes them: an edit's from the object,
    /// a create's defaults. A form posted without JavaScript takes from them which empty parts
    /// exist (`FormValues::keep_presence_of`).
    pub async fn drawn_values(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        existing: &crate::resource_views::api::Existing,
    ) -> Result<crate::resource_views::schema_form::FormValues, AppError> {
        use crate::resource_views::schema_form::{FormValues, form_for};
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        let spec = form_for(&schema_of(&def), def.info.namespaced);
        let values = match existing {
            Some((name, namespace)) => {
                let (_, object) =
                    read_object(&state, &token, cluster_id, &def, project, name, namespace.as_deref())
                        .await?;
                FormValues::from_object(&spec, &object)
            }
            None => FormValues::defaults(&spec),
        };
        // Past the input limit the form was not drawn: nothing exists but what was posted.
        Ok(values.unwrap_or_default())
    }

    pub async fn submit_form(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        existing: crate::resource_views::api::Existing,
        input: &crate::resource_views::api::FormInput,
        dry_run: bool,
    ) -> Result<crate::resource_views::api::SubmitOutcome, AppError> {
        let crate::resource_views::api::FormInput { values, labels, resource_version, yaml } = input;
        use crate::resource_views::api::SubmitOutcome;
        use crate::resource_views::schema_form::{
            FieldError, assemble, errors_from_status, form_for, merge_update,
        };
        use crate::resource_views::yaml_edit::{form_over_yaml, parse_yaml, restore, set_labels};
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        let schema = schema_of(&def);
        let spec = form_for(&schema, def.info.namespaced);
        let api_version = format!("{}/{}", def.info.group, def.info.version);
        let refused =
            |errors: Vec<FieldError>, general: Vec<String>| Ok(SubmitOutcome::Refused { errors, general });
        let assembled = match assemble(&spec, values, &api_version, &def.info.kind) {
            Ok(object) => object,
            Err(errors) => return refused(errors, Vec::new()),
        };
        let labels = match parse_labels(labels) {
            Ok(labels) => labels,
            Err(message) => return refused(Vec::new(), vec![message]),
        };
        // The YAML tab's text, when the form has one (not a post without JavaScript): what was
        // added there (annotations, fields the form has no input for) is saved with the form.
        let yaml = parse_yaml(yaml).ok().filter(Value::is_object);
        let mut object = match &yaml {
            Some(yaml) => form_over_yaml(yaml, &assembled, labels.clone(), &schema),
            None => assembled,
        };
        let (method, path) = match &existing {
            Some((name, namespace)) => {
                let (path, original) =
                    read_object(&state, &token, cluster_id, &def, project, name, namespace.as_deref())
                        .await?;
                object = match &yaml {
                    None => merge_update(&original, &object),
                    // As the YAML tab saves: `status` and the server's metadata from the live
                    // object (a kind without a status subresource would lose its status).
                    Some(_) => match restore(object, &original, resource_version) {
                        Ok(object) => object,
                        Err(message) => return refused(Vec::new(), vec![message]),
                    },
                };
                // The version the form was loaded at: a change since is refused (409), not
                // overwritten.
                if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("resourceVersion".into(), Value::String(resource_version.to_owned()));
                }
                (http::Method::PUT, path)
            }
            None => {
                let ns = object.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_owned);
                if def.info.namespaced {
                    let allowed = namespaces(&state, &token, cluster_id, project).await?;
                    if !ns.as_ref().is_some_and(|n| allowed.contains(n)) {
                        let error = FieldError {
                            path: "metadata.namespace".into(),
                            message: "must be one of this project's namespaces".into(),
                        };
                        return refused(vec![error], Vec::new());
                    }
                }
                (http::Method::POST, def.collection_path(ns.as_deref()))
            }
        };
        if yaml.is_none()
            && let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut)
        {
            set_labels(meta, labels);
        }
        for dry in [true, false] {
            if !dry && dry_run {
                break;
            }
            let url = if dry {
                format!("{path}?dryRun=All&fieldValidation=Strict")
            } else {
                format!("{path}?fieldValidation=Strict")
            };
            match state.backend.kube(method.clone(), &token, cluster_id, &url, Some(object.clone())).await {
                Ok((200..=202, saved)) => {
                    if dry {
                        continue;
                    }
                    tracing::info!(kind = %def.info.kind, "object saved from the generated form");
                    let name = saved
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let namespace =
                        saved.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_owned);
                    return Ok(SubmitOutcome::Saved { name, namespace });
                }
                Ok((401, _)) => return Err(AppError::Unauthenticated),
                Ok((409, body)) if existing.is_some() => {
                    tracing::info!(error = %crate::plugins::backend::Backend::kube_error(409, &body), "form conflict");
                    return Ok(SubmitOutcome::Conflict);
                }
                Ok((status, body)) => {
                    tracing::info!(error = %crate::plugins::backend::Backend::kube_error(status, &body), "form refused");
                    let (errors, message) = errors_from_status(&body);
                    let (placed, mut general) = spec.place(errors, values);
                    if let Some(message) = message {
                        general.insert(0, message);
                    }
                    return refused(placed, general);
                }
                Err(error) => {
                    tracing::error!(%error, "form submit failed");
                    return Err(not_done(&error, "The object was not saved"));
                }
            }
        }
        let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_owned);
        Ok(SubmitOutcome::Saved { name, namespace })
    }

    /// The form's values as YAML, over `base` (the YAML tab's last text), so what the form
    /// does not show survives the round trip.
    pub async fn form_to_yaml(
        cluster_id: &str,
        crd: &str,
        base: &str,
        values: &crate::resource_views::schema_form::FormValues,
        labels: &str,
    ) -> Result<crate::resource_views::api::ToYaml, AppError> {
        use crate::resource_views::api::ToYaml;
        use crate::resource_views::schema_form::{assemble, form_for};
        use crate::resource_views::yaml_edit::{form_over_yaml, parse_yaml};
        let (_, _, def) = signed_in_kind(cluster_id, crd).await?;
        let schema = schema_of(&def);
        let spec = form_for(&schema, def.info.namespaced);
        let api_version = format!("{}/{}", def.info.group, def.info.version);
        let assembled = match assemble(&spec, values, &api_version, &def.info.kind) {
            Ok(object) => object,
            Err(errors) => {
                let general = vec!["Correct the marked fields to see the form as YAML.".to_owned()];
                return Ok(ToYaml::Refused { errors, general });
            }
        };
        let labels = match parse_labels(labels) {
            Ok(labels) => labels,
            Err(message) => return Ok(ToYaml::Refused { errors: Vec::new(), general: vec![message] }),
        };
        let base = parse_yaml(base).ok().filter(Value::is_object).unwrap_or_else(|| serde_json::json!({}));
        Ok(ToYaml::Yaml(to_yaml(&form_over_yaml(&base, &assembled, labels, &schema))))
    }

    /// The YAML tab's text as the form's values.
    pub async fn yaml_to_form(
        cluster_id: &str,
        crd: &str,
        yaml: &str,
    ) -> Result<crate::resource_views::api::ToForm, AppError> {
        use crate::resource_views::api::ToForm;
        use crate::resource_views::schema_form::{FormValues, form_for};
        use crate::resource_views::yaml_edit::parse_yaml;
        let (_, _, def) = signed_in_kind(cluster_id, crd).await?;
        let object = match parse_yaml(yaml) {
            Ok(object) if object.is_object() => object,
            Ok(_) => return Ok(ToForm::Invalid("The YAML must be one object (a mapping).".into())),
            Err(error) => return Ok(ToForm::Invalid(error.to_string())),
        };
        let spec = form_for(&schema_of(&def), def.info.namespaced);
        match FormValues::from_object(&spec, &object) {
            Ok(values) => Ok(ToForm::Form { values, labels: labels_text(&object) }),
            Err(too_many) => Ok(ToForm::Invalid(too_many.to_string())),
        }
    }

    /// Reviews (`dry_run`: the API server's dry run, and the diff against the live object)
    /// or saves the YAML tab's text; an edit at the `resource_version` it was loaded at,
    /// `loaded` being the text it was loaded as.
    pub async fn save_yaml(
        cluster_id: &str,
        crd: &str,
        project: Option<&str>,
        existing: crate::resource_views::api::Existing,
        edit: &crate::resource_views::api::YamlEdit,
        dry_run: bool,
    ) -> Result<crate::resource_views::api::YamlOutcome, AppError> {
        let crate::resource_views::api::YamlEdit { text: yaml, loaded, resource_version } = edit;
        use crate::resource_views::api::YamlOutcome;
        use crate::resource_views::yaml_edit::{diff, parse_yaml, prepare_create, restore};
        let (state, token, def) = signed_in_kind(cluster_id, crd).await?;
        let edited = match parse_yaml(yaml) {
            Ok(object) => object,
            Err(error) => return Ok(YamlOutcome::Invalid(error.to_string())),
        };
        let (method, path, object, before) = match &existing {
            Some((name, namespace)) => {
                let (path, live) =
                    read_object(&state, &token, cluster_id, &def, project, name, namespace.as_deref())
                        .await?;
                let object = match restore(edited.clone(), &live, resource_version) {
                    Ok(object) => object,
                    Err(message) => return Ok(YamlOutcome::Invalid(message)),
                };
                (http::Method::PUT, path, object, to_yaml(&edit_buffer(&live)))
            }
            None => {
                let api_version = format!("{}/{}", def.info.group, def.info.version);
                let object = match prepare_create(edited.clone(), &api_version, &def.info.kind) {
                    Ok(object) => object,
                    Err(message) => return Ok(YamlOutcome::Invalid(message)),
                };
                let ns = text(&object, "/metadata/namespace");
                if def.info.namespaced {
                    let allowed = namespaces(&state, &token, cluster_id, project).await?;
                    if !ns.as_ref().is_some_and(|n| allowed.contains(n)) {
                        return Ok(YamlOutcome::Invalid(format!(
                            "metadata.namespace must be one of this project's namespaces: {}.",
                            allowed.join(", ")
                        )));
                    }
                }
                (http::Method::POST, def.collection_path(ns.as_deref()), object, String::new())
            }
        };
        let url = if dry_run {
            format!("{path}?dryRun=All&fieldValidation=Strict")
        } else {
            format!("{path}?fieldValidation=Strict")
        };
        match state.backend.kube(method, &token, cluster_id, &url, Some(object)).await {
            Ok((200..=202, saved)) if dry_run => {
                Ok(YamlOutcome::Review(diff(&before, &to_yaml(&edit_buffer(&saved)), 3)))
            }
            Ok((200..=202, saved)) => {
                tracing::info!(kind = %def.info.kind, "object saved from the YAML tab");
                Ok(YamlOutcome::Saved {
                    name: text(&saved, "/metadata/name").unwrap_or_default(),
                    namespace: text(&saved, "/metadata/namespace"),
                })
            }
            Ok((401, _)) => Err(AppError::Unauthenticated),
            // The object is no longer at the version the edit was loaded at (the review's dry
            // run is refused the same way as the save).
            Ok((409, _)) if existing.is_some() => {
                let (name, namespace) = existing.clone().unwrap_or_default();
                let (_, live) =
                    read_object(&state, &token, cluster_id, &def, project, &name, namespace.as_deref())
                        .await?;
                Ok(YamlOutcome::Conflict(conflict(loaded, &edited, &live)))
            }
            Ok((status, body)) => {
                tracing::info!(error = %crate::plugins::backend::Backend::kube_error(status, &body), "YAML refused");
                let message =
                    body.get("message").and_then(Value::as_str).unwrap_or("The cluster refused it.");
                Ok(YamlOutcome::Refused(message.to_owned()))
            }
            Err(error) => {
                tracing::error!(%error, "YAML save failed");
                Err(not_done(&error, "The object was not saved"))
            }
        }
    }

    /// Someone else's change: from what the edit was loaded as to `live`, and the edit
    /// re-applied onto `live`.
    fn conflict(loaded: &str, edited: &Value, live: &Value) -> crate::resource_views::api::Conflict {
        use crate::resource_views::yaml_edit::{diff, parse_yaml, reapply};
        let theirs = edit_buffer(live);
        let live_yaml = to_yaml(&theirs);
        let base = parse_yaml(loaded).unwrap_or(Value::Null);
        crate::resource_views::api::Conflict {
            other_change: diff(&to_yaml(&base), &live_yaml, 3),
            reapplied: to_yaml(&reapply(&base, &edit_buffer(edited), &theirs)),
            live_yaml,
            live_version: text(live, "/metadata/resourceVersion").unwrap_or_default(),
        }
    }
}

/// One object, for the generated detail view.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ObjectDetail {
    /// The object as the API server returned it (without managedFields).
    pub object: serde_json::Value,
    /// The same as YAML, for the read-only YAML view.
    pub yaml: String,
    /// `openAPIV3Schema.properties.spec` and `.status` of the served version (Null when absent).
    pub spec_schema: serde_json::Value,
    pub status_schema: serde_json::Value,
    /// The object's events, newest first.
    pub events: Vec<EventRow>,
    /// What the user may do with it (SelfSubjectAccessReviews).
    pub can_delete: bool,
    pub can_update: bool,
    /// Why a delete posted without JavaScript was refused (`form_post`), shown in its
    /// confirmation.
    pub delete_refused: Option<String>,
}

/// One Kubernetes event about the object.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EventRow {
    pub kind: String,
    pub reason: String,
    pub message: String,
    pub count: i64,
    /// RFC 3339.
    pub last_seen: String,
    pub source: String,
}

/// One object with its schema, events and what the user may do with it.
#[server(endpoint = "object", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn get_object(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    name: String,
    namespace: Option<String>,
) -> Result<ObjectDetail, AppError> {
    // Read before any await: a delete this request posted without JavaScript, refused.
    let refused = leptos::prelude::use_context::<super::form_post::DeleteRefused>();
    let mut detail =
        ssr::get_object(&cluster_id, &crd, project.as_deref(), &name, namespace.as_deref()).await?;
    detail.delete_refused = refused.map(|r| r.0);
    Ok(detail)
}

/// Whether the user can read the object (in the project's namespaces, inside a project): what a
/// plugin's own detail page is opened for. `NotFound` when it does not exist or the user cannot
/// see it.
#[server(endpoint = "object-exists", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn object_exists(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    name: String,
    namespace: Option<String>,
) -> Result<(), AppError> {
    ssr::object_exists(&cluster_id, &crd, project.as_deref(), &name, namespace.as_deref()).await
}

/// Deletes one object (404 counts as done).
#[server(endpoint = "delete-object", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn delete_object(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    name: String,
    namespace: Option<String>,
) -> Result<(), AppError> {
    ssr::delete_object(&cluster_id, &crd, project.as_deref(), &name, namespace.as_deref()).await
}

/// What a generated create or edit form starts from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FormSetup {
    pub spec: super::schema_form::FormSpec,
    pub values: super::schema_form::FormValues,
    /// `metadata.labels` as `key=value` lines.
    pub labels: String,
    /// The namespaces a new object may go to (namespaced kinds): those of the page where the
    /// user may create it.
    pub namespaces: Vec<String>,
    /// Why the user may not create or edit here (a SelfSubjectAccessReview said no).
    pub refusal: Option<String>,
    /// The YAML tab's text: the object without `status` and the server's metadata
    /// (`yaml_edit::edit_buffer`); for a create, the form's defaults.
    pub yaml: String,
    /// The object's resourceVersion as loaded (empty for a create): a save sends it, so a
    /// change by someone else since is refused, never overwritten.
    pub resource_version: String,
    /// Why the form cannot show this object, or a create form's defaults (it would draw more
    /// inputs or text than a form takes, `schema_form::MAX_INPUTS` and `MAX_FORM_TEXT`): it opens in the YAML tab, and the
    /// form's tab says so instead of offering an empty form.
    pub form_unavailable: Option<String>,
    /// The form was posted without JavaScript and is shown again (`form_post`): the values are
    /// the posted ones, and this is what the server said about them.
    pub submitted: Option<Submitted>,
}

/// What the server said about a form posted without JavaScript, shown with the posted values
/// as the hydrated form shows an answer of [`submit_form`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Submitted {
    /// Messages at the fields they name.
    pub errors: Vec<super::schema_form::FieldError>,
    /// The rest.
    pub general: Vec<String>,
    /// Someone else changed the object since the form was loaded.
    pub conflict: bool,
    /// A check (dry run) the API server accepts.
    pub checked: bool,
}

/// The object to edit: name and namespace.
pub type Existing = Option<(String, Option<String>)>;

/// How a submit went.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SubmitOutcome {
    /// Saved (or, for a check, would be): the object's name and namespace.
    Saved { name: String, namespace: Option<String> },
    /// Refused: messages at the fields they name, and the rest.
    Refused { errors: Vec<super::schema_form::FieldError>, general: Vec<String> },
    /// Not saved: someone else changed the object since the form was loaded.
    Conflict,
}

/// The form for a new object, or for editing `existing`; a new object starts in `namespace`
/// (the list's filter) when the user may create there.
#[server(endpoint = "form", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn load_form(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    existing: Existing,
    namespace: Option<String>,
) -> Result<FormSetup, AppError> {
    // Read before any await, as everything from the request context: the form this request
    // posted without JavaScript, shown again with its values.
    let posted = leptos::prelude::use_context::<super::form_post::PostedForm>();
    let mut setup =
        ssr::form_setup(&cluster_id, &crd, project.as_deref(), existing, namespace.as_deref()).await?;
    if let Some(posted) = posted {
        posted.apply(&mut setup);
    }
    Ok(setup)
}

/// Checks (`dry_run`: the API server's dry run only) or saves a form; an edit at the
/// `resource_version` it was loaded at.
#[server(endpoint = "form-submit", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn submit_form(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    existing: Existing,
    input: FormInput,
    dry_run: bool,
) -> Result<SubmitOutcome, AppError> {
    ssr::submit_form(&cluster_id, &crd, project.as_deref(), existing, &input, dry_run).await
}

/// What a form submit sends.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FormInput {
    pub values: super::schema_form::FormValues,
    /// `metadata.labels` as `key=value` lines.
    pub labels: String,
    /// The resourceVersion the edit was loaded at (empty for a create).
    pub resource_version: String,
    /// The YAML tab's text the form's values go over (what the form has no input for is kept
    /// from it); empty without one (a form posted without JavaScript): the values go over the
    /// object as loaded.
    #[serde(default)]
    pub yaml: String,
}

/// The form as YAML, or why it cannot be yet.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ToYaml {
    Yaml(String),
    /// Fields the form must correct first.
    Refused {
        errors: Vec<super::schema_form::FieldError>,
        general: Vec<String>,
    },
}

/// The YAML as the form's values, or why it cannot be.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ToForm {
    Form {
        values: super::schema_form::FormValues,
        labels: String,
    },
    /// The YAML does not parse (the message names line and column) or is not one object.
    Invalid(String),
}

/// Someone else changed the object since the edit was loaded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Conflict {
    /// Their change: from what the edit was loaded as to the live object.
    pub other_change: Vec<super::yaml_edit::DiffLine>,
    /// The live object as the YAML tab shows it, and its resourceVersion.
    pub live_yaml: String,
    pub live_version: String,
    /// The edit re-applied onto the live object (`yaml_edit::reapply`).
    pub reapplied: String,
}

/// How a YAML review or save went.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum YamlOutcome {
    /// The review: the API server's dry run accepts it; the change against the live object.
    Review(Vec<super::yaml_edit::DiffLine>),
    Saved {
        name: String,
        namespace: Option<String>,
    },
    /// The YAML does not parse (line and column) or changes what it may not.
    Invalid(String),
    /// The API server's message.
    Refused(String),
    Conflict(Conflict),
}

/// The form's values as YAML over `base`, the YAML tab's last text.
#[server(endpoint = "form-yaml", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn form_to_yaml(
    cluster_id: String,
    crd: String,
    base: String,
    values: super::schema_form::FormValues,
    labels: String,
) -> Result<ToYaml, AppError> {
    ssr::form_to_yaml(&cluster_id, &crd, &base, &values, &labels).await
}

/// The YAML tab's text as the form's values.
#[server(endpoint = "yaml-form", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn yaml_to_form(cluster_id: String, crd: String, yaml: String) -> Result<ToForm, AppError> {
    ssr::yaml_to_form(&cluster_id, &crd, &yaml).await
}

/// Reviews (`dry_run`) or saves the YAML tab's text; an edit at the resourceVersion it
/// was loaded at.
#[server(endpoint = "yaml-save", client = crate::api::client::PatientClient, input = crate::api::codec::Json, output = crate::api::codec::Json)]
pub async fn save_yaml(
    cluster_id: String,
    crd: String,
    project: Option<String>,
    existing: Existing,
    edit: YamlEdit,
    dry_run: bool,
) -> Result<YamlOutcome, AppError> {
    ssr::save_yaml(&cluster_id, &crd, project.as_deref(), existing, &edit, dry_run).await
}

/// What a YAML review or save sends.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct YamlEdit {
    /// The YAML tab's text.
    pub text: String,
    /// The text as loaded, and the object's resourceVersion then (empty for a create).
    pub loaded: String,
    pub resource_version: String,
}

#[cfg(all(test, feature = "ssr"))]
#[path = "api_tests.rs"]
mod tests;

#[cfg(all(test, feature = "ssr"))]
#[path = "api_scope_tests.rs"]
pub(crate) mod scope_tests;
