//! The HTTP API: authentication, authorization and dispatch of every request,
//! answering with Kubernetes objects or `Status` errors.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use fundament_kube_core::bounded_value::{self, RepeatedKeys};
use http::{HeaderMap, Method, StatusCode, header};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::authn::{self, User};
use crate::cluster::{Cluster, Origin, WriteOptions, now_rfc3339};
use crate::path::{self, NonResource, ResourcePath, Route};
use crate::proxy::ServiceBackends;
use crate::query::ListQuery;
use crate::resource::{Builtin, ResourceType};
use crate::status::{self, ApiError};
use crate::table::{self, IncludeObject};
use crate::tokens::TokenIssuer;
use crate::{discovery, openapi, openapi_v2_pb, patch, reviews, watch};
use fundament_kube_core::RequestInfo;

/// Bodies larger than this are refused (as kube-apiserver's 3 MiB limit).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Everything a request needs.
pub struct Api {
    pub cluster: Arc<Cluster>,
    pub issuer: TokenIssuer,
    pub admin_token: String,
    pub backends: ServiceBackends,
    /// `host:port` clients reach the server at (for `/api`).
    pub server_address: String,
    /// The shoots this cluster answers for when it is a garden.
    pub garden: Option<Arc<crate::garden::Shoots>>,
}

pub fn router(api: Arc<Api>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(api)
}

fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

async fn handle(State(api): State<Arc<Api>>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    // A root span: each request's lines name that request only, whatever span happens to be
    // current where its connection is served (in `fundament dev` the gateway shares the process).
    let span = tracing::info_span!(parent: None, "kube_api", %method, path = %path, user = tracing::field::Empty, status = tracing::field::Empty);
    // Attached with `instrument`, never entered across an await: a held guard would lend the
    // span to whatever else runs on this thread meanwhile.
    let served = async {
        let response = match dispatch(&api, req, &span).await {
            Ok(r) => r,
            Err(e) => e.into_response(),
        };
        span.record("status", response.status().as_u16());
        if response.status().is_server_error() {
            tracing::warn!("request failed");
        } else {
            tracing::debug!("request served");
        }
        response
    };
    served.instrument(span.clone()).await
}

fn json_response(code: StatusCode, v: &Value) -> Response {
    (code, [(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

/// What the client asked the answer to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Object,
    Table,
    Metadata,
}

pub fn format_of(headers: &HeaderMap) -> Format {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    // The first acceptable media type wins, as the apiserver negotiates.
    for media in accept.split(',') {
        let media = media.trim();
        if media.contains("as=Table") && media.contains("g=meta.k8s.io") {
            return Format::Table;
        }
        if media.contains("as=PartialObjectMetadata") && media.contains("g=meta.k8s.io") {
            return Format::Metadata;
        }
        if media.starts_with("application/json")
            || media.starts_with("*/*")
            || media.starts_with("application/yaml")
        {
            return Format::Object;
        }
    }
    Format::Object
}

async fn dispatch(api: &Api, req: Request, span: &tracing::Span) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let certificate = parts.extensions.get::<authn::CertificateIdentity>();
    let user = authn::authenticate(
        &api.cluster,
        &api.issuer,
        &api.admin_token,
        certificate,
        &parts.headers,
        now_unix(),
    )?;
    let user = authn::impersonate(&api.cluster, user, &parts.headers)?;
    span.record("user", user.name.as_str());
    let query = fundament_kube_core::Query::parse(parts.uri.query().unwrap_or_default());
    let route = path::route(&parts.method, parts.uri.path(), &query).map_err(|e| match e {
        path::RouteError::NotFound => ApiError::no_route(),
        path::RouteError::BadSegment => ApiError::bad_request(e.to_string()),
    })?;
    match route {
        Route::NonResource(nr) => non_resource(api, &user, &parts, nr),
        Route::Resource(r) => {
            if r.verb().is_empty() {
                return Err(ApiError::method_not_allowed());
            }
            let rt = resolve(api, &r.path, &parts.method)?;
            let q = ListQuery::parse(&query)?;
            authorize(api, &user, &r.info)?;
            let body = read_body(body, &parts.method).await?;
            if r.path.subresource == "proxy" {
                return crate::proxy::forward(api, &r.path, parts.method, &parts.headers, &query, body).await;
            }
            // The rest answers without waiting; what admission warns about goes out as headers.
            let (answer, warnings) = crate::warning::recording(|| {
                resource(api, &user, &rt, &r.path, r.verb(), &q, &query, &parts.headers, &body)
            });
            let writes = matches!(r.verb(), "create" | "update" | "patch" | "delete" | "deletecollection");
            if writes && answer.is_ok() {
                durable(&api.cluster).await?;
            }
            let mut response = answer.unwrap_or_else(IntoResponse::into_response);
            crate::warning::attach(&mut response, &warnings);
            Ok(response)
        }
    }
}

/// Waits until the journal holds the write on disk, before it is acknowledged.
async fn durable(cluster: &crate::Cluster) -> Result<(), ApiError> {
    let Some(journal) = cluster.journal() else { return Ok(()) };
    match tokio::task::spawn_blocking(move || journal.sync()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => {
            tracing::error!(%error, "write not synced to disk");
            Err(error.to_status())
        }
        Err(error) => Err(ApiError::internal(&error)),
    }
}

/// RBAC on the request as kube-apiserver reads it ([`RequestInfo`]).
fn authorize(api: &Api, user: &User, info: &RequestInfo) -> Result<(), ApiError> {
    let attrs = fundament_rbac::Attributes::Resource {
        verb: &info.verb,
        api_group: &info.group,
        resource: &info.resource,
        subresource: &info.subresource,
        name: &info.name,
        namespace: &info.namespace,
    };
    if reviews::decide(&api.cluster.policy(), user, &attrs).allowed {
        return Ok(());
    }
    Err(ApiError::forbidden(
        &user.name,
        &info.verb,
        &info.group,
        &info.resource,
        &info.subresource,
        &info.name,
        &info.namespace,
    ))
}

fn non_resource(
    api: &Api,
    user: &User,
    parts: &http::request::Parts,
    nr: NonResource,
) -> Result<Response, ApiError> {
    let raw_path = parts.uri.path();
    if !matches!(parts.method, Method::GET | Method::HEAD) {
        return Err(ApiError::method_not_allowed());
    }
    let attrs = fundament_rbac::Attributes::NonResource { verb: "get", path: raw_path };
    if !reviews::decide(&api.cluster.policy(), user, &attrs).allowed {
        return Err(ApiError::forbidden_path(&user.name, "get", raw_path));
    }
    let registry = api.cluster.registry();
    let doc = match nr {
        NonResource::Version => discovery::version(),
        NonResource::Health => return Ok((StatusCode::OK, "ok").into_response()),
        NonResource::CoreVersions => discovery::core_versions(&api.server_address),
        NonResource::Groups => discovery::groups(&registry),
        NonResource::Group(g) => discovery::group(&registry, &g).ok_or_else(ApiError::no_route)?,
        NonResource::GroupVersion { group, version } => {
            let mut doc = discovery::resources(&registry, &group, &version).ok_or_else(ApiError::no_route)?;
            if let Some(garden) = &api.garden {
                garden.extend_discovery(&group, &version, &mut doc);
            }
            doc
        }
        NonResource::OpenApiV2 => {
            let doc = openapi::v2(&registry);
            // kubectl reads it only as protobuf (`openapi_v2_pb`).
            let accept = parts.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
            if openapi_v2_pb::wanted(accept) {
                let body = openapi_v2_pb::document(&doc);
                return Ok((StatusCode::OK, [(header::CONTENT_TYPE, openapi_v2_pb::ANSWER_TYPE)], body)
                    .into_response());
            }
            doc
        }
        NonResource::OpenApiV3Root => openapi::v3_root(&registry, &registry_hash(&registry)),
        NonResource::OpenApiV3 { group, version } => {
            openapi::v3_group_version(&registry, &group, &version).ok_or_else(ApiError::no_route)?
        }
        NonResource::Other => return Err(ApiError::no_route()),
    };
    Ok(json_response(StatusCode::OK, &doc))
}

/// Changes whenever the served kinds change, so clients refetch OpenAPI documents.
fn registry_hash(registry: &crate::resource::Registry) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for t in registry.all() {
        h.update(format!("{t:?}/{}", t.crd.as_ref().map(|c| c.crd_name.as_str()).unwrap_or_default()));
        if let Some(schema) = t.crd.as_ref().and_then(|c| c.schema.as_ref()) {
            h.update(schema.to_string());
        }
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02X}")).collect()
}

fn resolve(api: &Api, p: &ResourcePath, method: &Method) -> Result<Arc<ResourceType>, ApiError> {
    let rt = api.cluster.resource(&p.group, &p.version, &p.resource).ok_or_else(ApiError::no_route)?;
    if !p.namespace.is_empty() && !rt.namespaced {
        return Err(ApiError::no_route());
    }
    let sub_ok = match p.subresource.as_str() {
        "" => true,
        "status" => rt.status_subresource,
        "token" => rt.builtin == Some(Builtin::ServiceAccount),
        "proxy" => rt.builtin == Some(Builtin::Service),
        crate::garden::ADMIN_KUBECONFIG => api.garden.is_some() && crate::garden::is_shoots(&rt),
        _ => false,
    };
    if !sub_ok {
        return Err(ApiError::no_route());
    }
    if rt.namespaced && p.namespace.is_empty() && p.name.is_empty() && *method == Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    // kube-apiserver has no POST route for a named object (only for subresources such as
    // `token`): 405, never a create under a name no check saw.
    if *method == Method::POST && !p.name.is_empty() && p.subresource.is_empty() {
        return Err(ApiError::method_not_allowed());
    }
    if rt.namespaced && p.namespace.is_empty() && !p.name.is_empty() {
        return Err(ApiError::no_route());
    }
    Ok(rt)
}

async fn read_body(body: Body, method: &Method) -> Result<bytes::Bytes, ApiError> {
    if matches!(*method, Method::GET | Method::HEAD) {
        return Ok(bytes::Bytes::new());
    }
    use http_body_util::BodyExt;
    let mut body = body;
    let mut buf = bytes::BytesMut::new();
    let mut seen = 0usize;
    // Past the limit the rest is read and dropped (up to a hard cap), so the
    // client gets its 413 instead of a broken pipe mid-upload.
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| ApiError::bad_request("the request body could not be read"))?;
        if let Ok(data) = frame.into_data() {
            seen += data.len();
            if seen <= MAX_BODY {
                buf.extend_from_slice(&data);
            } else if seen > 8 * MAX_BODY {
                break;
            }
        }
    }
    if seen > MAX_BODY {
        return Err(ApiError::too_large(MAX_BODY));
    }
    Ok(buf.freeze())
}

/// Decodes a JSON or YAML request body into an object.
pub fn decode_body(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let content_type =
        headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let media = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let value: Value = match media.as_str() {
        "application/json" | "" => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the body of the request could not be decoded as JSON: {e}"))
        })?,
        "application/yaml" | "application/x-yaml" | "text/yaml" => {
            // Bounded: a YAML alias repeats what it names (see bounded_value). One document, as
            // the API server takes one object.
            bounded_value::yaml_document(body, RepeatedKeys::LastWins).map_err(|e| {
                ApiError::bad_request(format!("the body of the request could not be decoded as YAML: {e}"))
            })?
        }
        crate::protobuf::MEDIA_TYPE => crate::protobuf::decode(body)?,
        other => {
            return Err(ApiError::unsupported_media_type(other, &["application/json", "application/yaml"]));
        }
    };
    if !value.is_object() {
        return Err(ApiError::bad_request("the body of the request must be an object"));
    }
    Ok(value)
}

fn list_json(rt: &ResourceType, page: &crate::cluster::ListPage) -> Value {
    let mut meta = json!({"resourceVersion": page.resource_version.to_string()});
    if let Some(c) = &page.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = page.remaining {
        meta["remainingItemCount"] = json!(n);
    }
    json!({"kind": rt.list_kind, "apiVersion": rt.api_version(), "metadata": meta, "items": page.items})
}

fn metadata_only(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]})
}

fn render_one(format: Format, rt: &ResourceType, obj: &Value, include: IncludeObject) -> Value {
    match format {
        Format::Object => obj.clone(),
        Format::Metadata => metadata_only(obj),
        Format::Table => table::table(
            rt,
            std::slice::from_ref(obj),
            json!({"resourceVersion": obj["metadata"]["resourceVersion"]}),
            include,
            true,
        ),
    }
}

/// Everything on a resource but the service proxy: reviews, tokens, reads,
/// watches and writes.
#[allow(clippy::too_many_arguments)]
fn resource(
    api: &Api,
    user: &User,
    rt: &Arc<ResourceType>,
    p: &ResourcePath,
    verb: &str,
    q: &ListQuery,
    raw_query: &fundament_kube_core::Query,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let cluster = &api.cluster;
    let format = format_of(headers);
    let include = IncludeObject::parse(&q.include_object);
    let strict = raw_query.get("fieldValidation") == Some("Strict");
    let opts = WriteOptions { dry_run: q.dry_run, origin: Origin::Api, strict };
    if rt.builtin.is_some_and(Builtin::is_review) {
        if verb != "create" {
            return Err(ApiError::method_not_allowed());
        }
        let answer = reviews::answer(rt, &cluster.policy(), user, decode_body(headers, body)?)?;
        return Ok(json_response(StatusCode::CREATED, &answer));
    }
    if p.subresource == "token" {
        if verb != "create" {
            return Err(ApiError::method_not_allowed());
        }
        return token_request(api, rt, p, decode_body(headers, body)?);
    }
    if let Some(garden) = api.garden.as_ref().filter(|_| p.subresource == crate::garden::ADMIN_KUBECONFIG) {
        if verb != "create" {
            return Err(ApiError::method_not_allowed());
        }
        let answer = garden.admin_kubeconfig(cluster, rt, p, user, decode_body(headers, body)?)?;
        return Ok(json_response(StatusCode::CREATED, &answer));
    }
    let status_sub = p.subresource == "status";
    match verb {
        "get" => {
            let obj = cluster.get(rt, &p.namespace, &p.name)?;
            Ok(json_response(StatusCode::OK, &render_one(format, rt, &obj, include)))
        }
        "list" => {
            let page = cluster.list(rt, &p.namespace, q)?;
            let doc = match format {
                Format::Object => list_json(rt, &page),
                Format::Metadata => {
                    let mut l = list_json(rt, &page);
                    l["kind"] = json!("PartialObjectMetadataList");
                    l["apiVersion"] = json!("meta.k8s.io/v1");
                    l["items"] = Value::Array(page.items.iter().map(metadata_only).collect());
                    l
                }
                Format::Table => {
                    let meta = list_json(rt, &page)["metadata"].clone();
                    table::table(rt, &page.items, meta, include, true)
                }
            };
            Ok(json_response(StatusCode::OK, &doc))
        }
        "watch" => watch::serve(Arc::clone(cluster), Arc::clone(rt), p, q.clone(), format, include),
        "create" => {
            let obj = cluster.create(user, rt, &p.namespace, decode_body(headers, body)?, opts)?;
            Ok(json_response(StatusCode::CREATED, &obj))
        }
        "update" => {
            let obj = cluster.update(
                user,
                rt,
                &p.namespace,
                &p.name,
                decode_body(headers, body)?,
                status_sub,
                opts,
            )?;
            Ok(json_response(StatusCode::OK, &obj))
        }
        "patch" => {
            let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
            let patch = patch::Patch::parse(ct, body, rt)?;
            let obj = cluster.patch(user, rt, &p.namespace, &p.name, &patch, status_sub, opts)?;
            Ok(json_response(StatusCode::OK, &obj))
        }
        "delete" => {
            let options = if body.is_empty() { Value::Null } else { decode_body(headers, body)? };
            let dry_run =
                opts.dry_run || options["dryRun"].as_array().is_some_and(|a| a.iter().any(|v| v == "All"));
            let gone = cluster.delete(
                user,
                rt,
                &p.namespace,
                &p.name,
                &options["preconditions"],
                WriteOptions { dry_run, ..opts },
            )?;
            if rt.crd.is_some() || crate::object::is_terminating(&gone) {
                return Ok(json_response(StatusCode::OK, &gone));
            }
            Ok(json_response(
                StatusCode::OK,
                &status::success(&rt.group, &rt.plural, &p.name, crate::object::uid(&gone)),
            ))
        }
        "deletecollection" => {
            cluster.delete_collection(user, rt, &p.namespace, q, opts)?;
            Ok(json_response(
                StatusCode::OK,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}),
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// TokenRequest: a token for an existing ServiceAccount, bound to its uid.
fn token_request(api: &Api, rt: &ResourceType, p: &ResourcePath, body: Value) -> Result<Response, ApiError> {
    let sa = api.cluster.get(rt, &p.namespace, &p.name)?;
    let spec = &body["spec"];
    let requested = spec["expirationSeconds"].as_i64().unwrap_or(3600);
    if requested < 600 {
        return Err(ApiError::invalid(
            "TokenRequest",
            "authentication.k8s.io",
            &p.name,
            vec![status::Cause::new(
                "FieldValueInvalid",
                "spec.expirationSeconds",
                format!("Invalid value: {requested}: may not specify a duration less than 10 minutes"),
            )],
        ));
    }
    let ttl = requested.min(48 * 3600);
    let audiences: Vec<String> = spec["audiences"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .filter(|a: &Vec<String>| !a.is_empty())
        .unwrap_or_else(|| vec![crate::tokens::ISSUER.to_string()]);
    let now = now_unix();
    let token = api.issuer.issue(&p.namespace, &p.name, crate::object::uid(&sa), audiences.clone(), now, ttl);
    let expires = time::OffsetDateTime::from_unix_timestamp(now + ttl)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default();
    let answer = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": p.name, "namespace": p.namespace, "creationTimestamp": now_rfc3339()},
        "spec": {"audiences": audiences, "expirationSeconds": ttl, "boundObjectRef": spec["boundObjectRef"]},
        "status": {"token": token, "expirationTimestamp": expires},
    });
    Ok(json_response(StatusCode::CREATED, &answer))
}
