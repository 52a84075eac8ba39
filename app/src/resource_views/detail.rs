//! The generated detail view of one object: metadata, the spec rendered from
//! the CRD schema (descriptions as help text), status with a conditions
//! table, events, the YAML, and delete with a confirmation naming the object.
//! A watch on the object keeps the page current.

use std::cell::Cell;

use crate::chunks::use_navigate;
use fundament_kube_core::ObjectMeta;
use leptos::prelude::*;
use leptos_router::{
    NavigateOptions,
    hooks::{use_location, use_query_map},
};
use serde::Deserialize;
use serde_json::Value;

use super::api::{EventRow, ObjectDetail, delete_object, get_object};
use super::scope::ResourceScope;
use crate::{
    components::status::{LivePaused, when_found},
    plugins::model::KindInfo,
    resource_views::stale::{KeptAnswer, StaleNote},
};
use fundament_plugin_types::KindGuide;

/// Where the object is.
#[derive(Debug, Clone, PartialEq)]
pub struct DetailContext {
    pub scope: ResourceScope,
    pub name: String,
    pub namespace: Option<String>,
    /// What the plugin says about the kind's conditions and labels.
    pub guide: KindGuide,
    /// `?delete=1`: the delete confirmation as the page shows it without JavaScript.
    pub confirm_delete: bool,
}

/// Deeper than this, values are shown as JSON.
const MAX_DEPTH: usize = 8;
/// How many fields and items a section (spec, status) shows in all; the YAML tab has the rest.
/// An object may hold hundreds of thousands, each with its schema's description.
const MAX_SHOWN: usize = 1_000;
/// How much of a description a field's tooltip shows.
const MAX_TITLE: usize = 300;
/// How much of a string value the page shows (a field's, in characters); the YAML has it
/// whole. Anyone who may write the object writes its text, a quarter of a megabyte if they like.
const MAX_TEXT: usize = 2_000;
/// How much of an annotation or label (`key=value`) a badge shows.
const MAX_BADGE: usize = 300;

/// The generated detail view.
#[component]
pub fn GeneratedDetail(context: DetailContext) -> impl IntoView {
    let changes = RwSignal::new(0u32);
    // Where the tab's watch of the kind was when the object was asked for: what the answer
    // is at least as new as (browser only; the server's render has no watch).
    let asked_at = StoredValue::new(None::<String>);
    let ctx = context.clone();
    let kept = KeptAnswer::<(), ObjectDetail>::default();
    let detail = Resource::new(
        move || changes.get(),
        move |_| {
            #[cfg(feature = "hydrate")]
            asked_at.set_value(super::watch::last_version(&ctx.scope.collection()));
            let answer = get_object(
                ctx.scope.cluster_id.clone(),
                ctx.scope.crd.clone(),
                ctx.scope.project.clone(),
                ctx.name.clone(),
                ctx.namespace.clone(),
            );
            async move { kept.settle(&(), answer.await) }
        },
    );
    kept.remember(detail, || ());
    // As in the list: a hydrated resource is asked again explicitly.
    Effect::watch(move || changes.get(), move |_, _, _| detail.refetch(), false);
    // Set while the watch cannot reach the cluster.
    let paused = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    keep_current(&context, detail, changes, asked_at, paused);
    #[cfg(not(feature = "hydrate"))]
    let _ = asked_at;
    let missing = Some(context.scope.missing(&context.name, context.namespace.as_deref()));
    // The same question again, as a watch event asks it.
    let ask_again = Callback::new(move |()| changes.update(|n| *n = n.wrapping_add(1)));
    let ctx = StoredValue::new(context);
    view! {
        <LivePaused paused />
        <StaleNote stale=kept.stale what="The object" retry=ask_again />
        {when_found(
            "Loading…",
            detail,
            missing,
            move |detail| view! { <Detail detail context=ctx.get_value() /> }.into_any(),
        )}
    }
}

/// Follows the object through the tab's shared watch of its kind, and reads it again
/// when it changes.
#[cfg(feature = "hydrate")]
fn keep_current(
    context: &DetailContext,
    detail: Resource<Result<ObjectDetail, crate::error::AppError>>,
    changes: RwSignal<u32>,
    asked_at: StoredValue<Option<String>>,
    paused: RwSignal<bool>,
) {
    use std::time::Duration;

    use super::watch::{Interest, debounced_bump, follow, subscribe};

    let loaded = Memo::new(move |_| detail.with(|d| matches!(d, Some(Ok(_)))));
    let context = context.clone();
    Effect::new(move |_| {
        if !loaded.get() {
            return;
        }
        let object_rv = detail.with_untracked(|d| match d {
            Some(Ok(d)) => d.object.pointer("/metadata/resourceVersion")?.as_str().map(str::to_owned),
            _ => None,
        });
        // The answer reflects every change up to the later of the two.
        let number = |v: &Option<String>| v.as_deref().and_then(|v| v.parse::<u64>().ok());
        let asked = asked_at.get_value();
        let rv = if number(&asked) > number(&object_rv) { asked } else { object_rv };
        let again = debounced_bump(changes, Duration::from_millis(100));
        let interest = Interest {
            namespaces: context
                .namespace
                .clone()
                .filter(|_| context.scope.kind.namespaced)
                .map(|ns| vec![ns]),
            name: Some(context.name.clone()),
        };
        let object =
            subscribe(context.scope.collection(), interest, rv, move |note| follow(note, paused, &again));
        let held = send_wrapper::SendWrapper::new(object);
        on_cleanup(move || drop(held.take()));
    });
}

#[component]
fn Detail(detail: ObjectDetail, context: DetailContext) -> impl IntoView {
    let ObjectDetail {
        object,
        yaml,
        spec_schema,
        status_schema,
        events,
        can_delete,
        can_update,
        delete_refused,
    } = detail;
    // Not allowed to delete, yet asked to (`?delete=1`, or a delete posted without JavaScript,
    // or the right revoked since the page loaded): the page says why nothing happened.
    let delete_refusal = if can_delete {
        None
    } else {
        delete_refused.clone().or_else(|| {
            context.confirm_delete.then(|| {
                format!(
                    "You may not delete {} {}: the cluster's RBAC for your account does not allow it.",
                    context.scope.kind.kind, context.name
                )
            })
        })
    };
    let edit = context.scope.detail_path(&context.name, context.namespace.as_deref());
    let edit = format!("{edit}{}edit=1", if edit.contains('?') { '&' } else { '?' });
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let status = object.get("status").cloned().unwrap_or(Value::Null);
    // The YAML's disclosure is in the URL (`?yaml=1`), as the form's YAML tab is: a reload or a
    // shared link opens it again. Without JavaScript it still opens and closes, and the link opens it.
    let (location, query) = (use_location(), use_query_map());
    let yaml_open = query.read_untracked().get("yaml").as_deref() == Some("1");
    let navigate = use_navigate();
    let keep_in_url = move |ev: leptos::ev::Event| {
        let open = event_target::<leptos::web_sys::Element>(&ev).has_attribute("open");
        let query = query.get_untracked();
        // Also fired for a disclosure the page opened from the URL: nothing to change then.
        if (query.get("yaml").as_deref() == Some("1")) != open {
            let href = super::form::yaml_href(&location.pathname.get_untracked(), &query, open);
            navigate(&href, NavigateOptions { replace: true, scroll: false, ..Default::default() });
        }
    };
    view! {
        <div class="mb-4 flex flex-wrap justify-end gap-2">
            {can_update.then(|| view! { <a href=edit class="button-secondary">"Edit"</a> })}
            {can_delete.then(|| view! { <DeleteAction context=context.clone() refused=delete_refused /> })}
        </div>
        {delete_refusal.map(|reason| view! {
            <div class="mb-4" data-delete-refused="">{super::form::cannot_do_here(reason)}</div>
        })}
        // One column that may shrink below its content (`minmax(0, 1fr)`): a long YAML line
        // scrolls inside its card instead of widening the page on a phone.
        <div class="grid grid-cols-1 gap-4">
            <Metadata object=object.clone() kind=context.scope.kind.clone() guide=context.guide.clone()
                list=context.scope.list_path() />
            <section class="card" aria-labelledby="spec-heading">
                <h2 id="spec-heading" class="card-title">"Spec"</h2>
                {fields(&spec_schema, &spec, 0, &Cell::new(MAX_SHOWN))}
            </section>
            {(!status.is_null()).then(|| view! { <Status schema=status_schema status guide=context.guide.clone() /> })}
            <Events events />
            <section class="card" aria-labelledby="yaml-heading">
                <details open=yaml_open on:toggle=keep_in_url>
                    <summary id="yaml-heading" class="card-title cursor-pointer">"YAML"</summary>
                    <pre class="overflow-x-auto rounded-lg bg-raised p-3 font-mono text-xs" aria-label="YAML"><code>{yaml}</code></pre>
                </details>
            </section>
        </div>
    }
}

#[component]
fn Metadata(object: Value, kind: KindInfo, guide: KindGuide, list: String) -> impl IntoView {
    // The API server validated the metadata; anything else shows as empty.
    let meta = object.get("metadata").and_then(|m| ObjectMeta::deserialize(m).ok()).unwrap_or_default();
    let owners: Vec<String> =
        meta.owner_references.iter().map(|o| format!("{}/{}", o.kind, o.name)).collect();
    let ObjectMeta { name, namespace, uid, creation_timestamp, labels, annotations, .. } = meta;
    let created = creation_timestamp.unwrap_or_default();
    let (labels, annotations): (Vec<_>, Vec<_>) =
        (labels.into_iter().collect(), annotations.into_iter().collect());
    let row = |label: &'static str, value: AnyView| view! { <div class="py-1"><dt class="text-xs font-medium text-muted">{label}</dt><dd class="min-w-0 wrap-anywhere">{value}</dd></div> };
    view! {
        <section class="card" aria-labelledby="metadata-heading">
            <h2 id="metadata-heading" class="card-title">"Metadata"</h2>
            <dl class="grid gap-x-6 gap-y-1 sm:grid-cols-2">
                {row("Kind", view! { {kind.kind.clone()} }.into_any())}
                {row("API version", view! { {format!("{}/{}", kind.group, kind.version)} }.into_any())}
                {row("Name", view! { {name} }.into_any())}
                {(!namespace.is_empty()).then(|| row("Namespace", view! { {namespace} }.into_any()))}
                {row("Created", view! { <time datetime=created.clone() title=created.clone()>{created.clone()}</time> }.into_any())}
                {row("UID", view! { <span class="font-mono text-xs">{uid}</span> }.into_any())}
                {row("Labels", badges(labels, Some(list), &guide))}
                {row("Annotations", badges(annotations, None, &KindGuide::default()))}
                {(!owners.is_empty()).then(|| row("Owners", view! { {owners.join(", ")} }.into_any()))}
            </dl>
        </section>
    }
}

/// `text` as the page shows it: its bidirectional controls made visible, at most `max`
/// characters and, when it is longer, how long it is in all.
fn shown_text(text: &str, max: usize) -> AnyView {
    let visible = crate::markup::visible_bidi_controls(text);
    match visible.char_indices().nth(max) {
        None => view! { {visible.into_owned()} }.into_any(),
        Some((cut, _)) => {
            let bytes = text.len();
            let whole = if bytes >= 10 * 1024 {
                format!(" ({} KB in all: see the YAML)", bytes.div_ceil(1024))
            } else {
                format!(" ({bytes} bytes in all: see the YAML)")
            };
            let head = format!("{}…", &visible[..cut]);
            view! { {head}<span class="text-xs text-muted" data-shortened=bytes>{whole}</span> }.into_any()
        }
    }
}

/// `key=value` badges; with `list`, each links to the list filtered by it.
/// A label the guide describes carries its description as the tooltip.
fn badges(pairs: Vec<(String, String)>, list: Option<String>, guide: &KindGuide) -> AnyView {
    if pairs.is_empty() {
        return view! { <span class="text-muted">"—"</span> }.into_any();
    }
    let items = pairs
        .into_iter()
        .map(|(k, v)| {
            let text = format!("{k}={v}");
            let shown = shown_text(&text, MAX_BADGE);
            let described = guide.label_description(&k).map(|d| format!("{d} "));
            match &list {
                Some(list) => {
                    let href = format!("{list}?labels={}", crate::plugins::model::encode_segment(&text));
                    let title = format!(
                        "{}Show all with {}",
                        described.unwrap_or_default(),
                        crate::markup::visible_bidi_controls(&text)
                    );
                    view! {
                        <li class="badge max-w-full font-mono wrap-anywhere">
                            <a href=href title=title class="hover:underline">{shown}</a>
                        </li>
                    }
                    .into_any()
                }
                None => {
                    view! { <li class="badge max-w-full font-mono wrap-anywhere" title=described>{shown}</li> }
                        .into_any()
                }
            }
        })
        .collect_view();
    view! { <ul class="flex flex-wrap gap-1">{items}</ul> }.into_any()
}

/// What is left out of a section once it showed [`MAX_SHOWN`] fields and items.
fn more(left_out: usize) -> impl IntoView {
    (left_out > 0).then(|| {
        view! { <p class="text-xs text-muted" data-left-out=left_out>{format!("{left_out} more: see the YAML tab")}</p> }
    })
}

/// Takes one of what `room` has left; false when none is.
fn take(room: &Cell<usize>) -> bool {
    let left = room.get();
    room.set(left.saturating_sub(1));
    left > 0
}

/// The fields of an object, in schema order, then any the schema does not name.
fn fields(schema: &Value, value: &Value, depth: usize, room: &Cell<usize>) -> AnyView {
    let Some(object) = value.as_object().filter(|o| !o.is_empty()) else {
        return view! { <p class="text-muted">"—"</p> }.into_any();
    };
    let props = schema.get("properties").and_then(Value::as_object);
    let mut keys: Vec<&String> =
        props.map(|p| p.keys().filter(|k| object.contains_key(*k)).collect()).unwrap_or_default();
    keys.extend(object.keys().filter(|k| props.is_none_or(|p| !p.contains_key(*k))));
    let total = keys.len();
    let shown: Vec<&String> = keys.into_iter().take_while(|_| take(room)).collect();
    let left_out = total - shown.len();
    let entries = shown
        .into_iter()
        .map(|key| {
            let field_schema = props.and_then(|p| p.get(key)).or_else(|| schema.get("additionalProperties")).cloned().unwrap_or(Value::Null);
            let description = field_schema.get("description").and_then(Value::as_str).map(str::to_owned);
            let title = description.as_deref().map(|d| super::schema_form::shortened(d, MAX_TITLE));
            let v = &object[key];
            let wide = v.is_object() || v.is_array();
            view! {
                <div class="py-1.5" class:sm:col-span-2=wide>
                    <dt class="text-xs font-medium text-muted" title=title>{super::schema_form::label_for(key)}</dt>
                    <dd class="min-w-0 wrap-anywhere">
                        {value_view(&field_schema, v, depth + 1, room)}
                        {description.filter(|d| d.len() <= 200).map(|d| view! { <p class="mt-0.5 text-xs text-muted">{d}</p> })}
                    </dd>
                </div>
            }
        })
        .collect_view();
    view! { <dl class="grid gap-x-6 sm:grid-cols-2">{entries}</dl>{more(left_out)} }.into_any()
}

/// One value as its schema describes it.
fn value_view(schema: &Value, value: &Value, depth: usize, room: &Cell<usize>) -> AnyView {
    if depth > MAX_DEPTH {
        return view! { <code class="font-mono text-xs">{value.to_string()}</code> }.into_any();
    }
    let format = schema.get("format").and_then(Value::as_str);
    match value {
        Value::Null => view! { <span class="text-muted">"—"</span> }.into_any(),
        Value::Bool(b) => view! { <span class="badge">{if *b { "Yes" } else { "No" }}</span> }.into_any(),
        Value::String(s) if format == Some("date-time") => {
            view! { <time datetime=s.clone() title=s.clone()>{s.clone()}</time> }.into_any()
        }
        Value::String(s) if schema.get("enum").is_some() => {
            view! { <span class="badge">{s.clone()}</span> }.into_any()
        }
        Value::String(s) if s.is_empty() => view! { <span class="text-muted">"—"</span> }.into_any(),
        Value::String(s) => view! { <span>{shown_text(s, MAX_TEXT)}</span> }.into_any(),
        Value::Number(n) => view! { <span>{n.to_string()}</span> }.into_any(),
        Value::Array(items) if items.is_empty() => view! { <span class="text-muted">"—"</span> }.into_any(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let shown: Vec<&Value> = items.iter().take_while(|_| take(room)).collect();
            let left_out = items.len() - shown.len();
            view! {
                <ul class="flex flex-wrap gap-1">
                    {shown.into_iter().map(|i| view! { <li class="badge">{i.as_str().map_or_else(|| i.to_string(), str::to_owned)}</li> }).collect_view()}
                </ul>
                {more(left_out)}
            }
            .into_any()
        }
        Value::Array(items) => {
            let item_schema = schema.get("items").cloned().unwrap_or(Value::Null);
            let shown: Vec<&Value> = items.iter().take_while(|_| take(room)).collect();
            let left_out = items.len() - shown.len();
            view! {
                <ol class="grid gap-2">
                    {shown.into_iter().map(|i| view! { <li class="rounded-lg border border-line p-2">{value_view(&item_schema, i, depth + 1, room)}</li> }).collect_view()}
                </ol>
                {more(left_out)}
            }
            .into_any()
        }
        Value::Object(_) => fields(schema, value, depth, room),
    }
}

#[component]
fn Status(schema: Value, status: Value, guide: KindGuide) -> impl IntoView {
    let conditions = status.get("conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut rest = status.clone();
    if let Some(o) = rest.as_object_mut() {
        o.remove("conditions");
    }
    let has_rest = rest.as_object().is_some_and(|o| !o.is_empty());
    view! {
        <section class="card" aria-labelledby="status-heading">
            <h2 id="status-heading" class="card-title">"Status"</h2>
            {(!conditions.is_empty()).then(|| view! { <Conditions conditions guide /> })}
            {has_rest.then(|| fields(&schema, &rest, 0, &Cell::new(MAX_SHOWN)))}
        </section>
    }
}

#[component]
fn Conditions(conditions: Vec<Value>, guide: KindGuide) -> impl IntoView {
    let text = |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    view! {
        <div class="mb-3 overflow-x-auto">
            <table class="table" aria-label="Conditions">
                <thead><tr>
                    <th scope="col">"Type"</th><th scope="col">"Status"</th><th scope="col">"Reason"</th>
                    <th scope="col">"Message"</th><th scope="col">"Last transition"</th>
                </tr></thead>
                <tbody>
                    {conditions.iter().map(|c| {
                        let (kind, status, reason) = (text(c, "type"), text(c, "status"), text(c, "reason"));
                        let advice = guide
                            .advice(&kind, &reason)
                            .filter(|_| status != "True")
                            .map(|a| a.what_to_do.clone());
                        let when = text(c, "lastTransitionTime");
                        view! {
                            <tr data-condition=kind.clone()>
                                <td class="font-medium">{kind.clone()}</td>
                                <td><span class="badge" class:text-danger=status == "False">{status.clone()}</span></td>
                                <td>{reason.clone()}</td>
                                <td>
                                    {crate::markup::visible_bidi_controls(&text(c, "message")).into_owned()}
                                    {advice.map(|a| view! { <p class="mt-1 text-xs"><span class="font-medium">"What to do: "</span>{a}</p> })}
                                </td>
                                <td><time datetime=when.clone() title=when.clone()>{when.clone()}</time></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn Events(events: Vec<EventRow>) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="events-heading">
            <h2 id="events-heading" class="card-title">"Events"</h2>
            {if events.is_empty() {
                view! { <p class="text-muted">"No events."</p> }.into_any()
            } else {
                view! {
                    <div class="overflow-x-auto">
                        <table class="table" aria-label="Events">
                            <thead><tr>
                                <th scope="col">"Type"</th><th scope="col">"Reason"</th><th scope="col">"Message"</th>
                                <th scope="col">"Count"</th><th scope="col">"Last seen"</th><th scope="col">"From"</th>
                            </tr></thead>
                            <tbody>
                                {events.into_iter().map(|e| view! {
                                    <tr>
                                        <td>{e.kind}</td><td>{e.reason}</td><td>{crate::markup::visible_bidi_controls(&e.message).into_owned()}</td><td>{e.count}</td>
                                        <td><time datetime=e.last_seen.clone() title=e.last_seen.clone()>{e.last_seen.clone()}</time></td>
                                        <td>{e.source}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }.into_any()
            }}
        </section>
    }
}

/// Delete, after a confirmation that names the object. With JavaScript the confirmation is a
/// dialog on the page; without, Delete opens this page with `?delete=1`, whose confirmation
/// posts the delete (`form_post`). `refused`: why such a post was refused.
#[component]
fn DeleteAction(context: DetailContext, refused: Option<String>) -> impl IntoView {
    let confirming = RwSignal::new(false);
    let busy = RwSignal::new(false);
    let error = RwSignal::new(refused);
    let navigate = use_navigate();
    let subject = format!("{} {}", context.scope.kind.kind, context.name);
    let list = context.scope.list_path();
    let ctx = StoredValue::new(context);
    let delete = move |_: leptos::ev::MouseEvent| {
        busy.set(true);
        error.set(None);
        let c = ctx.get_value();
        let navigate = navigate.clone();
        let list = list.clone();
        leptos::task::spawn_local(async move {
            match delete_object(c.scope.cluster_id, c.scope.crd, c.scope.project, c.name, c.namespace).await {
                // In place of the deleted object's page: Back does not lead to its "not found".
                Ok(()) => navigate(&list, NavigateOptions { replace: true, ..Default::default() }),
                Err(e) => {
                    error.set(Some(e.to_string()));
                    busy.set(false);
                }
            }
        });
    };
    let name = ctx.with_value(|c| c.name.clone());
    let (path, query) = (use_location().pathname.get_untracked(), use_query_map().get_untracked());
    if ctx.with_value(|c| c.confirm_delete) {
        return view! { <DeleteConfirmation path query subject name error busy delete /> }.into_any();
    }
    // This page's query as the opener's fields (a form's `GET` replaces the action's query).
    let fields = query
        .into_iter()
        .filter(|(key, _)| *key != "delete" && *key != "edit")
        .map(|(key, value)| view! { <input type="hidden" name=key.to_string() value=value /> })
        .collect_view();
    // The keyboard follows the dialog: focus goes to Cancel when it opens, Escape cancels,
    // Tab stays on its two buttons, and focus returns to Delete when it closes.
    let opener = NodeRef::<leptos::html::Button>::new();
    let confirm = NodeRef::<leptos::html::Button>::new();
    let cancel_button = NodeRef::<leptos::html::Button>::new();
    Effect::new(move || {
        if confirming.get()
            && let Some(cancel) = cancel_button.get()
        {
            let _ = cancel.focus();
        }
    });
    let cancel = move || {
        confirming.set(false);
        if let Some(opener) = opener.get_untracked() {
            let _ = opener.focus();
        }
    };
    let keys = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
        "Escape" if !busy.get_untracked() => {
            ev.prevent_default();
            cancel();
        }
        "Tab" => {
            let (first, last) =
                if ev.shift_key() { (cancel_button, confirm) } else { (confirm, cancel_button) };
            let at_edge = last.get_untracked().is_some_and(|last| {
                let last: &leptos::web_sys::EventTarget = last.as_ref();
                ev.target().as_ref() == Some(last)
            });
            if at_edge && let Some(first) = first.get_untracked() {
                ev.prevent_default();
                let _ = first.focus();
            }
        }
        _ => {}
    };
    view! {
        <form method="get" action=path class="contents">
            {fields}
            <input type="hidden" name="delete" value="1" />
            <button type="submit" class="button-secondary text-danger" node_ref=opener
                on:click=move |ev| { ev.prevent_default(); confirming.set(true); }
                aria-expanded=move || confirming.get().to_string()>
                "Delete"
            </button>
        </form>
        <Show when=move || confirming.get()>
            <div role="alertdialog" aria-labelledby="delete-title" aria-describedby="delete-warning" on:keydown=keys
                class="w-full rounded-lg border border-danger/40 bg-danger/10 p-4">
                <p id="delete-title" class="font-semibold">{format!("Delete {subject}?")}</p>
                <p id="delete-warning" class="mt-1 text-sm">"This cannot be undone."</p>
                {move || error.get().map(|e| view! { <p role="alert" class="mt-2 text-sm text-danger">{e}</p> })}
                <div class="mt-3 flex gap-2">
                    <button type="button" class="button inline-flex bg-danger" node_ref=confirm disabled=move || busy.get() on:click=delete.clone()>
                        {format!("Delete {name}")}
                    </button>
                    <button type="button" class="button-secondary" node_ref=cancel_button disabled=move || busy.get() on:click=move |_| cancel()>
                        "Cancel"
                    </button>
                </div>
            </div>
        </Show>
    }
    .into_any()
}

/// The delete confirmation of `?delete=1`: a form that posts the delete to this page, and
/// Cancel back to it. With JavaScript, Delete calls the server function as the dialog does.
#[component]
fn DeleteConfirmation(
    path: String,
    query: leptos_router::params::ParamsMap,
    subject: String,
    name: String,
    error: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
    delete: impl Fn(leptos::ev::MouseEvent) + Clone + Send + 'static,
) -> impl IntoView {
    let here = format!("{path}{}", query.to_query_string());
    let mut back = query;
    back.remove("delete");
    let cancel = format!("{path}{}", back.to_query_string());
    view! {
        <form method="post" action=here role="alertdialog" aria-labelledby="delete-title"
            aria-describedby="delete-warning" class="w-full rounded-lg border border-danger/40 bg-danger/10 p-4">
            <p id="delete-title" class="font-semibold">{format!("Delete {subject}?")}</p>
            <p id="delete-warning" class="mt-1 text-sm">"This cannot be undone."</p>
            {move || error.get().map(|e| view! { <p role="alert" class="mt-2 text-sm text-danger">{e}</p> })}
            <div class="mt-3 flex gap-2">
                <button type="submit" name=super::form_post::ACTION value=super::form_post::DELETE
                    class="button inline-flex bg-danger" disabled=move || busy.get()
                    on:click=move |ev| { ev.prevent_default(); delete(ev); }>
                    {format!("Delete {name}")}
                </button>
                <a href=cancel class="button-secondary inline-flex">"Cancel"</a>
            </div>
        </form>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    /// A quarter of a megabyte in an annotation or a field is shown in part, with its whole
    /// length; a short text whole; a cut falls between characters; bidirectional controls show.
    #[test]
    fn a_long_text_is_shown_in_part_with_its_whole_length() {
        Owner::new().with(|| {
            let long = shown_text(&"a".repeat(300_000), MAX_TEXT).to_html();
            assert!(long.len() < MAX_TEXT + 200, "{} bytes", long.len());
            assert!(long.contains(&format!("{}…", "a".repeat(MAX_TEXT))), "{long}");
            assert!(long.contains("(293 KB in all: see the YAML)"), "{long}");
            let short = shown_text("plain", MAX_TEXT).to_html();
            assert!(short.contains("plain") && !short.contains("in all"), "{short}");
            let wide = shown_text(&"é".repeat(MAX_BADGE + 1), MAX_BADGE).to_html();
            assert!(wide.contains(&format!("{}…", "é".repeat(MAX_BADGE))), "{wide}");
            assert!(wide.contains("(602 bytes in all"), "{wide}");
            let bidi = shown_text("invoice\u{202e}txt.exe", MAX_TEXT).to_html();
            assert!(!bidi.contains('\u{202e}'), "{bidi}");
        });
    }
}
