//! The YAML tab of the generated form: the object as text in a textarea (parsed and
//! written by the server, so the browser's bundle carries no YAML code), a review of
//! the change against the live object as a line diff before saving, and, when
//! someone else changed the object since it was loaded, their change with the choice
//! to reload — discarding the edit or re-applying it. Never a silent overwrite.

use crate::chunks::use_navigate;
use leptos::prelude::*;

use super::api::{Conflict, YamlEdit, YamlOutcome, save_yaml};
use super::form::FormContext;
use super::yaml_edit::{DiffLine, counts};

/// What the YAML tab edits, shared with the form (which saves at the same version).
#[derive(Clone, Copy)]
pub struct YamlBuffer {
    /// The text being edited.
    pub text: RwSignal<String>,
    /// The text as loaded, and the object's resourceVersion then (empty for a create).
    pub loaded: RwSignal<String>,
    pub version: RwSignal<String>,
    /// Why the text cannot be used (line and column for a syntax error), or the API
    /// server's message.
    pub message: RwSignal<Option<String>>,
    /// The reviewed change, while the text is the one reviewed.
    pub review: RwSignal<Option<Vec<DiffLine>>>,
    pub conflict: RwSignal<Option<Conflict>>,
}

impl YamlBuffer {
    pub fn new(text: String, version: String) -> Self {
        Self {
            text: RwSignal::new(text.clone()),
            loaded: RwSignal::new(text),
            version: RwSignal::new(version),
            message: RwSignal::new(None),
            review: RwSignal::new(None),
            conflict: RwSignal::new(None),
        }
    }

    /// New text from elsewhere (the form): any review is of older text.
    pub fn replace_text(&self, text: String) {
        self.text.set(text);
        self.review.set(None);
        self.message.set(None);
    }

    /// After a conflict: the live object becomes what the edit was loaded as, and the
    /// text is `text` (the live object's, or the edit re-applied onto it).
    fn reload(&self, conflict: &Conflict, text: String) {
        self.loaded.set(conflict.live_yaml.clone());
        self.version.set(conflict.live_version.clone());
        self.conflict.set(None);
        self.replace_text(text);
    }
}

/// What a text of `bytes` is told when it is longer than a save takes.
fn too_long(bytes: usize) -> Option<impl IntoView> {
    use super::yaml_edit::MAX_YAML_BYTES;
    (bytes > MAX_YAML_BYTES).then(|| {
        let message = format!(
            "The text is {} KiB: at most {} KiB can be saved. Leave out what the object does not need.",
            bytes.div_ceil(1024),
            MAX_YAML_BYTES / 1024
        );
        view! { <p role="alert" data-too-long="" class="text-sm text-danger">{message}</p> }
    })
}

/// The textarea, the review and the conflict.
#[component]
pub fn YamlEditor(buffer: YamlBuffer, context: FormContext, editing: bool, subject: String) -> impl IntoView {
    let busy = RwSignal::new(false);
    let navigate = use_navigate();
    let ctx = StoredValue::new(context);
    let send = move |dry_run: bool| {
        if busy.get_untracked() {
            return;
        }
        let c = ctx.get_value();
        let navigate = navigate.clone();
        busy.set(true);
        leptos::task::spawn_local(async move {
            let answer = save_yaml(
                c.scope.cluster_id.clone(),
                c.scope.crd.clone(),
                c.scope.project.clone(),
                c.existing.clone(),
                YamlEdit {
                    text: buffer.text.get_untracked(),
                    loaded: buffer.loaded.get_untracked(),
                    resource_version: buffer.version.get_untracked(),
                },
                dry_run,
            )
            .await;
            busy.set(false);
            buffer.message.set(None);
            match answer {
                Ok(YamlOutcome::Review(lines)) => buffer.review.set(Some(lines)),
                Ok(YamlOutcome::Saved { name, namespace }) => {
                    super::form::show_saved(&navigate, &c.scope.detail_path(&name, namespace.as_deref()));
                }
                Ok(YamlOutcome::Conflict(conflict)) => {
                    buffer.review.set(None);
                    buffer.conflict.set(Some(conflict));
                }
                Ok(YamlOutcome::Invalid(message) | YamlOutcome::Refused(message)) => {
                    buffer.review.set(None);
                    buffer.message.set(Some(message));
                }
                Err(error) => buffer.message.set(Some(error.to_string())),
            }
        });
    };
    let review = send.clone();
    let action = if editing { "Save" } else { "Create" };
    view! {
        <div class="card grid max-w-3xl gap-3">
            {move || buffer.message.get().map(|m| view! {
                <p role="alert" class="rounded-lg border border-danger/40 bg-danger/10 p-3 text-sm">{m}</p>
            })}
            {move || buffer.conflict.get().map(|c| view! { <ConflictNotice conflict=c buffer subject=subject.clone() /> })}
            <div class="field">
                <label class="field-label" for="f-yaml">"YAML"</label>
                <textarea id="f-yaml" name="yaml" class="input font-mono text-xs" rows="24" spellcheck="false"
                    autocomplete="off" prop:value=move || buffer.text.get()
                    on:input=move |ev| {
                        buffer.text.set(event_target_value(&ev));
                        buffer.review.set(None);
                    }>
                    // The server's render (and the page without JavaScript) shows the text too.
                    {buffer.text.get_untracked()}
                </textarea>
                // Said while typing or pasting, not only when "Review" is refused.
                {move || buffer.text.with(|t| too_long(t.len()))}
                // The textarea obeys bidirectional controls (it cannot show them otherwise than as
                // text): said, and the review writes them out.
                {move || buffer.text.with(|t| crate::markup::bidi_controls_note(t)).map(|note| view! {
                    <p role="status" data-bidi-controls="" class="text-sm text-danger">{note}</p>
                })}
                <p class="text-xs text-muted">
                    {editing.then(|| view! { "Loaded at resource version "<span class="font-mono">{move || buffer.version.get()}</span>". " })}
                    "Status and the fields the server sets (managedFields, uid, resourceVersion, creationTimestamp, \
                     generation) are not part of the text; they stay as they are."
                </p>
            </div>
            {move || buffer.review.get().map(|lines| {
                let send = send.clone();
                let empty = counts(&lines) == (0, 0);
                view! {
                    <section class="grid gap-2" aria-labelledby="review-heading">
                        <h2 id="review-heading" class="font-semibold">
                            {if editing { "Your change to the live object" } else { "What will be created" }}
                        </h2>
                        {if empty {
                            view! { <p class="text-sm">"No changes."</p> }.into_any()
                        } else {
                            view! { <DiffView lines label="Your change" /> }.into_any()
                        }}
                        <div class="flex gap-2">
                            <button type="button" class="button inline-flex" disabled=move || busy.get() || empty
                                on:click=move |_| send(false)>{action}</button>
                            <button type="button" class="button-secondary" on:click=move |_| buffer.review.set(None)>
                                "Keep editing"
                            </button>
                        </div>
                    </section>
                }
            })}
            <div class="flex gap-2">
                // Marked, not `disabled`, while busy: a button that becomes disabled loses focus.
                <button type="button" class="button-secondary" aria-disabled=move || busy.get().to_string()
                    on:click=move |_| review(true)>"Review changes"</button>
                <a href=ctx.with_value(FormContext::cancel_href) class="button-secondary inline-flex">"Cancel"</a>
            </div>
        </div>
    }
}

/// Someone else's change, and the two ways on.
#[component]
fn ConflictNotice(conflict: Conflict, buffer: YamlBuffer, subject: String) -> impl IntoView {
    let from = buffer.version.get_untracked();
    let stored = StoredValue::new(conflict.clone());
    view! {
        <div role="alert" class="grid gap-2 rounded-lg border border-danger/40 bg-danger/10 p-3 text-sm">
            <h2 class="font-semibold">"Changed by someone else"</h2>
            <p>{format!(
                "{subject} was changed after you loaded it (resource version {from}, now {}), so nothing was \
                 saved.",
                conflict.live_version
            )}</p>
            <DiffView lines=conflict.other_change label="Their change" />
            <div class="flex flex-wrap gap-2">
                <button type="button" class="button-secondary"
                    on:click=move |_| stored.with_value(|c| buffer.reload(c, c.live_yaml.clone()))>
                    "Reload, discarding my edit"
                </button>
                <button type="button" class="button-secondary"
                    on:click=move |_| stored.with_value(|c| buffer.reload(c, c.reapplied.clone()))>
                    "Reload and re-apply my edit"
                </button>
            </div>
        </div>
    }
}

/// A line diff: each changed line marked by a sign and, for screen readers, a word
/// (not by colour alone).
#[component]
pub fn DiffView(lines: Vec<DiffLine>, label: &'static str) -> impl IntoView {
    let (added, removed) = counts(&lines);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    // As stored, not as a bidirectional control would reorder it: the review is what is saved.
    let shown = |text: String| crate::markup::visible_bidi_controls(&text).into_owned();
    let rows = lines
        .into_iter()
        .map(|line| match line {
            DiffLine::Same(text) => {
                view! { <span class="block whitespace-pre">"  "{shown(text)}</span> }.into_any()
            }
            DiffLine::Added(text) => view! {
                <ins class="block whitespace-pre bg-accent/15 no-underline">
                    <span aria-hidden="true">"+ "</span><span class="sr-only">"Added: "</span>{shown(text)}
                </ins>
            }
            .into_any(),
            DiffLine::Removed(text) => view! {
                <del class="block whitespace-pre bg-danger/15 no-underline">
                    <span aria-hidden="true">"- "</span><span class="sr-only">"Removed: "</span>{shown(text)}
                </del>
            }
            .into_any(),
            DiffLine::Skipped(n) => view! {
                <span class="block text-muted">{format!("… {n} unchanged line{}", plural(n))}</span>
            }
            .into_any(),
        })
        .collect_view();
    view! {
        <figure class="grid gap-1" aria-label=label>
            <figcaption class="text-xs text-muted">
                {format!("{label}: {added} line{} added, {removed} line{} removed", plural(added), plural(removed))}
            </figcaption>
            <pre class="overflow-x-auto rounded-lg border border-line bg-raised p-2 font-mono text-xs"><code>{rows}</code></pre>
        </figure>
    }
}
