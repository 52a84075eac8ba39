//! The generated create and edit form: one input per schema field, named by
//! its JSON path (docs/architecture.md, "Schema-driven views"), checked by the API server's dry run, with the
//! server's messages shown at the fields they name. Where the user may not
//! create or edit, the page says why instead of showing a form. Beside it, the
//! YAML tab (`yaml_tab`): the same object as text, reviewed as a diff before saving.
//! An edit keeps the resourceVersion it was loaded at, so a change by someone else
//! since is refused, never overwritten.

use crate::chunks::use_navigate;
use leptos::prelude::*;
use leptos_router::{
    NavigateOptions,
    hooks::{use_location, use_query_map},
    params::ParamsMap,
};

use super::api::{
    Existing, FormInput, FormSetup, SubmitOutcome, ToForm, ToYaml, form_to_yaml, load_form, submit_form,
    yaml_to_form,
};
use super::form_post;
use super::schema_form::{
    Field, FieldError, FormSpec, FormValues, Kind, child_path, entry_key_path, entry_value_path, item_path,
};
use super::scope::ResourceScope;
use super::yaml_tab::{YamlBuffer, YamlEditor};
use crate::components::status::when_found;
use fundament_plugin_types::KindGuide;

/// What the form creates or edits.
#[derive(Debug, Clone, PartialEq)]
pub struct FormContext {
    pub scope: ResourceScope,
    /// Edit: the object's name and namespace.
    pub existing: Existing,
    /// What the plugin says about the kind's labels and refused writes.
    pub guide: KindGuide,
}

impl FormContext {
    /// Where the form's Cancel leads: the object (an edit), or the list (a create).
    pub(super) fn cancel_href(&self) -> String {
        match &self.existing {
            Some((name, namespace)) => self.scope.detail_path(name, namespace.as_deref()),
            None => self.scope.list_path(),
        }
    }
}

/// After a save (the form's or the YAML tab's): the object's page at `path`, in place of the
/// form in the history (Back then goes where the form was opened from, not to a form of what is
/// saved already). The edits are saved, so nothing is asked: the form unmounts only once that
/// page is ready, and a Back meanwhile was asked "Leave this page?".
pub(super) fn show_saved(navigate: &impl Fn(&str, NavigateOptions), path: &str) {
    #[cfg(feature = "hydrate")]
    crate::leave_guard::edits_saved();
    navigate(path, NavigateOptions { replace: true, ..Default::default() });
}

/// The signals every input of one form shares.
#[derive(Clone, Copy)]
struct FormState {
    spec: StoredValue<FormSpec>,
    values: RwSignal<FormValues>,
    errors: RwSignal<Vec<FieldError>>,
    editing: bool,
    namespaces: StoredValue<Vec<String>>,
    guide: StoredValue<KindGuide>,
}

/// The generated form.
#[component]
pub fn GeneratedForm(context: FormContext) -> impl IntoView {
    let ctx = context.clone();
    // `?namespace=`: the list's filter, carried by its Create link.
    let namespace = use_query_map().read_untracked().get("namespace").filter(|n| !n.is_empty());
    let setup = Resource::new(
        || (),
        move |_| {
            let scope = &ctx.scope;
            load_form(
                scope.cluster_id.clone(),
                scope.crd.clone(),
                scope.project.clone(),
                ctx.existing.clone(),
                namespace.clone(),
            )
        },
    );
    // An edit form's object may be gone; a create form loads none.
    let missing =
        context.existing.as_ref().map(|(name, namespace)| context.scope.missing(name, namespace.as_deref()));
    let ctx = StoredValue::new(context);
    let reload = Callback::new(move |()| setup.refetch());
    when_found("Loading the form…", setup, missing, move |setup| match setup.refusal.clone() {
        Some(reason) => view! { <div class="max-w-2xl">{cannot_do_here(reason)}</div> }.into_any(),
        None => view! { <FormView setup context=ctx.get_value() reload /> }.into_any(),
    })
}

/// What a sign-in keeps of this form's edits (`crate::kept_draft`): both the form's values and
/// the YAML, which may not agree (either may be the one edited), and the resourceVersion the
/// edit was loaded at, so that a change made meanwhile is a conflict at the save.
#[cfg(feature = "hydrate")]
#[derive(serde::Serialize, serde::Deserialize)]
struct FormDraft {
    values: FormValues,
    labels: String,
    yaml: String,
    version: String,
}

/// Asks before the page is left while the form or its YAML holds edits (`crate::leave_guard`:
/// a link of the console to another page, Back or Forward, a reload or close): they were lost
/// without a word. As loaded (or as posted without JavaScript and shown again) is not an edit.
/// Browser only; a save leaves by [`show_saved`], which asks nothing, and so do the Form and
/// YAML tabs (links to this same page).
fn warn_before_leaving_edits(values: RwSignal<FormValues>, labels: RwSignal<String>, buffer: YamlBuffer) {
    #[cfg(feature = "hydrate")]
    {
        let text = buffer.text;
        let loaded = (values.get_untracked(), labels.get_untracked(), text.get_untracked());
        let edited = move || {
            values.with_untracked(|v| *v != loaded.0)
                || labels.with_untracked(|l| *l != loaded.1)
                || text.with_untracked(|t| *t != loaded.2)
        };
        let draft = move || {
            serde_json::to_string(&FormDraft {
                values: values.get_untracked(),
                labels: labels.get_untracked(),
                yaml: text.get_untracked(),
                version: buffer.version.get_untracked(),
            })
            .unwrap_or_default()
        };
        crate::leave_guard::guard_edits(edited, draft, use_location());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (values, labels, buffer);
}

/// Takes back the edits kept when the session ended under this form (`crate::kept_draft`), once
/// hydrated (the first render is the server's): whether there were any for this user here.
fn take_back_kept_edits(
    values: RwSignal<FormValues>,
    labels: RwSignal<String>,
    buffer: YamlBuffer,
    synced: StoredValue<Option<(FormValues, String, String)>>,
) -> RwSignal<bool> {
    let restored = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let user =
            use_context::<crate::api::session::CurrentSession>().and_then(|s| s.0).map(|s| s.viewer.id);
        let draft = user
            .and_then(|user| crate::leave_guard::take_draft(&user))
            .and_then(|text| serde_json::from_str::<FormDraft>(&text).ok());
        let Some(draft) = draft else { return };
        values.set(draft.values);
        labels.set(draft.labels);
        buffer.replace_text(draft.yaml);
        buffer.version.set(draft.version);
        // Which of the two was edited last is not known: a switch converts.
        synced.set_value(None);
        restored.set(true);
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (values, labels, buffer, synced);
    restored
}

/// Why the user may not do what the page is for (create, edit, delete): the cluster's RBAC said no.
pub(super) fn cannot_do_here(reason: String) -> impl IntoView {
    view! {
        <div role="alert" class="card">
            <p class="font-semibold">"You cannot do this here"</p>
            <p class="mt-1">{reason}</p>
        </div>
    }
}

/// The form and the YAML tab, one shown at a time (`?yaml=1`: the YAML tab first; the
/// tabs are links, so without JavaScript they still switch).
#[component]
fn FormView(setup: FormSetup, context: FormContext, reload: Callback<()>) -> impl IntoView {
    let FormSetup {
        spec,
        values,
        labels,
        namespaces,
        yaml,
        resource_version,
        form_unavailable,
        submitted,
        ..
    } = setup;
    let as_yaml = RwSignal::new(
        form_unavailable.is_some() || use_query_map().read_untracked().get("yaml").as_deref() == Some("1"),
    );
    let buffer = YamlBuffer::new(yaml, resource_version);
    let labels = RwSignal::new(labels);
    // What the form and the YAML held when they last agreed: a switch without changes
    // converts nothing. A form posted without JavaScript and shown again holds what was posted,
    // which the YAML (as loaded) does not.
    let synced = StoredValue::new(
        submitted.is_none().then(|| (values.clone(), labels.get_untracked(), buffer.text.get_untracked())),
    );
    let submitted = submitted.unwrap_or_default();
    let state = FormState {
        spec: StoredValue::new(spec.clone()),
        values: RwSignal::new(values),
        errors: RwSignal::new(submitted.errors),
        editing: context.existing.is_some(),
        namespaces: StoredValue::new(namespaces),
        guide: StoredValue::new(context.guide.clone()),
    };
    warn_before_leaving_edits(state.values, labels, buffer);
    let restored = take_back_kept_edits(state.values, labels, buffer, synced);
    let general = RwSignal::new(submitted.general);
    let conflict = RwSignal::new(submitted.conflict);
    let conflict_from_post = submitted.conflict;
    let checked = RwSignal::new(submitted.checked);
    let busy = RwSignal::new(false);
    let navigate = use_navigate();
    let ctx = StoredValue::new(context);
    let (form_href, yaml_href) = tab_hrefs();
    // The tab shown is in the URL, so a reload or a shared link opens it again. Replaced, not
    // pushed: a tab is a view of the same form, so Back leaves the form rather than flipping tabs.
    let show = {
        let (navigate, form_href, yaml_href) = (navigate.clone(), form_href.clone(), yaml_href.clone());
        move |to_yaml: bool| {
            as_yaml.set(to_yaml);
            let href = if to_yaml { &yaml_href } else { &form_href };
            navigate(href, NavigateOptions { replace: true, scroll: false, ..Default::default() });
        }
    };
    let switch = move |to_yaml: bool| {
        if busy.get_untracked() || as_yaml.get_untracked() == to_yaml {
            return;
        }
        let c = ctx.get_value();
        let (values, label_text, text) =
            (state.values.get_untracked(), labels.get_untracked(), buffer.text.get_untracked());
        let unchanged =
            synced.with_value(|synced| {
                synced.as_ref().is_some_and(|(v, l, t)| {
                    if to_yaml { *v == values && *l == label_text } else { *t == text }
                })
            });
        if unchanged {
            show(to_yaml);
            return;
        }
        busy.set(true);
        let show = show.clone();
        leptos::task::spawn_local(async move {
            let (cluster, crd) = (c.scope.cluster_id, c.scope.crd);
            if to_yaml {
                match form_to_yaml(cluster, crd, text, values.clone(), label_text.clone()).await {
                    Ok(ToYaml::Yaml(text)) => {
                        synced.set_value(Some((values, label_text, text.clone())));
                        buffer.replace_text(text);
                        general.set(Vec::new());
                        show(true);
                    }
                    Ok(ToYaml::Refused { errors, general: messages }) => {
                        state.errors.set(errors);
                        general.set(messages);
                    }
                    Err(error) => general.set(vec![error.to_string()]),
                }
            } else {
                match yaml_to_form(cluster, crd, text.clone()).await {
                    Ok(ToForm::Form { values, labels: label_text }) => {
                        synced.set_value(Some((values.clone(), label_text.clone(), text)));
                        state.values.set(values);
                        labels.set(label_text);
                        buffer.message.set(None);
                        show(false);
                    }
                    Ok(ToForm::Invalid(message)) => buffer.message.set(Some(message)),
                    Err(error) => buffer.message.set(Some(error.to_string())),
                }
            }
            busy.set(false);
        });
    };
    let submit = move |dry_run: bool| {
        if busy.get_untracked() {
            return;
        }
        let c = ctx.get_value();
        let navigate = navigate.clone();
        busy.set(true);
        checked.set(false);
        leptos::task::spawn_local(async move {
            let answer = submit_form(
                c.scope.cluster_id.clone(),
                c.scope.crd.clone(),
                c.scope.project.clone(),
                c.existing.clone(),
                FormInput {
                    values: state.values.get_untracked(),
                    labels: labels.get_untracked(),
                    resource_version: buffer.version.get_untracked(),
                    yaml: buffer.text.get_untracked(),
                },
                dry_run,
            )
            .await;
            busy.set(false);
            conflict.set(matches!(answer, Ok(SubmitOutcome::Conflict)));
            match answer {
                Ok(SubmitOutcome::Saved { name, namespace }) => {
                    state.errors.set(Vec::new());
                    general.set(Vec::new());
                    if dry_run {
                        checked.set(true);
                    } else {
                        show_saved(&navigate, &c.scope.detail_path(&name, namespace.as_deref()));
                    }
                }
                Ok(SubmitOutcome::Refused { errors, general: messages }) => {
                    state.errors.set(errors);
                    general.set(messages);
                }
                Ok(SubmitOutcome::Conflict) => general.set(Vec::new()),
                Err(error) => general.set(vec![error.to_string()]),
            }
        });
    };
    let submit_check = submit.clone();
    let action = if state.editing { "Save" } else { "Create" };
    let fields = spec.fields.iter().map(|f| field_view(f, f.path.clone(), state)).collect_view();
    // Without JavaScript the form posts to its own page (`form_post`), which saves and goes on
    // to the object's page, or shows the form again with the server's messages.
    let post_to = form_href.clone();
    let reload_href = form_href.clone();
    let loaded_version = buffer.version.get_untracked();
    let loaded_labels = labels.get_untracked();
    // The tab list is one stop of the Tab key once hydrated (the tab not shown is reached with
    // the arrow keys, as in every tab list); without JavaScript both are plain links in the
    // Tab order. An effect, so the first hydrated render is the server's.
    let arrows_work = RwSignal::new(false);
    Effect::new(move |_| arrows_work.set(true));
    let tab = move |to_yaml: bool, href: String, label: &'static str| {
        let switch = switch.clone();
        let on_key = switch.clone();
        let id = if to_yaml { "tab-yaml" } else { "tab-form" };
        let other = if to_yaml { "tab-form" } else { "tab-yaml" };
        let panel = if to_yaml { "panel-yaml" } else { "panel-form" };
        view! {
            <a role="tab" id=id href=href aria-controls=panel
                aria-selected=move || (as_yaml.get() == to_yaml).to_string()
                tabindex=move || (arrows_work.get() && as_yaml.get() != to_yaml).then_some("-1")
                class="rounded-t-lg border border-b-0 border-line px-3 py-1.5 text-sm"
                class=("bg-surface", move || as_yaml.get() == to_yaml)
                class=("font-semibold", move || as_yaml.get() == to_yaml)
                on:click=move |ev| { ev.prevent_default(); switch(to_yaml); }
                // Two tabs: either arrow leads to the other one, Home to the first, End to the
                // last; Enter or Space then shows it (not the move itself: showing the other
                // asks the server to convert what was typed).
                on:keydown=move |ev| {
                    let to = match ev.key().as_str() {
                        "ArrowLeft" | "ArrowRight" => Some(other),
                        "Home" => Some("tab-form"),
                        "End" => Some("tab-yaml"),
                        _ => None,
                    };
                    if let Some(to) = to {
                        ev.prevent_default();
                        crate::components::focus_by_id(to);
                    }
                    if ev.key() == " " {
                        ev.prevent_default();
                        on_key(to_yaml);
                    }
                }>
                {label}
            </a>
        }
    };
    let editing = state.editing;
    let subject = ctx.with_value(|c| match &c.existing {
        Some((name, _)) => format!("{} {name}", c.scope.kind.kind),
        None => c.scope.kind.kind.clone(),
    });
    view! {
        {move || restored.get().then(|| view! {
            <p role="status" data-kept-edits="" class="mb-3 max-w-3xl rounded-lg bg-raised p-3 text-sm">
                "Your changes from before you were signed out are back. They are not saved yet."
            </p>
        })}
        <div role="tablist" aria-label="Edit as" class="flex max-w-3xl gap-1 border-b border-line">
            {tab(false, form_href, "Form")}
            {tab(true, yaml_href, "YAML")}
        </div>
        <div id="panel-yaml" role="tabpanel" aria-labelledby="tab-yaml" class="mt-3" hidden=move || !as_yaml.get()>
            <YamlEditor buffer context=ctx.get_value() editing subject=subject.clone() />
        </div>
        <div id="panel-form" role="tabpanel" aria-labelledby="tab-form" class="mt-3" hidden=move || as_yaml.get()>
        {form_unavailable.clone().map(|reason| view! {
            <div role="alert" class="card max-w-3xl" data-form-unavailable="">
                <p>{reason}</p>
            </div>
        })}
        <form class="card grid max-w-3xl gap-4" novalidate hidden=form_unavailable.is_some()
            method="post" action=post_to
            on:submit=move |ev| { ev.prevent_default(); submit(false); }>
            {editing.then(|| view! {
                <input type="hidden" name=form_post::RESOURCE_VERSION value=loaded_version
                    prop:value=move || buffer.version.get() />
            })}
            {move || {
                let messages = general.get();
                (!messages.is_empty()).then(|| view! {
                    <div role="alert" class="rounded-lg border border-danger/40 bg-danger/10 p-3 text-sm">
                        <ul>{messages.into_iter().map(|m| {
                            let hint = what_to_do(state, &m);
                            view! { <li>{m}{hint}</li> }
                        }).collect_view()}</ul>
                    </div>
                })
            }}
            {move || conflict.get().then(|| view! {
                <div role="alert" class="rounded-lg border border-danger/40 bg-danger/10 p-3 text-sm">
                    <p class="font-semibold">"Changed by someone else"</p>
                    <p class="mt-1">{format!(
                        "{subject} was changed after you opened this form, so nothing was saved. \
                         Reload it to see the change (your edit is discarded), or use the YAML tab to see \
                         the change and re-apply your edit."
                    )}</p>
                    {if conflict_from_post {
                        // Answered to a post without JavaScript: a link, so it reloads without it too.
                        view! {
                            <a href=reload_href.clone() class="button-secondary mt-2 inline-flex"
                                on:click=move |ev| { ev.prevent_default(); reload.run(()); }>
                                "Reload the form"
                            </a>
                        }.into_any()
                    } else {
                        view! {
                            <button type="button" class="button-secondary mt-2" on:click=move |_| reload.run(())>
                                "Reload the form"
                            </button>
                        }.into_any()
                    }}
                </div>
            })}
            {move || checked.get().then(|| view! {
                <p role="status" class="rounded-lg bg-raised p-3 text-sm">"The API server accepts this (dry run)."</p>
            })}
            {fields}
            <div class="field">
                <label class="field-label" for="f-metadata-labels">"Labels"</label>
                <textarea id="f-metadata-labels" name="metadata.labels" class="input font-mono" rows="3"
                    placeholder="key=value, one per line"
                    prop:value=move || labels.get() on:input=move |ev| labels.set(event_target_value(&ev))>
                    // The server's render (and the page without JavaScript) shows the text too.
                    {loaded_labels}
                </textarea>
                {label_help(&ctx.with_value(|c| c.guide.clone()))}
            </div>
            <div class="flex gap-2">
                // Submit buttons both, so that without JavaScript the post says which was pressed.
                // Marked, not `disabled`, while a post is on its way: a button that becomes disabled
                // loses the keyboard's focus to the page's body (a press meanwhile does nothing).
                <button type="submit" name=form_post::ACTION value=form_post::SAVE class="button inline-flex"
                    aria-disabled=move || busy.get().to_string()>{action}</button>
                <button type="submit" name=form_post::ACTION value=form_post::CHECK class="button-secondary"
                    aria-disabled=move || busy.get().to_string()
                    on:click=move |ev| { ev.prevent_default(); submit_check(true); }>"Check"</button>
                <a href=ctx.with_value(FormContext::cancel_href) class="button-secondary inline-flex">"Cancel"</a>
            </div>
        </form>
        </div>
    }
}

/// The tabs' links: this page without and with `yaml=1`.
fn tab_hrefs() -> (String, String) {
    let path = use_location().pathname.get_untracked();
    let query = use_query_map().get_untracked();
    (yaml_href(&path, &query, false), yaml_href(&path, &query, true))
}

/// `path` with `query`, with `yaml=1` last or without it; the other parameters keep their order.
pub(super) fn yaml_href(path: &str, query: &ParamsMap, yaml: bool) -> String {
    use crate::plugins::model::encode_segment;
    let mut pairs: Vec<String> = query
        .into_iter()
        .filter(|(key, _)| *key != "yaml")
        .map(|(key, value)| format!("{}={}", encode_segment(key), encode_segment(value)))
        .collect();
    if yaml {
        pairs.push("yaml=1".to_owned());
    }
    if pairs.is_empty() { path.to_owned() } else { format!("{path}?{}", pairs.join("&")) }
}

/// The labels the guide describes, under the labels input.
fn label_help(guide: &KindGuide) -> Option<impl IntoView + use<>> {
    (!guide.labels.is_empty()).then(|| {
        let items = guide
            .labels
            .iter()
            .map(|l| view! { <li><span class="font-mono">{l.key.clone()}</span>": "{l.description.clone()}</li> })
            .collect_view();
        view! { <ul class="text-xs text-muted" aria-label="Labels of this kind">{items}</ul> }
    })
}

fn input_id(path: &str) -> String {
    let id: String = path.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("f-{id}")
}

/// The messages for one concrete path.
fn field_errors(state: FormState, path: String) -> impl IntoView {
    move || {
        let messages: Vec<String> =
            state.errors.with(|e| e.iter().filter(|e| e.path == path).map(|e| e.message.clone()).collect());
        (!messages.is_empty()).then(|| {
            // One hint for the field: the first message the guide knows.
            let hint = messages.iter().find_map(|m| what_to_do(state, m));
            view! {
                <p class="text-sm text-danger" role="alert">{messages.join("; ")}{hint}</p>
            }
        })
    }
}

/// The guide's "What to do" for a refusal message, inside the message's own
/// alert so the field keeps one.
fn what_to_do(state: FormState, message: &str) -> Option<impl IntoView + use<>> {
    let hint = state.guide.with_value(|g| g.refusal_hint(message).map(str::to_owned))?;
    Some(view! {
        <span class="mt-1 block text-xs"><span class="font-medium">"What to do: "</span>{hint}</span>
    })
}

/// One field at a concrete path.
fn field_view(field: &Field, path: String, state: FormState) -> AnyView {
    let path_attr = path.clone();
    let label = format!("{}{}", field.label, if field.required { " *" } else { "" });
    let help = field.description.clone().map(|d| view! { <p class="text-xs text-muted">{d}</p> });
    match &field.kind {
        Kind::Object(children) => {
            let children =
                children.iter().map(|c| field_view(c, child_path(&path, &c.name), state)).collect_view();
            view! {
                <fieldset class="grid gap-3 rounded-lg border border-line p-3" data-path=path_attr>
                    <legend class="px-1 text-sm font-semibold">{label}</legend>
                    {help}
                    {children}
                    {field_errors(state, path)}
                </fieldset>
            }
            .into_any()
        }
        Kind::Array(item) => repeated(field, label, path, state, RepeatedKind::Array((**item).clone())),
        Kind::Map(value) => repeated(field, label, path, state, RepeatedKind::Map((**value).clone())),
        _ => scalar(field, label, path, state),
    }
}

enum RepeatedKind {
    Array(Field),
    Map(Field),
}

/// An array or a map: its entries, with add and remove.
fn repeated(field: &Field, label: String, path: String, state: FormState, kind: RepeatedKind) -> AnyView {
    let path_attr = path.clone();
    let p = path.clone();
    let len = Memo::new(move |_| state.values.with(|v| v.len(&p)));
    let item_label = field.label.clone();
    let kind = StoredValue::new(kind);
    let p = path.clone();
    let of = item_label.clone();
    let items = move || {
        (0..len.get())
            .map(|index| {
                let p = p.clone();
                let entry = kind.with_value(|k| match k {
                    RepeatedKind::Array(item) => field_view(item, item_path(&p, index), state),
                    RepeatedKind::Map(value) => {
                        let key = entry_key_path(&p, index);
                        view! {
                            <div class="field">
                                <label class="field-label" for=input_id(&key)>"Key"</label>
                                <input id=input_id(&key) name=key.clone() class="input"
                                    value=state.values.with_untracked(|v| v.get(&key).to_owned())
                                    prop:value={let k = key.clone(); move || state.values.with(|v| v.get(&k).to_owned())}
                                    on:input={let k = key.clone(); move |ev| state.values.update(|v| v.set(k.clone(), event_target_value(&ev)))} />
                            </div>
                            {field_view(value, entry_value_path(&p, index), state)}
                        }
                        .into_any()
                    }
                });
                let remove_path = p.clone();
                view! {
                    <li class="grid gap-2 rounded-lg border border-line p-2">
                        {entry}
                        <button type="button" class="button-secondary justify-self-start text-sm"
                            on:click=move |_| state.values.update(|v| v.remove_item(&remove_path, index))>
                            {format!("Remove item {} of {}", index + 1, of)}
                        </button>
                    </li>
                }
            })
            .collect_view()
    };
    let add_path = path.clone();
    view! {
        <fieldset class="grid gap-2 rounded-lg border border-line p-3" data-path=path_attr>
            <legend class="px-1 text-sm font-semibold">{label}</legend>
            {field.description.clone().map(|d| view! { <p class="text-xs text-muted">{d}</p> })}
            <ol class="grid gap-2">{items}</ol>
            <button type="button" class="button-secondary justify-self-start text-sm"
                on:click=move |_| state.values.update(|v| { let _ = state.spec.with_value(|s| v.add_item(s, &add_path)); })>
                {format!("Add {}", item_label.to_lowercase())}
            </button>
            {field_errors(state, path)}
        </fieldset>
    }
    .into_any()
}

/// A single input: text, number, select or JSON text.
fn scalar(field: &Field, label: String, path: String, state: FormState) -> AnyView {
    let path_attr = path.clone();
    let id = input_id(&path);
    // Name and namespace cannot change; other immutable fields stay editable so
    // the API server's own message (e.g. "cluster is immutable: delete the grant
    // and create a new one") explains the rule at the field.
    let readonly = state.editing && field.immutable && path.starts_with("metadata.");
    let p = path.clone();
    let value = move || state.values.with(|v| v.get(&p).to_owned());
    let p = path.clone();
    let set = move |ev: leptos::ev::Event| state.values.update(|v| v.set(p.clone(), event_target_value(&ev)));
    let placeholder = field
        .default
        .as_ref()
        .map(|d| d.as_str().map_or_else(|| d.to_string(), str::to_owned))
        .unwrap_or_default();
    // Marked as well as set (`value`, `selected`, a textarea's text): the server's page, and so
    // the page without JavaScript, shows and posts the value the form starts with.
    let start = state.values.with_untracked(|v| v.get(&path).to_owned());
    // What a screen reader says of the input: required (`aria-required`, not `required`, which
    // would stop a post without JavaScript before the server could say why), refused, and its
    // help and messages (below it).
    let required = field.required.then_some("true");
    let p = path.clone();
    let invalid = move || state.errors.with(|e| e.iter().any(|e| e.path == p)).then_some("true");
    let (help_id, errors_id) = (format!("{id}-help"), format!("{id}-errors"));
    let described = format!("{help_id} {errors_id}");
    let input = if path == "metadata.namespace" && !state.editing {
        let names = state.namespaces.get_value();
        view! {
            <select id=id.clone() name=path.clone() aria-required=required aria-invalid=invalid.clone() aria-describedby=described.clone() class="input" prop:value=value on:change=set>
                {names.into_iter().map(|n| view! { <option value=n.clone() selected=n == start>{n.clone()}</option> }).collect_view()}
            </select>
        }
        .into_any()
    } else {
        match &field.kind {
            Kind::Enum(options) => {
                let options = options.clone();
                view! {
                    <select id=id.clone() name=path.clone() aria-required=required aria-invalid=invalid.clone() aria-describedby=described.clone() class="input" prop:value=value on:change=set disabled=readonly>
                        <option value="">"—"</option>
                        {options.into_iter().map(|o| view! { <option value=o.clone() selected=o == start>{o.clone()}</option> }).collect_view()}
                    </select>
                }
                .into_any()
            }
            Kind::Boolean => view! {
                <select id=id.clone() name=path.clone() aria-required=required aria-invalid=invalid.clone() aria-describedby=described.clone() class="input" prop:value=value on:change=set disabled=readonly>
                    <option value="">"— (default)"</option>
                    <option value="true" selected=start == "true">"Yes"</option>
                    <option value="false" selected=start == "false">"No"</option>
                </select>
            }
            .into_any(),
            Kind::Raw => view! {
                <textarea id=id.clone() name=path.clone() aria-required=required aria-invalid=invalid.clone() aria-describedby=described.clone() class="input font-mono" rows="4" placeholder="JSON"
                    prop:value=value on:input=set readonly=readonly>{start}</textarea>
            }
            .into_any(),
            Kind::Integer | Kind::Number => view! {
                <input id=id.clone() name=path.clone() aria-required=required aria-invalid=invalid.clone() aria-describedby=described.clone() class="input" type="number" inputmode="decimal"
                    placeholder=placeholder value=start prop:value=value on:input=set readonly=readonly />
            }
            .into_any(),
            _ => view! {
                <input id=id.clone() name=path.clone() aria-required=required aria-invalid=invalid.clone() aria-describedby=described.clone() class="input" autocomplete="off"
                    placeholder=placeholder value=start prop:value=value on:input=set readonly=readonly />
            }
            .into_any(),
        }
    };
    view! {
        <div class="field" data-path=path_attr>
            <label class="field-label" for=id>{label}</label>
            {input}
            {field.description.clone().map(|d| view! { <p id=help_id class="text-xs text-muted">{d}</p> })}
            <div id=errors_id class="contents">{field_errors(state, path)}</div>
        </div>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&'static str, &str)]) -> ParamsMap {
        let mut map = ParamsMap::new();
        for (key, value) in pairs {
            map.insert(*key, (*value).to_owned());
        }
        map
    }

    #[test]
    fn the_tab_is_in_the_url_and_the_other_parameters_stay_as_they_were() {
        let edit = query(&[("ns", "default"), ("edit", "1")]);
        assert_eq!(yaml_href("/p/web", &edit, true), "/p/web?ns=default&edit=1&yaml=1");
        assert_eq!(yaml_href("/p/web", &edit, false), "/p/web?ns=default&edit=1");
        // Already on the YAML tab, wherever `yaml` stood: the order of the rest is kept.
        let yaml_first = query(&[("yaml", "1"), ("ns", "default"), ("edit", "1")]);
        assert_eq!(yaml_href("/p/web", &yaml_first, false), "/p/web?ns=default&edit=1");
        assert_eq!(yaml_href("/p/web", &yaml_first, true), "/p/web?ns=default&edit=1&yaml=1");
        assert_eq!(yaml_href("/p/web", &query(&[("yaml", "1")]), false), "/p/web");
    }
}
