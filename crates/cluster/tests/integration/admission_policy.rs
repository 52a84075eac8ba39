//! ValidatingAdmissionPolicies through the real kubectl: the Grant author policy is
//! one like any other, and a policy applied at runtime is enforced at once, with
//! refusals worded as kube-apiserver words them.

use crate::common;

use common::kubectl::{AS_STRANGER, cluster_role_bound, header, stranger_writes_grants, with_kubectl};

/// A policy on DemoItems and its binding; `operations` are its rule's operations.
fn demo_policy(name: &str, operations: &str, extra_spec: &str, validations: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {name}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [demo.fundament.io]
      apiVersions: [v1]
      operations: [{operations}]
      resources: [demoitems]
{extra_spec}
  validations:
{validations}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {name}-binding
spec:
  policyName: {name}
  validationActions: [Deny]
"
    )
}

fn demo_item(name: &str, message: &str) -> String {
    format!(
        "apiVersion: demo.fundament.io/v1
kind: DemoItem
metadata:
  name: {name}
  namespace: default
spec:
  message: {message}
"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_lists_the_grant_policy_and_its_binding() {
    with_kubectl(|k| {
        let out = k.ok(&["get", "validatingadmissionpolicies,validatingadmissionpolicybindings"]);
        let mut sections = out.split("\n\n");
        let policies = sections.next().unwrap_or_default();
        let bindings = sections.next().unwrap_or_default();
        // A table's columns, and the leading cells of its first row.
        let assert_table = |table: &str, columns: &[&str], first_row: &[&str]| {
            assert_eq!(header(table), columns, "{out}");
            let row: Vec<&str> = table.lines().nth(1).unwrap_or_default().split_whitespace().collect();
            assert_eq!(row[..first_row.len()], *first_row, "{out}");
        };
        assert_table(
            policies,
            &["NAME", "VALIDATIONS", "PARAMKIND", "AGE"],
            &[
                "validatingadmissionpolicy.admissionregistration.k8s.io/camunda-operator-plugins.camunda.io-grant-author",
                "4",
                "<unset>",
            ],
        );
        assert_table(
            bindings,
            &["NAME", "POLICYNAME", "PARAMREF", "AGE"],
            &[
                "validatingadmissionpolicybinding.admissionregistration.k8s.io/camunda-operator-plugins.camunda.io-grant-author-binding",
                "camunda-operator-plugins.camunda.io-grant-author",
                "<unset>",
            ],
        );
        // The server's defaults are in the stored object.
        let yaml =
            k.ok(&["get", "validatingadmissionpolicy", "camunda-operator-plugins.camunda.io-grant-author", "-o", "yaml"]);
        assert!(yaml.contains("failurePolicy: Fail") && yaml.contains("matchPolicy: Equivalent"), "{yaml}");
        assert!(yaml.contains("scope: '*'"), "{yaml}");
        let resources = k.ok(&["api-resources", "--api-group", "admissionregistration.k8s.io"]);
        assert!(resources.contains("validatingadmissionpolicies") && resources.contains("false"), "{resources}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_applied_at_runtime_is_enforced_until_its_binding_is_deleted() {
    with_kubectl(|k| {
        let policy = demo_policy(
            "no-tmp-demoitems",
            "CREATE, UPDATE",
            "",
            "  - expression: \"!object.metadata.name.startsWith('tmp-')\"
    messageExpression: \"'the name ' + object.metadata.name + ' is reserved for scratch objects'\"",
        );
        let (ok, out, err) = k.apply(&policy, &[]);
        assert!(ok && out.contains("validatingadmissionpolicy.admissionregistration.k8s.io/no-tmp-demoitems created"), "{out}{err}");

        // Enforced at once, with the default reason Invalid (422).
        let (ok, _, err) = k.apply(&demo_item("tmp-scratch", "hi"), &[]);
        assert!(!ok, "{err}");
        assert!(
            err.contains("ValidatingAdmissionPolicy 'no-tmp-demoitems' with binding 'no-tmp-demoitems-binding' denied request: the name tmp-scratch is reserved for scratch objects"),
            "{err}"
        );
        assert!(err.contains("The demoitems \"tmp-scratch\" is invalid"), "{err}");
        k.applied(&demo_item("kept", "hi"));

        // A change of the policy (kubectl apply's patch) applies to the next request.
        let (ok, out, err) = k.apply(&policy.replace("is reserved for scratch objects", "is not allowed"), &[]);
        assert!(ok && out.contains("validatingadmissionpolicy.admissionregistration.k8s.io/no-tmp-demoitems configured"), "{out}{err}");
        k.apply_refused(&demo_item("tmp-scratch", "hi"), &[], "denied request: the name tmp-scratch is not allowed");

        // No binding, no policy.
        k.ok(&["delete", "validatingadmissionpolicybinding", "no-tmp-demoitems-binding"]);
        let (ok, out, err) = k.apply(&demo_item("tmp-scratch", "hi"), &[]);
        assert!(ok, "{out}{err}");
        assert!(k.ok(&["get", "validatingadmissionpolicies", "-o", "name"]).contains("no-tmp-demoitems"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expressions_that_do_not_compile_are_refused_when_the_policy_is_written() {
    with_kubectl(|k| {
        let broken = demo_policy("broken", "CREATE", "", "  - expression: \"object.spec.message ==\"");
        let (ok, _, err) = k.apply(&broken, &[]);
        assert!(!ok, "{err}");
        assert!(err.contains("spec.validations[0].expression: Invalid value: \"object.spec.message ==\": compilation failed: ERROR: <input>:1:"), "{err}");
        let unknown = demo_policy("unknown", "CREATE", "", "  - expression: \"objekt.spec.message == 'x'\"");
        k.apply_refused(&unknown, &[], "undeclared reference to 'objekt'");
        let reason = demo_policy("reason", "CREATE", "", "  - expression: \"true\"\n    reason: Teapot");
        k.apply_refused(&reason, &[], "spec.validations[0].reason: Unsupported value: \"Teapot\"");
        let unbound = "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-actions
spec:
  policyName: whatever
";
        k.apply_refused(unbound, &[], "spec.validationActions: Required value");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_policy_that_covers_delete_refuses_a_delete() {
    with_kubectl(|k| {
        let keep = "  - expression: \"!oldObject.metadata.name.startsWith('keep-')\"
    reason: Forbidden
    message: keep- items stay";
        k.applied(&demo_policy("updates-only", "UPDATE", "", keep));
        k.applied(&demo_item("keep-a", "a"));
        // The policy is in force for updates...
        k.refused(&["label", "demoitem", "keep-a", "-n", "default", "x=y"], "ValidatingAdmissionPolicy 'updates-only' with binding 'updates-only-binding' denied request: keep- items stay");
        // ...and does not see deletes.
        let (ok, out, err) = k.run(&["delete", "demoitem", "keep-a", "-n", "default"], None);
        assert!(ok, "{out}{err}");

        k.applied(&demo_policy("deletes", "DELETE", "", keep));
        k.applied(&demo_item("keep-b", "b"));
        let (ok, _, err) = k.run(&["delete", "demoitem", "keep-b", "-n", "default"], None);
        assert!(!ok, "{err}");
        assert!(err.contains("Error from server (Forbidden)"), "{err}");
        assert!(err.contains("demoitems.demo.fundament.io \"keep-b\" is forbidden: ValidatingAdmissionPolicy 'deletes' with binding 'deletes-binding' denied request: keep- items stay"), "{err}");
        k.ok(&["get", "demoitem", "keep-b", "-n", "default"]);
        let (ok, out, err) = k.run(&["delete", "demoitem", "hello-world", "-n", "default"], None);
        assert!(ok, "{out}{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_policy_decides_on_errors_and_match_conditions_select() {
    with_kubectl(|k| {
        // A runtime error (no such key) under Fail refuses, under Ignore admits.
        let erring = "  - expression: \"object.spec.count > 1\"";
        k.applied(&demo_policy("erring-fail", "CREATE", "  failurePolicy: Fail", erring));
        let (ok, _, err) = k.apply(&demo_item("one", "x"), &[]);
        assert!(!ok, "{err}");
        assert!(err.contains("ValidatingAdmissionPolicy 'erring-fail' with binding 'erring-fail-binding' denied request: expression 'object.spec.count > 1' resulted in error: no such key: count"), "{err}");
        k.ok(&["delete", "validatingadmissionpolicy", "erring-fail"]);
        k.applied(&demo_policy("erring-ignore", "CREATE", "  failurePolicy: Ignore", erring));
        k.applied(&demo_item("one", "x"));

        // matchConditions: only items labelled guarded=true are checked.
        let guarded = demo_policy(
            "guarded",
            "CREATE, UPDATE",
            "  matchConditions:
  - name: guarded-only
    expression: \"has(object.metadata.labels) && object.metadata.labels.exists(k, k == 'guarded')\"",
            "  - expression: \"object.spec.message != 'forbidden'\"",
        );
        k.applied(&guarded);
        k.applied(&demo_item("free", "forbidden"));
        let labelled = demo_item("held", "forbidden").replace("  namespace: default\n", "  namespace: default\n  labels:\n    guarded: \"true\"\n");
        let (ok, _, err) = k.apply(&labelled, &[]);
        assert!(!ok, "{err}");
        assert!(err.contains("denied request: failed expression: object.spec.message != 'forbidden'"), "{err}");
        // Labelling an existing item makes its update subject to the policy.
        k.refused(&["label", "demoitem", "free", "-n", "default", "guarded=yes"], "ValidatingAdmissionPolicy 'guarded'");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authorizer_library_checks_the_requesters_rbac() {
    with_kubectl(|k| {
        let rule = "{apiGroups: [demo.fundament.io], resources: [demoitems], verbs: [get, list, watch, create, update, patch, delete]}";
        k.applied(&cluster_role_bound(
            "demo-writer",
            rule,
            &[
                "{kind: User, apiGroup: rbac.authorization.k8s.io, name: alice}",
                "{kind: User, apiGroup: rbac.authorization.k8s.io, name: bob}",
            ],
        ));
        let policy = demo_policy(
            "publishers",
            "CREATE",
            "  variables:
  - name: publish
    expression: \"authorizer.group('demo.fundament.io').resource('demoitems').namespace(object.metadata.namespace).name(object.metadata.name).check('publish')\"",
            "  - expression: \"variables.publish.allowed()\"
    reason: Forbidden
    messageExpression: \"request.userInfo.username + ' may not publish ' + object.metadata.name\"
  - expression: \"authorizer.requestResource.check('publish').allowed()\"
    message: the request's own resource is checked too",
        );
        k.applied(&policy);
        let publisher = "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: publisher
  namespace: default
rules:
- apiGroups: [demo.fundament.io]
  resources: [demoitems]
  verbs: [publish]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: alice-publishes
  namespace: default
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: publisher}
subjects:
- {kind: User, apiGroup: rbac.authorization.k8s.io, name: alice}
";
        k.applied(publisher);
        let (ok, out, err) = k.apply(&demo_item("by-alice", "a"), &["--as=alice"]);
        assert!(ok, "{out}{err}");
        let (ok, _, err) = k.apply(&demo_item("by-bob", "b"), &["--as=bob"]);
        assert!(!ok, "{err}");
        assert!(err.contains("Error from server (Forbidden)"), "{err}");
        assert!(err.contains("ValidatingAdmissionPolicy 'publishers' with binding 'publishers-binding' denied request: bob may not publish by-bob"), "{err}");
        // The admin is in system:masters, which may do anything.
        k.applied(&demo_item("by-admin", "c"));

        // serviceAccount(): checks as that ServiceAccount, whoever the requester is.
        let as_sa = demo_policy(
            "as-service-account",
            "UPDATE",
            "",
            "  - expression: \"authorizer.serviceAccount('default', 'nobody').group('demo.fundament.io').resource('demoitems').check('update').allowed()\"
    message: the ServiceAccount default/nobody may not update demo items",
        );
        k.applied(&as_sa);
        k.refused(&["label", "demoitem", "by-admin", "-n", "default", "x=y"], "the ServiceAccount default/nobody may not update demo items");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_status_writes_need_no_serve_and_selectors_narrow_a_policy() {
    with_kubectl(|k| {
        // The stranger has write rights on grants but serve on no registration: the
        // status subresource is not covered by a rule for `grants`.
        k.applied(&stranger_writes_grants());
        let name = k.ok(&["get", "grants", "-n", "my-cluster-ns", "-o", "name"]);
        let grant = name.lines().next().expect("a fixture grant").to_string();
        let (ok, out, err) = k.run(
            &[
                "patch",
                &grant,
                "-n",
                "my-cluster-ns",
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"observedGeneration":1}}"#,
                AS_STRANGER,
            ],
            None,
        );
        assert!(ok, "{out}{err}");
        // A label is not status: that write needs serve.
        k.refused(
            &["label", &grant, "-n", "my-cluster-ns", "team=blue", AS_STRANGER],
            "does not have the verb serve",
        );

        // objectSelector and a binding's matchResources with a namespaceSelector.
        let selected = demo_policy(
            "selected",
            "CREATE",
            "    objectSelector:
      matchLabels: {checked: \"yes\"}",
            "  - expression: \"false\"
    message: checked items are refused",
        )
        .replace(
            "  validationActions: [Deny]\n",
            "  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchExpressions:
      - {key: kubernetes.io/metadata.name, operator: In, values: [default]}
",
        );
        k.applied(&selected);
        let checked = |name: &str| {
            demo_item(name, "m")
                .replace("  namespace: default\n", "  namespace: default\n  labels:\n    checked: \"yes\"\n")
        };
        k.applied(&demo_item("unchecked", "m"));
        k.apply_refused(&checked("checked"), &[], "checked items are refused");
        // The binding selects the namespace default only.
        let (ok, out, err) =
            k.apply(&checked("checked").replace("namespace: default", "namespace: staging"), &[]);
        assert!(ok, "{out}{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bindings_pass_their_params_to_the_policy() {
    with_kubectl(|k| {
        let policy = "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: banned-messages
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [demo.fundament.io]
      apiVersions: ['*']
      operations: ['*']
      resources: [demoitems]
  validations:
  - expression: object.spec.message != params.data.banned
    messageExpression: \"'the message ' + params.data.banned + ' is banned by ' + params.metadata.name\"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: banned-messages-binding
spec:
  policyName: banned-messages
  validationActions: [Deny]
  paramRef:
    name: banned
    namespace: default
    parameterNotFoundAction: Deny
";
        k.applied(policy);
        let bindings = k.ok(&["get", "validatingadmissionpolicybindings", "banned-messages-binding"]);
        assert!(bindings.contains("default/banned"), "{bindings}");
        let policies = k.ok(&["get", "validatingadmissionpolicies", "banned-messages"]);
        assert!(policies.contains("v1/ConfigMap"), "{policies}");
        // The param is missing and the binding says Deny.
        let (ok, _, err) = k.apply(&demo_item("p1", "fine"), &[]);
        assert!(!ok, "{err}");
        assert!(err.contains("ValidatingAdmissionPolicy 'banned-messages' with binding 'banned-messages-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"), "{err}");
        k.applied("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: banned\n  namespace: default\ndata:\n  banned: spam\n");
        k.applied(&demo_item("p1", "fine"));
        k.apply_refused(&demo_item("p2", "spam"), &[], "denied request: the message spam is banned by banned");
        // A change of the param takes effect at once.
        k.ok(&["patch", "configmap", "banned", "-n", "default", "-p", r#"{"data":{"banned":"fine"}}"#]);
        k.applied(&demo_item("p2", "spam"));
        k.apply_refused(&demo_item("p3", "fine"), &[], "the message fine is banned");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_deny_bindings_refuse() {
    with_kubectl(|k| {
        let refuse_all = "  - expression: \"false\"\n    message: nothing passes";
        // Warn and Audit report a failure but admit the request; Warn tells the client
        // in a Warning header, which kubectl prints.
        k.applied(&demo_policy("warned", "CREATE", "", refuse_all).replace("[Deny]", "[Warn, Audit]"));
        let (ok, out, err) = k.apply(&demo_item("warned-item", "x"), &[]);
        assert!(ok && out.contains("demoitem.demo.fundament.io/warned-item created"), "{out}{err}");
        assert!(
            err.contains(
                "Warning: Validation failed for ValidatingAdmissionPolicy 'warned' with binding 'warned-binding': nothing passes"
            ),
            "{err}"
        );
        // A policy without a binding does nothing; a binding to a missing policy neither.
        k.ok(&["delete", "validatingadmissionpolicybinding", "warned-binding"]);
        let orphan = demo_policy("orphan", "CREATE", "", refuse_all);
        let binding_only = &orphan[orphan.find("---").unwrap()..];
        k.applied(binding_only);
        k.applied(&demo_item("orphaned-item", "x"));
        // Binding the policy makes it refuse.
        let policy_only = &orphan[..orphan.find("---").unwrap()];
        k.applied(policy_only);
        k.apply_refused(
            &demo_item("refused-item", "x"),
            &[],
            "ValidatingAdmissionPolicy 'orphan' with binding 'orphan-binding' denied request: nothing passes",
        );
    })
    .await;
}
