//! The catalog over the example plugins and over broken folders.

use crate::common;

use fundament_organization_api::{Catalog, CatalogError, hash_manifest, read_definition};

#[test]
fn loads_the_example_plugins() {
    let catalog = Catalog::load(&common::plugins_dir()).unwrap();
    let names: Vec<(&str, &str)> =
        catalog.all().iter().map(|d| (d.name.as_str(), d.version.as_str())).collect();
    assert_eq!(
        names,
        vec![
            ("camunda", "v0.3.0"),
            ("cert-manager", "v1.17.2"),
            ("cloudnative-pg", "v1.25.0"),
            ("demo", "v0.1.0"),
            ("openfsc", "v4.0.0"),
        ]
    );
    let cert_manager = catalog.get("cert-manager", "v1.17.2").unwrap();
    let bytes = std::fs::read(common::plugins_dir().join("cert-manager/definition.yaml")).unwrap();
    assert_eq!(cert_manager.manifest.as_bytes(), bytes.as_slice());
    assert_eq!(cert_manager.hash, hash_manifest(&bytes));
    assert_eq!(cert_manager.definition["metadata"]["displayName"], "Cert Manager");
    assert_eq!(catalog.by_hash(&cert_manager.hash).unwrap().name, "cert-manager");
    assert!(catalog.get("cert-manager", "v1.17.3").is_none());
    assert!(catalog.by_hash("sha256:unknown").is_none());
}

#[test]
fn allowed_resources_of_the_examples() {
    let catalog = Catalog::load(&common::plugins_dir()).unwrap();
    let demo = catalog.get("demo", "v0.1.0").unwrap().allowed_resources();
    assert_eq!(demo.len(), 2);
    assert_eq!(
        (demo[0].group.as_str(), demo[0].version.as_str(), demo[0].resource.as_str()),
        ("demo.fundament.io", "v1", "demoitems")
    );
    assert_eq!(demo[0].verbs, vec!["get", "list", "watch", "create"]);
    assert_eq!(
        (demo[1].resource.as_str(), demo[1].verbs.clone()),
        ("oddities", vec!["get".into(), "list".into(), "watch".into()])
    );
    let openfsc = catalog.get("openfsc", "v4.0.0").unwrap().allowed_resources();
    assert_eq!(openfsc[1].group, "", "events are in the core group");
}

#[test]
fn hash_is_stable_across_loads_and_changes_with_the_bytes() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::plugin_folder(root.path(), common::BASE);
    let first = read_definition(&dir).unwrap().hash;
    assert_eq!(read_definition(&dir).unwrap().hash, first);
    assert_eq!(first, hash_manifest(common::BASE.as_bytes()));
    // A comment changes nothing in the content but changes the published bytes.
    common::write_definition(&dir, &format!("# note\n{}", common::BASE));
    assert_ne!(read_definition(&dir).unwrap().hash, first);
}

#[test]
fn a_broken_definition_stops_loading_with_path_and_reason() {
    let root = tempfile::tempdir().unwrap();
    common::plugin_folder(
        root.path(),
        &common::BASE.replace("  name: things", "  name: things\n  owner: me"),
    );
    let err = Catalog::load(root.path()).unwrap_err();
    let file = root.path().join("things/definition.yaml");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: metadata.owner: unknown field \"owner\"; expected one of: name, displayName, version, description, \
             author, license, icon, tags, urls",
            file.display()
        )
    );
}

#[test]
fn a_tag_image_is_refused_a_digest_accepted() {
    let root = tempfile::tempdir().unwrap();
    let tagged = common::BASE.replace("spec:\n", "spec:\n  image: ghcr.io/x/things:v1\n");
    let dir = common::plugin_folder(root.path(), &tagged);
    match read_definition(&dir).unwrap_err() {
        CatalogError::Invalid { field, message, .. } => {
            assert_eq!(field, "spec.image");
            assert_eq!(
                message,
                "spec.image \"ghcr.io/x/things:v1\" must be a digest reference (repo@sha256:<64 hex chars>), not a \
                 mutable tag"
            );
        }
        other => panic!("{other:?}"),
    }
    let digest = common::BASE
        .replace("spec:\n", &format!("spec:\n  image: ghcr.io/x/things@sha256:{}\n", "a".repeat(64)));
    common::write_definition(&dir, &digest);
    assert!(read_definition(&dir).is_ok());
}

#[test]
fn two_folders_with_one_name_and_version_are_refused() {
    let root = tempfile::tempdir().unwrap();
    common::write_definition(&root.path().join("a"), common::BASE);
    common::write_definition(&root.path().join("b"), common::BASE);
    let err = Catalog::load(root.path()).unwrap_err();
    assert!(matches!(err, CatalogError::Duplicate { ref name, .. } if name == "things"), "{err}");
    assert!(err.to_string().starts_with("things@v1.0.0 is defined twice: "), "{err}");
}

#[test]
fn folders_without_a_definition_are_skipped() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("empty")).unwrap();
    std::fs::write(root.path().join("README.md"), "notes").unwrap();
    common::plugin_folder(root.path(), common::BASE);
    let catalog = Catalog::load(root.path()).unwrap();
    assert_eq!(catalog.all().len(), 1);
    assert!(Catalog::load(&root.path().join("missing")).is_err());
}

/// Removes what reads as absent (null, "", [], {}), so a document and its
/// typed form can be compared regardless of which defaults are written out.
fn pruned(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, pruned(v)))
                .filter(|(_, v)| {
                    !matches!(v, Value::Null)
                        && v != ""
                        && v != &serde_json::json!([])
                        && v != &serde_json::json!({})
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(pruned).collect()),
        other => other,
    }
}

/// The types hold every field the schema admits: an example definition read
/// typed and written back says what the file says, so no reader loses a field.
#[test]
fn the_typed_definition_keeps_every_field_of_the_examples() {
    let catalog = Catalog::load(&common::plugins_dir()).unwrap();
    for d in catalog.all() {
        let typed = serde_json::to_value(&d.document).unwrap();
        assert_eq!(pruned(typed), pruned(d.definition.clone()), "{}", d.name);
    }
}
