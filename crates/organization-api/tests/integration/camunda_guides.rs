//! The Camunda plugin's guides (seed 003, "Grant"), as the catalog serves them
//! to the console: the Status table word for word, Ready resolving to the row
//! of its reason, the labels, and the hints for refused grant writes. These
//! were rules compiled into the console; now they are the plugin's data, and
//! these tests pin that the data still says what the seed says.

use crate::common;

use fundament_organization_api::Catalog;
use fundament_plugin_types::KindGuide;

fn guide(kind: &str) -> KindGuide {
    let catalog = Catalog::load(&common::plugins_dir()).unwrap();
    let camunda = catalog.get("camunda", "v0.3.0").unwrap();
    camunda.document.guide(kind).unwrap_or_else(|| panic!("no guide of {kind}")).clone()
}

fn advice(guide: &KindGuide, ty: &str, reason: &str) -> Option<(String, String, String, String)> {
    guide
        .advice(ty, reason)
        .map(|a| (a.condition_type.clone(), a.reason.clone(), a.meaning.clone(), a.what_to_do.clone()))
}

#[test]
fn labels_are_the_seeds_in_order() {
    let grant = guide("Grant");
    let labels: Vec<(&str, &str)> =
        grant.labels.iter().map(|l| (l.key.as_str(), l.description.as_str())).collect();
    assert_eq!(
        labels,
        [
            ("plugins.camunda.io/registration", "The name of the registration that holds the template."),
            ("plugins.camunda.io/request", "The name of the request that the grant belongs to."),
            (
                "plugins.camunda.io/cluster",
                "The name of the CamundaCluster whose identity gets the permission."
            ),
        ]
    );
}

/// The seed's Status table, as (type, reason, meaning, what to do).
const SEED_ROWS: [(&str, &str, &str, &str); 7] = [
    ("Applied", "Healthy", "The identity extension applied the fragment.", "Nothing."),
    (
        "Applied",
        "OverCeiling",
        "The fragment asks for more than the ceiling of the identity extension allows.",
        "Ask the admin of the identity extension to raise the ceiling, or change the parameters of the request.",
    ),
    (
        "Applied",
        "OverSizeLimit",
        "The fragment takes the policy of the identity over the size limit of the cloud.",
        "Select fewer options that ask for permissions for this cluster.",
    ),
    (
        "Applied",
        "Rejected",
        "The identity extension or the cloud refused the fragment for another reason. The message says why.",
        "Read the message.",
    ),
    ("MatchesTemplate", "Healthy", "The fragment matches its template in the registration.", "Nothing."),
    (
        "MatchesTemplate",
        "TemplateChanged",
        "The fragment no longer matches its template in the registration.",
        "Wait for the plugin to write the grant again from the new template.",
    ),
    ("Ready", "Healthy", "Applied and MatchesTemplate are both True.", "Nothing."),
];

#[test]
fn every_row_of_the_seed_table_resolves_word_for_word() {
    let grant = guide("Grant");
    for (ty, reason, meaning, what_to_do) in SEED_ROWS {
        assert_eq!(
            advice(&grant, ty, reason),
            Some((ty.into(), reason.into(), meaning.into(), what_to_do.into())),
            "{ty}/{reason}"
        );
    }
    assert_eq!(grant.conditions.len(), SEED_ROWS.len(), "no rows beyond the seed's");
}

#[test]
fn ready_false_resolves_to_the_row_of_its_reason() {
    let grant = guide("Grant");
    // Each reason of the seed's table but Healthy is one that Ready=False can carry.
    for (source, reason, _, _) in SEED_ROWS.into_iter().filter(|&(_, reason, _, _)| reason != "Healthy") {
        let a = grant.advice("Ready", reason).unwrap_or_else(|| panic!("Ready/{reason}"));
        assert_eq!((a.condition_type.as_str(), a.reason.as_str()), (source, reason));
        assert_eq!(Some(a), grant.advice(source, reason));
    }
    // Ready=True keeps its own row.
    assert_eq!(
        grant.advice("Ready", "Healthy").unwrap().meaning,
        "Applied and MatchesTemplate are both True."
    );
}

#[test]
fn request_reasons_belong_to_the_requests_ready_condition() {
    let request = guide("PluginRequest");
    let rejected = request.advice("Ready", "GrantRejected").unwrap();
    assert!(rejected.meaning.starts_with(
        "A grant with Ready=False makes the Ready condition of its request False with reason GrantRejected."
    ));
    let waiting = request.advice("Ready", "WaitingForGrants").unwrap();
    assert!(waiting.meaning.starts_with(
        "When no grant of a request has Ready=False, a grant without Ready=True makes the Ready condition of the request False with reason WaitingForGrants."
    ));
    for a in [rejected, waiting] {
        assert_eq!(a.condition_type, "Ready");
        assert!(a.meaning.ends_with("The outputs of the request stay usable."));
        assert!(!a.what_to_do.is_empty());
    }
    // Not reasons of a grant, and a request has no rows of a grant's reasons.
    let grant = guide("Grant");
    assert_eq!(grant.advice("Ready", "GrantRejected"), None);
    assert_eq!(grant.advice("Applied", "GrantRejected"), None);
    assert_eq!(grant.advice("MatchesTemplate", "WaitingForGrants"), None);
    assert_eq!(request.advice("Ready", "OverCeiling"), None);
}

#[test]
fn unknown_reasons_and_mismatched_types_give_nothing() {
    let grant = guide("Grant");
    for (ty, reason) in [
        ("Applied", "Exploded"),
        ("Ready", "Exploded"),
        ("Ready", ""),
        ("Applied", "TemplateChanged"),
        ("MatchesTemplate", "OverCeiling"),
        ("Synced", "Healthy"),
        ("Applied", "overceiling"),
        ("ready", "OverCeiling"),
    ] {
        assert_eq!(grant.advice(ty, reason), None, "{ty}/{reason}");
    }
}

/// Every (type, reason) that a fixture of the plugin carries has advice in
/// the guide of its kind.
#[test]
fn every_reason_in_the_fixtures_resolves() {
    let fixtures = [
        ("Grant", "camunda/fixtures/grants.yaml"),
        ("PluginRequest", "camunda/fixtures/pluginrequests.yaml"),
    ];
    let mut seen = 0;
    for (kind, file) in fixtures {
        // Read when the test runs, not compiled in: see common::plugins_dir.
        let text = std::fs::read_to_string(common::plugins_dir().join(file)).unwrap();
        let guide = guide(kind);
        let mut ty = None;
        for line in text.lines().map(str::trim) {
            if let Some(t) = line.strip_prefix("- type: ") {
                ty = Some(t.trim());
            } else if let (Some(r), Some(t)) = (line.strip_prefix("reason: "), ty) {
                assert!(guide.advice(t, r.trim()).is_some(), "{kind}: {t}/{r}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 20, "{seen}");
}

const PREFIX: &str = "Error from server (Forbidden): error when creating \"grant.yaml\": grants.plugins.camunda.io \"orders-backup-storage-bucket-access\" is forbidden: ValidatingAdmissionPolicy 'camunda-operator-plugins.camunda.io-grant-author' with binding 'camunda-operator-plugins.camunda.io-grant-author-binding' denied request: ";

#[test]
fn policy_refusals_map_to_the_seeds_hints() {
    let grant = guide("Grant");
    let cases = [
        (
            "a Grant must carry the label plugins.camunda.io/registration with the name of the PluginRegistration that it belongs to",
            "Set the label to the name of the registration that holds the template.",
        ),
        (
            "the requester system:serviceaccount:camunda-plugins:stranger does not have the verb serve on the PluginRegistration s3-backup-bucket, so it cannot write a Grant for it",
            "Give the ServiceAccount of the controller serve on that registration, as in the role above. Or correct the label.",
        ),
        (
            "the requester alice@example.com does not have the verb serve on the PluginRegistration secrets-manager, so it cannot change a Grant of it",
            "Change the label only as a requester with serve on both registrations. Or create a new grant for the new registration.",
        ),
        (
            "spec.format: Unsupported value: \"gcp-iam-binding\": supported values: \"aws-iam-statement\"",
            "Set spec.format: aws-iam-statement.",
        ),
    ];
    for (message, hint) in cases {
        assert_eq!(grant.refusal_hint(message), Some(hint), "{message}");
        assert_eq!(grant.refusal_hint(&format!("{PREFIX}{message}")), Some(hint), "{message}");
    }
}

#[test]
fn crd_rules_map_to_hints() {
    let grant = guide("Grant");
    let delete = Some("Delete the grant and create a new one.");
    for field in ["cluster", "template", "format"] {
        let message = format!(
            "Grant.plugins.camunda.io \"orders-backup-storage-bucket-access\" is invalid: spec.{field}: Invalid value: \"object\": {field} is immutable: delete the grant and create a new one"
        );
        assert_eq!(grant.refusal_hint(&message), delete, "{message}");
    }
    let name = format!(
        "The Grant \"{}\" is invalid: metadata.name: Invalid value: \"object\": metadata.name must be at most 63 characters, because it is used as a label value",
        "g".repeat(64)
    );
    assert_eq!(
        grant.refusal_hint(&name),
        Some("Choose a name of at most 63 characters: the name is used as a label value.")
    );
}

#[test]
fn matching_tolerates_wrapping_and_case() {
    let wrapped = "denied request: the requester\n  system:serviceaccount:camunda-plugins:stranger does not have\tthe verb serve on the pluginregistration s3-backup-bucket, so it cannot WRITE a Grant for it";
    assert_eq!(
        guide("Grant").refusal_hint(wrapped),
        Some(
            "Give the ServiceAccount of the controller serve on that registration, as in the role above. Or correct the label."
        )
    );
}

#[test]
fn several_refusals_give_the_first_and_are_not_stitched() {
    let grant = guide("Grant");
    // Two CEL errors in one message: the first one's hint.
    let both = "Grant.plugins.camunda.io \"g\" is invalid: [metadata.name: Invalid value: \"object\": metadata.name must be at most 63 characters, because it is used as a label value, spec.cluster: Invalid value: \"object\": cluster is immutable: delete the grant and create a new one]";
    assert_eq!(
        grant.refusal_hint(both),
        Some("Choose a name of at most 63 characters: the name is used as a label value.")
    );
    // A "change" refusal followed by a "write" refusal: the change hint, and the
    // write sentence's tail must not complete the first sentence.
    let two = "the requester bob does not have the verb serve on the PluginRegistration a, so it cannot change a Grant of it; the requester bob does not have the verb serve on the PluginRegistration b, so it cannot write a Grant for it";
    assert_eq!(
        grant.refusal_hint(two),
        Some(
            "Change the label only as a requester with serve on both registrations. Or create a new grant for the new registration."
        )
    );
    // A truncated sentence does not borrow the tail of a later one.
    let cut = "the requester bob does not have the verb; the requester carol lacks something, so it cannot write a Grant for it";
    assert_eq!(grant.refusal_hint(cut), None);
}

#[test]
fn other_messages_give_nothing() {
    let grant = guide("Grant");
    for message in [
        "",
        "grants.plugins.camunda.io \"x\" not found",
        "Operation cannot be fulfilled on grants.plugins.camunda.io \"x\": the object has been modified; please apply your changes to the latest version and try again",
        // The PluginRequest's own immutability rule has another remedy.
        "PluginRequest.plugins.camunda.io \"orders-backup-storage\" is invalid: spec.cluster: Invalid value: \"object\": cluster is immutable: delete the request and create a new one",
        "spec.format: Required value",
        "the requester bob does not have the verb get on the PluginRegistration s3-backup-bucket",
    ] {
        assert_eq!(grant.refusal_hint(message), None, "{message}");
    }
}
