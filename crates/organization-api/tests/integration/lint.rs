//! The linter over the example plugins and over crafted folders, one broken
//! rule at a time.

use crate::common;

use std::path::Path;

use fundament_organization_api::lint::{Finding, Severity, has_errors, lint_dir};

const IMAGE_NEEDED: &str = "publishing needs spec.image as a digest reference (repo@sha256:<64 hex>)";

/// Findings as `(severity, path, message)`, easy to compare.
fn lint(dir: &Path) -> Vec<(Severity, String, String)> {
    lint_dir(dir).into_iter().map(|Finding { path, message, severity }| (severity, path, message)).collect()
}

fn error(path: &str, message: &str) -> (Severity, String, String) {
    (Severity::Error, path.into(), message.into())
}

fn warning(path: &str, message: &str) -> (Severity, String, String) {
    (Severity::Warning, path.into(), message.into())
}

/// Lints BASE with `from` replaced by `to` (which must occur).
fn lint_changed(from: &str, to: &str) -> Vec<(Severity, String, String)> {
    assert!(common::BASE.contains(from), "{from}");
    let root = tempfile::tempdir().unwrap();
    let dir = common::plugin_folder(root.path(), &common::BASE.replace(from, to));
    lint(&dir)
}

/// The findings other than the image warning every development definition has.
fn besides_image(findings: Vec<(Severity, String, String)>) -> Vec<(Severity, String, String)> {
    findings.into_iter().filter(|f| *f != warning("spec.image", IMAGE_NEEDED)).collect()
}

#[test]
fn the_example_plugins_have_no_errors_once_their_pages_exist() {
    let root = tempfile::tempdir().unwrap();
    for name in ["camunda", "cert-manager", "cloudnative-pg", "demo", "openfsc"] {
        let dir = root.path().join(name);
        common::copy_dir(&common::plugins_dir().join(name), &dir);
        // Make sure every page the definition names exists (the real ones are kept).
        let definition: serde_yaml::Value =
            serde_yaml::from_slice(&std::fs::read(dir.join("definition.yaml")).unwrap()).unwrap();
        std::fs::create_dir_all(dir.join("console")).unwrap();
        if let Some(components) = definition["spec"]["customComponents"].as_mapping() {
            for views in components.values() {
                for file in views.as_mapping().unwrap().values() {
                    let page = dir.join("console").join(file.as_str().unwrap());
                    if !page.exists() {
                        std::fs::write(page, "<!doctype html>").unwrap();
                    }
                }
            }
        }
        assert_eq!(lint(&dir), vec![warning("spec.image", IMAGE_NEEDED)], "{name}");
    }
}

#[test]
fn a_missing_console_page_is_an_error_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("openfsc");
    common::copy_dir(&common::plugins_dir().join("openfsc"), &dir);
    std::fs::create_dir_all(dir.join("console")).unwrap();
    std::fs::write(dir.join("console/fscinstallations-list.html"), "").unwrap();
    std::fs::write(dir.join("console/fscinstallations-detail.html"), "").unwrap();
    let _ = std::fs::remove_file(dir.join("console/fscinstallations-create.html"));
    let findings = lint(&dir);
    assert_eq!(
        besides_image(findings),
        vec![error(
            "spec.customComponents.FSCInstallation.create",
            "file console/fscinstallations-create.html does not exist"
        )]
    );
    assert!(has_errors(&lint_dir(&dir)));
}

#[test]
fn the_base_plugin_is_clean() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::plugin_folder(root.path(), common::BASE);
    assert_eq!(lint(&dir), vec![warning("spec.image", IMAGE_NEEDED)]);
}

#[test]
fn schema_problems_are_errors_with_paths() {
    assert_eq!(
        besides_image(lint_changed("apiVersion: fundament.io/v1", "apiVersion: fundament.io/v1beta1")),
        vec![error(
            "apiVersion",
            "unsupported apiVersion \"fundament.io/v1beta1\", expected \"fundament.io/v1\""
        )]
    );
    assert_eq!(
        besides_image(lint_changed("      label: Things\n", "      label: Things\n      title: Things\n")),
        vec![error(
            "spec.menu.project[0].title",
            "unknown field \"title\"; expected one of: crd, list, detail, icon, label"
        )]
    );
    assert_eq!(
        besides_image(lint_changed("  name: things\n", "")),
        vec![error("metadata.name", "plugin definition is missing required field metadata.name")]
    );
}

#[test]
fn every_schema_problem_is_reported_at_once() {
    let findings = lint_changed("kind: PluginDefinition", "kind: Plugin\nstatus: {}");
    let paths: Vec<&str> = findings.iter().map(|(_, p, _)| p.as_str()).collect();
    assert_eq!(paths, vec!["kind", "spec.image", "status"]);
}

#[test]
fn yaml_syntax_errors_are_one_finding() {
    let findings = lint_changed("  crds:\n", "  crds: [\n");
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].1, "definition.yaml");
    assert!(findings[0].2.starts_with("invalid YAML: "), "{}", findings[0].2);
}

#[test]
fn image_must_be_a_digest_when_present() {
    assert_eq!(
        lint_changed("spec:\n", "spec:\n  image: ghcr.io/x/things:latest\n"),
        vec![error(
            "spec.image",
            "spec.image \"ghcr.io/x/things:latest\" must be a digest reference (repo@sha256:<64 hex chars>), not \
             a mutable tag"
        )]
    );
    let digest = format!(
        "spec:\n  image: ghcr.io/x/things@sha256:{}\n  imagePullPolicy: IfNotPresent\n",
        "0".repeat(64)
    );
    assert_eq!(lint_changed("spec:\n", &digest), vec![]);
}

#[test]
fn rbac_rules_are_checked() {
    assert_eq!(
        besides_image(lint_changed(
            "      verbs: [get, list, watch]\n  menu",
            "      verbs: [Get, list]\n  menu"
        )),
        vec![error(
            "spec.permissions.rbac[0].verbs[0]",
            "verb \"Get\" is not a Kubernetes verb: use one of get, list, watch, create, update, patch, delete, \
             deletecollection or a custom lower-case word"
        )]
    );
    assert_eq!(
        besides_image(lint_changed("    - apiGroups: [x.io]\n", "    - apiGroups: []\n")),
        vec![error(
            "spec.permissions.rbac[0].apiGroups",
            "apiGroups is required and must not be empty (use \"\" for the core group)"
        )]
    );
    let named_create =
        "      resources: [things]\n      resourceNames: [one]\n      verbs: [get, create]\n  menu";
    let findings = besides_image(lint_changed(
        "      resources: [things]\n      verbs: [get, list, watch]\n  menu",
        named_create,
    ));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].1, "spec.permissions.rbac[0].resourceNames");
    assert!(findings[0].2.starts_with("resourceNames cannot restrict \"create\""), "{}", findings[0].2);
    let bind = "    - apiGroups: [rbac.authorization.k8s.io]\n      resources: [clusterroles]\n      verbs: [get, bind]\n  menu";
    let findings = besides_image(lint_changed(
        "    - apiGroups: [x.io]\n      resources: [things]\n      verbs: [get, list, watch]\n  menu",
        bind,
    ));
    assert_eq!(
        findings,
        vec![error(
            "spec.permissions.rbac[0]",
            "lets the plugin grant itself permissions it does not hold (cluster-admin in effect), so installing \
             refuses it; ask for the specific resources and verbs the plugin needs"
        )]
    );
}

/// What `fundament dev --plugin` refuses to install, lint refuses too, every object at once,
/// naming its file and document, in the installer's words: a fixture of a kind that is not the
/// folder's, and a CRD that spec.crds does not list.
#[test]
fn folder_objects_the_installer_refuses_are_errors_naming_file_document_and_why() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::plugin_folder(root.path(), common::BASE);
    std::fs::write(
        dir.join("crds/gadgets.x.io.yaml"),
        common::THINGS_CRD.replace("things", "gadgets").replace("Thing", "Gadget"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("fixtures")).unwrap();
    std::fs::write(
        dir.join("fixtures/demo.yaml"),
        "apiVersion: x.io/v1\nkind: Thing\nmetadata: {name: one, namespace: default}\n---\n\
         apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\nstringData: {token: x}\n",
    )
    .unwrap();
    assert_eq!(
        besides_image(lint(&dir)),
        vec![
            error(
                "crds/gadgets.x.io.yaml",
                "document 0 (CustomResourceDefinition gadgets.x.io): the CRD \"gadgets.x.io\" is not listed \
                 in the definition's spec.crds: the plugin is not installed"
            ),
            error(
                "fixtures/demo.yaml",
                "document 1 (Secret default/creds): fixtures/ may hold only objects of the kinds this plugin's \
                 crds/ define, and Events (v1 or events.k8s.io); v1 Secret is neither, and would be written \
                 with the installer's (admin) rights: the plugin is not installed"
            ),
        ]
    );
    assert!(has_errors(&lint_dir(&dir)));
    // The installer's own reader names the first of them, in the same words.
    let refused = fundament_plugin_folder::plugin_folder(&dir, &["things.x.io".to_string()]).unwrap_err();
    let first = &besides_image(lint(&dir))[0];
    assert_eq!(refused.to_string(), format!("{}: {}", dir.join(&first.1).display(), first.2));
}
