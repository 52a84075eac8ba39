//! The file backend on real files: what it accepts, how it says what is wrong, and reloads.

use fundament_directory::{Directory, DirectoryError, FileDirectory};
use serde::Deserialize;

const GOOD: &str = r#"
organizations:
- id: acme-corp
  displayName: Acme Corp
clusters:
- id: 019b4000-2000-7000-8000-000000000001
  name: prod-eu
  displayName: Production (EU)
  organization: acme-corp
- id: 019b4000-2000-7000-8000-000000000003
  name: staging-eu
  organization: acme-corp
projects:
- id: webshop
  organization: acme-corp
  displayName: Webshop
  cluster: 019b4000-2000-7000-8000-000000000001
  namespaces:
    019b4000-2000-7000-8000-000000000001: [prod, staging]
- id: analytics
  organization: acme-corp
  displayName: Analytics
  cluster: 019b4000-2000-7000-8000-000000000003
users:
- id: carol
  email: carol@example.com
  name: Carol
  identities:
  - issuer: https://idp.example.com
    subject: "248289761001"
- id: dave
  email: dave@example.com
  name: Dave
memberships:
- user: carol
  organization: acme-corp
- user: dave
  organization: acme-corp
  projects: [analytics]
"#;

fn write(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let path = dir.path().join("directory.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_good_file_answers_every_look_up() {
    let dir = tempfile::tempdir().unwrap();
    let d = FileDirectory::load(&write(&dir, GOOD)).unwrap().current();
    assert_eq!(
        d.user_by_identity("https://idp.example.com", "248289761001").map(|u| u.id.as_str()),
        Some("carol")
    );
    assert!(d.user_by_identity("https://idp.example.com", "1").is_none());
    assert!(
        d.user_by_identity("https://evil.example.com", "248289761001").is_none(),
        "the issuer is part of the identity"
    );
    let carol: Vec<_> = d.projects_for("carol", "acme-corp").iter().map(|p| p.id.as_str()).collect();
    assert_eq!(carol, ["webshop", "analytics"]);
    let dave: Vec<_> = d.projects_for("dave", "acme-corp").iter().map(|p| p.id.as_str()).collect();
    assert_eq!(dave, ["analytics"]);
    // On one cluster, of the user's projects only: the organization's others stay unnamed.
    let on = |user: &str, cluster: &str| -> Vec<String> {
        d.projects_for_on(user, "acme-corp", cluster).iter().map(|p| p.id.clone()).collect()
    };
    assert_eq!(on("carol", "019b4000-2000-7000-8000-000000000001"), ["webshop"]);
    assert!(on("dave", "019b4000-2000-7000-8000-000000000001").is_empty());
    assert_eq!(on("dave", "019b4000-2000-7000-8000-000000000003"), ["analytics"]);
    assert_eq!(d.default_cluster("acme-corp").map(|c| c.shown_name()), Some("Production (EU)"));
    assert_eq!(
        d.project("webshop").unwrap().namespaces["019b4000-2000-7000-8000-000000000001"],
        ["prod", "staging"]
    );
}

#[test]
fn every_problem_is_named_with_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let bad = GOOD
        .replace(
            "cluster: 019b4000-2000-7000-8000-000000000003",
            "cluster: 019b4000-2000-7000-8000-000000000009",
        )
        .replace("id: dave\n  email: dave@example.com", "id: Dave_1\n  email: CAROL@example.com")
        .replace("projects: [analytics]", "projects: [billing]")
        .replace("organizations:\n", "organizations:\n- id: acme--labs\n  displayName: Acme Labs\n");
    let err = FileDirectory::load(&write(&dir, &bad)).unwrap_err();
    let DirectoryError::Invalid { problems, .. } = &err else { panic!("{err}") };
    let text = problems.join("\n");
    for expected in [
        "projects[1] (analytics).cluster: \"019b4000-2000-7000-8000-000000000009\": no such cluster in the directory",
        "users[1].id: \"Dave_1\": a lowercase RFC 1123 label",
        "organizations[0].id: \"acme--labs\": must not contain \"--\"",
        "users: email \"carol@example.com\" appears more than once",
        "memberships[1].user: \"dave\": no such user in the directory",
        "memberships[1].projects: \"billing\": no such project in the directory",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert!(err.to_string().contains("directory.yaml is inconsistent"), "{err}");
}

#[test]
fn unknown_fields_and_bad_yaml_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let err =
        FileDirectory::load(&write(&dir, &GOOD.replace("displayName: Acme Corp", "displayname: Acme Corp")))
            .unwrap_err();
    assert!(matches!(err, DirectoryError::Parse { .. }), "{err}");
    assert!(
        err.to_string().contains("unknown field `displayname`") && err.to_string().contains("line 4"),
        "{err}"
    );
    let err = FileDirectory::load(&dir.path().join("missing.yaml")).unwrap_err();
    assert!(err.to_string().starts_with("cannot read the directory"), "{err}");
}

#[test]
fn a_changed_file_is_reloaded_and_a_broken_change_keeps_the_last_good_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, GOOD);
    let d = FileDirectory::load(&path).unwrap();
    assert!(!d.reload().unwrap(), "unchanged");
    std::fs::write(&path, GOOD.replace("name: Carol", "name: Carol Jones")).unwrap();
    assert!(d.reload().unwrap());
    assert_eq!(d.current().user("carol").unwrap().name, "Carol Jones");
    std::fs::write(
        &path,
        GOOD.replace("organization: acme-corp\n- user: dave", "organization: nope\n- user: dave"),
    )
    .unwrap();
    assert!(matches!(d.reload(), Err(DirectoryError::Invalid { .. })));
    assert_eq!(d.current().user("carol").unwrap().name, "Carol Jones", "the last good directory stays");
    assert!(!d.reload().unwrap(), "the refused bytes are not parsed (nor logged) again");
}

#[tokio::test]
async fn the_reload_task_picks_up_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, GOOD);
    let d = FileDirectory::load(&path).unwrap();
    let task = d.spawn_reload();
    std::fs::write(&path, GOOD.replace("name: Dave", "name: David")).unwrap();
    let deadline = tokio::time::Instant::now() + fundament_directory::RELOAD_INTERVAL * 3;
    while d.current().user("dave").unwrap().name != "David" {
        assert!(tokio::time::Instant::now() < deadline, "not reloaded");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    task.abort();
}

#[test]
fn the_development_directory_file_is_the_seed() {
    let path = fixtures().join("directory.yaml");
    let file = FileDirectory::load(&path).unwrap().current();
    assert_eq!(*file, *fundament_directory::seed().current());
}

#[test]
fn the_seeds_project_namespaces_are_those_the_fixtures_label() {
    let path = fixtures().join("cluster/namespaces.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let mut labelled: Vec<(String, String)> = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let ns = serde_yaml::Value::deserialize(doc).unwrap();
        if let Some(project) = ns["metadata"]["labels"]["fundament.io/project"].as_str() {
            labelled.push((project.to_owned(), ns["metadata"]["name"].as_str().unwrap().to_owned()));
        }
    }
    let seed = fundament_directory::seed().current();
    let mut declared: Vec<(String, String)> = seed
        .projects
        .iter()
        .flat_map(|p| p.namespaces.values().flatten().map(|ns| (p.id.clone(), ns.clone())))
        .collect();
    labelled.sort();
    declared.sort();
    assert_eq!(declared, labelled);
}

/// The repository's `fixtures/`, found when the test runs (a path compiled in would name the
/// clone that built this binary; every clone reuses it).
fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(
        &std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"),
    )
    .join("../../fixtures")
}
