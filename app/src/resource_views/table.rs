//! The generated list's table: columns as `kubectl get` prints them (Name,
//! Namespace for namespaced kinds, then the CRD's printer columns or Age), and
//! the rows of one page after search, sort and paging. Built on the server;
//! the browser only renders it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Rows per page.
pub const PAGE_SIZE: usize = 50;

/// How a column's cells compare and show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CellType {
    Text,
    Number,
    Boolean,
    /// Shown as an age; the exact time is the cell's `exact`.
    Date,
}

/// A column of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub cell_type: CellType,
    pub description: String,
    /// Above 0: shown only in wide mode (`kubectl get -o wide`).
    pub priority: i32,
}

/// One cell: the text shown, and what sorting and hovering use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub text: String,
    /// Dates: the RFC 3339 time (shown on hover). Numbers: the value as text.
    pub exact: Option<String>,
}

/// One object of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub namespace: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// One per column after Name (and Namespace).
    pub cells: Vec<Cell>,
}

/// How the list is sorted: a column index (0 is Name) and direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Sort {
    pub column: usize,
    pub descending: bool,
}

impl Sort {
    /// `name`, `-name`, `3`, `-3` (URL form).
    pub fn parse(text: &str) -> Self {
        let (descending, rest) = text.strip_prefix('-').map_or((false, text), |r| (true, r));
        Sort { column: rest.parse().unwrap_or(0), descending }
    }

    /// The URL form.
    pub fn to_param(self) -> String {
        format!("{}{}", if self.descending { "-" } else { "" }, self.column)
    }
}

/// What the user asked of the list (all from the URL's query).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ListQuery {
    /// One namespace, or all the page may show.
    pub namespace: Option<String>,
    /// A Kubernetes label selector.
    pub labels: String,
    /// Case-insensitive text matched against name, namespace, cells and labels.
    pub search: String,
    pub sort: Sort,
    /// From 0.
    pub page: usize,
}

/// One page of the list and what the controls need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TablePage {
    /// Name, Namespace (namespaced kinds), then the printer columns.
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Objects matching the query (all pages).
    pub total: usize,
    /// Objects before the text search (after namespace and label filters).
    pub listed: usize,
    pub page: usize,
    pub pages: usize,
    /// The order applied: the query's, or by name for a column the table does not have (the
    /// page marks the column it is sorted by, not one the URL made up).
    pub sort: Sort,
    /// Namespaces the namespace filter offers.
    pub namespaces: Vec<String>,
    /// The collection's resourceVersion: live updates watch from here.
    pub resource_version: String,
    /// A printer column the API server would not parse (its columns from there on are dropped, as kubectl's are).
    pub column_warning: Option<String>,
}

/// Whether any column is wide-only.
pub fn has_wide_columns(columns: &[Column]) -> bool {
    columns.iter().any(|c| c.priority > 0)
}

fn matches(row: &Row, needle: &str) -> bool {
    let hit = |s: &str| s.to_lowercase().contains(needle);
    hit(&row.name)
        || row.namespace.as_deref().is_some_and(hit)
        || row.cells.iter().any(|c| hit(&c.text))
        || row.labels.iter().any(|(k, v)| hit(k) || hit(v) || hit(&format!("{k}={v}")))
}

/// Compares two rows by one column as its type says (missing values last).
fn compare(a: &Row, b: &Row, columns: &[Column], sort: Sort) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let namespaced = columns.get(1).is_some_and(|c| c.name == "Namespace");
    let first_cell = if namespaced { 2 } else { 1 };
    let key = |r: &Row| -> (Option<String>, Option<f64>) {
        match sort.column {
            0 => (Some(r.name.clone()), None),
            1 if namespaced => (r.namespace.clone(), None),
            i => match (r.cells.get(i - first_cell), columns.get(i).map(|c| c.cell_type)) {
                (Some(c), Some(CellType::Number)) => (None, c.exact.as_deref().and_then(|v| v.parse().ok())),
                (Some(c), Some(CellType::Date)) => (c.exact.clone(), None),
                (Some(c), _) => (Some(c.text.to_lowercase()), None),
                (None, _) => (None, None),
            },
        }
    };
    let (ka, kb) = (key(a), key(b));
    let ordering = match (ka, kb) {
        ((_, Some(x)), (_, Some(y))) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        ((Some(x), _), (Some(y), _)) if !x.is_empty() && !y.is_empty() => x.cmp(&y),
        ((Some(x), _), _) if !x.is_empty() => Ordering::Less,
        ((_, Some(_)), _) => Ordering::Less,
        (_, (Some(y), _)) if !y.is_empty() => Ordering::Greater,
        (_, (_, Some(_))) => Ordering::Greater,
        _ => Ordering::Equal,
    };
    let ordering = if sort.descending { ordering.reverse() } else { ordering };
    // Stable and total: ties by namespace and name.
    ordering.then_with(|| a.namespace.cmp(&b.namespace)).then_with(|| a.name.cmp(&b.name))
}

/// Searches, sorts and cuts one page out of all rows.
pub fn page_of(
    columns: Vec<Column>,
    mut rows: Vec<Row>,
    query: &ListQuery,
    namespaces: Vec<String>,
    resource_version: String,
    column_warning: Option<String>,
) -> TablePage {
    let listed = rows.len();
    let needle = query.search.trim().to_lowercase();
    if !needle.is_empty() {
        rows.retain(|r| matches(r, &needle));
    }
    let sort = if query.sort.column < columns.len() { query.sort } else { Sort::default() };
    rows.sort_by(|a, b| compare(a, b, &columns, sort));
    let total = rows.len();
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page = query.page.min(pages - 1);
    let rows = rows.into_iter().skip(page * PAGE_SIZE).take(PAGE_SIZE).collect();
    TablePage {
        columns,
        rows,
        total,
        listed,
        page,
        pages,
        sort,
        namespaces,
        resource_version,
        column_warning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, cell_type: CellType) -> Column {
        Column { name: name.into(), cell_type, description: String::new(), priority: 0 }
    }

    fn row(name: &str, ns: &str, replicas: Option<f64>, created: &str) -> Row {
        Row {
            name: name.into(),
            namespace: Some(ns.into()),
            labels: BTreeMap::from([("app".into(), format!("{name}-app"))]),
            cells: vec![
                Cell {
                    text: replicas.map(|r| r.to_string()).unwrap_or_default(),
                    exact: replicas.map(|r| r.to_string()),
                },
                Cell { text: "age".into(), exact: Some(created.into()) },
            ],
        }
    }

    fn columns() -> Vec<Column> {
        vec![
            col("Name", CellType::Text),
            col("Namespace", CellType::Text),
            col("Replicas", CellType::Number),
            col("Age", CellType::Date),
        ]
    }

    fn rows() -> Vec<Row> {
        vec![
            row("b", "prod", Some(10.0), "2026-01-02T00:00:00Z"),
            row("a", "dev", Some(9.0), "2026-01-03T00:00:00Z"),
            row("c", "prod", None, "2026-01-01T00:00:00Z"),
        ]
    }

    fn names(page: &TablePage) -> Vec<&str> {
        page.rows.iter().map(|r| r.name.as_str()).collect()
    }

    #[test]
    fn sorts_by_type_with_missing_values_last() {
        let q = |sort: &str| ListQuery { sort: Sort::parse(sort), ..Default::default() };
        let p = |sort| page_of(columns(), rows(), &q(sort), vec![], String::new(), None);
        assert_eq!(names(&p("0")), ["a", "b", "c"]);
        assert_eq!(names(&p("-0")), ["c", "b", "a"]);
        assert_eq!(names(&p("2")), ["a", "b", "c"], "numbers compare as numbers (9 < 10)");
        assert_eq!(names(&p("3")), ["c", "b", "a"], "dates by time, oldest first");
        assert_eq!(names(&p("1")), ["a", "b", "c"], "namespace, then name");
        assert_eq!(
            names(&p("99")),
            ["a", "b", "c"],
            "an unknown column (a bookmark from before the CRD changed): by name"
        );
        assert_eq!(p("-99").sort, Sort::default(), "and the page says so, ascending");
        assert_eq!(p("-2").sort, Sort { column: 2, descending: true }, "a known one as asked");
    }

    #[test]
    fn searches_names_cells_and_labels() {
        let q = |s: &str| ListQuery { search: s.into(), ..Default::default() };
        let p = |s| page_of(columns(), rows(), &q(s), vec![], String::new(), None);
        assert_eq!(names(&p("PROD")), ["b", "c"]);
        assert_eq!(names(&p("app=a-app")), ["a"]);
        assert_eq!(p("nothing").total, 0);
        assert_eq!(p("nothing").listed, 3);
    }

    #[test]
    fn pages_of_fifty() {
        let many: Vec<Row> = (0..120)
            .map(|i| row(&format!("obj-{i:03}"), "ns", Some(f64::from(i)), "2026-01-01T00:00:00Z"))
            .collect();
        let q = ListQuery { page: 2, ..Default::default() };
        let p = page_of(columns(), many.clone(), &q, vec![], String::new(), None);
        assert_eq!((p.pages, p.page, p.rows.len(), p.total), (3, 2, 20, 120));
        assert_eq!(p.rows[0].name, "obj-100");
        let past = page_of(
            columns(),
            many,
            &ListQuery { page: 9, ..Default::default() },
            vec![],
            String::new(),
            None,
        );
        assert_eq!(past.page, 2, "a page past the end shows the last");
        let empty = page_of(columns(), vec![], &ListQuery::default(), vec![], String::new(), None);
        assert_eq!((empty.pages, empty.page), (1, 0));
    }

    #[test]
    fn sort_round_trips_in_the_url() {
        for s in ["0", "-3", "12"] {
            assert_eq!(Sort::parse(s).to_param(), s);
        }
        assert_eq!(Sort::parse("garbage"), Sort::default());
    }
}
