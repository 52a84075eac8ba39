//! The audit page: filters (a GET form), the calls, a live tail and the export link.

use fundament_plugin_types::audit::{AuditEntry, AuditPage};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{
    LazyRoute,
    components::Form,
    hooks::{use_location, use_query_map},
    lazy_route,
};

use super::api::{AuditView, TAIL_ROWS, audit_calls};
use super::export;
use crate::{components::status::when_loaded, routes::PageHeader};

/// `/audit`, loaded with its own chunk.
pub struct AuditRoute;

#[lazy_route]
impl LazyRoute for AuditRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        view! { <AuditPageView /> }.into_any()
    }
}

/// The audit page.
#[component]
pub fn AuditPageView() -> impl IntoView {
    let location = use_location();
    // The query as the URL has it: the filters, and `live`.
    let query = Memo::new(move |_| location.search.get().trim_start_matches('?').to_owned());
    let params = use_query_map();
    let live = Memo::new(move |_| params.read().get("live").as_deref() == Some("1"));
    let calls = Resource::new(move || query.get(), |q| audit_calls(q, None, false));
    // Newer calls the live tail found, newest first, shown above the answer's.
    let tail = RwSignal::new(Vec::<AuditEntry>::new());
    let notes = TailNotes { skipped: RwSignal::new(false), failed: RwSignal::new(None) };
    Effect::watch(
        move || query.get(),
        move |_, _, _| {
            tail.set(Vec::new());
            notes.skipped.set(false);
            notes.failed.set(None);
        },
        false,
    );
    #[cfg(feature = "hydrate")]
    follow(calls, query, live, tail, notes);
    view! {
        <Title text="Audit" />
        <PageHeader
            title="Audit"
            subtitle="What plugins did on your behalf: every call a plugin page made through the gateway, allowed or refused."
        />
        <Filters query live />
        {when_loaded(
            "Loading the audit record…",
            calls,
            move |view| view! { <Calls view tail notes /> }.into_any(),
        )}
    }
}

/// The most calls the page lists: the live tail's newest first, then the first answer's. A tail
/// left open for hours would otherwise grow the page without end.
pub const MAX_ROWS: usize = 1_000;

/// What the page says of the live tail besides its rows.
#[derive(Clone, Copy)]
struct TailNotes {
    /// More calls came at once than an answer of the tail lists ([`TAIL_ROWS`]): some are not
    /// shown.
    skipped: RwSignal<bool>,
    /// Why the tail's last ask failed, while it waits to ask again.
    failed: RwSignal<Option<String>>,
}

/// While `live` is on, keeps one long poll open for the calls after the newest shown: the
/// gateway answers as soon as one is recorded (or after a few seconds with none), so a call
/// shows within a moment of being made without asking every second.
#[cfg(feature = "hydrate")]
fn follow(
    calls: Resource<Result<AuditView, crate::error::AppError>>,
    query: Memo<String>,
    live: Memo<bool>,
    tail: RwSignal<Vec<AuditEntry>>,
    notes: TailNotes,
) {
    // Bumped to start the poll again after a failed answer.
    let restart = RwSignal::new(0u32);
    Effect::new(move |_| {
        restart.track();
        let q = query.get();
        if !live.get() {
            return;
        }
        let Some(Ok(view)) = calls.get() else { return };
        // Cleared when the query, the switch or the first answer change: this poll then ends,
        // and the request it is waiting on is dropped, which aborts it (the server's long poll
        // ends with it and frees its place among the user's tails at once, rather than holding
        // it for its 5 s while the new poll asks for one).
        // An aborted poll is never resumed, so nothing after an `await` runs once it ended.
        let (abort, registration) = futures::future::AbortHandle::new_pair();
        on_cleanup(move || abort.abort());
        let mut after = tail.with_untracked(|t| t.first().map(|e| e.id)).unwrap_or(view.page.last_id);
        let poll = futures::future::Abortable::new(
            async move {
                loop {
                    match audit_calls(q.clone(), Some(after), true).await {
                        Ok(newer) => {
                            let _ = notes.failed.try_set(None);
                            // Below what it had: the record's numbering started again (kube-api-proxy
                            // restarted without its record), and the tail follows it from there.
                            after = if newer.page.last_id < after {
                                newer.page.last_id
                            } else {
                                newer.page.last_id.max(after)
                            };
                            // The tail goes on from the newest: the calls older than the answer's
                            // oldest that came with it are not listed, and the page says so.
                            if newer.more {
                                let _ = notes.skipped.try_set(true);
                            }
                            if !newer.page.items.is_empty() {
                                let _ = tail.try_update(|t| {
                                    let mut items = newer.page.items;
                                    items.append(t);
                                    items.truncate(MAX_ROWS);
                                    *t = items;
                                });
                            }
                        }
                        Err(error) => {
                            // The page's first answer shows its own errors; the tail says why it
                            // stopped and tries again shortly (later when the server says when),
                            // unless the session ended: then only a new sign-in helps.
                            let _ = notes.failed.try_set(Some(error.to_string()));
                            if error.ends_session() {
                                break;
                            }
                            let wait = error
                                .retry_after()
                                .map_or(RETRY_AFTER_ERROR, |s| std::time::Duration::from_secs(s.into()));
                            set_timeout(move || restart.update(|n| *n += 1), wait);
                            break;
                        }
                    }
                }
            },
            registration,
        );
        leptos::task::spawn_local(async move {
            let _ = poll.await;
        });
    });
}

/// How long the live tail waits after a failed answer before it asks again.
#[cfg(feature = "hydrate")]
const RETRY_AFTER_ERROR: std::time::Duration = std::time::Duration::from_secs(2);

/// The form's text fields: (query key, label, placeholder).
const TEXT_FIELDS: [(&str, &str, &str); 8] = [
    ("user", "User", "alice"),
    ("installation", "Installation", "acme-corp--cert-manager"),
    ("plugin", "Plugin", "cert-manager"),
    ("version", "Version", "v1.17.2"),
    ("verb", "Verb", "list"),
    ("resource", "Resource", "cert-manager.io/certificates"),
    ("namespace", "Namespace", "default"),
    ("name", "Name", ""),
];

/// The filters: a GET form, so the URL holds them (bookmarks, reloads, no JavaScript).
#[component]
fn Filters(query: Memo<String>, live: Memo<bool>) -> impl IntoView {
    let params = use_query_map();
    // Set as `value` too: `prop:value` is set in the browser only, and the server's page (all there
    // is without JavaScript) must show the filters it answers.
    let value = move |key: &'static str| move || params.read().get(key).unwrap_or_default();
    let export_href = move || {
        let q = query.get();
        if q.is_empty() { export::PATH.to_owned() } else { format!("{}?{q}", export::PATH) }
    };
    let live_href = move || {
        let q = super::query::without(&query.get(), "live");
        let with = if live.get() {
            q
        } else if q.is_empty() {
            "live=1".to_owned()
        } else {
            format!("{q}&live=1")
        };
        if with.is_empty() { "/audit".to_owned() } else { format!("/audit?{with}") }
    };
    view! {
        <Form method="GET" action="" on_form_data=crate::components::without_nameless_submitter() attr:class="card mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-4" attr:aria-label="Filter the audit record">
            {TEXT_FIELDS.into_iter().map(|(key, label, placeholder)| view! {
                <label class="field">
                    <span class="field-label">{label}</span>
                    <input name=key class="input" placeholder=placeholder value=value(key) prop:value=value(key) />
                </label>
            }).collect_view()}
            <label class="field">
                <span class="field-label">"Decision"</span>
                // `prop:value` too: once a choice was made, the browser shows the chosen option
                // whatever `selected` says later (Back and Forward, which keep the form).
                <select name="decision" class="input" prop:value=value("decision")>
                    {[("", "Any"), ("allowed", "Allowed"), ("denied", "Refused"), ("error", "Failed")]
                        .into_iter()
                        .map(|(v, label)| {
                            let selected = move || params.read().get("decision").unwrap_or_default() == v;
                            view! { <option value=v selected=selected>{label}</option> }
                        })
                        .collect_view()}
                </select>
            </label>
            <label class="field">
                <span class="field-label">"Status"</span>
                <input name="status" class="input" inputmode="numeric" placeholder="403" value=value("status") prop:value=value("status") />
            </label>
            <label class="field">
                <span class="field-label">"From (UTC)"</span>
                <input name="since" type="datetime-local" class="input" value=value("since") prop:value=value("since") />
            </label>
            <label class="field">
                <span class="field-label">"Until (UTC)"</span>
                <input name="until" type="datetime-local" class="input" value=value("until") prop:value=value("until") />
            </label>
            {move || live.get().then(|| view! { <input type="hidden" name="live" value="1" /> })}
            <div class="flex flex-wrap items-end gap-3 sm:col-span-2 lg:col-span-4">
                <button type="submit" class="button inline-flex">"Apply"</button>
                <a href="/audit" class="button-secondary">"Clear"</a>
                <a href=live_href class="button-secondary">
                    {move || if live.get() { "Stop the live tail" } else { "Live tail" }}
                </a>
                // A download, not a page of the console: the router must not take it.
                <a href=export_href class="button-secondary" rel="external" download="">"Export as JSON lines"</a>
            </div>
        </Form>
    }
}

/// Whose calls, then the table.
#[component]
fn Calls(view: AuditView, tail: RwSignal<Vec<AuditEntry>>, notes: TailNotes) -> impl IntoView {
    let AuditView { page: AuditPage { items, everyone, .. }, cluster, .. } = view;
    let scope = if everyone {
        format!("Everyone's calls on {cluster}: you may audit this cluster.")
    } else {
        format!("Your own calls on {cluster}. Cluster administrators see everyone's.")
    };
    let first = items.len();
    let rows = move || {
        let mut all = tail.get();
        all.extend(items.iter().cloned());
        all.truncate(MAX_ROWS);
        all
    };
    let none = move || first == 0 && tail.with(Vec::is_empty);
    let trimmed = move || tail.with(Vec::len) + first > MAX_ROWS;
    view! {
        <p class="mb-3 text-sm text-muted" data-audit-scope=if everyone { "everyone" } else { "own" }>{scope}</p>
        {move || notes.failed.get().map(|why| view! {
            <p class="mb-3 text-sm text-danger" role="status" data-audit-tail="failed">{format!("Live tail: {why}")}</p>
        })}
        {move || notes.skipped.get().then(|| view! {
            <p class="mb-3 text-sm" role="status" data-audit-tail="skipped">
                {format!("Some calls are not listed: more came at once than the live tail shows ({TAIL_ROWS} at a time). Export, or narrow the filters, to see them all.")}
            </p>
        })}
        {move || trimmed().then(|| view! {
            <p class="mb-3 text-sm text-muted" data-audit-tail="trimmed">
                {format!("The page lists the newest {MAX_ROWS} calls. Export, or narrow the filters, to see older ones.")}
            </p>
        })}
        // Focusable, so a keyboard can scroll what does not fit (axe: scrollable-region-focusable).
        <div class="card overflow-x-auto p-0" tabindex="0" role="region" aria-label="Plugin calls">
            <table class="table" aria-label="Plugin calls">
                <thead>
                    <tr>
                        <th scope="col">"Time (UTC)"</th>
                        <th scope="col">"User"</th>
                        <th scope="col">"Plugin"</th>
                        <th scope="col">"Verb"</th>
                        <th scope="col">"Resource"</th>
                        <th scope="col">"Object"</th>
                        <th scope="col">"Decision"</th>
                        <th scope="col">"Status"</th>
                        <th scope="col">"Latency"</th>
                    </tr>
                </thead>
                <tbody>
                    {move || none().then(|| view! { <tr><td colspan="9" class="text-muted">"No plugin calls match."</td></tr> })}
                    // Keyed: a tail answer adds its rows above and drops the oldest past
                    // MAX_ROWS; the rows already shown stay as they are (a selection in them
                    // survives, and 1,000 rows are not drawn again for each call).
                    <For each=rows key=row_key children=|entry| view! { <CallRow entry /> } />
                </tbody>
            </table>
        </div>
    }
}

/// A row's identity across tail answers. The id alone can repeat: the record's numbering starts
/// again when kube-api-proxy restarts without its record, and the tail then lists the new calls
/// above the old ones.
fn row_key(entry: &AuditEntry) -> (u64, String) {
    (entry.id, entry.time.clone())
}

#[component]
fn CallRow(entry: AuditEntry) -> impl IntoView {
    let decision = match entry.refused_by() {
        Some(check) => format!("refused by {check}"),
        None => entry.decision.clone(),
    };
    let object = match (entry.namespace.as_str(), entry.name.as_str()) {
        ("", "") => String::new(),
        ("", name) => name.to_owned(),
        (ns, "") => format!("{ns}/"),
        (ns, name) => format!("{ns}/{name}"),
    };
    let time = entry.time.trim_end_matches('Z').replace('T', " ");
    view! {
        <tr data-audit-id=entry.id data-decision=entry.decision.clone()>
            <td class="whitespace-nowrap font-mono text-xs"><time datetime=entry.time.clone()>{time}</time></td>
            <td>{shown(&entry.user)}</td>
            <td>
                <span class="font-medium">{shown(&entry.plugin_name)}</span>
                <span class="text-xs text-muted">{format!(" {}", shown(&entry.plugin_version))}</span>
                <p class="font-mono text-xs text-muted">{shown(&entry.installation_name)}</p>
            </td>
            <td class="font-mono text-sm">{shown(&entry.verb)}</td>
            <td class="font-mono text-sm">{shown(&entry.resource_path())}</td>
            <td class="font-mono text-sm">{shown(&object)}</td>
            <td>
                <span class=if entry.refused_by().is_some() { "badge text-danger" } else { "badge" }>{shown(&decision)}</span>
            </td>
            <td>{entry.status}</td>
            <td class="whitespace-nowrap text-sm">{format!("{:.1} ms", entry.latency_ms)}</td>
        </tr>
    }
}

/// `text` with the characters that change how text around them reads, or that cannot be seen,
/// written out as `\u{…}`: bidirectional controls (U+202E makes `exe.txt` of `txt.exe`),
/// zero-width characters and control characters. A recorded name is whatever a plugin page
/// asked for, and the page must show what it was, not what it looks like.
pub fn shown(text: &str) -> String {
    use std::fmt::Write as _;
    let hidden = |c: char| {
        c.is_control()
            || matches!(
                c,
                '\u{061c}'
                    | '\u{200b}'..='\u{200f}'
                    | '\u{202a}'..='\u{202e}'
                    | '\u{2060}'..='\u{2069}'
                    | '\u{feff}'
            )
    };
    if !text.chars().any(hidden) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_names_show_bidirectional_and_invisible_characters_written_out() {
        assert_eq!(shown("web-tls"), "web-tls");
        assert_eq!(
            shown("caf\u{e9}-\u{1f600}"),
            "caf\u{e9}-\u{1f600}",
            "other characters are shown as they are"
        );
        assert_eq!(shown("invoice\u{202e}fdp.exe"), "invoice\\u{202e}fdp.exe");
        assert_eq!(shown("a\u{2066}b\u{2069}c"), "a\\u{2066}b\\u{2069}c");
        assert_eq!(shown("ad\u{200b}min"), "ad\\u{200b}min");
        assert_eq!(shown("x\u{1b}[2Jy"), "x\\u{001b}[2Jy");
    }
}
