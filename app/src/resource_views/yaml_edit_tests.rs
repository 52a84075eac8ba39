use serde_json::json;

use super::*;

fn live() -> Value {
    json!({
        "apiVersion": "demo.fundament.io/v1",
        "kind": "DemoItem",
        "metadata": {
            "name": "hello", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
            "generation": 2, "creationTimestamp": "2026-03-01T10:30:00Z",
            "managedFields": [{"manager": "kubectl"}],
            "labels": {"a": "b"}, "annotations": {"note": "kept"}
        },
        "spec": {"message": "Hello", "extra": {"x": 1}},
        "status": {"ready": true}
    })
}

#[test]
fn the_edit_buffer_leaves_out_status_and_the_servers_metadata() {
    let buffer = edit_buffer(&live());
    assert_eq!(
        buffer,
        json!({
            "apiVersion": "demo.fundament.io/v1",
            "kind": "DemoItem",
            "metadata": {"name": "hello", "namespace": "default", "labels": {"a": "b"}, "annotations": {"note": "kept"}},
            "spec": {"message": "Hello", "extra": {"x": 1}}
        })
    );
}

#[test]
fn restore_puts_back_what_the_server_owns_and_keeps_the_loaded_version() {
    let mut edited = edit_buffer(&live());
    edited["spec"]["message"] = json!("Changed");
    // The edit cannot move the version on, nor set status.
    edited["metadata"]["resourceVersion"] = json!("99");
    edited["status"] = json!({"ready": false});
    let saved = restore(edited, &live(), "5").unwrap();
    assert_eq!(saved["metadata"]["resourceVersion"], "5");
    assert_eq!(saved["metadata"]["uid"], "u-1");
    assert_eq!(saved["metadata"]["managedFields"], json!([{"manager": "kubectl"}]));
    assert_eq!(saved["status"], json!({"ready": true}));
    assert_eq!(saved["spec"], json!({"message": "Changed", "extra": {"x": 1}}));
    assert_eq!(saved["metadata"]["annotations"]["note"], "kept");
}

#[test]
fn restore_fills_in_a_left_out_identity_and_refuses_a_changed_one() {
    let saved = restore(json!({"spec": {"message": "m"}}), &live(), "7").unwrap();
    assert_eq!(saved["kind"], "DemoItem");
    assert_eq!(saved["metadata"]["name"], "hello");
    assert_eq!(saved["metadata"]["namespace"], "default");
    let mut renamed = edit_buffer(&live());
    renamed["metadata"]["name"] = json!("other");
    let error = restore(renamed, &live(), "7").unwrap_err();
    assert!(error.contains("metadata.name cannot change"), "{error}");
    assert!(restore(json!(["a"]), &live(), "7").unwrap_err().contains("not a list"));
    assert!(
        restore(json!({"metadata": "x"}), &live(), "7").unwrap_err().contains("metadata must be a mapping")
    );
}

#[test]
fn a_live_object_without_status_gets_none() {
    let mut l = live();
    l.as_object_mut().unwrap().remove("status");
    let saved = restore(json!({"status": {"x": 1}}), &l, "7").unwrap();
    assert!(saved.get("status").is_none());
}

#[test]
fn prepare_create_checks_the_kind_and_needs_a_name() {
    let object = prepare_create(
        json!({"metadata": {"name": "n", "namespace": "default", "uid": "x", "resourceVersion": "1"}, "status": {}}),
        "demo.fundament.io/v1",
        "DemoItem",
    )
    .unwrap();
    assert_eq!(
        object,
        json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem", "metadata": {"name": "n", "namespace": "default"}})
    );
    assert!(
        prepare_create(
            json!({"kind": "Other", "metadata": {"name": "n"}}),
            "demo.fundament.io/v1",
            "DemoItem"
        )
        .unwrap_err()
        .contains("kind cannot change")
    );
    assert!(prepare_create(json!({"spec": {}}), "v", "K").unwrap_err().contains("metadata.name is required"));
}

#[test]
fn keep_unknown_keeps_what_the_schema_does_not_declare() {
    let schema = json!({"properties": {
        "metadata": {"type": "object"},
        "spec": {"properties": {"message": {"type": "string"}, "nested": {"properties": {"a": {}}}}}
    }});
    let base = json!({
        "metadata": {"name": "n", "annotations": {"k": "v"}},
        "spec": {"message": "old", "unknown": 1, "nested": {"a": 1, "b": 2}},
        "other": true
    });
    let assembled = json!({"metadata": {"name": "n"}, "spec": {"nested": {"a": 3}}});
    assert_eq!(
        keep_unknown(&base, &assembled, &schema),
        // message was cleared in the form; unknown, nested.b and other are kept.
        json!({
            "metadata": {"name": "n"},
            "spec": {"unknown": 1, "nested": {"a": 3, "b": 2}},
            "other": true
        })
    );
    // A free-form object is the form's whole.
    assert_eq!(keep_unknown(&json!({"a": 1}), &json!({"b": 2}), &json!({})), json!({"b": 2}));
}

#[test]
fn the_form_goes_over_the_yaml_keeping_its_metadata_and_unknown_fields() {
    let schema = json!({"properties": {
        "metadata": {"type": "object"},
        "spec": {"properties": {"message": {"type": "string"}}}
    }});
    let yaml = json!({
        "apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
        "metadata": {"name": "", "namespace": "default", "annotations": {"qa": "yes"}, "labels": {"old": "1"}},
        "spec": {"message": "from yaml", "extraField": 7}
    });
    let assembled = json!({
        "apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
        "metadata": {"name": "made", "namespace": "staging"},
        "spec": {"message": "from the form"}
    });
    let labels = serde_json::Map::from_iter([("app".to_owned(), json!("web"))]);
    assert_eq!(
        form_over_yaml(&yaml, &assembled, labels, &schema),
        json!({
            "apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
            "metadata": {"name": "made", "namespace": "staging", "annotations": {"qa": "yes"}, "labels": {"app": "web"}},
            "spec": {"message": "from the form", "extraField": 7}
        })
    );
    let unlabelled = form_over_yaml(&yaml, &assembled, serde_json::Map::new(), &schema);
    assert_eq!(unlabelled.pointer("/metadata/labels"), None, "no labels: no key, not {{}}");
}

#[test]
fn reapply_keeps_both_changes_and_mine_wins_on_the_same_field() {
    let base = json!({"spec": {"message": "a", "count": 1, "list": [1]}, "metadata": {"labels": {"x": "1"}}});
    let mine =
        json!({"spec": {"message": "mine", "count": 1, "list": [1]}, "metadata": {"labels": {"x": "1"}}});
    let theirs = json!({"spec": {"message": "a", "count": 2, "list": [1, 2]}, "metadata": {"labels": {"x": "1", "y": "2"}}});
    assert_eq!(
        reapply(&base, &mine, &theirs),
        json!({"spec": {"message": "mine", "count": 2, "list": [1, 2]}, "metadata": {"labels": {"x": "1", "y": "2"}}})
    );
    let theirs_too =
        json!({"spec": {"message": "theirs", "count": 1, "list": [1]}, "metadata": {"labels": {"x": "1"}}});
    assert_eq!(reapply(&base, &mine, &theirs_too)["spec"]["message"], "mine");
    // A key I removed goes; a key they removed stays gone.
    let mine = json!({"spec": {"count": 1, "list": [1], "message": "a"}, "metadata": {}});
    let theirs = json!({"spec": {"message": "a", "list": [1]}, "metadata": {"labels": {"x": "1"}}});
    assert_eq!(
        reapply(&base, &mine, &theirs),
        json!({"spec": {"message": "a", "list": [1]}, "metadata": {}})
    );
}

#[test]
fn diff_marks_added_and_removed_lines_in_order() {
    let old = "a\nb\nc\nd\n";
    let new = "a\nB\nc\nd\ne\n";
    assert_eq!(
        diff(old, new, 10),
        vec![
            DiffLine::Same("a".into()),
            DiffLine::Removed("b".into()),
            DiffLine::Added("B".into()),
            DiffLine::Same("c".into()),
            DiffLine::Same("d".into()),
            DiffLine::Added("e".into()),
        ]
    );
    assert_eq!(counts(&diff(old, new, 0)), (2, 1));
    assert!(
        diff("same\n", "same\n", 3).iter().all(|l| !matches!(l, DiffLine::Added(_) | DiffLine::Removed(_)))
    );
    assert_eq!(diff("", "x", 3), vec![DiffLine::Added("x".into())]);
}

#[test]
fn diff_shows_context_around_changes_and_skips_the_rest() {
    let old: String = (0..20).map(|i| format!("{i}\n")).collect();
    let new = old.replace("10\n", "ten\n");
    let lines = diff(&old, &new, 2);
    assert_eq!(
        lines,
        vec![
            DiffLine::Skipped(8),
            DiffLine::Same("8".into()),
            DiffLine::Same("9".into()),
            DiffLine::Removed("10".into()),
            DiffLine::Added("ten".into()),
            DiffLine::Same("11".into()),
            DiffLine::Same("12".into()),
            DiffLine::Skipped(7),
        ]
    );
}

#[test]
fn diff_of_interleaved_changes_matches_the_lcs() {
    let old = "x\na\ny\nb\nz\n";
    let new = "a\nq\nb\n";
    let lines = diff(old, new, 10);
    let kept: Vec<_> = lines
        .iter()
        .filter_map(|l| if let DiffLine::Same(s) = l { Some(s.as_str()) } else { None })
        .collect();
    assert_eq!(kept, ["a", "b"]);
    assert_eq!(counts(&lines), (1, 3));
}

#[test]
fn yaml_errors_carry_line_and_column() {
    let error = parse_yaml("spec:\n  message: [unclosed\n").unwrap_err();
    assert!(error.line >= 2, "{error:?}");
    assert!(error.column > 0);
    assert!(!error.message.contains(" at line "), "{error:?}");
    assert!(error.to_string().starts_with(&format!("YAML line {}, column", error.line)));
    let deep = "[".repeat(200);
    assert!(parse_yaml(&deep).unwrap_err().message.contains("nest deeper"));
    assert!(parse_yaml(&"a".repeat(MAX_YAML_BYTES + 1)).unwrap_err().message.contains("longer than"));
}

/// ~100 KB of aliases would expand to 4×10⁸ values (gigabytes, the console killed): refused
/// as the count passes the text's budget. A key given twice is refused, as kubectl does.
#[test]
fn an_alias_bomb_and_a_repeated_key_are_refused() {
    let bomb = format!("a: &a [{}]\nb: [{}]\n", "0,".repeat(25_000), "*a,".repeat(16_000));
    assert!(bomb.len() < MAX_YAML_BYTES);
    let started = std::time::Instant::now();
    let error = parse_yaml(&bomb).unwrap_err();
    assert!(error.message.contains("aliases"), "{error:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "took {:?}", started.elapsed());
    let twice = parse_yaml("metadata:\n  name: a\nspec:\n  x: 1\nspec:\n  y: 2\n").unwrap_err();
    assert!(twice.message.contains("\"spec\" appears twice"), "{twice:?}");
}

#[test]
fn yaml_round_trips_the_edit_buffer() {
    let buffer = edit_buffer(&live());
    let text = to_yaml(&buffer);
    assert!(!text.contains("managedFields") && !text.contains("status"));
    assert_eq!(parse_yaml(&text).unwrap(), buffer);
}
