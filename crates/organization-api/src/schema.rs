//! The PluginDefinition schema (reference §6.1), checked on the document as
//! JSON so that every problem carries its field path.
//!
//! Both the catalog and the linter use it: the catalog refuses a definition at
//! the first error, the linter reports them all. The §6.1 checks come first,
//! with upstream's exact messages, so the catalog's first error reads as it did.

use fundament_plugin_types::outline::DefinitionOutline;
use serde_json::Value;

use crate::lint::Finding;
use crate::path;
// The shapes below name the variants bare, so that they read as the document's fields do.
use Shape::{Bool, List, Map, Object, Str};

pub(crate) const API_VERSION: &str = "fundament.io/v1";
pub(crate) const KIND: &str = "PluginDefinition";
const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];

/// Development definitions have no image; publishing injects one. Only the
/// linter says so (as a warning); the catalog serves them.
pub(crate) const IMAGE_NEEDED: &str =
    "publishing needs spec.image as a digest reference (repo@sha256:<64 hex>)";

/// What a node of the document may be.
enum Shape {
    Str,
    Bool,
    List(&'static Shape),
    /// A mapping with these fields and no others.
    Object(&'static [(&'static str, Shape)]),
    /// A mapping with free keys (kinds, CRD references, status values).
    Map(&'static Shape),
}

const STR_LIST: Shape = List(&Str);
const BADGE: Shape = Object(&[("badge", Str), ("label", Str)]);
const MENU_ENTRY: Shape =
    Object(&[("crd", Str), ("list", Bool), ("detail", Bool), ("icon", Str), ("label", Str)]);
const RBAC_RULE: Shape = Object(&[
    ("apiGroups", STR_LIST),
    ("resources", STR_LIST),
    ("verbs", STR_LIST),
    ("resourceNames", STR_LIST),
]);
const UI_HINT: Shape = Object(&[
    ("formGroups", List(&Object(&[("name", Str), ("fields", STR_LIST)]))),
    ("statusMapping", Object(&[("jsonPath", Str), ("values", Map(&BADGE)), ("default", BADGE)])),
]);
/// `spec.guides.<Kind>`: what the console says about objects of a kind.
const GUIDE: Shape = Object(&[
    ("labels", List(&Object(&[("key", Str), ("description", Str)]))),
    ("conditions", List(&Object(&[("type", Str), ("reason", Str), ("meaning", Str), ("whatToDo", Str)]))),
    ("summaries", List(&Object(&[("type", Str), ("of", STR_LIST)]))),
    ("refusals", List(&Object(&[("contains", STR_LIST), ("whatToDo", Str)]))),
]);
const METADATA: Shape = Object(&[
    ("name", Str),
    ("displayName", Str),
    ("version", Str),
    ("description", Str),
    ("author", Str),
    ("license", Str),
    ("icon", Str),
    ("tags", STR_LIST),
    ("urls", Object(&[("homepage", Str), ("repository", Str), ("documentation", Str)])),
]);
const SPEC: Shape = Object(&[
    ("image", Str),
    ("imagePullPolicy", Str),
    ("permissions", Object(&[("capabilities", STR_LIST), ("rbac", List(&RBAC_RULE))])),
    ("menu", Object(&[("organization", List(&MENU_ENTRY)), ("project", List(&MENU_ENTRY))])),
    ("crds", STR_LIST),
    ("customComponents", Map(&Object(&[("list", Str), ("detail", Str), ("create", Str)]))),
    ("uiHints", Map(&UI_HINT)),
    (
        "allowedResources",
        List(&Object(&[("group", Str), ("version", Str), ("resource", Str), ("verbs", STR_LIST)])),
    ),
    ("guides", Map(&GUIDE)),
]);
const DEFINITION: Shape =
    Object(&[("apiVersion", Str), ("kind", Str), ("metadata", METADATA), ("spec", SPEC)]);

/// Every schema problem of a definition document, §6.1 checks first.
pub(crate) fn check(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    if !doc.is_object() {
        out.push(Finding::error(
            "",
            format!("a plugin definition must be a YAML mapping, found {}", describe(doc)),
        ));
        return out;
    }
    check_required(doc, &mut out);
    walk(doc, &DEFINITION, "", &mut out);
    out
}

/// The checks of upstream's `ParseDefinition`, with its messages (except that
/// a missing image is a warning: development definitions have none).
fn check_required(doc: &Value, out: &mut Vec<Finding>) {
    // A present value of the wrong type (no text) is left to the shape walk.
    let outline = DefinitionOutline::read(doc);
    if let Some(v) = outline.api_version.text().filter(|v| *v != API_VERSION) {
        out.push(Finding::error(
            "apiVersion",
            format!("unsupported apiVersion {v:?}, expected {API_VERSION:?}"),
        ));
    }
    if let Some(k) = outline.kind.text().filter(|k| *k != KIND) {
        out.push(Finding::error("kind", format!("unsupported kind {k:?}, expected {KIND:?}")));
    }
    let metadata = outline.metadata();
    for (field, value) in [("name", &metadata.name), ("version", &metadata.version)] {
        if value.text().is_some_and(str::is_empty) {
            out.push(Finding::error(
                format!("metadata.{field}"),
                format!("plugin definition is missing required field metadata.{field}"),
            ));
        }
    }
    if outline.spec.is_absent() {
        out.push(Finding::error("spec", "plugin definition is missing required field spec"));
        return;
    }
    let spec = outline.spec();
    match spec.image.text() {
        Some("") => out.push(Finding::warning("spec.image", IMAGE_NEEDED)),
        Some(image) if !is_digest_reference(image) => out.push(Finding::error(
            "spec.image",
            format!("spec.image {image:?} must be a digest reference (repo@sha256:<64 hex chars>), not a mutable tag"),
        )),
        _ => {}
    }
    if let Some(policy) = spec.image_pull_policy.text()
        && !policy.is_empty()
        && !PULL_POLICIES.contains(&policy)
    {
        out.push(Finding::error(
            "spec.imagePullPolicy",
            format!(
                "spec.imagePullPolicy {policy:?} is invalid, expected one of \"Always\", \"IfNotPresent\", \"Never\" (or empty)"
            ),
        ));
    }
}

/// `repo@sha256:<64 lower-case hex>`: the controller runs exactly this image,
/// which a tag cannot promise.
pub(crate) fn is_digest_reference(image: &str) -> bool {
    image.rsplit_once("@sha256:").is_some_and(|(repo, hex)| {
        !repo.is_empty()
            && hex.len() == 64
            && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn walk(value: &Value, shape: &Shape, at: &str, out: &mut Vec<Finding>) {
    match (shape, value) {
        (Shape::Str, Value::String(_)) | (Shape::Bool, Value::Bool(_)) => {}
        (Shape::List(item), Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, item, &path::index(at, i), out);
            }
        }
        (Shape::Object(fields), Value::Object(map)) => {
            for (key, v) in map {
                match fields.iter().find(|(name, _)| name == key) {
                    // An explicit null is an absent field, as in upstream's decoder.
                    Some(_) if v.is_null() => {}
                    Some((_, shape)) => walk(v, shape, &path::field(at, key), out),
                    None => {
                        let known: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
                        out.push(Finding::error(
                            path::field(at, key),
                            format!("unknown field {key:?}; expected one of: {}", known.join(", ")),
                        ));
                    }
                }
            }
        }
        (Shape::Map(item), Value::Object(map)) => {
            for (key, v) in map {
                walk(v, item, &path::field(at, key), out);
            }
        }
        (shape, value) => {
            let expected = match shape {
                Shape::Str => "a string",
                Shape::Bool => "a boolean",
                Shape::List(_) => "a list",
                Shape::Object(_) | Shape::Map(_) => "a mapping",
            };
            out.push(Finding::error(at, format!("expected {expected}, found {}", describe(value))));
        }
    }
}

/// A value's kind in words, for "expected …, found …".
fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::Severity;
    use serde_json::json;

    const DIGEST: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn minimal() -> Value {
        json!({
            "apiVersion": "fundament.io/v1",
            "kind": "PluginDefinition",
            "metadata": {"name": "demo", "version": "v0.1.0"},
            "spec": {"image": format!("ghcr.io/x/demo@sha256:{DIGEST}")},
        })
    }

    /// `doc` with the field at `pointer` set (created if absent).
    fn with(mut doc: Value, pointer: &str, value: Value) -> Value {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        doc.pointer_mut(parent).unwrap()[key] = value;
        doc
    }

    fn errors(doc: &Value) -> Vec<(String, String)> {
        check(doc)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| (f.path, f.message))
            .collect()
    }

    fn one_error(doc: &Value) -> (String, String) {
        let errors = errors(doc);
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors.into_iter().next().unwrap()
    }

    #[test]
    fn a_minimal_published_definition_is_clean() {
        assert_eq!(check(&minimal()), vec![]);
    }

    #[test]
    fn upstream_messages_for_api_version_kind_and_name() {
        let doc = with(minimal(), "/apiVersion", json!("fundament.io/v2"));
        assert_eq!(
            one_error(&doc),
            (
                "apiVersion".into(),
                "unsupported apiVersion \"fundament.io/v2\", expected \"fundament.io/v1\"".into()
            )
        );
        let doc = with(minimal(), "/kind", json!("Plugin"));
        assert_eq!(
            one_error(&doc),
            ("kind".into(), "unsupported kind \"Plugin\", expected \"PluginDefinition\"".into())
        );
        let doc = with(minimal(), "/metadata/name", json!(""));
        assert_eq!(
            one_error(&doc),
            ("metadata.name".into(), "plugin definition is missing required field metadata.name".into())
        );
        let mut doc = minimal();
        doc["metadata"].as_object_mut().unwrap().remove("version");
        assert_eq!(
            one_error(&doc),
            (
                "metadata.version".into(),
                "plugin definition is missing required field metadata.version".into()
            )
        );
        let mut doc = minimal();
        doc.as_object_mut().unwrap().remove("apiVersion");
        assert_eq!(one_error(&doc).1, "unsupported apiVersion \"\", expected \"fundament.io/v1\"");
    }

    #[test]
    fn image_must_be_a_digest_and_may_be_absent() {
        let doc = with(minimal(), "/spec/image", json!("ghcr.io/x/demo:v1"));
        assert_eq!(
            one_error(&doc),
            (
                "spec.image".into(),
                "spec.image \"ghcr.io/x/demo:v1\" must be a digest reference (repo@sha256:<64 hex chars>), not a mutable tag"
                    .into()
            )
        );
        let short = with(minimal(), "/spec/image", json!(format!("x@sha256:{}", &DIGEST[1..])));
        assert_eq!(one_error(&short).0, "spec.image");
        let upper = with(minimal(), "/spec/image", json!(format!("x@sha256:{}", DIGEST.to_uppercase())));
        assert_eq!(one_error(&upper).0, "spec.image");
        let no_repo = with(minimal(), "/spec/image", json!(format!("@sha256:{DIGEST}")));
        assert_eq!(one_error(&no_repo).0, "spec.image");

        let mut doc = minimal();
        doc["spec"].as_object_mut().unwrap().remove("image");
        assert_eq!(check(&doc), vec![Finding::warning("spec.image", IMAGE_NEEDED)]);
    }

    #[test]
    fn image_pull_policy_is_one_of_three() {
        for ok in ["", "Always", "IfNotPresent", "Never"] {
            assert_eq!(errors(&with(minimal(), "/spec/imagePullPolicy", json!(ok))), vec![], "{ok}");
        }
        let doc = with(minimal(), "/spec/imagePullPolicy", json!("always"));
        assert_eq!(
            one_error(&doc).1,
            "spec.imagePullPolicy \"always\" is invalid, expected one of \"Always\", \"IfNotPresent\", \"Never\" (or empty)"
        );
    }

    #[test]
    fn spec_is_required_and_the_document_is_a_mapping() {
        let mut doc = minimal();
        doc.as_object_mut().unwrap().remove("spec");
        assert_eq!(
            one_error(&doc),
            ("spec".into(), "plugin definition is missing required field spec".into())
        );
        assert_eq!(
            one_error(&json!(["x"])),
            ("".into(), "a plugin definition must be a YAML mapping, found a list".into())
        );
    }

    #[test]
    fn unknown_fields_are_rejected_everywhere() {
        let doc =
            with(minimal(), "/spec/menu", json!({"project": [{"crd": "a.b"}, {"crd": "c.d", "kind": "X"}]}));
        assert_eq!(
            one_error(&doc),
            (
                "spec.menu.project[1].kind".into(),
                "unknown field \"kind\"; expected one of: crd, list, detail, icon, label".into()
            )
        );
        let mut top = minimal();
        top["status"] = json!({});
        assert_eq!(one_error(&top).0, "status");
        let mut meta = minimal();
        meta["metadata"]["labels"] = json!({});
        assert_eq!(one_error(&meta).0, "metadata.labels");
        let mut spec = minimal();
        spec["spec"]["pages"] = json!([]);
        assert_eq!(one_error(&spec).0, "spec.pages");
    }

    #[test]
    fn types_are_checked_with_paths() {
        let doc = with(minimal(), "/spec/menu", json!({"organization": [{"crd": "a.b", "list": "yes"}]}));
        assert_eq!(
            one_error(&doc),
            ("spec.menu.organization[0].list".into(), "expected a boolean, found a string".into())
        );
        let doc = with(minimal(), "/metadata/version", json!(1.0));
        assert_eq!(one_error(&doc), ("metadata.version".into(), "expected a string, found a number".into()));
        let hints =
            json!({"certificates.cert-manager.io": {"statusMapping": {"values": {"True": {"badge": 1}}}}});
        let doc = with(minimal(), "/spec", json!({"image": format!("x@sha256:{DIGEST}"), "uiHints": hints}));
        assert_eq!(
            one_error(&doc).0,
            "spec.uiHints[\"certificates.cert-manager.io\"].statusMapping.values.True.badge"
        );
    }

    #[test]
    fn guides_are_checked_with_paths() {
        let guide = json!({"Grant": {
            "labels": [{"key": "x.io/a", "description": "A."}],
            "conditions": [{"type": "Applied", "reason": "Healthy", "meaning": "M.", "whatToDo": "Nothing."}],
            "summaries": [{"type": "Ready", "of": ["Applied"]}],
            "refusals": [{"contains": ["is immutable"], "whatToDo": "Delete it."}]
        }});
        let doc = with(minimal(), "/spec/guides", guide.clone());
        assert_eq!(errors(&doc), vec![]);
        let mut typo = guide.clone();
        typo["Grant"]["conditions"][0]["what_to_do"] = json!("x");
        assert_eq!(
            one_error(&with(minimal(), "/spec/guides", typo)),
            (
                "spec.guides.Grant.conditions[0].what_to_do".into(),
                "unknown field \"what_to_do\"; expected one of: type, reason, meaning, whatToDo".into()
            )
        );
        let mut pieces = guide;
        pieces["Grant"]["refusals"][0]["contains"] = json!("is immutable");
        assert_eq!(
            one_error(&with(minimal(), "/spec/guides", pieces)),
            ("spec.guides.Grant.refusals[0].contains".into(), "expected a list, found a string".into())
        );
    }

    #[test]
    fn null_fields_are_absent() {
        let doc = with(
            minimal(),
            "/spec",
            json!({"image": format!("x@sha256:{DIGEST}"), "menu": {"organization": null}}),
        );
        assert_eq!(errors(&doc), vec![]);
    }
}
