//! The generated list of a kind: kubectl's columns, a namespace filter, a
//! label selector, text search, sorting, pages, and live updates. The filters
//! live in the URL (a GET form), so every state can be bookmarked and the
//! page works without JavaScript; with it, a watch keeps the rows current.

use leptos::prelude::*;
use leptos_router::{
    components::Form,
    hooks::{use_location, use_query_map},
    params::ParamsMap,
};

use super::api::list_table;
use super::scope::ResourceScope;
use super::stale::{KeptAnswer, StaleNote};
use super::table::{CellType, Column, ListQuery, Row, Sort, TablePage, has_wide_columns};
use crate::components::status::{LivePaused, when_loaded};

/// Where the list is and what it lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ListContext {
    pub scope: ResourceScope,
    /// The labels the plugin describes are offered as filters.
    pub guide: fundament_plugin_types::KindGuide,
}

fn query_of(q: &ParamsMap) -> ListQuery {
    ListQuery {
        namespace: q.get("namespace").filter(|n| !n.is_empty()),
        labels: q.get("labels").unwrap_or_default(),
        search: q.get("q").unwrap_or_default(),
        sort: Sort::parse(&q.get("sort").unwrap_or_default()),
        page: q.get("page").and_then(|p| p.parse::<usize>().ok()).map_or(0, |p| p.saturating_sub(1)),
    }
}

/// The current URL with some query parameters changed (`None` removes one).
fn href_with(path: &str, q: &ParamsMap, changes: &[(&str, Option<String>)]) -> String {
    let mut pairs: Vec<(String, String)> = ["namespace", "labels", "q", "sort", "page", "wide", "generated"]
        .iter()
        .filter_map(|k| q.get(k).filter(|v| !v.is_empty()).map(|v| ((*k).to_owned(), v)))
        .collect();
    for (key, value) in changes {
        pairs.retain(|(k, _)| k != key);
        if let Some(v) = value {
            pairs.push(((*key).to_owned(), v.clone()));
        }
    }
    let query: Vec<String> =
        pairs.iter().map(|(k, v)| format!("{k}={}", crate::plugins::model::encode_segment(v))).collect();
    if query.is_empty() { path.to_owned() } else { format!("{path}?{}", query.join("&")) }
}

/// The generated list view.
#[component]
pub fn GeneratedList(context: ListContext) -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| query_of(&query_map.read()));
    let wide = Memo::new(move |_| query_map.read().get("wide").as_deref() == Some("1"));
    // Bumped by the watch: the same query, asked again.
    let changes = RwSignal::new(0u32);
    let ctx = context.clone();
    let kept = KeptAnswer::<ListQuery, TablePage>::default();
    let table = Resource::new(
        move || (query.get(), changes.get()),
        move |(q, _)| {
            let answer = list_table(
                ctx.scope.cluster_id.clone(),
                ctx.scope.crd.clone(),
                ctx.scope.project.clone(),
                q.clone(),
            );
            async move { kept.settle(&q, answer.await) }
        },
    );
    kept.remember(table, move || query.get_untracked());
    // A resource hydrated from the server's answer does not follow its source
    // by itself here: ask again whenever the query changes.
    Effect::watch(move || query.get(), move |_, _, _| table.refetch(), false);
    // Set while the watch cannot reach the cluster.
    let paused = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    keep_current(&context, table, query, changes, paused);
    // The same question again, as a watch event asks it.
    let ask_again = Callback::new(move |()| changes.update(|n| *n = n.wrapping_add(1)));
    let ctx = StoredValue::new(context);
    view! {
        <Filters query wide table labels=ctx.with_value(|c| c.guide.labels.clone()) />
        <LivePaused paused />
        <StaleNote stale=kept.stale what="The list" retry=ask_again />
        {when_loaded(
            "Loading…",
            table,
            move |page| view! { <ObjectTable page wide context=ctx.get_value() /> }.into_any(),
        )}
    }
}

/// Follows the listed objects through the tab's shared watch of the kind and asks again
/// when one changes (debounced).
#[cfg(feature = "hydrate")]
fn keep_current(
    context: &ListContext,
    table: Resource<Result<TablePage, crate::error::AppError>>,
    query: Memo<ListQuery>,
    changes: RwSignal<u32>,
    paused: RwSignal<bool>,
) {
    use super::watch::{Interest, debounced_bump, follow, subscribe};

    let loaded = Memo::new(move |_| table.with(|t| matches!(t, Some(Ok(_)))));
    let namespace = Memo::new(move |_| query.with(|q| q.namespace.clone()));
    let context = context.clone();
    Effect::new(move |_| {
        if !loaded.get() {
            return;
        }
        let scope = &context.scope;
        let filter = namespace.get().filter(|_| scope.kind.namespaced);
        let (rv, shown) = table.with_untracked(|t| match t {
            Some(Ok(page)) => (Some(page.resource_version.clone()), page.namespaces.clone()),
            _ => (None, Vec::new()),
        });
        // Inside a project only its namespaces are listed: changes elsewhere change nothing here.
        let namespaces = match filter {
            Some(ns) => Some(vec![ns]),
            None if scope.project.is_some() && scope.kind.namespaced => Some(shown),
            None => None,
        };
        let again = debounced_bump(changes, std::time::Duration::from_millis(150));
        let objects = subscribe(scope.collection(), Interest { namespaces, name: None }, rv, move |note| {
            follow(note, paused, &again)
        });
        let held = send_wrapper::SendWrapper::new(objects);
        on_cleanup(move || drop(held.take()));
    });
}

/// Namespace, label selector and search: a GET form, so it works without JavaScript.
#[component]
fn Filters(
    query: Memo<ListQuery>,
    wide: Memo<bool>,
    table: Resource<Result<TablePage, crate::error::AppError>>,
    labels: Vec<fundament_plugin_types::LabelGuide>,
) -> impl IntoView {
    let location = use_location();
    let query_map = use_query_map();
    let q = move || query.get();
    let wide_toggle = move || {
        let page = table.get().and_then(Result::ok)?;
        if !has_wide_columns(&page.columns) {
            return None;
        }
        let on = wide.get();
        let href = href_with(
            &location.pathname.get(),
            &query_map.read(),
            &[("wide", (!on).then(|| "1".to_owned()))],
        );
        Some(view! {
            <a href=href class="button-secondary">
                {if on { "Hide wide columns" } else { "Show wide columns" }}
            </a>
        })
    };
    view! {
        <Form method="GET" action="" on_form_data=crate::components::without_nameless_submitter() attr:class="mb-4 flex flex-wrap items-end gap-3" attr:aria-label="Filter">
            // `value` as well as `prop:value`: properties are set in the browser only, and the
            // server's page (all there is without JavaScript) must show and send the filters.
            <input type="hidden" name="sort" value=move || q().sort.to_param() />
            {move || wide.get().then(|| view! { <input type="hidden" name="wide" value="1" /> })}
            {move || (query_map.read().get("generated").as_deref() == Some("1"))
                .then(|| view! { <input type="hidden" name="generated" value="1" /> })}
            // Inside a Transition: it reads the table, which the server renders only once loaded.
            <Transition fallback=|| ()>{move || {
                let current = q().namespace.unwrap_or_default();
                let listed = table.get().and_then(Result::ok).map(|p| p.namespaces).unwrap_or_default();
                // A table that could not be listed (a label selector that does not parse, a
                // namespace outside the project) offers the namespace chosen still: fixing the
                // selector keeps it, and "All namespaces" leaves a wrong one.
                let names = if listed.is_empty() && !current.is_empty() { vec![current.clone()] } else { listed };
                (!names.is_empty()).then(|| {
                    view! {
                        <label class="field">
                            <span class="field-label">"Namespace"</span>
                            // `prop:value` too: once a choice was made, the browser shows the
                            // chosen option whatever `selected` says later (Back and Forward).
                            <select name="namespace" class="input" prop:value=move || q().namespace.unwrap_or_default()>
                                <option value="" selected=current.is_empty()>"All namespaces"</option>
                                {names.into_iter().map(|n| {
                                    let selected = n == current;
                                    view! { <option value=n.clone() selected=selected>{n.clone()}</option> }
                                }).collect_view()}
                            </select>
                        </label>
                    }
                })
            }}</Transition>
            <label class="field">
                <span class="field-label">"Label selector"</span>
                <input name="labels" class="input font-mono" placeholder="app=web,tier!=db" list="label-keys" value=move || q().labels prop:value=move || q().labels />
                // The CRD has no schema for labels: the guide's are offered as `key=`, with their descriptions.
                <datalist id="label-keys">
                    {labels.into_iter().map(|l| view! {
                        <option value=format!("{}=", l.key)>{l.description}</option>
                    }).collect_view()}
                </datalist>
            </label>
            <label class="field min-w-48 flex-1">
                <span class="field-label">"Search"</span>
                <input type="search" name="q" class="input" placeholder="Name, label or value" value=move || q().search prop:value=move || q().search />
            </label>
            <button type="submit" class="button inline-flex">"Apply"</button>
            <Transition fallback=|| ()>{wide_toggle}</Transition>
        </Form>
    }
}

/// The table, its pager and its empty states.
#[component]
fn ObjectTable(page: TablePage, wide: Memo<bool>, context: ListContext) -> impl IntoView {
    let location = use_location();
    let query_map = use_query_map();
    let path = location.pathname.get_untracked();
    let q = query_map.get_untracked();
    let TablePage { columns, rows, total, listed, page: index, pages, sort, column_warning, .. } = page;
    if listed == 0 {
        let scope =
            query_of(&q).namespace.map_or_else(|| "this view".to_owned(), |n| format!("namespace {n}"));
        return view! {
            <div class="card text-center" role="status">
                <p class="font-medium">{format!("No {} in {scope}.", context.scope.kind.plural)}</p>
            </div>
        }
        .into_any();
    }
    let first = index * super::table::PAGE_SIZE + 1;
    let last = (first + rows.len()).saturating_sub(1);
    let header = columns
        .clone()
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let active = sort.column == i;
            let next = Sort { column: i, descending: active && !sort.descending };
            let href = href_with(&path, &q, &[("sort", Some(next.to_param())), ("page", None)]);
            let aria = match (active, sort.descending) {
                (true, false) => "ascending",
                (true, true) => "descending",
                _ => "none",
            };
            let numeric = c.cell_type == CellType::Number;
            let wide_only = c.priority > 0;
            view! {
                <th scope="col" aria-sort=aria class:hidden=move || wide_only && !wide.get() class:text-right=numeric title=c.description.clone()>
                    <a href=href class="inline-flex items-center gap-1 hover:text-ink">
                        {c.name.clone()}
                        <span aria-hidden="true">{match aria { "ascending" => "▲", "descending" => "▼", _ => "" }}</span>
                    </a>
                </th>
            }
        })
        .collect_view();
    let body = rows
        .into_iter()
        .map(|row| view! { <ObjectRow row columns=columns.clone() wide context=context.clone() /> })
        .collect_view();
    let pager = (pages > 1).then(|| {
        let prev = (index > 0).then(|| href_with(&path, &q, &[("page", Some(index.to_string()))]));
        let next =
            (index + 1 < pages).then(|| href_with(&path, &q, &[("page", Some((index + 2).to_string()))]));
        view! {
            <nav aria-label="Pages" class="flex items-center gap-2">
                {prev.map(|h| view! { <a href=h class="button-secondary">"Previous"</a> })}
                <span class="text-sm text-muted">{format!("Page {} of {pages}", index + 1)}</span>
                {next.map(|h| view! { <a href=h class="button-secondary">"Next"</a> })}
            </nav>
        }
    });
    view! {
        {column_warning.map(|w| view! { <p role="status" class="mb-2 text-sm text-muted">{format!("Some columns are not shown: {w}")}</p> })}
        <div class="card overflow-x-auto p-0">
            <table class="table" aria-label=format!("{} list", context.scope.kind.kind)>
                <thead><tr>{header}</tr></thead>
                <tbody>
                    {if total == 0 {
                        let colspan = columns.len().to_string();
                        view! { <tr><td colspan=colspan class="text-muted">"Nothing matches the search."</td></tr> }.into_any()
                    } else {
                        body.into_any()
                    }}
                </tbody>
            </table>
        </div>
        <div class="mt-3 flex flex-wrap items-center justify-between gap-3 text-sm text-muted">
            <p role="status">{if total == 0 { format!("0 of {listed}") } else { format!("{first}–{last} of {total}") }}</p>
            {pager}
        </div>
    }
    .into_any()
}

#[component]
fn ObjectRow(row: Row, columns: Vec<Column>, wide: Memo<bool>, context: ListContext) -> impl IntoView {
    let href = context.scope.detail_path(&row.name, row.namespace.as_deref());
    let offset = if context.scope.kind.namespaced { 2 } else { 1 };
    let cells = row
        .cells
        .into_iter()
        .zip(columns.into_iter().skip(offset))
        .map(|(cell, column)| {
            let hidden = column.priority > 0;
            let content = match (column.cell_type, cell.exact) {
                (CellType::Date, Some(exact)) => {
                    view! { <time datetime=exact.clone() title=exact>{cell.text}</time> }.into_any()
                }
                (CellType::Boolean, _) => view! { <span>{cell.text}</span> }.into_any(),
                _ => view! { <span>{cell.text}</span> }.into_any(),
            };
            let numeric = column.cell_type == CellType::Number;
            // A value without spaces (a 253-character secretName) breaks anywhere rather than
            // widening the table past the page.
            view! { <td class="max-w-md wrap-anywhere" class:hidden=move || hidden && !wide.get() class:text-right=numeric>{content}</td> }
        })
        .collect_view();
    view! {
        <tr>
            // Short names stay on one line; a long one (up to 253 characters, no spaces) wraps
            // within a column's width instead of pushing every other column off the page.
            <td class="max-w-xs wrap-anywhere"><a href=href class="link font-medium">{row.name.clone()}</a></td>
            {row.namespace.map(|ns| view! { <td class="whitespace-nowrap text-muted">{ns}</td> })}
            {cells}
        </tr>
    }
}

#[cfg(test)]
mod tests {
    use leptos_router::params::ParamsMap;

    use super::{href_with, query_of};
    use crate::resource_views::table::Sort;

    fn params(pairs: &[(&'static str, &str)]) -> ParamsMap {
        let mut map = ParamsMap::new();
        for (k, v) in pairs {
            map.insert(*k, (*v).to_owned());
        }
        map
    }

    #[test]
    fn the_query_comes_from_the_url() {
        let q = query_of(&params(&[
            ("namespace", "prod"),
            ("labels", "app=web"),
            ("q", "tls"),
            ("sort", "-2"),
            ("page", "3"),
        ]));
        assert_eq!(q.namespace.as_deref(), Some("prod"));
        assert_eq!((q.labels.as_str(), q.search.as_str()), ("app=web", "tls"));
        assert_eq!(q.sort, Sort { column: 2, descending: true });
        assert_eq!(q.page, 2, "pages count from 1 in the URL");
        let empty = query_of(&params(&[("namespace", ""), ("page", "zero")]));
        assert_eq!((empty.namespace, empty.page), (None, 0));
    }

    #[test]
    fn links_keep_the_other_parameters_and_encode_values() {
        let q = params(&[
            ("labels", "plugins.camunda.io/cluster=orders"),
            ("generated", "1"),
            ("page", "2"),
            ("other", "x"),
        ]);
        assert_eq!(
            href_with("/p", &q, &[("sort", Some("-1".into())), ("page", None)]),
            "/p?labels=plugins.camunda.io%2Fcluster%3Dorders&generated=1&sort=-1"
        );
        assert_eq!(href_with("/p", &params(&[]), &[("wide", None)]), "/p");
    }
}
