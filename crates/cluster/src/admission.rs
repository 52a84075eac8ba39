//! Admission: the Grant author policy of the Camunda plugins (seed 003),
//! built in. It answers as the operator's ValidatingAdmissionPolicy
//! `camunda-operator-plugins.camunda.io-grant-author` does on a real cluster,
//! word for word, so kubectl prints the same refusal here and there.

use serde_json::Value;

use crate::authn::User;
use crate::resource::ResourceType;
use crate::status::ApiError;

pub const GRANT_GROUP: &str = "plugins.camunda.io";
pub const REGISTRATION_LABEL: &str = "plugins.camunda.io/registration";
pub const POLICY: &str = "camunda-operator-plugins.camunda.io-grant-author";
pub const SUPPORTED_FORMAT: &str = "aws-iam-statement";

/// Whether `user` may do `verb` on the cluster-scoped PluginRegistration `name`.
/// Members of `system:masters` may do anything, as with the real authorizer.
pub fn may_serve(policy: &fundament_rbac::Policy, user: &User, name: &str) -> bool {
    user.groups.iter().any(|g| g == "system:masters")
        || policy
            .authorize(
                &user.rbac(),
                &fundament_rbac::Attributes::Resource {
                    verb: "serve",
                    api_group: GRANT_GROUP,
                    resource: "pluginregistrations",
                    subresource: "",
                    name,
                    namespace: "",
                },
            )
            .allowed
}

/// Admits or refuses a create (`old` is `None`) or update. Deletes are never checked.
pub fn admit(
    policy: &fundament_rbac::Policy,
    rt: &ResourceType,
    obj: &Value,
    old: Option<&Value>,
    user: &User,
) -> Result<(), ApiError> {
    if rt.group != GRANT_GROUP || rt.plural != "grants" {
        return Ok(());
    }
    let label =
        |o: &Value| o["metadata"]["labels"][REGISTRATION_LABEL].as_str().unwrap_or_default().to_string();
    if let Some(old) = old
        && old["spec"] == obj["spec"]
        && label(old) == label(obj)
        && old["metadata"]["labels"] == obj["metadata"]["labels"]
    {
        // Status writes and metadata other than labels: no serve needed.
        return Ok(());
    }
    let deny = |why: String| {
        let name = obj["metadata"]["name"].as_str().unwrap_or_default();
        Err(ApiError::forbidden_because(
            &rt.group,
            &rt.plural,
            name,
            &format!(
                "ValidatingAdmissionPolicy '{POLICY}' with binding '{POLICY}-binding' denied request: {why}"
            ),
        ))
    };
    let registration = label(obj);
    if registration.is_empty() {
        return deny(format!(
            "a Grant must carry the label {REGISTRATION_LABEL} with the name of the PluginRegistration that it belongs to"
        ));
    }
    let format = obj["spec"]["format"].as_str().unwrap_or_default();
    if format != SUPPORTED_FORMAT {
        return deny(format!(
            "spec.format: Unsupported value: \"{format}\": supported values: \"{SUPPORTED_FORMAT}\""
        ));
    }
    if let Some(old) = old {
        let previous = label(old);
        if !previous.is_empty() && previous != registration && !may_serve(policy, user, &previous) {
            return deny(format!(
                "the requester {} does not have the verb serve on the PluginRegistration {previous}, so it cannot change a Grant of it",
                user.name
            ));
        }
    }
    if !may_serve(policy, user, &registration) {
        return deny(format!(
            "the requester {} does not have the verb serve on the PluginRegistration {registration}, so it cannot write a Grant for it",
            user.name
        ));
    }
    Ok(())
}
