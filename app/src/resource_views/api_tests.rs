//! Tests of the generated list's cells (`api.rs`): what a CRD's printer columns may cost.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::ssr::{CELL_CHARS, table_rows};

/// `count` printer columns of type string whose path is `.spec`: each prints the whole spec.
fn whole_object_columns(count: usize) -> Vec<fundament_jsonpath::CompiledColumn> {
    let columns: Vec<fundament_jsonpath::PrinterColumn> = (0..count)
        .map(|i| {
            serde_json::from_value(json!({"name": format!("C{i}"), "type": "string", "jsonPath": ".spec"}))
                .unwrap()
        })
        .collect();
    let (compiled, error) = fundament_jsonpath::compile_columns(&columns);
    assert_eq!(error, None);
    compiled
}

/// `count` objects, each holding `bytes` of `<` (six bytes each as JSON text, `\u003c`).
fn objects_of_angle_brackets(count: usize, bytes: usize) -> Vec<Value> {
    (0..count)
        .map(|i| json!({"metadata": {"name": format!("o{i}")}, "spec": {"x": "<".repeat(bytes)}}))
        .collect()
}

fn cell_bytes(rows: &[crate::resource_views::table::Row]) -> usize {
    rows.iter().flat_map(|r| &r.cells).map(|c| c.text.len() + c.exact.as_ref().map_or(0, String::len)).sum()
}

/// 100 objects of 100 KB of `<` under 32 columns of `.spec` printed whole would be 1.9 GB of cell
/// text: each cell is cut to [`CELL_CHARS`] characters instead, its printing stopped there.
#[test]
fn cells_of_huge_objects_are_cut_as_they_are_printed() {
    let objects = objects_of_angle_brackets(100, 100_000);
    let columns = whole_object_columns(32);
    let started = Instant::now();
    let (rows, spent) = table_rows(objects.iter(), &columns, false, time::OffsetDateTime::now_utc());
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(!spent);
    assert_eq!(rows.len(), 100);
    for cell in rows.iter().flat_map(|r| &r.cells) {
        assert_eq!(cell.text.chars().count(), CELL_CHARS);
        assert!(cell.text.starts_with(r#"{"x":"\u003c\u003c"#), "{}", cell.text);
        assert!(cell.text.ends_with('…'), "{}", cell.text);
    }
    // ASCII but the ellipsis, three bytes.
    assert_eq!(cell_bytes(&rows), 100 * 32 * (CELL_CHARS + 2));
}

/// The cells of a whole table hold at most about as many bytes as the list they come from
/// (16 MiB): past that, the cells left are empty and the table says so.
#[test]
fn cells_of_a_whole_table_stop_at_the_text_budget() {
    // 3,000 objects of 32 cells of 258 bytes: 24.8 MB of cells.
    let objects = objects_of_angle_brackets(3_000, 1_000);
    let columns = whole_object_columns(32);
    let (rows, spent) = table_rows(objects.iter(), &columns, false, time::OffsetDateTime::now_utc());
    assert!(spent, "the warning says some cells are empty");
    let budget = crate::plugins::backend::MAX_ANSWER_BYTES;
    let bytes = cell_bytes(&rows);
    assert!(bytes <= budget + CELL_CHARS + 2, "{bytes}");
    assert!(bytes > budget - CELL_CHARS - 2, "the budget is used, not refused early: {bytes}");
    assert!(rows.last().unwrap().cells.iter().all(|c| c.text.is_empty()));
    assert_eq!(rows.last().unwrap().name, "o2999", "names are not cells: every row keeps its own");
}
